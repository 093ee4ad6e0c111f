"""Code Compass: evidence-first answers about a codebase."""

__version__ = "0.1.0"
