"""A throw-away database account for one sysbench invocation, and how sysbench reaches the instance.

sysbench takes its password as an option (``--mysql-password``/``--pgsql-password``). It never goes on
the command line (visible in ``ps``): the connection options travel in a config file read through an
inherited pipe (``--config-file=/dev/fd/N``), so the password exists only in memory. The account has a
fresh random password, is created right before sysbench runs and dropped right after; the server only
ever sees its hash (``mysql_native_password`` hash, SCRAM-SHA-256 verifier).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tdebench.api.engine import Instance
from tdebench.encryption import generate_password
from tdebench.workloads.rows import query_one

USER = "tdebench_sysbench"


@dataclass
class Account:
    """Connection options for sysbench (``key=value`` lines of its config file); holds the password."""

    options: dict[str, str]

    def config_text(self) -> str:
        return "".join(f"{k}={v}\n" for k, v in self.options.items())

    def config_pipe(self) -> int:
        """A readable pipe fd holding the config text (pass it in ``pass_fds``, close it afterwards)."""
        read_fd, write_fd = os.pipe()
        os.write(write_fd, self.config_text().encode())
        os.close(write_fd)
        return read_fd


def scram_verifier(password: str, iterations: int = 4096) -> str:
    """PostgreSQL's SCRAM-SHA-256 verifier of ``password`` (what CREATE ROLE ... PASSWORD stores)."""
    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def _mariadb_create(conn: Any, password: str) -> dict[str, str]:
    from tdebench.engines.mariadb.support import native_password_hash

    socket, database = query_one(conn, "SELECT @@socket, DATABASE()")
    cur = conn.cursor()
    cur.execute(f"DROP USER IF EXISTS '{USER}'@'localhost'")
    cur.execute(f"CREATE USER '{USER}'@'localhost' IDENTIFIED BY PASSWORD '{native_password_hash(password)}'")
    cur.execute(f"GRANT ALL ON `{database}`.* TO '{USER}'@'localhost'")
    conn.commit()
    return {"db-driver": "mysql", "mysql-socket": str(socket), "mysql-user": USER, "mysql-password": password,
            "mysql-db": str(database)}


def _node_sockets(instance: Instance) -> list[str]:
    """Every node's socket (the account, made on node 1, reaches the others by replication)."""
    out = []
    for index in range(instance.client_nodes()):
        conn = instance.connect_node(index)
        try:
            out.append(str(query_one(conn, "SELECT @@socket")[0]))
        finally:
            conn.close()
    return out


def _mariadb_drop(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute(f"DROP USER IF EXISTS '{USER}'@'localhost'")
    conn.commit()


def _postgres_create(conn: Any, password: str) -> dict[str, str]:
    sockets, port, database = query_one(conn, "SELECT current_setting('unix_socket_directories'), "
                                           "current_setting('port'), current_database()")
    cur = conn.cursor()
    _postgres_drop(conn)
    cur.execute(f"CREATE ROLE {USER} LOGIN PASSWORD '{scram_verifier(password)}'")
    cur.execute(f'GRANT ALL ON DATABASE "{database}" TO {USER}')
    cur.execute(f"GRANT ALL ON SCHEMA public TO {USER}")
    cur.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {USER}")
    cur.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {USER}")
    conn.commit()
    return {"db-driver": "pgsql", "pgsql-host": str(sockets).split(",")[0].strip(), "pgsql-port": str(port),
            "pgsql-user": USER, "pgsql-password": password, "pgsql-db": str(database)}


def _postgres_drop(conn: Any) -> None:
    """Tables sysbench created go to the instance's own role first; then the role and its grants go."""
    cur = conn.cursor()
    cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [USER])
    if cur.fetchone():
        cur.execute(f"REASSIGN OWNED BY {USER} TO CURRENT_USER")
        cur.execute(f"DROP OWNED BY {USER}")
        cur.execute(f"DROP ROLE {USER}")
    conn.commit()


#: wire protocol (:attr:`Dialect.protocol`) -> how an account is made and dropped on a server speaking it
_ACCOUNT_SQL = (("mysql", _mariadb_create, _mariadb_drop), ("postgres", _postgres_create, _postgres_drop))


@contextmanager
def sysbench_account(instance: Instance, protocol: str, spread: bool = False) -> Iterator[Account]:
    """An account for sysbench on ``instance`` (a server speaking ``protocol``: ``mysql`` or ``postgres``) that
    exists only inside the ``with`` block; ``spread``: sysbench's threads connect round-robin to every node of a
    cluster (its socket list), else to node 1."""
    create, drop = next((c, d) for p, c, d in _ACCOUNT_SQL if p == protocol)
    password = generate_password(24)
    conn = instance.connect()
    try:
        options = create(conn, password)
    finally:
        conn.close()
    if spread and instance.client_nodes() > 1 and "mysql-socket" in options:
        options["mysql-socket"] = ",".join(_node_sockets(instance))
    try:
        yield Account(options)
    finally:
        conn = instance.connect()
        try:
            drop(conn)
        finally:
            conn.close()
