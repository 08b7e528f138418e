"""The layers table: every config of a run in one table, where its encryption happens, what it costs and what it
stops, for runs of several engines or with a stated baseline (``[run] baseline``, ``--baseline``).

Cost: each config's headline against its own plain twin (the per-engine overhead), and against the run's stated
baseline when the config's engine speaks the baseline's SQL family (e.g. ``sqlite3mc:chacha20`` against
``sqlite-none``). Such a cross-engine figure also holds the difference of library or version between the engines;
a note gives that difference alone (the other engine's plain twin against the baseline) so it can be told apart.
Stops: the verdict of every threat-model row (verification.json), as the per-engine threat model shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tdebench.api.regime import ratio_of, regime_label, split_label
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError
from tdebench.report import threats_view
from tdebench.report.fmt import DASH, fmt_ci, fmt_pct, fmt_value
from tdebench.report.htmlkit import Col, Safe, esc, join, pill, table, tag
from tdebench.report.mdkit import md_table
from tdebench.report.model import ConfigRow, EngineSummary, RunSummary
from tdebench.report.texts import headline_label
from tdebench.stats.overhead import Comparison, compare_samples

NOTE = ("vs baseline: the config's headline against the run's stated baseline, paired by block (engines of the "
        "baseline's SQL family only); vs own plain twin: against the plain config of its own engine, as in the "
        "engine's summary. A figure across engines includes the difference of library and version between them "
        "(see the notes). The attacker columns are the threat model's verdicts (section Threat model).")
#: what each mechanism's layer is called
LAYERS = {"tde": "engine (TDE)", "sqlcipher": "engine (SQLCipher page cipher)", "column": "engine (column encryption)"}


def layer_of(encryption: str) -> str:
    """Where a spec's encryption happens: the engine, the kernel's filesystem or a FUSE filesystem."""
    try:
        spec = parse_spec(encryption)
    except UsageError:
        return encryption
    if spec.is_plain:
        return "none"
    if spec.mechanism == "fs":
        kernel = spec.cipher.startswith("fscrypt")
        return "kernel filesystem (ext4 fscrypt)" if kernel else "FUSE filesystem (gocryptfs)"
    return LAYERS.get(spec.mechanism, f"engine ({spec.mechanism})")


@dataclass
class LayerRow:
    engine: str
    row: ConfigRow
    layer: str
    versus_baseline: Comparison | None
    threats: dict[str, str]
    library: str = ""


@dataclass
class LayersTable:
    baseline: str | None
    headline: str
    unit: str
    rows: list[LayerRow]
    attackers: list[tuple[str, str]]
    notes: list[str] = field(default_factory=list)


def _manifest(rs: RunSummary, label: str) -> dict[str, Any]:
    """The manifest's entry of a config (a config at a memory ratio: its config's)."""
    return rs.files.manifest_config(label) or rs.files.manifest_config(split_label(label)[0])


def _version(rs: RunSummary, row: ConfigRow) -> str:
    return row.engine_version or str(_manifest(rs, row.label).get("engine_version") or "")


def _family(rs: RunSummary, label: str) -> str:
    dialect = _manifest(rs, label).get("dialect")
    return str(dialect.get("family", "")) if isinstance(dialect, dict) else ""


def _versus(rs: RunSummary, base_es: EngineSummary, es: EngineSummary, label: str,
            baseline: str) -> Comparison | None:
    """``label``'s headline against the baseline at the same memory ratio (None: not comparable or no data)."""
    if base_es.headline is None or label == baseline or _family(rs, label) != _family(rs, baseline):
        return None
    key = base_es.headline._replace(config=baseline)
    base, other = rs.analysis.measurements.sample(key), rs.analysis.measurements.sample(
        key._replace(engine=es.engine, config=label))
    if base is None or other is None:
        return None
    s = rs.analysis.settings
    return compare_samples(base, other, seed=s.seed, n_resamples=s.n_resamples, method=s.ci_method)


def _library_notes(rs: RunSummary, t: LayersTable, base_es: EngineSummary) -> list[str]:
    """Per other engine of the baseline's family: its library against the baseline's, and that difference alone
    (its plain twin against the baseline, at each memory ratio of the run)."""
    base_row = next((r.row for r in t.rows if split_label(r.row.label)[0] == t.baseline), None)
    if base_row is None:
        return []
    out = []
    for es in rs.engines:
        if es is base_es or not any(r.versus_baseline for r in t.rows if r.engine == es.engine):
            continue
        plain = [r for r in t.rows if r.engine == es.engine and r.row.is_plain and r.versus_baseline]
        ver = _version(rs, es.rows[0]) or es.engine
        text = (f"{es.engine}'s configs run {ver}, the baseline {t.baseline} runs {_version(rs, base_row) or '?'}: "
                "their figures against the baseline include that difference of library")
        if plain:
            alone = "; ".join(f"{r.row.label} (no encryption) shows alone: {fmt_pct(c.pct)} "
                              f"({fmt_ci(c.ci_low_pct, c.ci_high_pct)})"
                              for r in plain if (c := r.versus_baseline) is not None)
            text += (f", which {alone}. The cost of {es.engine}'s ciphers alone is their figure against their own "
                     "plain twin.")
        else:
            text += f"; {es.engine} has no plain config in this run, so that difference cannot be told apart " \
                    f"(add none to its encryption list)."
        out.append(text)
    return out


