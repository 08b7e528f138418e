"""Cold-cache trials: restart the server and drop the OS page cache."""

from __future__ import annotations

import os
from pathlib import Path

from tdebench.api.engine import Instance

DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def drop_os_cache() -> str:
    """sync + echo 3 > /proc/sys/vm/drop_caches; returns 'dropped' or why it could not."""
    os.sync()
    try:
        DROP_CACHES.write_text("3\n")
    except OSError as exc:
        return f"could not drop the OS page cache ({exc.strerror}; needs root and a writable {DROP_CACHES})"
    return "dropped"


def make_cold(instance: Instance) -> str:
    """Restart the instance (empties the DBMS's own caches), then drop the OS page cache."""
    instance.restart()
    return f"server restarted; OS page cache {drop_os_cache()}"
