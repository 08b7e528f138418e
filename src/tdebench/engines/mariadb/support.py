"""Small helpers of the MariaDB engine: process groups, logs, permissions, password hashes."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from hashlib import sha1
from pathlib import Path
from typing import Any

from tdebench.encryption import redact
from tdebench.engines.toolkit.process import own_processes, tail
from tdebench.lifeline import helper_preexec

#: seconds an interrupted helper's process group is given to exit once killed (its members are already dying)
GROUP_EXIT_S = 5.0


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


def run_group(argv: list[str], log: Path, user: Any, timeout: float, env: dict[str, str] | None = None,
              stdin: bytes | None = None) -> None:
    """Run a helper (e.g. mariadb-install-db, which starts its own mariadbd) in its own process group, with ``env``
    (None: ours) and ``stdin`` written to a pipe it reads; kill the whole group on timeout, error or Ctrl-C, and
    wait until it has exited, so no bootstrap server is left behind or still writing as its datadir is deleted."""
    kwargs: dict[str, Any] = {}
    if user is not None:
        kwargs.update(user=user.pw_uid, group=user.pw_gid, extra_groups=[])
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                start_new_session=True, cwd="/", env=env, preexec_fn=helper_preexec(), **kwargs)
    try:
        # in the try: an interrupt while the record is written ends the group too (left running, the helper and
        # its bootstrap server kept the image's mount busy and wrote into the datadir as the run deleted it)
        own_processes([proc.pid])  # its bootstrap server inherits the run's mark: cleanup finds it too
        proc.communicate(stdin, timeout=timeout)
        code = proc.returncode
    except BaseException:
        end_group(proc)
        raise
    if code != 0:
        raise subprocess.CalledProcessError(code, argv[0])


def end_group(proc: subprocess.Popen[bytes], timeout: float = GROUP_EXIT_S) -> None:
    """SIGKILL the process group ``proc`` leads and wait until all of it has exited (at most ``timeout`` s after
    ``proc``): the server a helper started is still writing into the datadir until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + timeout
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.02)


def group_members(pgid: int) -> list[int]:
    """PIDs of the processes of group ``pgid`` that have not exited. Zombies are left out: they hold no file, and
    the orphans among them wait for init to reap them, which can take a second or two."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rpartition(b")")[2].split()  # the command name may hold spaces and ')'
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            found.append(int(name))
    return found
