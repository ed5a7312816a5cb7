"""Background jobs in a PostgreSQL table queue (docs/isolation.md)."""
