"""External engine: servers tdebench does not manage (``--target``); the class is in :mod:`.engine`, registered in
``engines/__init__.py``."""
