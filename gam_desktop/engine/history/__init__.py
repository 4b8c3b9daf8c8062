"""Every change a git commit: the memory's repository, the operations log and rollback,
writing operations run as journaled transactions, and recovery after a crash."""
