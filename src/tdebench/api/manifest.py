"""manifest.json as a typed model, with a schema version that every reader checks (as pyperf does).

Version 1 kept TPC-H's ``sf``, ``tests`` and ``streams`` at the top of the plan; version 2 keeps them in the
plan's ``workload_options`` (the plan knows no workload); version 3 adds the ``round`` column to measurements.csv
(the pairing unit of the interleaved OLTP schedule); version 4 adds the plan's ``presentation``, how the workload is
shown (:class:`tdebench.api.presentation.Presentation`; a report of an older run falls back on the installed
workload's declaration). All four are read: a version-1 plan is moved forward by
:func:`tdebench.api.plan.plan_from_json`. A manifest of any other version is refused with a clear error, so a
newer tdebench's run is never misread by an older one.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tdebench.api.measurement import utc_now
from tdebench.errors import UsageError

SCHEMA_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)


class ConfigEntry(BaseModel):
    """One config as provisioned: its engine, versions, settings and the facts its load recorded."""

    model_config = ConfigDict(extra="allow")
    label: str
    engine: str
    encryption: str
    engine_version: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    storage_bytes: int | None = None


class RunManifest(BaseModel):
    """The parts of manifest.json every reader relies on; engines and workloads may add more."""

    model_config = ConfigDict(extra="allow")
    schema_version: int = SCHEMA_VERSION
    run_id: str = ""
    status: str = ""
    tool: dict[str, Any] = Field(default_factory=dict)
    command_line: list[str] = Field(default_factory=list)
    created_at: str = ""
    finished_at: str | None = None
    host: dict[str, Any] | str | None = None  # a text when not known (a run imported from console logs)
    plan: dict[str, Any] | None = None  # None: a run that never got as far as its plan (cannot be resumed)
    data: dict[str, Any] | None = None
    configs: list[ConfigEntry] = Field(default_factory=list)


def check_manifest(data: Any, source: str = "manifest.json") -> RunManifest:
    """The manifest as a model; UsageError when its version is unknown or its structure is broken."""
    if not isinstance(data, dict):
        raise UsageError(f"{source} is not a JSON object", "point to a run directory written by `tdebench run`")
    version = data.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise UsageError(
            f"{source} has schema_version {version!r}, which this tdebench cannot read (it reads "
            f"{', '.join(map(str, READABLE_VERSIONS))})",
            "use the tdebench version that wrote the run (see tool.version in the manifest), or upgrade tdebench")
    try:
        return RunManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"{source} is damaged: {where}: {first['msg']}",
                         "restore it from a backup; tdebench writes it atomically, so it was edited by hand") from None


def new_manifest(run_id: str, plan: dict[str, Any], command_line: list[str], status: str = "created") -> dict[str, Any]:
    """The first manifest of a run: what it will do and who asked (``command_line`` already redacted)."""
    return {"run_id": run_id, "status": status, "plan": plan, "command_line": command_line,
            "created_at": utc_now(), "configs": []}
