"""The memory for other apps: `gam-serve` (an OpenAI-compatible endpoint that reads the
memory for each request and learns from each turn) and `gam-mcp` (the memory's tools for
MCP clients). Front ends like the CLI: they wire the engine and hold no memory logic."""
