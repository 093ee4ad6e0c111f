"""Workspace index: scanning, chunking, catalog and lexical index."""