def layers_table(rs: RunSummary) -> LayersTable | None:
    """The table, for runs of several engines or with a stated baseline (None otherwise)."""
    baseline = (rs.manifest.get("plan") or {}).get("baseline")
    if not baseline and len(rs.engines) < 2:
        return None
    base_es = next((es for es in rs.engines if any(split_label(r.label)[0] == baseline for r in es.rows)), None)
    rows: list[LayerRow] = []
    attackers: dict[str, str] = {}
    # the baseline's engine first
    for es in sorted(rs.engines, key=lambda e: e is not base_es):
        threats = {c.label: c for c in threats_view.config_threats(rs, es)}
        for r in es.rows:
            at = regime_label(baseline, ratio_of(r.label)) if baseline else None
            versus = _versus(rs, base_es, es, r.label, at) if base_es and at else None
            found = threats.get(r.label)
            verdicts = {str(x.get("id")): str(x.get("status")) for x in (found.rows if found else [])}
            for x in found.rows if found else []:
                attackers.setdefault(str(x.get("id")), str(x.get("attacker")))
            rows.append(LayerRow(es.engine, r, layer_of(r.encryption), versus, verdicts, _version(rs, r) or es.engine))
    head = base_es.headline if base_es else next((es.headline for es in rs.engines if es.headline), None)
    unit = next((r.row.headline.unit for r in rows if r.row.headline and r.row.headline.unit), "")
    # an attacker with nothing to take from any config (e.g. the network, for embedded engines) takes no column
    shown = [(i, name) for i, name in attackers.items() if any(r.threats.get(i, "not applicable") != "not applicable"
                                                               for r in rows)]
    t = LayersTable(baseline, headline_label(head), unit, rows, shown)
    t.notes = _library_notes(rs, t, base_es) if base_es else []
    return t


def _cells(t: LayersTable, r: LayerRow) -> list[str]:
    h, own, c = r.row.headline, r.row.overhead, r.versus_baseline
    versus = (f"{fmt_pct(c.pct)} ({fmt_ci(c.ci_low_pct, c.ci_high_pct)})" if c else
              "baseline" if t.baseline and split_label(r.row.label)[0] == t.baseline else DASH)
    mine = (f"{fmt_pct(own.overhead_pct)} ({fmt_ci(own.ci_low_pct, own.ci_high_pct)})" if own else
            "plain twin" if r.row.is_baseline else DASH)
    return [r.row.shown_label, r.layer, r.library, fmt_value(h.median, h.unit) if h else DASH, versus, mine]


def headers(t: LayersTable) -> list[str]:
    return (["config", "layer", "library / server", f"{t.headline} (median)",
             f"vs baseline {t.baseline} (95% CI)" if t.baseline else "vs baseline", "vs own plain twin (95% CI)"]
            + [name for _, name in t.attackers])


def md_lines(rs: RunSummary) -> list[str]:
    t = layers_table(rs)
    if t is None:
        return []
    rows = [_cells(t, r) + [r.threats.get(i, DASH) for i, _ in t.attackers] for r in t.rows]
    return (["## Layers: cost and protection", ""] + md_table(headers(t), rows, {3, 4, 5}) + [""]
            + [f"- {n}" for n in t.notes] + ([""] if t.notes else []) + [NOTE, ""])


def html_section(rs: RunSummary) -> Safe:
    t = layers_table(rs)
    if t is None:
        return Safe("")
    cols = [Col(h, i in (3, 4, 5)) for i, h in enumerate(headers(t))]
    rows = [[*_cells(t, r), *[pill(r.threats[i], threats_view.pill_kind(r.threats[i], r.row.is_plain))
                              if i in r.threats else esc(DASH) for i, _ in t.attackers]] for r in t.rows]
    parts: list[object] = [tag("h2", "Layers: cost and protection"), table(cols, rows)]
    parts += [tag("p", n, class_="verdict") for n in t.notes] + [tag("p", NOTE, class_="note")]
    return tag("section", join(parts), id="layers")
