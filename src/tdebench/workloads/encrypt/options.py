"""Options of the ``encrypt`` workload (docs/workloads/encrypt.md), validated from the plan's ``workload_options``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from tdebench.api.keys import FILE
from tdebench.api.values import counts
from tdebench.errors import UsageError
from tdebench.workloads.options import ValueWithFix, WorkloadOptions
from tdebench.workloads.scalefactor import SCALE_FACTOR_FIX, scale_factor_problem
from tdebench.workloads.tpcc.options import TpccOptions, parse_duration, parse_vus

if TYPE_CHECKING:
    from tdebench.api.engine import Config, Engine
    from tdebench.api.switch import SwitchMethod
    from tdebench.encryption import EncryptionSpec

MAX_THREADS = 255  # innodb_encryption_threads' upper bound
MAX_IOPS = 1_000_000


@dataclass(frozen=True)
class Cycle:
    """One cycle of a trial: its name (the prefix of its phases and switches), encryption threads and page rate."""

    prefix: str  # t<threads>, or t<threads>-iops<N> when several iops are swept; "offline" for offline engines
    threads: int
    iops: int | None


class EncryptOptions(WorkloadOptions):
    """The background (TPC-C virtual users, closed loop), the phases and the switch's own settings."""

    workload_name = "encrypt"
    fix_hint = "see docs/workloads/encrypt.md, e.g. --workload-option threads=1,2,4 --workload-option steady=30s"
    warehouses: int = Field(1, ge=1, le=10_000)
    vus: int = Field(2, ge=1, le=1000)  # background TPC-C virtual users (closed loop: no keying/thinking time)
    rampup: float = Field(5.0, ge=0)  # background running before the first measured second
    steady: float = Field(30.0, gt=0)  # seconds of each steady phase: before, after the switch on, after the way back
    threads: list[int] = Field(default_factory=lambda: [4])  # background encryption threads, one cycle per value
    iops: list[int] | None = None  # page operations a second for the switch, one cycle per value (None: engine's)
    way_back: bool = True  # switch encryption off again in each cycle, timed the same way (the rollback plan)
    max_switch: float = Field(3600.0, gt=0)  # give up (failed trial) when the engine is not done after this
    rate: float = Field(0.0, ge=0)  # committed transactions a second the baseline must reach (0: no floor)
    sf: float = Field(0.0, ge=0)  # TPC-H at this scale factor, switched (0: none); see tpch_alone
    seed: int = 20240607
    mode: Literal["auto", "procedures", "statements"] = "auto"  # TPC-C mode, as the tpcc workload's
    # online (while serving), offline (background stopped) or auto (online when the engine can)
    method: Literal["auto", "online", "offline"] = "auto"
    rekey: str = "auto"  # re-key after the switch on: yes, no or auto (when the engine can)
    # rotate by key version after the switch on (and re-keying): yes, no or auto (keys on the run's key server
    # with an engine that follows key versions: docs/key-management.md); threads: by the engine's background
    # threads only, leaving what they do not cover (listed by the proof; nothing retired)
    rotate: str = "auto"

    @field_validator("rekey", "rotate", mode="before")
    @classmethod
    def _rekey(cls, value: Any, info: Any) -> str:
        text = str(value).strip().lower()
        text = {"true": "yes", "1": "yes", "on": "yes", "false": "no", "0": "no", "off": "no"}.get(text, text)
        allowed = ("auto", "yes", "no", "threads") if info.field_name == "rotate" else ("auto", "yes", "no")
        if text not in allowed:
            raise ValueError(f"give {', '.join(allowed[:-1])} or {allowed[-1]}")
        return text

    @field_validator("threads", mode="before")
    @classmethod
    def _threads(cls, value: Any) -> list[int]:
        if str(value).strip() == "0" or (isinstance(value, list) and 0 in value):
            raise ValueError("0 encryption threads would never switch anything; give 1 or more, e.g. threads=1,2,4")
        return parse_vus(value, "threads")

    @field_validator("threads")
    @classmethod
    def _threads_max(cls, value: list[int]) -> list[int]:
        if max(value) > MAX_THREADS:
            raise ValueError(f"at most {MAX_THREADS} encryption threads")
        return value

    @field_validator("iops", mode="before")
    @classmethod
    def _iops(cls, value: Any) -> list[int] | None:
        if value is None:
            return None
        out = counts(value, "iops", MAX_IOPS, "1000 or 100,1000,10000")
        if not out or len(set(out)) < len(out):
            raise ValueError("give distinct page rates, e.g. 100,1000,10000")
        return out

    @field_validator("rampup", "steady", "max_switch", mode="before")
    @classmethod
    def _seconds(cls, value: Any, info: Any) -> float:
        return parse_duration(value, info.field_name)

    @field_validator("sf")
    @classmethod
    def _sf(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("give a finite TPC-H scale factor, e.g. 1, or 0 for no TPC-H data")
        problem = scale_factor_problem(value) if value else None
        if problem:
            raise ValueWithFix(problem, SCALE_FACTOR_FIX)
        return value

    def tpcc(self) -> TpccOptions:
        """The TPC-C options of the background (its driver and loader take them)."""
        return TpccOptions(warehouses=self.warehouses, vus=[self.vus], rampup=self.rampup, duration=self.steady,
                           seed=self.seed, mode=self.mode)


    def cycles(self) -> list[Cycle]:
        """The online cycles in order: every thread count, and for each every page rate (``iops`` swept when it
        lists several: then the cycle's name says both)."""
        rates: list[int | None] = list(self.iops) if self.iops else [None]
        return [Cycle(f"t{k}" if len(rates) == 1 else f"t{k}-iops{r}", k, r) for k in self.threads for r in rates]

    def online(self, engine: "Engine", spec: "EncryptionSpec") -> bool:
        """Whether ``engine`` switches ``spec`` while the background runs (else offline, the background stopped)."""
        return _method(engine, spec).online and self.method != "offline"

    def tpch_alone(self, engine: "Engine", spec: "EncryptionSpec") -> bool:
        """Whether ``engine``'s TPC-H (``sf``) is the only data loaded and switched, with no background: an offline
        switch stops the service anyway, and a switch that does not cover a second database could not reach TPC-H
        loaded beside TPC-C (their customer and orders tables clash in one database)."""
        return bool(self.sf) and not _method(engine, spec).whole_server and not self.online(engine, spec)

    def rekeys(self, engine: "Engine", spec: "EncryptionSpec") -> bool:
        return self.rekey == "yes" or (self.rekey == "auto" and bool(_method(engine, spec).rekey))

    def rotates(self, config: "Config", engine: "Engine", read_only: bool) -> bool:
        """Rotation by key version: asked for (yes), or (auto) the config's keys live on the run's own key server
        (``read_only``: a user's, which tdebench does not write) and the engine follows key versions."""
        path = engine.key_path(config.spec) if config.keys != FILE else None
        able = path is not None and path.versions and not read_only
        if self.rotate in ("yes", "threads") and not able:
            raise UsageError(f"encrypt: '{config.label}' cannot rotate by key version (rotate=yes): "
                             + ("its key server is yours, and tdebench only reads it" if read_only and path else
                                "it needs keys on the run's key server and an engine that follows key versions"),
                             "use --keys openbao with mariadb and no --key-server, or leave out rotate")
        return able and self.rotate != "no"

    def check_configs(self, configs: "Sequence[Config]") -> None:
        """Every config names an encrypted target spec of an engine that can switch it by the method asked for."""
        from tdebench.engines import get_engine

        for config in configs:
            engine = get_engine(config.engine)
            if config.spec.is_plain:
                raise UsageError(f"encrypt: config '{config.label}' names no encryption to switch on",
                                 "name the target spec only, e.g. --encryption tde:aes-256-ctr (each trial's "
                                 "plaintext baseline is its own 'before' phase)")
            method = engine.switch_method(config.spec)
            if method is None:
                raise UsageError(f"engine '{config.engine}' cannot switch encryption on in place (the encrypt "
                                 f"workload) for '{config.spec}'",
                                 f"use an engine and spec that can: {switchable_pairs(lambda m: True)}")
            if self.method == "online" and not method.online:
                raise UsageError(f"engine '{config.engine}' cannot switch '{config.spec}' on in place while serving "
                                 "(method=online)", f"use method=auto (its offline method, the background stopped) "
                                 f"or an engine and spec that can: {switchable_pairs(lambda m: m.online)}")
            if self.method == "offline" and method.online:
                raise UsageError(f"engine '{config.engine}' has no offline method to encrypt existing data with "
                                 f"'{config.spec}'", "use method=auto")
            self._check_sf(config.engine, engine, config.spec)
            self._check_key_source(config, engine)
            self.rotates(config, engine, read_only=False)  # rotate=yes without a key server (a user's: prepare)
            if self.rekey == "yes" and not method.rekey:
                raise UsageError(f"engine '{config.engine}' cannot re-key existing data under '{config.spec}' "
                                 "(rekey=yes)", "use rekey=auto")
            if not self.online(engine, config.spec) and self.iops is not None:
                raise UsageError(f"iops={','.join(map(str, self.iops))}: '{config.engine}' encrypts offline, with "
                                 "no page rate to set",
                                 "leave out iops")
            if not self.online(engine, config.spec) and "threads" in self.model_fields_set and self.threads != [1]:
                raise UsageError(f"threads={','.join(map(str, self.threads))}: '{config.engine}' encrypts offline "
                                 "by one statement, with no encryption threads to set", "leave out threads")
        if len({self.tpch_alone(get_engine(c.engine), c.spec) for c in configs}) > 1:
            raise UsageError(f"sf={self.sf:g}: some engines switch TPC-H beside the TPC-C background, others TPC-H "
                             "alone offline, so their trials would not compare",
                             "give each group of engines its own tdebench run")

    @staticmethod
    def _check_key_source(config: "Config", engine: "Engine") -> None:
        """A switch that makes its own keys cannot keep them on a key server: only a key path that follows the
        server's key versions switches with the keys the server holds."""
        path = engine.key_path(config.spec) if config.keys != FILE else None
        if path is not None and not path.versions:
            raise UsageError(f"encrypt: '{config.label}' keeps its keys on a key server, but {config.engine}'s switch "
                             "makes keys of its own in tdebench", "leave out --keys openbao for it (or use mariadb, "
                             "whose key plugin switches and re-keys with the key server's keys)")

    def _check_sf(self, name: str, engine: "Engine", spec: "EncryptionSpec") -> None:
        """``sf`` needs a switch that covers TPC-H beside the background, or one done offline on TPC-H alone."""
        if self.sf and not _method(engine, spec).whole_server and self.online(engine, spec):
            raise UsageError(f"sf={self.sf:g}: '{name}' switches '{spec}' online and its switch does not cover TPC-H "
                             "loaded beside the TPC-C background", "leave out sf (or --sf), or use an engine and spec "
                             f"that can: {switchable_pairs(lambda m: m.whole_server or not m.online)}")
        if self.tpch_alone(engine, spec) and self.rate:
            raise UsageError(f"rate={self.rate:g}: with sf, '{name}' switches TPC-H alone offline, with no background "
                             "to hold at a rate", "leave out rate")


def _method(engine: "Engine", spec: "EncryptionSpec") -> "SwitchMethod":
    method = engine.switch_method(spec)
    if method is None:  # check_configs refuses such a config before any work
        raise UsageError(f"engine '{engine.name}' cannot switch '{spec}' on in place", "see docs/workloads/encrypt.md")
    return method


def switchable_pairs(keep: "Callable[[SwitchMethod], bool]") -> str:
    """Every registered engine with the specs it can switch by a method ``keep`` accepts, e.g. ``mariadb with
    tde:* or fs:*``; the specs by mechanism (``tde:*``) when the engine can switch all of its specs of it."""
    from tdebench.engines import engine_names, get_engine

    pairs = []
    for name in engine_names():
        engine = get_engine(name)
        by_mechanism: dict[str, list[str]] = {}
        for spec in engine.supported_specs():
            if spec.is_plain:
                continue
            method = engine.switch_method(spec)
            by_mechanism.setdefault(spec.mechanism, []).append(str(spec) if method and keep(method) else "")
        texts = [f"{m}:*" if all(names) else "/".join(n for n in names if n)
                 for m, names in by_mechanism.items() if any(names)]
        if texts:
            pairs.append(f"{name} with {' or '.join(texts)}")
    return "; ".join(pairs) or "none installed"


def parse_options(raw: dict[str, Any]) -> EncryptOptions:
    return EncryptOptions.parse(raw)
