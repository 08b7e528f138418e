"""PostgreSQL engine: a private cluster per instance (plain, pgcrypto columns, gocryptfs); the class is in
:mod:`.engine`, registered in ``engines/__init__.py``."""
