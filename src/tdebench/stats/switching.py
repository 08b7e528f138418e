"""What switching encryption on costs, per config of an ``encrypt`` run, read back from its run directory: the one
model behind the switching table in every view (terminal, summary.md, index.html, ``report/switching.csv``) and the
answer a decision across mechanisms reads (:func:`mechanism_costs`).

Per config, cycle and switch (:data:`ACTIONS`: the restart that loads a key plugin, the switch on, the re-keying,
the way back, the restart that unloads it): the median time to done over the measured trials, the downtime when
the service was stopped (``downtime``: offline methods and restarts), the peak extra disk, a copy's throughput,
what the background felt meanwhile and after against the steady phase just before (paired per trial:
:func:`tdebench.stats.paired.paired_ratio`), and the plaintext the scans found in the new place and, for a switch
that copies, in the old copy before it was deleted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from tdebench.stats.caveats import MIN_TRIALS
from tdebench.stats.load import Measurements, load_measurements
from tdebench.stats.paired import PairedRatio, paired_ratio

TEST = "encrypt"
OFFLINE = "offline"
# action -> (shown name, its phase, the steady phase just before it, the steady phase after it)
ACTIONS: dict[str, tuple[str, str, str, str | None]] = {
    "restart_on": ("restart (load plugin)", "during_restart_on", "before", "after_restart"),
    "on": ("switch on", "during_on", "before", "after_on"),
    "rekey": ("re-keying", "during_rekey", "before_rekey", "after_rekey"),
    "rotate": ("rotation by key version", "during_rotate", "before_rotate", "after_rotate"),
    "off": ("way back", "during_off", "before_off", "after_off"),
    "restart_off": ("restart (unload plugin)", "during_restart_off", "after_off", None),
}
_SIZES = ("before", "after_update", "after_vacuum", "after_vacuum_full")
_HITS = ("canary_hits_in_scope", "known_plaintext_hits_in_scope")


@dataclass
class SwitchRow:
    """One switch of one config's cycle, over the measured trials."""

    config: str
    cycle: str  # t<K> (online, K threads) or offline
    action: str  # a key of ACTIONS
    trials: int
    seconds: float | None  # median time to done
    extra_disk: float | None  # median peak extra bytes (offline methods)
    tables: list[float] | None  # the engine's own table sizes through the method (pgcrypto)
    tpm_before: float | None  # median TPM of the steady phase just before
    tpm: PairedRatio | None  # meanwhile / just before, per trial
    p95: PairedRatio | None
    after: PairedRatio | None  # steady after / just before, per trial
    stall: float | None  # median of the longest transaction (latency_max) meanwhile
    left: int | None  # plaintext hits in scope after it (on and rekey), None: not scanned
    outside: int | None
    baseline_phase: str = ""  # the steady phase the ratios pair with
    downtime: float | None = None  # median seconds with the service stopped (offline methods, restarts)
    copy_rate: float | None = None  # median bytes a second of a switch that copies the data
    old_copy_left: int | None = None  # plaintext hits in the old copy before it was deleted; None: no old copy
    removed: float | None = None  # median bytes the deleted old copy took
    retired: str = ""  # rotation by key version: what became of the old versions (the proof)

    @property
    def offline(self) -> bool:
        """The service was stopped for it (an offline method or a restart)."""
        return self.downtime is not None or self.cycle == OFFLINE

    @property
    def background(self) -> bool:
        """Whether a background workload ran around the switch (not with TPC-H alone)."""
        return self.tpm_before is not None

    @property
    def resolved(self) -> bool:
        """Enough trials for its intervals to be read (:data:`MIN_TRIALS`)."""
        return self.trials >= MIN_TRIALS


