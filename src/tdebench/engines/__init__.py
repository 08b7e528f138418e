"""Engine registry. Engines register here explicitly, never by import side effects."""

from __future__ import annotations

import importlib

from tdebench.api.engine import Config, Engine, Instance
from tdebench.errors import UsageError

# name -> "module:Class"; imported lazily so a missing driver only matters when the engine is used
_REGISTRY: dict[str, str] = {
    "sqlite": "tdebench.engines.sqlite:SqliteEngine",
    "postgres": "tdebench.engines.postgres:PostgresEngine",
    "mariadb": "tdebench.engines.mariadb:MariadbEngine",
    "mysql": "tdebench.engines.mysql:MysqlEngine",
    "external": "tdebench.engines.external:ExternalEngine",
}


def engine_names() -> list[str]:
    """Names of every registered engine."""
    return sorted(_REGISTRY)


def get_engine(name: str) -> Engine:
    """The engine called ``name``; UsageError listing the known engines otherwise."""
    target = _REGISTRY.get(name.strip().lower())
    if target is None:
        raise UsageError(f"unknown engine '{name}'", f"use one of: {', '.join(engine_names())}")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls()


__all__ = ["Config", "Engine", "Instance", "engine_names", "get_engine"]
