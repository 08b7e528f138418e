"""SQLite engine (plain and SQLCipher): the class is in :mod:`.engine`, registered in ``engines/__init__.py``."""