class _Values:
    """Per-trial values of one config's ``encrypt`` series."""

    def __init__(self, m: Measurements, config: str, test: str = TEST) -> None:
        self.by: dict[tuple[str, str], dict[int, float]] = {}
        for key, sample in m.series.items():
            if key.config == config and key.test == test:
                self.by[(key.step, key.metric)] = {int(b): float(v) for b, v in zip(sample.blocks, sample.values)}

    def median(self, step: str, metric: str) -> float | None:
        values = list(self.by.get((step, metric), {}).values())
        return median(values) if values else None

    def ratio(self, base: str, other: str | None, metric: str) -> PairedRatio | None:
        """``other / base`` per trial (paired by block), mean with a t interval."""
        if other is None:
            return None
        a, b = self.by.get((base, metric), {}), self.by.get((other, metric), {})
        blocks = sorted(set(a) & set(b))
        return paired_ratio([a[k] for k in blocks], [b[k] for k in blocks])

    def steps(self) -> set[str]:
        return {step for step, _ in self.by}


def _baseline(v: _Values, cycle: str, action: str) -> str:
    """The steady phase just before ``action``: online its own ``before*`` window; offline (no window right
    before the method) the last window that ran: ``before``, ``after_on``, then ``after_rekey`` if any."""
    if cycle != OFFLINE or action == "on":
        return f"{cycle}.{ACTIONS[action][2]}"
    earlier = ["after_on"] + (["after_rekey"] if action == "off" else [])
    found = [p for p in earlier if (f"{cycle}.{p}", "tpm") in v.by]
    return f"{cycle}.{found[-1] if found else 'before'}"


def cycle_settings(cycle: str) -> tuple[int | None, int | None]:
    """(encryption threads, page rate) a cycle's name says: ``t4`` (4, None), ``t4-iops1000`` (4, 1000); offline
    (None, None)."""
    match = re.fullmatch(r"t(\d+)(?:-iops(\d+))?", cycle)
    if match is None:
        return None, None
    return int(match[1]), int(match[2]) if match[2] else None


def _cycle_order(cycle: str) -> tuple[int, int, int]:
    threads, iops = cycle_settings(cycle)
    return (1 if threads is None else 0, threads or 0, iops or 0)


def switch_rows(m: Measurements, configs: list[str], test: str = TEST) -> list[SwitchRow]:
    """Every switch of every config of an encrypt run, in config, cycle (thread count) and action order."""
    out = []
    for config in configs:
        v = _Values(m, config, test)
        cycles = sorted({s.split(".")[0] for s in v.steps() if s.rpartition(".")[2] in ACTIONS}, key=_cycle_order)
        for cycle in cycles:
            for action in ACTIONS:
                row = _row(v, config, cycle, action)
                if row is not None:
                    out.append(row)
    return out


def _row(v: _Values, config: str, cycle: str, action: str) -> SwitchRow | None:
    _, during, _, after = ACTIONS[action]
    name, before = f"{cycle}.{action}", _baseline(v, cycle, action)
    done = v.median(name, "time_to_done")
    if done is None:
        return None
    sizes = [v.median(name, f"tables_{s}_bytes") for s in _SIZES]
    hits = [v.median(f"{name}.scan", k) for k in _HITS]
    old = [v.median(f"{name}.old_copy.scan", k) for k in _HITS]
    outside = v.median(f"{name}.scan", "hits_outside_scope")
    downtime = v.median(name, "downtime")
    offline = downtime is not None or cycle == OFFLINE
    phase = f"{cycle}.{during}"
    return SwitchRow(
        config, cycle, action, len(v.by.get((name, "time_to_done"), {})), done, v.median(name, "peak_extra_bytes"),
        [s for s in sizes if s is not None] if all(s is not None for s in sizes) else None,
        v.median(before, "tpm"),
        None if offline else v.ratio(before, phase, "tpm"),
        None if offline else v.ratio(before, phase, "latency_p95"),
        v.ratio(before, f"{cycle}.{after}" if after else None, "tpm"),
        None if offline else v.median(phase, "latency_max"),
        None if hits[0] is None else int(sum(h or 0 for h in hits)),
        None if outside is None else int(outside), before,
        downtime, v.median(name, "copy_bytes_per_s"),
        None if old[0] is None else int(sum(h or 0 for h in old)), v.median(name, "removed_bytes"),
        retired_text(v, f"{name}.proof"))


