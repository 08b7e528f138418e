"""The threat model in the report: one verdict per attacker and config, with the evidence behind it.

Everything comes from verification.json (``configs.<label>.threats``, written by :mod:`tdebench.verify.threats`):
a matrix per engine (attackers × configs), the verdict sentence of each encrypted config, and per config the
evidence or reason of every row. What each row means and how it is checked: docs/security.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tdebench.report.mdkit import md_table
from tdebench.report.htmlkit import Col, Safe, esc, join, pill, table, tag
from tdebench.report.model import EngineSummary, RunSummary
from tdebench.verify.threat_rows import attackers_of

STATUS_WORDS = ("protected", "exposed", "not applicable", "not checked")
LEGEND = ("protected: the check ran and found no plaintext (or nothing the attacker can use); exposed: it found "
          "plaintext, or the setting that lets it through; not applicable: the attacker has nothing to take here "
          "(with the reason); not checked: tdebench could not check it (with the reason). Evidence counts hits per "
          "marker name (canary-N: random canary rows planted for the check; known:…: text the workload's data is known to hold); canary values, "
          "keys and passwords are never written. How each row is checked: docs/security.md.")


@dataclass
class ConfigThreats:
    """The threat-model rows of one config."""

    label: str
    encryption: str
    plain: bool
    rows: list[dict[str, Any]]
    sentence: str
    final_pass: bool


def config_threats(rs: RunSummary, es: EngineSummary) -> list[ConfigThreats]:
    out = []
    specs = [r.encryption for r in es.rows]
    for r in es.rows:
        entry = rs.files.verification_for(r.label) or {}
        threats = entry.get("threats")
        if not isinstance(threats, dict) or not isinstance(threats.get("rows"), list):
            continue
        rows = [x for x in threats["rows"] if isinstance(x, dict) and x.get("status") in STATUS_WORDS]
        shown = r.encryption if r.encryption and specs.count(r.encryption) == 1 else r.label  # e.g. none, none-tls
        out.append(ConfigThreats(r.label, shown, r.is_plain, rows,
                                 str(threats.get("sentence") or ""), bool(threats.get("final_pass"))))
    return out


def sentences(rs: RunSummary, es: EngineSummary) -> list[str]:
    """The verdict sentence of every encrypted config of one engine."""
    # one per sentence: a config run at several memory ratios has one verification
    return list(dict.fromkeys(c.sentence for c in config_threats(rs, es) if not c.plain and c.sentence))


def attackers(configs: list[ConfigThreats]) -> list[tuple[str, str]]:
    """(row id, attacker) over all configs, in row order."""
    return attackers_of(c.rows for c in configs)


def _cell(c: ConfigThreats, row_id: str) -> dict[str, Any] | None:
    return next((r for r in c.rows if r.get("id") == row_id), None)


def pill_kind(status: str, plain: bool) -> str:
    if status == "exposed":
        return "neutral" if plain else "bad"
    return {"protected": "good", "not checked": "warn"}.get(status, "neutral")


# HTML ---------------------------------------------------------------------------------------------------
def _matrix_html(configs: list[ConfigThreats]) -> Safe:
    cols = [Col("attacker")] + [Col(c.encryption) for c in configs]
    body = []
    for row_id, name in attackers(configs):
        cells: list[object] = [esc(name)]
        for c in configs:
            row = _cell(c, row_id)
            cells.append(pill(row["status"], pill_kind(row["status"], c.plain)) if row else esc("—"))
        body.append(cells)
    return table(cols, body)


def _details_html(c: ConfigThreats) -> Safe:
    rows = [[esc(r.get("attacker", "")), pill(r["status"], pill_kind(r["status"], c.plain)),
             esc(r.get("summary", ""))] for r in c.rows]
    note = "" if c.final_pass else " (first pass only: the run ended before its final scan)"
    return tag("details", join([tag("summary", f"{c.encryption} ({c.label}): evidence per attacker{note}"),
                                table([Col("attacker"), Col("verdict"), Col("evidence or reason")], rows)]))


def html_section(rs: RunSummary) -> Safe:
    """The "Threat model" section (nothing when the run has no threat model)."""
    parts: list[object] = []
    for es in rs.engines:
        configs = config_threats(rs, es)
        if not configs:
            continue
        parts += [tag("h3", es.engine), _matrix_html(configs)]
        parts += [tag("p", s, class_="verdict") for s in sentences(rs, es)]
        parts += [_details_html(c) for c in configs]
    if not parts:
        return Safe("")
    return tag("section", join([tag("h2", "Threat model")] + parts + [tag("p", LEGEND, class_="note")]),
               id="threats")


# Markdown -----------------------------------------------------------------------------------------------
def md_lines(rs: RunSummary) -> list[str]:

    out: list[str] = []
    for es in rs.engines:
        configs = config_threats(rs, es)
        if not configs:
            continue
        out += [f"## Threat model: {es.engine}", ""]
        matrix = [[name] + [(_cell(c, rid) or {}).get("status", "—") for c in configs]
                  for rid, name in attackers(configs)]
        out += md_table(["attacker"] + [c.encryption for c in configs], matrix, set()) + [""]
        out += [f"- {s}" for s in sentences(rs, es)] + ([""] if sentences(rs, es) else [])
        for c in configs:
            out += [f"### {c.encryption} ({c.label})", ""]
            out += md_table(["attacker", "verdict", "evidence or reason"],
                            [[r.get("attacker", ""), r["status"], r.get("summary", "")] for r in c.rows], set())
            out += [""]
    return out + ([LEGEND, ""] if out else [])


# terminal -----------------------------------------------------------------------------------------------
def text_lines(verification: dict[str, Any]) -> list[str]:
    """The threat-model table of every config as plain lines (``tdebench verify``)."""
    out = []
    for label, entry in (verification.get("configs") or {}).items():
        threats = entry.get("threats") if isinstance(entry, dict) else None
        if not isinstance(threats, dict):
            continue
        out.append(f"threat model of {label} ({entry.get('encryption', '')}):")
        width = max((len(str(r.get("attacker", ""))) for r in threats.get("rows", [])), default=10)
        for r in threats.get("rows", []):
            out.append(f"  {str(r.get('attacker', '')):<{width}}  {str(r.get('status', '')):<14}  "
                       f"{r.get('summary', '')}")
        if threats.get("sentence"):
            out.append(f"  => {threats['sentence']}")
    return out
