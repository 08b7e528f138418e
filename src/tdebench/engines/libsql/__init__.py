"""libSQL: SQLite files written by the libSQL fork, plain or encrypted at rest; the class is in engine.py."""
