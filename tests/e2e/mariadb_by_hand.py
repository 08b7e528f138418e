"""A MariaDB server started by hand, as a DBA would, for tests of external targets (not tdebench's engine).

``mariadb-install-db`` and ``mariadbd`` in a private temporary directory; the server listens on its own Unix
socket and on 127.0.0.1 at a free port; root logs in through the socket only (unix_socket authentication);
accounts get generated passwords. :meth:`HandServer.destroy` stops the server and removes the directory, and is
safe to call after any failure.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

SERVICE_USER = "tdebench"  # servers never run as root; the same unprivileged user tdebench's engines use
BASE_CNF = {
    "innodb_buffer_pool_size": "64M", "innodb_log_file_size": "32M", "innodb_log_buffer_size": "4M",
    "skip_name_resolve": "", "local_infile": "ON", "performance_schema": "OFF", "log_bin": "OFF",
    "character_set_server": "utf8mb4", "collation_server": "utf8mb4_bin",
}


def binaries() -> tuple[str, str] | None:
    """(mariadb-install-db, mariadbd), or None when MariaDB is not installed."""
    install = shutil.which("mariadb-install-db")
    server = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if os.access("/usr/sbin/mariadbd", os.X_OK) else None)
    return (install, server) if install and server else None


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def new_root() -> Path:
    """A private directory the service user can traverse (pytest's tmp dirs are root-only)."""
    root = Path(tempfile.mkdtemp(prefix="e2e-mariadb-", dir="/tmp"))
    root.chmod(0o711)
    return root


class HandServer:
    """One MariaDB server in ``root/name``: data, tmp, my.cnf, error log, socket."""

    def __init__(self, root: Path, name: str) -> None:
        self.dir = root / name
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.user = pwd.getpwnam(SERVICE_USER) if os.geteuid() == 0 else None
        self.extra_cnf: list[str] = []

    @property
    def socket(self) -> Path:
        return self.dir / "mysqld.sock"

    @property
    def cnf(self) -> Path:
        return self.dir / "my.cnf"

    @property
    def log(self) -> Path:
        return self.dir / "error.log"

    def _chown(self, path: Path) -> None:
        if self.user is not None:
            for p in [path, *path.rglob("*")]:
                os.lchown(p, self.user.pw_uid, self.user.pw_gid)

    def write_cnf(self) -> None:
        lines = ["[mariadb]", f"datadir={self.dir / 'data'}", f"tmpdir={self.dir / 'tmp'}", f"socket={self.socket}",
                 f"pid_file={self.dir / 'mariadbd.pid'}", f"log_error={self.log}", "bind_address=127.0.0.1",
                 f"port={self.port}", *(k if v == "" else f"{k}={v}" for k, v in BASE_CNF.items())]
        self.cnf.write_text("\n".join(lines + self.extra_cnf) + "\n")

    def install(self) -> None:
        """mariadb-install-db: system tables, root by unix_socket only, no test database."""
        tools = binaries()
        assert tools is not None
        for sub in ("data", "tmp"):
            (self.dir / sub).mkdir(parents=True, mode=0o700)
        self.write_cnf()
        self._chown(self.dir)
        argv = [tools[0], f"--defaults-file={self.cnf}", "--skip-test-db", "--auth-root-authentication-method=socket"]
        argv += [f"--user={SERVICE_USER}"] if self.user else [f"--auth-root-socket-user={pwd.getpwuid(os.geteuid()).pw_name}"]
        subprocess.run(argv, check=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)

    def start(self, timeout: float = 60.0) -> None:
        tools = binaries()
        assert tools is not None
        self.write_cnf()
        argv = [tools[1], f"--defaults-file={self.cnf}"] + ([f"--user={SERVICE_USER}"] if self.user else [])
        with open(self.dir / "stdout.log", "ab") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mariadbd exited ({self.process.returncode}): {self.tail()}")
            try:
                self.root().close()
                return
            except Exception:  # noqa: BLE001 - not ready yet
                time.sleep(0.3)
        raise RuntimeError(f"mariadbd did not answer within {timeout:.0f} s: {self.tail()}")

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no error log)"

    def root(self) -> Any:
        """A root connection over the Unix socket (unix_socket authentication: no password exists)."""
        import pymysql

        return pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True, connect_timeout=3)

    def sql(self, *statements: str) -> list[tuple[Any, ...]]:
        """Run statements as root; the rows of the last one."""
        conn = self.root()
        try:
            cur = conn.cursor()
            rows: list[tuple[Any, ...]] = []
            for statement in statements:
                cur.execute(statement)
                rows = list(cur.fetchall())
            return rows
        finally:
            conn.close()

    def stop(self, timeout: float = 60.0) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            self.sql("SHUTDOWN")
        except Exception:  # noqa: BLE001 - then by signal
            process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()


def destroy(servers: list[HandServer], root: Path) -> None:
    """Stop every server (even half-started ones) and remove the directory."""
    for server in servers:
        try:
            server.stop()
        except Exception:  # noqa: BLE001 - the others must still stop
            if server.process is not None:
                server.process.kill()
    shutil.rmtree(root, ignore_errors=True)


def password() -> str:
    return secrets.token_urlsafe(18)
