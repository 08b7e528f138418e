"""The decision page read back as a DBA sees it, and checked against the sub-runs' own CSVs (the cost run's
report/overhead.csv, each switching run's report/switching.csv): used by the unit tests on a synthetic decision
and by the end-to-end decision."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

COST = re.compile(r"^([+-]?\d+\.\d)%(?: \[([+-]?\d+\.\d), ([+-]?\d+\.\d)\])? (slower|faster|not resolved)$")
RATIO = re.compile(r"^(\d+\.\d\d)× \[(\d+\.\d\d), (\d+\.\d\d)\]( not resolved)?$")
ADDED = re.compile(r"^([+-]?[\d,]+(?:\.\d+)?) (ms|s) \[([+-]?[\d,]+(?:\.\d+)?), ([+-]?[\d,]+(?:\.\d+)?)\]$")
UNITS = {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "B": 1.0, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30}


def md_tables(text: str) -> dict[str, list[list[list[str]]]]:
    """Per ``## `` section, its pipe tables as rows of cells (header first, the rule line left out)."""
    out: dict[str, list[list[list[str]]]] = {}
    section, current = "", None
    for line in text.splitlines():
        if line.startswith("## "):
            section, current = line[3:].split(" (")[0], None
        elif line.startswith("|"):
            if current is None:
                current = []
                out.setdefault(section, []).append(current)
            if not set(line) <= set("|-: "):
                current.append([c.strip() for c in line.strip("|").split(" | ")])
        else:
            current = None
    return out


def page_tables(decision: Path) -> dict[str, list[list[list[str]]]]:
    return md_tables((decision / "report" / "summary.md").read_text())


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def quantity(text: str) -> float:
    number, unit = text.split()
    return float(number.replace(",", "")) * UNITS[unit]


def one_decimal(x: str) -> str:
    text = f"{float(x):+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def check_cost(decision: Path, headline_step: str = "total") -> int:
    """Every cost cell (estimate, interval, verdict word, n) and every plain median equals the cost run's
    overhead.csv; returns the number of cells checked."""
    overheads = csv_rows(decision / "cost" / "report" / "overhead.csv")
    checked = 0
    text = (decision / "report" / "summary.md").read_text()
    captions = re.findall(r"(?m)^_(cache .*)_$", text)
    for caption, table in zip(captions, page_tables(decision)["What it costs on your workload"], strict=True):
        if "time added" in caption:
            checked += check_added(table, overheads, headline_step)
            continue
        header, rows = table[0], table[1:]
        end = -1 if header[-1] == "n" else len(header)
        mechanisms = header[3:end]
        for row in rows:
            # a figure is named by its step first: "reads: weighted total ...", "q1 (query): time per execution"
            step = headline_step if row[0].endswith(f"({headline_step})") else re.split(r"[:( ]", row[0], 1)[0]
            n = row[-1] if end == -1 else caption.rsplit(" · ", 1)[1]
            for spec, cell in zip(mechanisms, row[3:end]):
                o = next(r for r in overheads if r["encryption"] == spec and r["step"] == step
                         and r["test"] == "sql" and r["metric"] == "elapsed")
                pct, low, high, word = COST.match(cell).groups()
                interval = (one_decimal(o["ci_low_pct"]), one_decimal(o["ci_high_pct"])) if o["ci_low_pct"] else (
                    None, None)
                assert (pct, low, high) == (one_decimal(o["overhead_pct"]), *interval), (spec, step, cell)
                spans = not o["ci_low_pct"] or float(o["ci_low_pct"]) <= 0 <= float(o["ci_high_pct"])
                assert (word == "not resolved") == spans
                assert n == f"n = {o['n']} block{'' if o['n'] == '1' else 's'}"
                checked += 1
            plain = next(r for r in overheads if r["step"] == step and r["test"] == "sql" and r["metric"] == "elapsed")
            assert quantity(row[2]) == pytest.approx(float(plain["median_plain"]), rel=5e-3)
    return checked


def check_added(table: list[list[str]], overheads: list[dict[str, str]], headline_step: str) -> int:
    """Every cell of a "time added" table equals overhead.csv's paired difference and its interval."""
    header, checked = table[0], 0
    for row in table[1:]:
        step = headline_step if row[0].endswith(f"({headline_step})") else re.split(r"[:( ]", row[0], 1)[0]
        for spec, cell in zip(header[1:], row[1:]):
            o = next(r for r in overheads if r["encryption"] == spec and r["step"] == step
                     and r["test"] == "sql" and r["metric"] == "elapsed")
            if not o["difference"]:
                assert cell == "—", (spec, step, cell)
                continue
            value, unit, low, high = ADDED.match(cell).groups()
            for shown, column in ((value, "difference"), (low, "difference_low"), (high, "difference_high")):
                digits = len(shown.split(".")[1]) if "." in shown else 0  # the page rounds to this many decimals
                assert float(shown.replace(",", "")) * UNITS[unit] == pytest.approx(
                    float(o[column]), abs=UNITS[unit] * 10 ** -digits), (spec, step, column, cell)
            checked += 1
    return checked


def check_switching(decision: Path) -> int:
    """Every switching row's time to done, ratios and extra disk equal its run's switching.csv; rows checked."""
    tables = page_tables(decision).get("Switching it on") or []
    checked = 0
    for table in tables:
        header = table[0]
        for cells in table[1:]:
            shown = dict(zip(header, cells))
            run = decision / f"switch-{shown['mechanism'].replace(':', '-')}"
            [row] = [r for r in csv_rows(run / "report" / "switching.csv") if r["action"] == "on"]
            assert quantity(shown["time to done"]) == pytest.approx(float(row["time_to_done_s"]), rel=1e-3)
            if row["method"] == "offline":
                down = row.get("downtime_s") or row["time_to_done_s"]
                assert quantity(shown["service down"]) == pytest.approx(float(down), rel=1e-3)
            for column, prefix in (("throughput meanwhile ÷ before", "tpm_during"),
                                   ("throughput after ÷ before", "tpm_after")):
                if row[f"{prefix}_ratio"] and column in shown:
                    mean, low, high, _ = RATIO.match(shown[column]).groups()
                    assert (mean, low, high) == tuple(f"{float(row[prefix + k]):.2f}" for k in (
                        "_ratio", "_ci95_low", "_ci95_high")), (column, shown[column])
            if row["peak_extra_bytes"]:
                assert quantity(shown["peak extra disk"]) == pytest.approx(float(row["peak_extra_bytes"]), rel=0.01)
            checked += 1
    return checked
