"""The language server front door (pygls): `code-compass serve`."""
