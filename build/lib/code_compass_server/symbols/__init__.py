"""Semantics: the symbol at a position resolved as its language does, its references and
lens counts, their caches and budgets. Knows nothing of LSP, MCP or the CLI."""
