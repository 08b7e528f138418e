"""Engine registry. Engines register here explicitly, never by import side effects."""

from __future__ import annotations

import importlib

from tdebench.api.engine import Config, Engine, Instance
from tdebench.errors import UsageError

# name -> "module:Class"; imported lazily so a missing driver only matters when the engine is used
_REGISTRY: dict[str, str | type[Engine]] = {
    "sqlite": "tdebench.engines.sqlite.engine:SqliteEngine",
    "postgres": "tdebench.engines.postgres.engine:PostgresEngine",
    "mariadb": "tdebench.engines.mariadb.engine:MariadbEngine",
    "mysql": "tdebench.engines.mysql.engine:MysqlEngine",
    "galera": "tdebench.engines.mariadb.galera:GaleraEngine",  # a mode: MODES
    "external": "tdebench.engines.external.engine:ExternalEngine",
    "duckdb": "tdebench.engines.duckdb.engine:DuckdbEngine",
    "sqlite3mc": "tdebench.engines.sqlite3mc.engine:Sqlite3mcEngine",
    "libsql": "tdebench.engines.libsql.engine:LibsqlEngine",
}

#: engines that are a mode of another engine's package (name -> that package): a Galera cluster is MariaDB
#: servers with a replication provider, so it subclasses the mariadb instance within the mariadb package
#: (docs/engines/galera.md says why) instead of importing another engine's package
MODES: dict[str, str] = {"galera": "mariadb"}

#: the engine ``tdebench run`` uses when none is named
DEFAULT_ENGINE = "sqlite"
#: the engine that ``--target LABEL=URL`` reaches (not chosen with ``--engine``)
TARGET_ENGINE = "external"


def engine_names() -> list[str]:
    """Names of every registered engine."""
    return sorted(_REGISTRY)


def engine_choices() -> list[str]:
    """The engines ``--engine`` takes (every registered one but :data:`TARGET_ENGINE`)."""
    return [n for n in engine_names() if n != TARGET_ENGINE]


def get_engine(name: str) -> Engine:
    """The engine called ``name``; UsageError listing the known engines otherwise."""
    target = _REGISTRY.get(name.strip().lower())
    if target is None:
        raise UsageError(f"unknown engine '{name}'", f"use one of: {', '.join(engine_names())}")
    if isinstance(target, type):
        return target()
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls()


def register(name: str, target: str | type[Engine]) -> None:
    """Add engine ``name``: ``"module:Class"`` (imported when first used) or the class itself. Built-in engines
    are listed above; this is for engines outside the package and for tests (docs/adding-an-engine.md)."""
    if name != name.strip().lower() or not name:
        raise ValueError(f"engine names are lower case without spaces, not {name!r}")
    _REGISTRY[name] = target


def unregister(name: str) -> None:
    """Remove an engine added with :func:`register` (tests clean up with it)."""
    _REGISTRY.pop(name, None)


__all__ = ["DEFAULT_ENGINE", "TARGET_ENGINE", "Config", "Engine", "Instance", "engine_choices", "engine_names",
           "get_engine", "register", "unregister"]
