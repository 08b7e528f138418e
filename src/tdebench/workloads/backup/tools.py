"""Running backup tools: subprocesses with optional gzip pipes, timing, tool CPU, moving data directories.

Secrets never go on a command line: MariaDB tools read the password from an inherited pipe
(``--defaults-extra-file=/dev/fd/N``, as :meth:`tdebench.api.server.ServerAccess.tools` hands it out), PostgreSQL
tools from a ``PGPASSFILE`` that is a 0600 file in a fresh 0700 directory, deleted right after.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tdebench.encryption import redact
from tdebench.engines.toolkit import asuser
from tdebench.errors import EnvironmentProblem
from tdebench.lifeline import helper_preexec

GZIP_LEVEL = 6


@dataclass
class ToolRun:
    """CPU seconds the tools run through :func:`run` used (each process's own rusage from ``wait4``)."""

    cpu_s: float = 0.0


_TOOLS = ToolRun()


def tool_cpu() -> float:
    """CPU seconds used so far by every tool process :func:`run` started (backup tools, gzip, mbstream, …). Not
    ``os.times()``'s children time: that also takes in a database server reaped in between (a restore restarts
    it), whose whole life's CPU would then be billed to the restore."""
    return _TOOLS.cpu_s


def _reap(proc: subprocess.Popen) -> None:
    """Wait for ``proc`` and add its CPU time (and that of the children it waited for) to :func:`tool_cpu`."""
    if proc.returncode is None:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        _TOOLS.cpu_s += usage.ru_utime + usage.ru_stime


def _check(proc: subprocess.Popen, argv: Sequence[str], err: bytes) -> None:
    if proc.returncode != 0:
        tail = redact(err.decode(errors="replace"))[-1500:]
        raise EnvironmentProblem(f"{Path(argv[0]).name} failed (exit code {proc.returncode}): {tail}",
                                 "see the tool's message above")


def run(argv: Sequence[str], *, stdin: Path | None = None, stdout: Path | None = None, gzip_out: bool = False,
        gunzip_in: bool = False, pass_fds: Sequence[int] = (), env: dict[str, str] | None = None,
        cwd: Path | None = None, user: pwd.struct_passwd | None = None) -> None:
    """Run ``argv`` (as ``user``, when given); optionally read ``stdin`` (gunzipped on the fly) and write ``stdout``
    (gzipped on the fly)."""
    full_env = {**os.environ, **(env or {})}
    if user is not None:
        full_env["HOME"] = user.pw_dir  # a tool reading ~/.my.cnf must not look in root's home
    feeder = None
    src = open(stdin, "rb") if stdin is not None else subprocess.DEVNULL
    try:
        if gunzip_in and stdin is not None:
            feeder = subprocess.Popen(["gzip", "-dc"], stdin=src, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      preexec_fn=helper_preexec())
            src_pipe = feeder.stdout
        else:
            src_pipe = src
        out = open(stdout, "wb") if stdout is not None else subprocess.DEVNULL
        try:
            _pipeline(argv, src_pipe, out, gzip_out, pass_fds, full_env, cwd, user)
        finally:
            if stdout is not None:
                out.close()
        if feeder is not None:
            feeder.stdout.close()
            err = feeder.stderr.read()
            _reap(feeder)
            _check(feeder, ["gzip"], err)
    finally:
        if stdin is not None:
            src.close()


def _pipeline(argv: Sequence[str], src: object, out: object, gzip_out: bool, pass_fds: Sequence[int],
              env: dict[str, str], cwd: Path | None, user: pwd.struct_passwd | None) -> None:
    who = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user is not None else {}
    if not gzip_out:
        proc = subprocess.Popen(list(argv), stdin=src, stdout=out, stderr=subprocess.PIPE, pass_fds=tuple(pass_fds),
                                env=env, cwd=cwd, preexec_fn=helper_preexec(), **who)
        err = proc.stderr.read()  # until the tool exits (its stdout goes to a file or nowhere)
        _reap(proc)
        _check(proc, argv, err)
        return
    proc = subprocess.Popen(list(argv), stdin=src, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            pass_fds=tuple(pass_fds), env=env, cwd=cwd, preexec_fn=helper_preexec(), **who)
    packer = subprocess.Popen(["gzip", "-c", f"-{GZIP_LEVEL}"], stdin=proc.stdout, stdout=out,
                              stderr=subprocess.PIPE, preexec_fn=helper_preexec())
    proc.stdout.close()  # gzip holds the only reader now
    err = proc.stderr.read()
    _reap(proc)
    packer_err = packer.stderr.read()
    _reap(packer)
    _check(proc, argv, err)
    _check(packer, ["gzip"], packer_err)


def gzip_file(path: Path) -> Path:
    """``path`` -> ``path.gz`` (the original removed)."""
    target = path.with_name(path.name + ".gz")
    run(["gzip", "-c", f"-{GZIP_LEVEL}", str(path)], stdout=target)
    path.unlink()
    return target


def gunzip_to(path: Path, target: Path) -> Path:
    run(["gzip", "-dc", str(path)], stdout=target)
    return target


def tree_bytes(path: Path) -> int:
    """Size of a file or of every regular file under a directory."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def give_to(path: Path, user: pwd.struct_passwd | None, mode: int = 0o700) -> None:
    """Restored files belong to the server's OS user; the top directory gets ``mode``."""
    if user is not None:
        for root, dirs, files in os.walk(path):
            os.chown(root, user.pw_uid, user.pw_gid)
            for name in dirs + files:
                os.lchown(os.path.join(root, name), user.pw_uid, user.pw_gid)
    os.chmod(path, mode)


def set_aside(path: Path, user: pwd.struct_passwd | None = None) -> Path:
    """Rename a data directory (or file) out of the way before a restore puts the backup in its place (as ``user``
    when given: inside a mount that admits only that user)."""
    aside = path.with_name(path.name + ".before-restore")
    asuser.remove_tree(user, aside)
    asuser.rename(user, path, aside)
    return aside


def put_back(aside: Path, path: Path, user: pwd.struct_passwd | None = None) -> None:
    """Undo :func:`set_aside` after a failed restore."""
    asuser.remove_tree(user, path)
    asuser.rename(user, aside, path)


def discard(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink()
