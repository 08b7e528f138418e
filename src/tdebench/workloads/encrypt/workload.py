"""``encrypt``: switch encryption on in a loaded plaintext database while it serves, timed, with the background's
throughput and latency before, during and after (docs/workloads/encrypt.md).

Every config names the TARGET spec (e.g. ``--engine mariadb --encryption tde:aes-256-ctr``): its instance starts as
the plaintext server a DBA switches from (its :meth:`~tdebench.api.engine.Instance.switcher`'s ``start_plain``) and
its data are loaded plaintext. How the config switches is its switcher's class (the engine's
:class:`~tdebench.api.switch.SwitchMethod` for the spec): online
(after the restart it may need), or offline (a rewrite, or a copy into filesystem encryption). Each trial plants
canaries, starts the background (TPC-C virtual users, closed loop) and runs the cycles of
:class:`tdebench.workloads.encrypt.cycle.TrialRun`, one per value of ``threads`` (and of ``iops`` when it lists
several: cycle ``t<K>-iops<N>``; one cycle ``offline`` offline). With ``sf``, TPC-H is loaded beside
the background when the engine's switch covers its whole server, or alone (no TPC-C, no background) when it
switches offline (:meth:`EncryptOptions.tpch_alone`): then a control scan ``offline.plain`` precedes the switch.
Measurements (test ``encrypt``):

* step ``t<K>.<phase>`` (phase before, during_on, after_on, during_off, after_off): ``tpm``, ``nopm``,
  ``committed``, ``seconds``, ``zero_seconds`` (longest run of seconds without a commit), ``latency_p50/p95/p99``
  and ``latency_max`` (s, every transaction kind), and for the other phases ``tpm_vs_before`` and
  ``p95_vs_before`` (ratios to the cycle's ``before``: the trial is the pairing unit);
* step ``t<K>.on`` / ``t<K>.off``: ``time_to_done`` (s, from the SET to the engine's own "every tablespace
  done"), ``read_bytes``/``write_bytes`` (the server's storage IO meanwhile, /proc), ``tablespaces``, the engine's
  switch counters (e.g. ``innodb_encryption_rotation_pages_modified``);
* step ``t<K>.restart_on`` / ``t<K>.restart_off`` and ``offline.on`` / ``offline.off``: ``downtime`` too (the
  service stopped), per stage ``<stage>_seconds``; a switch that copies also ``copied_bytes``, ``copy_bytes_per_s``,
  ``removed_bytes``, ``wipe_seconds``;
* step ``switch_on``: ``time_to_done`` of the trial's last switch on (the headline);
* step ``t<K>.on.scan``: ``canary_hits_in_scope``, ``known_plaintext_hits_in_scope`` (old plaintext left after the
  switch: a finding), ``hits_outside_scope``; ``<cycle>.on.old_copy.scan`` the same for the old copy of a switch
  that copies, before it is deleted;
* step ``background``: ``errors``, ``retries``, ``latency_max``.

``samples/<config>/encrypt-block<NNN>.csv`` holds the per-second series (with the phase and the switch's progress),
``encrypt-block<NNN>.json`` the phases, switches and scans, ``encrypt-summary.json`` the paired ratios over the
measured trials so far with 95% t intervals.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.tables import TableSpec
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import Need, RunFiles, Workload
from tdebench.errors import UsageError
from tdebench.verify.atrest import new_markers
from tdebench.workloads.encrypt import record
from tdebench.workloads.encrypt.cycle import TEST, TrialRun, ensure_plain
from tdebench.workloads.encrypt.options import parse_options
from tdebench.workloads.tpcc import schema
from tdebench.workloads.tpcc.datagen import ensure_data
from tdebench.workloads.tpcc.loader import load_tpcc
from tdebench.workloads.tpcc.procs import resolve_mode
from tdebench.workloads.tpcc.slices import VuPool
from tdebench.workloads.tpch.datagen import check_data_root as check_tpch_data
from tdebench.workloads.tpch.datagen import ensure_data as ensure_tpch_data
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch import schema as tpch_schema
from tdebench.workloads.tpch.workload import TpchWorkload
from tdebench.workloads.encrypt.presentation import PRESENTATION

TPCH_DATABASE = "tpch"  # where TPC-H goes beside the background (sf)


def sampled_values(tpch_dir: Path) -> list[str]:
    """Per TPC-H table, the longest field of its first row (a comment: text no key or number repeats)."""
    out = []
    for spec in tpch_schema.TABLES:
        with open(tpch_dir / f"{spec.name}.tbl", encoding="utf-8") as handle:
            fields = handle.readline().rstrip("\n").split("|")
        out.append(max(fields, key=len))
    return out


class EncryptWorkload(Workload):
    """Encryption switched on (and off) under a live TPC-C background."""

    name = "encrypt"
    shown = PRESENTATION
    database = "tpcc"
    known_plaintext = ("ORIGINAL",)  # TPC-C's I_DATA/S_DATA
    schema_tables = schema.TABLE_NAMES
    needs = (Need("the engine cannot switch encryption on in place (it names no switcher: Engine.switcher_types)",
                  lambda e: bool(e.switcher_types)),
             Need("the TPC-C background's virtual users are processes of their own, and the engine's database can "
                  "be opened by one process only", lambda e: e.dialect.multi_process))
    verify_after_load = False  # the data start plaintext on purpose; each trial scans after its switch

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.opts = parse_options(plan.workload_options)
        self.data_dir = Path()
        self.tpch_dir: Path | None = None  # TPC-H (sf): beside the background, or alone (tpch_alone)
        self.alone = self._tpch_alone()
        if self.alone:  # the instance holds TPC-H only: its plaintext is what the scans look for
            self.database, self.schema_tables = TpchWorkload.database, TpchWorkload.schema_tables
            self.known_plaintext = TpchWorkload.known_plaintext
        elif self.opts.sf:
            self.known_plaintext = (*self.known_plaintext, *TpchWorkload.known_plaintext)
        self.history: dict[str, list[dict[str, float]]] = {}

    def _tpch_alone(self) -> bool:
        """Every config switches TPC-H (``sf``) alone, offline, with no TPC-C and no background
        (:meth:`EncryptOptions.tpch_alone`; check_configs refuses a mix)."""
        from tdebench.engines import get_engine

        return bool(self.plan.configs) and all(self.opts.tpch_alone(get_engine(c.engine), c.spec)
                                               for c in self.plan.configs)

    def tables(self) -> tuple[TableSpec, ...]:
        return tpch_schema.TABLES if self.alone else schema.TABLE_SPECS

    def sized_tables(self) -> list[str]:
        """The background's tables, and TPC-H's in its own database when loaded beside them."""
        beside = [f"{TPCH_DATABASE}.{t.name}" for t in tpch_schema.TABLES] if self.opts.sf and not self.alone else []
        return [*super().sized_tables(), *beside]

    def plan_json(self) -> dict[str, Any]:
        return {"workload": self.name, **self.opts.model_dump()}

    def headline(self) -> tuple[str, str, str]:
        """The time to fully encrypted of each config's switch on (``switch_on``: its last cycle's online, its one
        method's offline), a step every config has whatever its method."""
        return (TEST, record.HEADLINE_STEP, "time_to_done")

    def prepare(self, ui: RunListener) -> dict[str, Any]:
        from tdebench.engines import get_engine

        self.opts.check_configs(self.plan.configs)  # the CLI checked already; a resumed or in-process plan here
        for config in self.plan.configs:  # rotate=yes: keys on the run's own key server (not a user's)
            self.opts.rotates(config, get_engine(config.engine), read_only=bool(self.plan.key_server))
        if self.opts.sf:
            check_tpch_data(self.opts.sf, self.plan.data_dir)
        out: dict[str, Any] = {"raw_bytes": 0, "options": self.plan_json()}
        if not self.alone:
            ui.task_started("data", f"TPC-C data, {self.opts.warehouses} warehouse(s)", None)
            try:
                self.data_dir, facts = ensure_data(self.opts.warehouses, self.opts.seed, self.plan.data_dir, 0,
                                                   progress=ui.message)
            finally:
                ui.task_finished("data")
            out.update(facts, dir=str(self.data_dir), raw_bytes=facts.get("bytes", 0))
        if self.opts.sf:
            where = "alone, no background" if self.alone else "beside the background"
            ui.task_started("tpch-data", f"TPC-H data SF {self.opts.sf:g} ({where})", None)
            try:
                self.tpch_dir, tpch = ensure_tpch_data(self.opts.sf, self.plan.data_dir, progress=ui.message)
            finally:
                ui.task_finished("tpch-data")
            database = self.database if self.alone else TPCH_DATABASE
            out["tpch"] = {**tpch, "dir": str(self.tpch_dir), "database": database}
            out["raw_bytes"] += sum(int(f.get("bytes", 0)) for f in tpch.get("files", {}).values())
            if self.alone:  # a value of every table too, so the scans show they cover each one
                self.known_plaintext = (*TpchWorkload.known_plaintext, *sampled_values(self.tpch_dir))
        return out

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        """The switch made ready (keys loaded, tables plaintext), then TPC-C's load (and TPC-H's beside, ``sf``), or
        TPC-H's alone."""
        rec.workload = self.name
        switcher = state.instance.switcher()
        assert switcher is not None  # EncryptOptions.check_configs refused the config otherwise
        start = switcher.start_plain()
        switching = self.switching_facts(state)
        if self.alone:
            return {**self._load_tpch(state, rec, ui, None), "start_plain": start, "background": "none",
                    "switching": switching,
                    "method": "offline, TPC-H alone (no background: the service is stopped for the switch)"}
        mode = resolve_mode(self.opts.mode, state.dialect)
        load = load_tpcc(state.instance, state.dialect, self.data_dir, self.opts.warehouses,
                         lambda table, rows, seconds: ui.message(f"load {state.label}: {table}"),
                         procedures=mode == "procedures")
        rec.add("load", "total", "elapsed", load.total_seconds, "s")
        beside = self._load_tpch(state, rec, ui, TPCH_DATABASE) if self.tpch_dir is not None else {}
        return {**beside, "load_seconds": round(load.total_seconds, 6), "load_rows": load.rows, "tpcc_mode": mode,
                "start_plain": start, "switching": switching,
                "method": "online" if switching["online"] else "offline (the background stopped)"}

    def switching_facts(self, state: ConfigState) -> dict[str, Any]:
        """The manifest's word on how this config switches (:class:`~tdebench.api.switch.SwitchMethod`, as run:
        ``online`` False also under method=offline), beside the measurements a decision reads
        (:mod:`tdebench.stats.switching`)."""
        method = state.engine.switch_method(state.config.spec)
        assert method is not None
        return {**asdict(method), "online": self.opts.online(state.engine, state.config.spec),
                "rekeys": self.opts.rekeys(state.engine, state.config.spec), "way_back": self.opts.way_back}

    def _load_tpch(self, state: ConfigState, rec: Recorder, ui: RunListener, database: str | None) -> dict[str, Any]:
        """TPC-H (``sf``) plaintext, into ``database`` of the same server beside the background (the switch encrypts
        it with the background's tables) or, None, into the instance's own (alone): either way the switch's time, IO
        and disk are those of a database of that size."""
        assert self.tpch_dir is not None
        tpch = load_tpch(state.instance, state.dialect, self.tpch_dir,
                         lambda table, rows, seconds: ui.message(f"load {state.label}: TPC-H {table}"),
                         database=database)
        for table, (rows, seconds) in tpch.tables.items():
            rec.add("load", f"tpch.{table}", "elapsed", seconds, "s")
        rec.add("load", "tpch.total", "elapsed", tpch.total_seconds, "s")
        return {"tpch_database": database or self.database, "tpch_sf": self.opts.sf, "tpch_rows": tpch.rows,
                "tpch_load_seconds": round(tpch.total_seconds, 6)}

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        """With ``rate``: the background must reach it on the plaintext data, or the run stops (never lowered)."""
        if not self.opts.rate:
            return []
        pool = VuPool(state.instance, state.dialect, self.opts.tpcc(), self.opts.vus, self.opts.seed)
        try:
            if self.opts.rampup:
                pool.run(self.opts.rampup, measured=False)
            probe = min(self.opts.steady, 10.0)
            reached = pool.run(probe).committed / probe
        finally:
            pool.close()
        rec.add(TEST, "baseline_probe", "tps", reached, "txn/s")
        if reached < self.opts.rate:
            raise UsageError(f"encrypt: the background reached {reached:.1f} transactions/s on {state.label}'s "
                             f"plaintext baseline, below rate={self.opts.rate:g} (not lowered)",
                             "lower rate, or add vus or warehouses")
        return []

    def recover(self, state: ConfigState, block: int) -> None:
        ensure_plain(self.opts, state)

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        """Per cycle (a value of ``threads``, times ``iops`` when swept; one cycle for an offline method): the switch
        on (after the restart it needs), the at-rest scan with the background stopped (a flush cannot finish under
        writes), the re-keying and its scan, and with the way back the switch off (:class:`TrialRun`)."""
        rec.workload = self.name
        reset = ensure_plain(self.opts, state)
        if reset:
            rec.add(TEST, "reset", "elapsed", reset, "s")
        markers = new_markers()
        state.instance.plant_canaries(markers)  # plaintext until the switch: what must not survive it
        run = TrialRun(self.opts, state, block, markers, self.known_plaintext, self.alone,
                       rotates=self.opts.rotates(state.config, state.engine, read_only=bool(self.plan.key_server)))
        run.run()
        result = run.result
        folder = self.rundir.path / "samples" / state.label
        if state.label not in self.history:  # a resumed run: its earlier trials count too
            self.history[state.label] = record.earlier_trials(self.rundir.path / "measurements.csv", state.label)
        result.failures += record.trial(rec, block, run.series, self.opts.rate, folder, self.history[state.label])
        if not state.instance.alive():
            result.failures.append(f"the server of {state.label} died during the trial")
        return result
