"""Small helpers of the MariaDB engine: logs, permissions, password hashes."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from hashlib import sha1
from pathlib import Path
from typing import Any

from tdebench.encryption import redact
from tdebench.engines.toolkit.process import tail


def traversable_by(path: Path, uid: int, gid: int) -> bool:
    """True if ``uid``/``gid`` (no supplementary groups) can reach and enter ``path``.

    Asked of the kernel (``test -x`` run as that user, so ACLs count); mode bits when that cannot run.
    """
    test = shutil.which("test")
    if test and os.geteuid() == 0:
        try:
            done = subprocess.run([test, "-x", str(path)], user=uid, group=gid, extra_groups=[],
                                  capture_output=True, check=False, timeout=30)
            return done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            pass
    for directory in [path, *path.parents]:
        if not directory.exists():
            continue
        st = directory.stat()
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bit:
            return False
    return True


def native_password_hash(password: str) -> str:
    """``mysql_native_password`` hash: ``*`` + hex(SHA1(SHA1(password))) (what MariaDB stores)."""
    return "*" + sha1(sha1(password.encode()).digest()).hexdigest().upper()


def close_quietly(conn: Any) -> None:
    """Close a connection without masking the error in flight (a broken connection cannot close cleanly)."""
    with contextlib.suppress(Exception):
        conn.close()


def global_status(node: Any, names: tuple[str, ...], timeout: int = 5) -> dict[str, str]:
    """``SHOW GLOBAL STATUS`` values of ``names`` on one node, over a connection of its own."""
    conn = node._connect(timeout=timeout, use_database=False)
    try:
        cur = conn.cursor()
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(["%s"] * len(names)) + ")", names)
        return {str(k): str(v) for k, v in cur.fetchall()}
    finally:
        close_quietly(conn)


def error_lines(log: Path, count: int = 8) -> str:
    """The last ``count`` error lines of a log (redacted); its plain tail when it has none."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {log})"
    errors = [line for line in lines if re.search(r"\[ERROR\]|^ERROR|unknown (variable|option)", line)]
    return redact("\n".join(errors[-count:])) if errors else tail(log)
