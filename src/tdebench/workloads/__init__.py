"""Workload registry: the plan's ``workload`` name -> its implementation."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tdebench.errors import UsageError

if TYPE_CHECKING:
    from tdebench.api.engine import Engine
    from tdebench.api.plan import RunPlan
    from tdebench.api.workload import RunFiles, Workload
    from tdebench.workloads.options import WorkloadOptions

#: the workload a run has (``tdebench run`` runs) when none is named
DEFAULT_WORKLOAD = "tpch"
# name -> (workload class, options model); the options modules are light, so a plan can check its
# options without importing drivers and loaders
_REGISTRY: dict[str, tuple[Any, Any]] = {
    "tpch": ("tdebench.workloads.tpch.workload:TpchWorkload", "tdebench.workloads.tpch.options:TpchOptions"),
    "tpcc": ("tdebench.workloads.tpcc.workload:TpccWorkload", "tdebench.workloads.tpcc.options:TpccOptions"),
    "sysbench": ("tdebench.workloads.sysbench.workload:SysbenchWorkload",
                 "tdebench.workloads.sysbench.options:SysbenchOptions"),
    "crud": ("tdebench.workloads.crud.workload:CrudWorkload", "tdebench.workloads.crud.options:CrudOptions"),
    "backup": ("tdebench.workloads.backup.workload:BackupWorkload", "tdebench.workloads.backup.options:BackupOptions"),
    "load": ("tdebench.workloads.load.workload:LoadWorkload", "tdebench.workloads.load.options:LoadOptions"),
    "sql": ("tdebench.workloads.sql.workload:SqlWorkload", "tdebench.workloads.sql.options:SqlOptions"),
    "replay": ("tdebench.workloads.replay.workload:ReplayWorkload",
               "tdebench.workloads.replay.options:ReplayOptions"),
    "encrypt": ("tdebench.workloads.encrypt.workload:EncryptWorkload",
                "tdebench.workloads.encrypt.options:EncryptOptions"),
}


def workload_names() -> list[str]:
    """Names of every registered workload."""
    return sorted(_REGISTRY)


def options_model(name: str) -> "type[WorkloadOptions]":
    """The options model of workload ``name`` (UsageError listing the known workloads otherwise)."""
    return _load(name, 1)


def _load(name: str, part: int) -> Any:
    entry = _REGISTRY.get(name)
    if entry is None:
        raise UsageError(f"unknown workload '{name}'", f"use one of: {', '.join(workload_names())}")
    target = entry[part]
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def register(name: str, workload: "str | type[Workload]", options: "str | type[WorkloadOptions]") -> None:
    """Add workload ``name`` with its options model: ``"module:Class"`` strings (imported when first used) or the
    classes themselves. Built-in workloads are listed above; this is for workloads outside the package and for
    tests (docs/adding-a-workload.md)."""
    if name != name.strip().lower() or not name:
        raise ValueError(f"workload names are lower case without spaces, not {name!r}")
    _REGISTRY[name] = (workload, options)


def unregister(name: str) -> None:
    """Remove a workload added with :func:`register` (tests clean up with it)."""
    _REGISTRY.pop(name, None)


def unmet_need(name: str, engine: "Engine") -> str | None:
    """Why workload ``name`` cannot run on ``engine`` (the first of its declared
    :attr:`~tdebench.api.workload.Workload.needs` the engine lacks); None when it can."""
    return _load(name, 0).unmet_need(engine)


def check_workload_options(name: str, raw: dict[str, Any]) -> "WorkloadOptions":
    """The workload's validated options; UsageError naming the key, the workload and the allowed keys."""
    return _load(name, 1).parse(raw)


def workload_class(name: str) -> "type[Workload]":
    """The class of workload ``name`` (its class-level facts, e.g. ``pairs_by_round``), without a plan."""
    return _load(name, 0)


def make_workload(plan: "RunPlan", rundir: "RunFiles") -> "Workload":
    """The workload the plan names, bound to the plan and run directory."""
    return _load(plan.workload, 0)(plan, rundir)
