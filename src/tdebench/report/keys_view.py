"""The key server in the report (``--keys``, docs/key-management.md): per config whose keys live on it, what the
overheads compare it with, the requests the key server handled during the measured blocks, the server's start
time at each restart against its file-key twin's (a paired interval over the blocks), and the key server's CPU
beside the databases'.

Read from the manifest (``key_server``, ``configs[].key_source``, ``restarts``); the same rows for the terminal,
summary.md and index.html.
"""

from __future__ import annotations

import statistics
from typing import Any

from tdebench.api.keys import file_twin
from tdebench.report.fmt import DASH
from tdebench.report.htmlkit import Col, Safe, join, table, tag
from tdebench.report.mdkit import md_table
from tdebench.report.model import RunSummary
from tdebench.stats.paired import paired_ratio

HEADERS = ["config", "compared with", "key server requests (measured blocks)", "tdebench's own fetches",
           "start at restart, median s", "vs compared config (95% CI)"]
NUMERIC = {2, 3, 4, 5}


def keyed(rs: RunSummary) -> list[dict[str, Any]]:
    """The manifest entries of the configs whose keys live on a key server."""
    return [c for c in rs.manifest.get("configs") or [] if isinstance(c, dict) and c.get("key_source")]


def _starts(rs: RunSummary, label: str) -> dict[str, float]:
    """Block -> the seconds ``label``'s server took to start at the restart before it (``--restart-twins``)."""
    blocks = ((rs.manifest.get("restarts") or {}).get("blocks") or {})
    return {b: float(f[label]["start_wall_s"]) for b, f in blocks.items()
            if isinstance(f, dict) and isinstance(f.get(label), dict) and "start_wall_s" in f[label]}


def rows(rs: RunSummary) -> list[list[str]]:
    usage = (rs.manifest.get("key_server") or {}).get("usage") or {}
    labels = [str(c.get("label")) for c in rs.manifest.get("configs") or [] if isinstance(c, dict)]
    out = []
    for c in keyed(rs):
        label = str(c["label"])
        twin = file_twin(label, labels)
        mine, theirs = _starts(rs, label), _starts(rs, twin) if twin else {}
        both = sorted(set(mine) & set(theirs))
        ratio = paired_ratio([theirs[b] for b in both], [mine[b] for b in both]) if both else None
        vs = DASH if ratio is None else (f"{(ratio.mean - 1) * 100:+.1f}%" + (
            f" ({(ratio.low - 1) * 100:+.1f}% to {(ratio.high - 1) * 100:+.1f}%, n = {ratio.n})"
            if ratio.low is not None and ratio.high is not None else f" (n = {ratio.n})"))
        requests = (usage.get("requests") or {}).get(label)
        fetches = (usage.get("tdebench_fetches") or {}).get(label)
        out.append([label, twin or "its plain twin", _count(requests), _count(fetches),
                    f"{statistics.median(mine.values()):.2f}" if mine else DASH, vs])
    return out


def _count(value: object) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else DASH


def lines(rs: RunSummary) -> list[str]:
    """The key server's own facts: what it is, how fast it was ready, its CPU beside the databases'."""
    server = rs.manifest.get("key_server") or {}
    if not server:
        return []
    start = server.get("start_s") or {}
    usage = server.get("usage") or {}
    out = [f"Key server: {server.get('kind')}" + (f", {server.get('version')}" if server.get("version") else "")
           + (f"; ready (initialized, unsealed, active) {start['unsealed']:.1f} s after its launch"
              if "unsealed" in start else "") + "."]
    if "keyserver_cpu_s" in usage:
        served = (f"; it served {_count((usage.get('requests') or {}).get('all requests'))} requests in all"
                  if usage.get("requests") else "")
        out.append(f"During the measured blocks ({usage.get('measured_s')} s) the key server used "
                   f"{usage.get('keyserver_cpu_s')} s of CPU, the databases {usage.get('database_cpu_s')} s "
                   f"({usage.get('database_cpu_note')}){served}.")
    if usage.get("note"):
        out.append(f"During the measured blocks: {usage['note']}.")
    labels = [str(c.get("label", "")) for c in rs.manifest.get("configs") or [] if isinstance(c, dict)]
    if any(label.endswith("+file") for label in labels):
        out.append("A config whose keys live on the key server (+openbao) is compared with its file-key twin (+file) "
                   "in every overhead of this report: what the key server costs, not what the encryption does.")
    else:
        out.append("No config has a file-key twin in this run: a config whose keys live on the key server is compared "
                   "with its plain twin, so its overheads are what the encryption and its key server cost together.")
    return out


def html_section(rs: RunSummary) -> Safe:
    cols = [Col(h, i in NUMERIC) for i, h in enumerate(HEADERS)]
    notes = [tag("p", text, class_="note") for text in lines(rs)]
    return tag("section", join([tag("h2", "Key server"), table(cols, rows(rs)), *notes]), id="keys")


def md_lines(rs: RunSummary) -> list[str]:
    return ["## Key server", "", *md_table(HEADERS, rows(rs), NUMERIC), "", *lines(rs), ""]
