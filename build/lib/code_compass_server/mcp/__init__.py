"""The MCP front door: search_code, ask_code, open_file and find_symbol for agents (docs/mcp.md)."""
