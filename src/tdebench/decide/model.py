"""One decision, computed from its directory alone: decision.json and the sub-runs' directories (their manifests,
verification.json and report CSVs). Every view (terminal, summary.md, index.html, decision.csv) renders this."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.decide import attackers as attacker_names
from tdebench.decide import costs, sources
from tdebench.decide.caveats import Note, caveats
from tdebench.decide.costs import Figure
from tdebench.api.regime import split_label
from tdebench.decide.plan import SubRun
from tdebench.decide.protection import Protection, protection
from tdebench.decide.ranking import Ranking, rank
from tdebench.decide.record import DecisionRecord
from tdebench.decide.switching import Switching, switching
from tdebench.report.layers_view import layer_of
from tdebench.stats.overhead import Overhead


@dataclass
class Mechanism:
    """Everything the page says about one spec."""

    encryption: str
    layer: str
    costs: dict[tuple[int, float | None], Overhead | None]  # (figure index, regime) -> overhead.csv row
    protection: Protection
    switching: Switching
    notes: list[Note] = field(default_factory=list)


@dataclass
class RunInfo:
    """One sub-run as decision.json and its directory record it."""

    name: str
    role: str
    status: str
    seconds: float | None
    floor_s: float
    note: str
    present: bool
    command: str


@dataclass
class Decision:
    path: Path
    record: DecisionRecord
    engine: str
    engine_version: str
    workload: str
    regimes: list[float | None]
    figures: list[Figure]
    plain: Protection
    plain_costs: dict[tuple[int, float | None], Overhead | None]
    mechanisms: list[Mechanism]
    ranking: Ranking
    caveats: list[Note]
    runs: list[RunInfo]
    data_bytes: tuple[float, str] | None = None  # the user's data: (bytes, what they are), the cost run's plain twin
    cost_max_time: float | None = None  # the --max-time the budget left the cost run

    @property
    def request(self) -> dict[str, Any]:
        return self.record.request

    def ranking_keys(self) -> list[tuple[int, float | None]]:
        """The (figure, regime) pairs the rule compares: every headline in every regime."""
        return [(i, r) for r in self.regimes for i, f in enumerate(self.figures) if f.kind == "headline"]

    def figure_title(self, key: tuple[int, float | None]) -> str:
        return f"{self.figures[key[0]].title}, {costs.regime_title(key[1])}"

    def figure_label(self, key: tuple[int, float | None]) -> str:
        """A ranking figure's short name for a table header (its title is in the rule's text)."""
        step = self.figures[key[0]].step
        return step if len(self.regimes) < 2 else f"{step}, {costs.regime_title(key[1])}"


def _run_info(record: DecisionRecord, sub: SubRun, files: sources.SubRunFiles) -> RunInfo:
    entry = record.run_entry(sub.name)
    status = str(entry.get("status") or ("not started" if not files.present else "unknown"))
    command = sub.command(str(record.request.get("engine", "")), record.request.get("server_settings") or {},
                          f"{record.path / sub.name}-alone")
    return RunInfo(sub.name, sub.role, status, entry.get("seconds"), sub.floor_s, str(entry.get("note") or ""),
                   files.present, command)


def _cost_cells(cost: sources.SubRunFiles, enc: str, figures: list[Figure],
                regimes: list[float | None]) -> dict[tuple[int, float | None], Overhead | None]:
    return {(i, r): costs.overhead_of(cost, enc, f, r) for r in regimes for i, f in enumerate(figures)}


def load_decision(path: Path) -> Decision:
    """Read a decision directory into the model every view renders."""
    record = DecisionRecord.read(path)
    subs = [SubRun.from_json(r) for r in record.plan.get("runs") or []]
    files = {s.name: sources.load(record.path / s.name, s.name) for s in subs}
    cost = next((files[s.name] for s in subs if s.role == "cost"), sources.SubRunFiles("cost", record.path / "cost"))
    backups = next((files[s.name] for s in subs if s.role == "backups"), None)
    figures = costs.figures(cost) if cost.present else []
    regimes = costs.regimes(cost) or [None]
    specs = [str(s) for s in record.request.get("mechanisms") or []]
    found = caveats([files[s.name] for s in subs])
    refused = record.plan.get("not_switched") or {}
    mechanisms = []
    for enc in specs:
        sub = next((s for s in subs if s.role == "switching" and enc in s.encryption), None)
        switch = switching(enc, files[sub.name] if sub else None, refused.get(enc, ""),
                           record.run_entry(sub.name) if sub else {})
        mechanisms.append(Mechanism(enc, layer_of(enc), _cost_cells(cost, enc, figures, regimes),
                                    protection(enc, cost, backups), switch,
                                    [n for n in found if n.encryption == enc]))
    decision = Decision(record.path, record, str(record.request.get("engine", "")),
                        _engine_version(cost), str(record.request.get("workload_name", "")), regimes, figures,
                        protection("none", cost, backups), _plain_cells(cost, figures, regimes), mechanisms,
                        Ranking("", [], [], [], ""), [n for n in found if not n.encryption],
                        [_run_info(record, s, files[s.name]) for s in subs], cost.data_bytes("none"),
                        (cost.manifest.get("plan") or {}).get("max_time"))
    keys = decision.ranking_keys()
    attackers = attacker_names.from_json(record.request.get("against") or [])
    decision.ranking = rank([m.protection for m in mechanisms], attackers,
                            [decision.figure_title(k) for k in keys],
                            {m.encryption: [m.costs.get(k) for k in keys] for m in mechanisms})
    return decision


def _plain_cells(cost: sources.SubRunFiles, figures: list[Figure],
                 regimes: list[float | None]) -> dict[tuple[int, float | None], Overhead | None]:
    """Any mechanism's row per cell: its ``median_plain`` is the plain twin's median."""
    out: dict[tuple[int, float | None], Overhead | None] = {}
    for r in regimes:
        for i, f in enumerate(figures):
            out[(i, r)] = next((o for o in cost.overheads if (o.test, o.step, o.metric) == f.series
                                and split_label(o.config)[1] == r), None)
    return out


def _engine_version(cost: sources.SubRunFiles) -> str:
    return next((str(c.get("engine_version")) for c in cost.manifest.get("configs") or []
                 if isinstance(c, dict) and c.get("engine_version")), "")
