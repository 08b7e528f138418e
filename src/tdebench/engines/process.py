"""Server process lifecycle shared by server engines: find binaries, start, wait, stop, log tail.

Every process started here is tracked; :func:`stop_all` (called by the CLI on exit, error,
Ctrl-C and SIGTERM) stops whatever is still running. A pid file next to each server lets
``tdebench cleanup`` find servers of a run that was killed.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import psutil

from tdebench.encryption import redact
from tdebench.errors import EnvironmentProblem

SERVICE_USER = "tdebench"
_LIVE: dict[int, "ServerProcess"] = {}


def find_binary(names: Sequence[str], search_dirs: Sequence[Path], package: str) -> Path:
    """The first of ``names`` found in ``search_dirs`` or on PATH; else an error naming the package."""
    tried: list[str] = []
    for name in names:
        for directory in search_dirs:
            candidate = directory / name
            tried.append(str(candidate))
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
        found = shutil.which(name)
        tried.append(f"{name} on PATH")
        if found:
            return Path(found)
    raise EnvironmentProblem(
        f"cannot find {' or '.join(names)}", f"install the Debian package {package} (apt-get install {package})", tried
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def service_user() -> pwd.struct_passwd | None:
    """When running as root, the unprivileged OS user servers run as (created if missing); else None."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if not useradd:
        raise EnvironmentProblem("running as root but cannot create an unprivileged user", "install passwd (useradd) or run as a normal user")
    subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER],
        check=False, capture_output=True,
    )
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError as exc:
        raise EnvironmentProblem(f"could not create the OS user '{SERVICE_USER}'", "create it by hand: useradd --system tdebench") from exc


def chown_tree(path: Path, user: pwd.struct_passwd | None) -> None:
    """Give ``path`` and everything below it to ``user`` (no-op when user is None)."""
    if user is None:
        return
    for root, dirs, files in os.walk(path):
        os.chown(root, user.pw_uid, user.pw_gid)
        for name in dirs + files:
            os.lchown(os.path.join(root, name), user.pw_uid, user.pw_gid)


def tail(path: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a log file (redacted), or a note that it is missing."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return redact("\n".join(text.rstrip().splitlines()[-lines:]))


class ServerProcess:
    """One server process we started, with its log and pid file."""

    def __init__(self, name: str, argv: list[str], log_path: Path, pid_file: Path,
                 user: pwd.struct_passwd | None = None, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.pid_file = pid_file
        self.user = user
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, ready: Callable[[], bool], timeout: float = 60.0) -> None:
        """Start the server and wait until ``ready()`` is true; on failure show the log tail."""
        log = open(self.log_path, "ab")
        kwargs: dict = {}
        if self.user is not None:
            kwargs.update(user=self.user.pw_uid, group=self.user.pw_gid, extra_groups=[])
        try:
            self.proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env, start_new_session=True, **kwargs,
            )
        finally:
            log.close()
        _LIVE[self.proc.pid] = self
        self.pid_file.write_text(f"{self.proc.pid}\n")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._forget()
                raise EnvironmentProblem(
                    f"{self.name} exited during start-up (code {self.proc.returncode}); last lines of its log:\n"
                    f"{tail(self.log_path)}",
                    "check the server settings you passed (--server-setting) and the log above",
                )
            try:
                if ready():
                    return
            except Exception:  # noqa: BLE001 - not ready yet, whatever the client says
                pass
            time.sleep(0.1)
        self.kill()
        raise EnvironmentProblem(
            f"{self.name} did not become ready within {timeout:.0f} s; last lines of its log:\n{tail(self.log_path)}",
            "look at the log above; a slow disk may need a longer start-up timeout",
        )

    def stop(self, graceful: Callable[[], None] | None = None, timeout: float = 30.0) -> None:
        """Clean shutdown via ``graceful()`` (or SIGTERM), then SIGTERM, then SIGKILL."""
        if not self.running():
            self._forget()
            return
        assert self.proc is not None
        try:
            if graceful is not None:
                graceful()
            else:
                self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=timeout)
        except Exception:  # noqa: BLE001 - escalate below
            self.terminate_tree()
        self._forget()

    def terminate_tree(self, grace: float = 10.0) -> None:
        """SIGTERM the process and its children, SIGKILL whatever is left after ``grace`` seconds."""
        if self.proc is None:
            return
        try:
            parent = psutil.Process(self.proc.pid)
            procs = [parent, *parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            procs = []
        for proc in procs:
            try:
                proc.terminate()
            except psutil.NoSuchProcess:
                pass
        _, alive = psutil.wait_procs(procs, timeout=grace)
        for proc in alive:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=5)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        """SIGKILL the whole tree at once (start-up failures, tests)."""
        self.terminate_tree(grace=0.0)
        self._forget()

    def tree_pids(self) -> list[int]:
        """PIDs of the server and its children."""
        if not self.running():
            return []
        assert self.proc is not None
        try:
            parent = psutil.Process(self.proc.pid)
            return [parent.pid, *(c.pid for c in parent.children(recursive=True))]
        except psutil.NoSuchProcess:
            return []

    def _forget(self) -> None:
        if self.proc is not None:
            _LIVE.pop(self.proc.pid, None)
        self.pid_file.unlink(missing_ok=True)


def live_processes() -> list[ServerProcess]:
    """Servers started by this process that have not been stopped."""
    return list(_LIVE.values())


def stop_all() -> None:
    """Stop every server still running (last-resort cleanup on exit, error and signals)."""
    for server in list(_LIVE.values()):
        server.terminate_tree(grace=10.0)
        server._forget()
