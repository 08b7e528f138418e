"""How a workload presents its results: its title, the figures it reports first (its headlines), the titles of its
metrics, how its steps are grouped into tables, and the report sections of its own.

A workload declares a :class:`Presentation`; the manifest's plan carries it (``plan.presentation``), so that
``tdebench report`` rebuilds a run from the run directory alone, and the terminal summary and the report read it
instead of knowing any workload by name. The runner's ``--precision`` rule watches the headlines by name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

#: the terminal summary's layout: ``totals`` (the headline total per config, then the steps of the headline's test),
#: ``rates`` (throughput per virtual-user step, then latency per transaction kind), ``steps`` (one table of the
#: steps of :attr:`Presentation.step_groups`' first test), ``switching`` (the switching table; no plain twin)
Layout = Literal["totals", "rates", "steps", "switching"]
LAYOUTS: tuple[str, ...] = ("totals", "rates", "steps", "switching")
#: the metric of a time at a common wait per page read, recorded beside an elapsed time with pages read from the
#: disk (:class:`tdebench.api.workload.WaitSplit`, :mod:`tdebench.stats.common_wait`)
COMMON_WAIT = "at_common_wait"
#: the kinds of report section a workload can ask for (their renderers live in tdebench.report)
SECTION_KINDS: tuple[str, ...] = ("queries", "conditions", "backups", "switching")


@dataclass(frozen=True)
class Headline:
    """One figure a workload reports first, e.g. the weighted total time of a user's reads.

    ``name`` is unique within the workload (what ``--precision-metric`` and the manifest call it); ``test``,
    ``step`` and ``metric`` name its series in measurements.csv; ``title`` is what a DBA reads; ``steps``, when
    the workload knows them, the steps of its stepped trial the figure's value comes from (``--precision`` stops
    running a step once every figure that needs it has met its target); None: every step, or not known."""

    name: str
    test: str
    step: str
    metric: str
    title: str
    higher_is_better: bool = False
    steps: tuple[str, ...] | None = None

    @property
    def series(self) -> tuple[str, str, str]:
        return (self.test, self.step, self.metric)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.steps is None:
            del out["steps"]
        else:
            out["steps"] = list(self.steps)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Headline:
        steps = data.get("steps")
        return cls(**{k: data[k] for k in ("name", "test", "step", "metric", "title") if k in data},
                   higher_is_better=bool(data.get("higher_is_better", False)),
                   steps=tuple(str(s) for s in steps) if isinstance(steps, list | tuple) else None)


@dataclass(frozen=True)
class StepGroup:
    """The steps of one test shown as a table: a row per step, per config its median and overhead, one table per
    metric of ``metrics`` (in that order, those the run has)."""

    test: str
    title: str
    metrics: tuple[str, ...] = ("elapsed",)


@dataclass(frozen=True)
class Rate:
    """A throughput drawn against virtual users (TPC-C's TPM, sysbench's transactions/s): ``title`` names it in
    tables and charts, ``caption`` says what it counts."""

    metric: str
    title: str
    caption: str = ""


@dataclass(frozen=True)
class Section:
    """A report section of the workload's own, drawn by the report's renderer of ``kind`` (:data:`SECTION_KINDS`):
    ``queries`` the steps of ``test`` one per query with their overheads; ``conditions`` the consistency checks
    recorded as ``condition_<N>_violations`` in ``test``/``step``, ``texts`` saying what each must hold;
    ``backups`` the backups of ``test`` with backups.json's scan; ``switching`` the encrypt workload's switches
    in ``test``. ``note`` is the section's footnote."""

    kind: str
    title: str
    test: str = ""
    step: str = ""
    note: str = ""
    texts: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Section:
        texts = data.get("texts") if isinstance(data.get("texts"), dict) else {}
        return cls(**{k: str(data[k]) for k in ("kind", "title", "test", "step", "note") if k in data},
                   texts={str(k): str(v) for k, v in texts.items()})


@dataclass(frozen=True)
class Presentation:
    """How a workload is shown. ``title`` names what it measures (``TPC-H power test``); ``headlines`` the figures
    it reports first; ``layout`` the terminal summary (:data:`Layout`); ``metrics`` a DBA's title per metric the
    workload records beyond the common ones; ``rates`` its throughputs against virtual users; ``latency_kinds`` the
    transaction kinds whose latency percentiles it records per virtual-user step (``vu4.new_order``); ``step_groups``
    its per-step tables; ``sections`` its own report sections; ``notes`` footnotes by place: ``cipher_floor``
    (what the floor's total row covers), ``query_schedule`` (what one pass of the interleaved schedule is);
    ``figures`` the official figures the summary table shows beside the headline (step -> title, e.g. TPC-H's
    ``power_at_size`` -> ``Power@Size``)."""

    title: str
    headlines: tuple[Headline, ...] = ()
    layout: Layout = "steps"
    metrics: dict[str, str] = field(default_factory=dict)
    rates: tuple[Rate, ...] = ()
    latency_kinds: tuple[str, ...] = ()
    step_groups: tuple[StepGroup, ...] = ()
    sections: tuple[Section, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout {self.layout!r} is not one of {', '.join(LAYOUTS)}")
        unknown = [s.kind for s in self.sections if s.kind not in SECTION_KINDS]
        if unknown:
            raise ValueError(f"section kind {unknown[0]!r} is not one of {', '.join(SECTION_KINDS)}")

    def with_headlines(self, headlines: tuple[Headline, ...]) -> Presentation:
        """The same presentation with a run's own headlines (they may depend on its options and data)."""
        return replace(self, headlines=tuple(headlines))

    def section(self, kind: str) -> Section | None:
        """The first section of ``kind``, None when the workload has none."""
        return next((s for s in self.sections if s.kind == kind), None)

    def group(self, test: str) -> StepGroup | None:
        """The step group of ``test``, None when the workload shows none for it."""
        return next((g for g in self.step_groups if g.test == test), None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Presentation:
        """Read what :meth:`to_json` wrote; unknown keys are ignored (a newer tdebench may add some), and an unknown
        layout or section kind falls back to the steps layout and is left out."""
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        layout = data.get("layout") if data.get("layout") in LAYOUTS else "steps"
        return cls(
            title=str(data.get("title", "")),
            headlines=tuple(Headline.from_json(h) for h in data.get("headlines") or () if isinstance(h, dict)),
            layout=layout,  # type: ignore[arg-type]
            metrics={str(k): str(v) for k, v in (data.get("metrics") or {}).items()},
            rates=tuple(Rate(**{k: str(r[k]) for k in ("metric", "title", "caption") if k in r})
                        for r in data.get("rates") or () if isinstance(r, dict)),
            latency_kinds=tuple(str(k) for k in data.get("latency_kinds") or ()),
            step_groups=tuple(StepGroup(str(g.get("test", "")), str(g.get("title", "")),
                                        tuple(str(m) for m in g.get("metrics") or ("elapsed",)))
                              for g in data.get("step_groups") or () if isinstance(g, dict)),
            sections=tuple(Section.from_json(s) for s in data.get("sections") or ()
                           if isinstance(s, dict) and s.get("kind") in SECTION_KINDS),
            notes={str(k): str(v) for k, v in (data.get("notes") or {}).items()},
            figures={str(k): str(v) for k, v in (data.get("figures") or {}).items()},
        )
