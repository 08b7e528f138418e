"""Workload registry: the plan's ``workload`` name -> its implementation."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tdebench.errors import UsageError

if TYPE_CHECKING:
    from tdebench.results.rundir import RunDirectory
    from tdebench.runner.plan import RunPlan
    from tdebench.workloads.base import Workload

_REGISTRY: dict[str, str] = {
    "tpch": "tdebench.workloads.tpch.workload:TpchWorkload",
    "tpcc": "tdebench.workloads.tpcc.workload:TpccWorkload",
    "sysbench": "tdebench.workloads.sysbench.workload:SysbenchWorkload",
    "crud": "tdebench.workloads.crud.workload:CrudWorkload",
    "backup": "tdebench.workloads.backup.workload:BackupWorkload",
    "load": "tdebench.workloads.bulkload.workload:LoadWorkload",
}


def workload_names() -> list[str]:
    return sorted(_REGISTRY)


def make_workload(plan: "RunPlan", rundir: "RunDirectory") -> "Workload":
    """The workload the plan names, bound to the plan and run directory."""
    target = _REGISTRY.get(plan.workload)
    if target is None:
        raise UsageError(f"unknown workload '{plan.workload}'", f"use one of: {', '.join(workload_names())}")
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)(plan, rundir)
