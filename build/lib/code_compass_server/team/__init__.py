"""The team index: a shared PostgreSQL + pgvector backend (seed 003's shape; docs/team-index.md)."""
