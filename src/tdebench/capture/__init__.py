"""``tdebench capture``: a workload directory for ``--workload sql`` taken, read-only, from a running server or an
SQLite file: schema, data (CSV), and the hot statements from the server's statistics or its logs
(docs/workloads/capture.md)."""
