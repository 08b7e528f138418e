"""Log in to an external target with its driver."""

from __future__ import annotations

from typing import Any

from tdebench.encryption import redact
from tdebench.engines.external.target import Target
from tdebench.engines.toolkit.dbapi.drivers import driver_module
from tdebench.errors import EnvironmentProblem


def connect(target: Target, password: str, timeout: int = 15) -> Any:
    """A new driver connection (autocommit off) to the target's database."""
    kind = target.kind
    module = driver_module(kind)
    try:
        if kind.module == "pymysql":
            return module.connect(host=target.host, port=target.port, user=target.user, password=password,
                                  database=target.database, local_infile=True, autocommit=False, charset="utf8mb4",
                                  connect_timeout=timeout)
        if kind.module == "psycopg":
            return module.connect(host=target.host, port=target.port, user=target.user, password=password,
                                  dbname=target.database, connect_timeout=timeout, autocommit=False,
                                  application_name="tdebench")
        if kind.module == "pymssql":
            return module.connect(server=target.host, port=str(target.port), user=target.user, password=password,
                                  database=target.database, login_timeout=timeout, autocommit=False,
                                  tds_version="7.4")
        module.defaults.fetch_decimals = True  # NUMBER as Decimal, like the other drivers' DECIMAL
        return module.connect(user=target.user, password=password,
                              dsn=f"{target.host}:{target.port}/{target.database}", tcp_connect_timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - every driver has its own error classes
        raise EnvironmentProblem(f"cannot connect to target '{target.label}' ({target.url}): "
                                 f"{redact(str(exc)).splitlines()[0] if str(exc) else type(exc).__name__}",
                                 "check host, port, database, user and password (and that the server accepts "
                                 "connections from this machine)") from exc


__all__ = ["connect"]