def retired_text(v: _Values, step: str) -> str:
    """A rotation's proof over the trials (medians): old versions destroyed after a restart that read every table,
    or what still needed them."""
    left, restarted = v.median(step, "left_behind"), v.median(step, "restarted")
    if left is None:
        return ""
    if left:
        return f"{left:g} part(s) still needed an older version: nothing retired (samples/<config>/encrypt-block*.json)"
    if not restarted:
        return "the server did not start or read without the old versions: they were restored (the finding)"
    return (f"{v.median(step, 'old_versions_destroyed') or 0:g} old version(s) destroyed, the server restarted and "
            f"read all {v.median(step, 'tables_read') or 0:g} tables")


@dataclass
class MechanismCost:
    """What switching one config's mechanism on cost, as a decision reads it (every figure a median over the
    measured trials, ratios paired per trial; None: not measured for this mechanism)."""

    config: str
    encryption: str
    online: bool  # switched while the service ran (else offline, the service stopped)
    method: str  # the engine's own words (the manifest's ``switching`` fact)
    trials: int
    resolved: bool  # at least MIN_TRIALS trials: the intervals can be read
    time_to_done_s: float | None  # the switch on (the fastest thread count when several were run)
    downtime_s: float | None  # service stopped: the offline method, or the restart(s) an online switch needs
    restart_s: float | None  # the restart before an online switch (key plugin), when it needs one
    restart_back_s: float | None  # the restart(s) after its way back
    peak_extra_disk_bytes: float | None
    copy_bytes_per_s: float | None
    tpm_during: PairedRatio | None  # online: TPM meanwhile ÷ the plaintext baseline
    p95_during: PairedRatio | None
    tpm_after: PairedRatio | None  # steady TPM once encrypted ÷ the plaintext baseline
    plaintext_left: int | None  # hits in the new place after the switch (a finding when > 0)
    old_copy_plaintext: int | None  # hits in the old copy until it was deleted (a switch that copies)
    rows: list[SwitchRow] = field(default_factory=list)  # every switch of the config, for the details


def mechanism_costs(run_dir: Path) -> list[MechanismCost]:
    """Per config of the ``encrypt`` run in ``run_dir`` (its measurements.csv and manifest.json): how switching
    its mechanism on went. The switch on is the fastest cycle's (fewest seconds to done); the downtime of an online
    switch is that cycle's restart before it."""
    manifest = json.loads((Path(run_dir) / "manifest.json").read_text())
    configs = {c["label"]: c for c in manifest.get("configs", [])}
    rows = switch_rows(load_measurements(Path(run_dir)), list(configs))
    out = []
    for label, config in configs.items():
        mine = [r for r in rows if r.config == label]
        ons = [r for r in mine if r.action == "on" and r.seconds is not None]
        if not ons:
            continue
        on = min(ons, key=lambda r: r.seconds or 0.0)
        cycle = [r for r in mine if r.cycle == on.cycle]
        restart = next((r for r in cycle if r.action == "restart_on"), None)
        back = next((r for r in cycle if r.action == "restart_off"), None)
        switching: dict[str, Any] = config.get("switching") or {}  # the workload's load facts
        out.append(MechanismCost(
            label, str(config.get("encryption", "")), not on.offline, str(switching.get("method", "")), on.trials,
            on.resolved, on.seconds, on.downtime if on.offline else (restart.downtime if restart else None),
            restart.downtime if restart else None, back.downtime if back else None, on.extra_disk, on.copy_rate,
            on.tpm, on.p95, on.after, on.left, on.old_copy_left, mine))
    return out
