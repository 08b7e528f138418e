"""MySQL engine: a private server per instance; the class is in :mod:`.engine`, registered in ``engines/__init__.py``."""
