"""``--workload sql``: your own schema, data (CSV/TSV) and queries from a directory (docs/workloads/sql.md)."""
