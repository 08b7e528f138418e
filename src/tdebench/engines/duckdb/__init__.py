"""DuckDB as an embedded engine: plain, or the database file, its WAL and its temporary files encrypted with
AES-256-GCM or AES-256-CTR (DuckDB 1.4's own encryption, OpenSSL through the httpfs extension)."""
