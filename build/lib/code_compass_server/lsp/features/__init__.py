"""One small class per LSP feature; `server.create_server` wires them."""
