"""Offline embeddings: the int8 MiniLM model, splitting, the vector store and the background worker.

Import the submodules directly; nothing heavy is imported here so `build` runs without a model.
"""
