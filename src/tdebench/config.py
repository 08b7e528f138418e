"""Experiment files (TOML) and command-line options -> one validated experiment.

An experiment file uses the same vocabulary as the flags::

    [run]
    workload = "tpch"          # tpch (see `tdebench run --help` for the others)
    sf = 0.1                   # workloads that load TPC-H data (tpch, load, backup): the scale factor
    tests = ["power", "throughput"]   # tpch: which tests
    streams = 2                # tpch: throughput streams; default: the spec minimum for the SF (at least 2)
    trials = 3
    warmup = 1
    cache = "warm"             # warm | cold
    reset = "none"             # none | snapshot (restore the loaded data directory before every trial)
    query_timeout = 600        # seconds; 0 = none
    max_failures = 3           # consecutive failed trials before a config is abandoned
    memory_ratio = [0.05, 0.25, 1, 2]  # sweep each engine's cache: ratio x the loaded data (docs/memory.md)
    page_source = "disk"       # where the pages the swept cache misses come from: disk | memory (the OS cache)
    seed = 42
    keep_answers = true
    schedule = "query"         # block | query (interleave the twins step by step; default query, block when cold)
    repeat = 1                 # query schedule: runs of each step per config per block
    precision = "1%"           # keep adding blocks until the headline CI half-width is at most this
    max_time = "20m"           # ... or until this much time has passed (s, m, h)
    max_trials = 100           # ... or this many blocks (with precision; trials is then the minimum)
    pin = false                # pin tdebench and the servers to fixed cores (default: on for sql, one connection)
    nice = -10                 # run tdebench and the servers at this nice value (negative: root only)
    restart_twins = true       # restart every server, cache kept, before every block (default: with query)
    keys = ["file", "openbao"]  # key sources crossed with every encrypted spec (docs/key-management.md)
    key_server = "https://vault:8200/v1/tdebench"  # keys of --keys openbao on your own OpenBao/Vault (read only)
    baseline = "sqlite-none"   # a plain config every config of its engine family is also compared with (across
                               # engines, e.g. sqlite3mc's ciphers against sqlite's plain twin; docs/experiments.md)
    [run.options]              # options of the chosen workload, e.g. for tpcc: warehouses = 2 (sf, tests and
                               # streams may go here too: they are the tpch workload's options)

    [[engines]]
    name = "sqlite"
    encryption = ["none", "sqlcipher:aes-256-cbc"]
    settings = { cache_size = "-65536" }

Errors name the key, the bad value and what is allowed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tdebench.api.keys import parse_key_sources
from tdebench.api.regime import ratios_or_reason
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError



class EngineSection(BaseModel):
    """One engine and the encryption specs to compare on it."""

    model_config = ConfigDict(extra="forbid")
    name: str
    encryption: list[str] = Field(default_factory=list)
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @field_validator("encryption")
    @classmethod
    def _specs_parse(cls, value: list[str]) -> list[str]:
        for text in value:
            parse_spec(text)
        return value


class RunSection(BaseModel):
    """Options shared by every engine of the experiment."""

    model_config = ConfigDict(extra="forbid")
    workload: str = "tpch"
    # workload-specific options (e.g. warehouses, vus, duration for tpcc); validated by the workload
    options: dict[str, Any] = Field(default_factory=dict)
    # the data and tests of the workloads that read TPC-H data; handed to the workload's options
    sf: float | None = Field(None, gt=0)
    tests: list[Literal["power", "throughput"]] | None = Field(None, min_length=1)
    streams: int | None = Field(None, ge=1, le=100)
    trials: int | None = Field(None, ge=1)  # default 3, or the stopping rule's pilot (8) with precision
    warmup: int | None = Field(None, ge=0, le=1)  # default 1 (0 in a run taking turns from the disk)
    cache: Literal["warm", "cold"] = "warm"
    reset: Literal["none", "snapshot"] = "none"
    query_timeout: float = Field(0, ge=0)
    max_failures: int = Field(3, ge=1)
    seed: int | None = None
    keep_answers: bool = False
    data_dir: str | None = None
    out: str | None = None
    tcp: bool = False
    keep: bool = False
    schedule: str | None = None
    repeat: int = 1
    precision: str | float | None = None
    # what --precision watches: the headline (default), a latency p50/p95/p99, ...
    precision_metric: str | None = None
    max_time: str | float | None = None
    max_trials: int | None = None
    pin: bool | None = None  # None: the workload's default (Workload.pin_by_default)
    nice: int | None = None
    restart_twins: bool | None = None
    # the plain config compared with every config of its SQL family across engines (the report's layers table)
    baseline: str | None = None
    # cache/data ratios swept one after the other (docs/memory.md); None: each engine's configured cache
    memory_ratio: list[float] | None = None
    # where the pages the swept cache misses come from: disk or memory (the OS page cache); None: the engine's
    page_source: Literal["disk", "memory"] | None = None
    # a fault injected into one measured block's trials, e.g. "kill-node@50%" (docs/faults.md)
    fault: str | None = None
    # where the encrypted configs' keys live, each a config of its own: file, openbao (docs/key-management.md)
    keys: list[str] | str | None = None
    # the user's own OpenBao/Vault KV v2 mount for --keys openbao, e.g. "https://vault:8200/v1/tdebench"
    key_server: str | None = None

    @field_validator("keys", mode="before")
    @classmethod
    def _keys(cls, value: Any) -> list[str] | None:
        return list(parse_key_sources(value)) if value not in (None, "", []) else None

    @field_validator("memory_ratio", mode="before")
    @classmethod
    def _ratios(cls, value: Any) -> list[float] | None:
        return list(ratios_or_reason(value)) or None


class Experiment(BaseModel):
    """A whole experiment file."""

    model_config = ConfigDict(extra="forbid")
    run: RunSection = Field(default_factory=RunSection)
    engines: list[EngineSection] = Field(min_length=1)


def _allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model at ``loc`` for an 'unknown key' message."""
    current: type[BaseModel] = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        annotation = current.model_fields[str(part)].annotation
        args = getattr(annotation, "__args__", ())
        inner = args[0] if args else annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            current = inner
    return list(current.model_fields)


def _describe(error: dict[str, Any], source: str) -> str:
    loc = tuple(error["loc"])
    key = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc).replace(".[", "[")
    if error["type"] == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(Experiment, loc))
        return f"{source}: unknown key '{key}'; allowed keys there: {allowed}"
    value = error.get("input")
    expected = str(error.get("ctx", {}).get("expected") or error["msg"]).removeprefix("Value error, ")
    if source == "command line" and loc and loc[0] == "run":
        option = "--" + str(loc[1]).replace("_", "-")
        return f"bad value {value!r} for {option}: {expected}"
    return f"{source}: bad value {value!r} for '{key}': {expected}"


def load_experiment(path: Path) -> Experiment:
    """Read and validate an experiment file; UsageError with key, value and allowed values."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read experiment file {path}: {exc.strerror}", "check the path") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}", "fix the syntax at the position given") from exc
    return validate_experiment(data, str(path))


def validate_experiment(data: dict[str, Any], source: str = "experiment") -> Experiment:
    """Validate parsed TOML (or flags turned into the same shape)."""
    try:
        return Experiment.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
        fix = "see tdebench run --help" if source == "command line" else "correct the experiment file; see docs/experiments.md"
        raise UsageError(_describe(first, source) + more, fix) from None
    except UsageError as exc:
        raise UsageError(f"{source}: {exc.problem}", exc.fix) from None
