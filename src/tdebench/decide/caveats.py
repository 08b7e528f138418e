"""The caveats the runs found, each from the runs' own files (never typed in), with the run it came from:

* the warnings of each run's report (noise, failures, labels the evidence does not confirm);
* what a run recorded as a problem, a failed step or an abandoned config (manifest);
* where a mechanism's twin differs from the plain twin beyond the cipher: the OS page cache of a memory regime
  (``memory.regimes.<label>.applied.os_page_cache``, e.g. fscrypt serving ``O_DIRECT`` as buffered I/O);
* plaintext the at-rest scan found outside a spec's scope (verification.json ``outside_scope_hits``), after a
  switch and in the old copy a switch left (switching.csv);
* how much larger an encrypted config's compressed backups are than the plain twin's (the backups run's sizes);
* a ``--precision`` target not met (manifest ``precision.outcome``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from statistics import median
from typing import Any

from tdebench.api.regime import split_label
from tdebench.decide.sources import SubRunFiles, measurement_rows
from tdebench.report.fmt import fmt_bytes


# warning kinds a decision folds into one line per run (each is in the run's own report/warnings.md): they say how
# far a figure can be trusted, which the page's intervals and "not resolved" already say
_STATISTICAL = {"noise": ("noisy series", "noisy series"),
                "small_n": ("series with too few values", "series with too few values"),
                "no_effect": ("comparison with no difference resolved", "comparisons with no difference resolved"),
                "small_n_ci": ("interval from few trials", "intervals from few trials")}


@dataclass(frozen=True)
class Note:
    """One caveat: what it says, the run that found it and the spec it concerns ("" for the whole run)."""

    run: str
    text: str
    encryption: str = ""


def _manifest_notes(run: SubRunFiles) -> list[Note]:
    m = run.manifest
    out = [Note(run.name, f"problem: {p}") for p in m.get("problems") or []]
    out += [Note(run.name, f"failed: {p}") for p in m.get("failed_steps") or []]
    out += [Note(run.name, f"abandoned: {p}") for p in m.get("abandoned") or []]
    outcome = (m.get("precision") or {}).get("outcome") or {}
    decisions = (m.get("precision") or {}).get("decisions") or {}
    out += [Note(run.name, f"{label}: {text}") for label, text in outcome.items()
            if not (decisions.get(label) or {}).get("met")]
    return out


def _regime_notes(run: SubRunFiles) -> list[Note]:
    """A mechanism's OS page cache handled unlike its plain twin's at the same ratio."""
    regimes = (run.manifest.get("memory") or {}).get("regimes") or {}
    plain = {split_label(label)[1]: r for label, r in regimes.items()
             if isinstance(r, dict) and run.config_of("none") == split_label(label)[0]}
    out = []
    for label, regime in regimes.items():
        if not isinstance(regime, dict):
            continue
        base, ratio = split_label(label)
        enc = next((str(c.get("encryption")) for c in run.manifest.get("configs") or []
                    if isinstance(c, dict) and c.get("label") == base), "")
        mine = (regime.get("applied") or {}).get("os_page_cache")
        theirs = ((plain.get(ratio) or {}).get("applied") or {}).get("os_page_cache")
        if enc and enc != "none" and mine and mine != theirs:
            out.append(Note(run.name, f"at cache {ratio:g} × data the OS page cache is {mine} (the plain twin's: "
                                      f"{theirs or 'not recorded'})", enc))
    return out


def _scope_notes(run: SubRunFiles) -> list[Note]:
    out = []
    for label, entry in (run.verification.get("configs") or {}).items():
        hits = entry.get("outside_scope_hits") if isinstance(entry, dict) else None
        if isinstance(hits, int) and hits > 0 and entry.get("encryption") != "none":
            where = ", ".join(str(p) for p in (entry.get("outside_scope") or [])[:4])
            out.append(Note(run.name, f"{hits} plaintext hit(s) outside the spec's scope ({where}), which it leaves "
                                      "plaintext by design", str(entry.get("encryption", ""))))
    return out


def _switch_notes(run: SubRunFiles) -> list[Note]:
    out = []
    for row in run.switching:
        enc = next((str(c.get("encryption")) for c in run.manifest.get("configs") or []
                    if isinstance(c, dict) and c.get("label") == row.get("config")), "")
        left, outside = row.get("plaintext_hits_in_scope"), row.get("plaintext_hits_outside_scope")
        old = row.get("old_copy_hits")
        if old and float(old) > 0:
            out.append(Note(run.name, f"{row.get('action')}: {float(old):g} plaintext hit(s) in the old copy the switch "
                                      "left until it was deleted: its blocks stay on the disk until reused", enc))
        if left and float(left) > 0:
            out.append(Note(run.name, f"{row.get('action')}: {float(left):g} plaintext hit(s) left in scope after the "
                                      "switch (median over trials): the old plaintext survived it on disk", enc))
        if outside and float(outside) > 0:
            out.append(Note(run.name, f"{row.get('action')}: {float(outside):g} plaintext hit(s) outside the spec's "
                                      "scope after the switch", enc))
    return out


def _backup_sizes(run: SubRunFiles) -> list[Note]:
    """Per compressed backup kind: each encrypted config's median size against the plain twin's."""
    kinds = {k for k, info in (_backups_json(run).get("kinds") or {}).items()
             if isinstance(info, dict) and info.get("compressed")}
    sizes: dict[tuple[str, str], list[float]] = {}
    for r in measurement_rows(run.path, "backup"):
        if r.get("step") in kinds and r.get("metric") == "bytes":
            sizes.setdefault((r["step"], r.get("encryption", "")), []).append(float(r["value"]))
    out = []
    for kind in sorted(kinds):
        plain = sizes.get((kind, "none"))
        if not plain:
            continue
        base = median(plain)
        for (k, enc), values in sorted(sizes.items()):
            if k == kind and enc != "none" and base > 0:
                size = median(values)
                out.append(Note(run.name, f"compressed backup {kind}: {size / base:.2f}× the plain twin's "
                                          f"({fmt_bytes(size)} against {fmt_bytes(base)})", enc))
    return out


def _backups_json(run: SubRunFiles) -> dict[str, Any]:
    import json

    try:
        data = json.loads((run.path / "backups.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _warnings(run: SubRunFiles) -> list[Note]:
    """The warnings of the run's report (its notes, severity info, are left to the run's own report)."""
    if not run.present or not (run.path / "measurements.csv").is_file():
        return []
    try:
        from tdebench.report.model import summarize

        warnings = run.warnings if run.warnings is not None else summarize(run.path).warnings
    except Exception as exc:  # noqa: BLE001 - the page still shows what else the runs found
        return [Note(run.name, f"its warnings could not be read: {type(exc).__name__}: {exc}")]
    shown = [w for w in warnings if w.severity == "warning"]
    out = [Note(run.name, w.message) for w in shown if w.kind not in _STATISTICAL]
    folded = Counter(w.kind for w in shown if w.kind in _STATISTICAL)
    if folded:
        parts = ", ".join(f"{n} {_STATISTICAL[kind][n != 1]}" for kind, n in folded.items())
        total = sum(folded.values())
        out.append(Note(run.name, f"{total} statistical warning{'s' if total != 1 else ''} ({parts}): small "
                                  f"differences there cannot be resolved; each one in {run.name}/report/warnings.md"))
    return out


def caveats(runs: list[SubRunFiles]) -> list[Note]:
    """Every caveat of the decision's runs, in run order, duplicates dropped."""
    out: list[Note] = []
    for run in runs:
        if not run.present:
            continue
        out += (_manifest_notes(run) + _regime_notes(run) + _scope_notes(run) + _switch_notes(run)
                + _backup_sizes(run) + _warnings(run))
    return list(dict.fromkeys(out))
