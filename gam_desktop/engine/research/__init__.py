"""Research mode: plan, search, integrate and reflect over a memory, then a checked report."""
