"""A report a DBA reads: each defect a new user met in a report, as a test (warnings, the verification table,
footnotes, one verdict vocabulary, n with its unit)."""

from __future__ import annotations

from pathlib import Path

from tdebench.report import build_report
from tests.unit.test_crud_report import _write_run as write_crud_run
from tests.unit.test_one_number import write_precision_run, write_tpcc_rounds_run


def _md(run: Path) -> str:
    return build_report(run).with_name("summary.md").read_text()


def _section(md: str, title: str) -> str:
    return next(s for s in md.split("\n## ") if s.startswith(title))


# footnotes belong to the run's workload ----------------------------------------------------------------------
def test_a_non_tpch_runs_footnotes_speak_of_its_own_workload(tmp_path: Path) -> None:
    crud = tmp_path / "crud"
    write_crud_run(crud)
    floor = _section(_md(crud), "Cipher floor")
    assert "Cipher floor = bytes decrypted" in floor
    assert "22 queries" not in floor and "power test" not in floor
    tpcc = tmp_path / "tpcc"
    write_tpcc_rounds_run(tpcc)
    methods = _section(_md(tpcc), "Methods")
    assert "Query schedule" in methods and "round" in methods
    assert "22 queries" not in methods and "power test" not in methods and "power total" not in methods
    tpch = tmp_path / "tpch"
    write_precision_run(tpch, second=("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr", 1.04))
    assert "one pass over the 22 queries is one paired observation of the power total" in _md(tpch)


# one verdict vocabulary in every view ------------------------------------------------------------------------
CONFIGS_AB = (("m-none", "none", None), ("m-tde-a", "tde:aes-256-ctr", None), ("p-none", "none", None),
              ("p-tde-b", "tde:aes-128-ctr", None))


def _write_disagreeing_run(run: Path) -> None:
    """Twelve blocks of two engines' twins whose t-test and interval disagree: ``m-tde-a`` has p = 0.002 with an
    interval spanning 0 (the case a user met as "no difference resolved" in the verdict and "inconclusive" in the
    summary), ``p-tde-b`` an interval above 0 with p > 0.05."""
    import csv
    import json

    import numpy as np

    from tdebench.results.rundir import COLUMNS

    def pattern(seed: int, shift: float, sd: float, outliers: bool) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        base = np.exp(rng.normal(0, 0.05, 12))
        other = base * np.exp(rng.normal(shift, sd, 12))
        if outliers:
            other[rng.integers(0, 12)] *= 0.7
        return base, other

    plain, tde_a = pattern(12, 0.02, 0.02, False)
    plain_b, tde_b = pattern(59, 0.01, 0.01, True)
    rows = []
    for block in range(13):
        i = max(block - 1, 0)
        for config, enc, value in CONFIGS_AB:
            value = {"m-none": plain, "m-tde-a": tde_a, "p-none": plain_b, "p-tde-b": tde_b}[config][i]
            rows.append({"run_id": "v", "block": block, "trial": block, "config": config, "engine": config[:1],
                         "encryption": enc, "workload": "crud", "test": "crud", "stream": "", "step": "total",
                         "metric": "elapsed", "value": float(value), "unit": "s", "started_at": "",
                         "status": "warmup" if block == 0 else "ok", "round": ""})
    run.mkdir(parents=True)
    with open(run / "measurements.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    configs = [{"label": c, "engine": c[:1], "encryption": e} for c, e, _ in CONFIGS_AB]
    (run / "manifest.json").write_text(json.dumps({"schema_version": 3, "run_id": "v", "status": "completed",
                                                   "plan": {"workload": "crud", "trials": 12,
                                                            "baseline": None}, "configs": configs}))


def test_one_verdict_vocabulary_in_every_view(tmp_path: Path) -> None:
    import csv

    from rich.console import Console

    from tdebench.cli.summary import build_summary
    from tdebench.report.build import write_report
    from tdebench.report.model import summarize

    run = tmp_path / "run"
    _write_disagreeing_run(run)
    rs = summarize(run)
    write_report(rs, run / "report")
    with open(run / "report" / "overhead.csv", newline="") as handle:
        heads = {r["config"]: r for r in csv.DictReader(handle) if r["step"] == "total"}
    console = Console(record=True, width=250, color_system=None)
    console.print(build_summary(run, rs))
    views = {"terminal": " ".join(console.export_text().split()),
             "summary.md": (run / "report" / "summary.md").read_text(),
             "index.html": (run / "report" / "index.html").read_text(),
             "overhead.csv": (run / "report" / "overhead.csv").read_text()}
    a, b = heads["m-tde-a"], heads["p-tde-b"]
    assert float(a["p_value"]) < 0.01 and float(a["ci_low_pct"]) < 0 < float(a["ci_high_pct"])  # the user's case
    assert float(b["p_value"]) > 0.05 and float(b["ci_low_pct"]) > 0  # and its mirror
    for name, text in views.items():
        for other in ("inconclusive", "not significant", "significant"):
            assert other not in text.lower(), (name, other)
    for config, word in (("m-tde-a", "no difference resolved"), ("p-tde-b", "slower")):
        assert heads[config]["verdict"] == word  # overhead.csv
        md_row = next(line for line in views["summary.md"].splitlines() if line.startswith(f"| {config} |"))
        assert f"| {word} |" in md_row, md_row
        html_row = next(r for r in views["index.html"].split("<tr>") if f'class="sub">{config}<' in r)
        assert '"pill' in html_row and f">{word}</span>" in html_row, html_row
    verdicts = views["summary.md"].split("## Verdict")[1].split("\n## ")[0]
    assert "m-tde-a" not in verdicts  # named by its encryption where that is unique
    assert "tde:aes-256-ctr: no difference resolved" in verdicts and "tde:aes-128-ctr: " in verdicts
    assert "tde:aes-256-ctr: no difference resolved" in views["terminal"]


# n with its unit ---------------------------------------------------------------------------------------------
def test_n_is_labelled_with_its_unit(tmp_path: Path) -> None:
    """TPC-C's interleaved schedule: 6 rounds in each of 3 blocks. The tables count rounds (18), the overhead
    blocks (3): each says which."""
    import csv

    from rich.console import Console

    from tdebench.cli.summary import build_summary
    from tdebench.report.build import write_report
    from tdebench.report.model import summarize

    run = tmp_path / "tpcc"
    write_tpcc_rounds_run(run)
    rs = summarize(run)
    write_report(rs, run / "report")
    md = (run / "report" / "summary.md").read_text()
    html = (run / "report" / "index.html").read_text()
    console = Console(record=True, width=250, color_system=None)
    console.print(build_summary(run, rs))
    text = console.export_text()
    summary = md.split("## Summary")[1].split("\n## ")[0]
    header, _, plain = summary.strip().splitlines()[2:5]
    assert "| n (rounds) |" in summary.splitlines()[2], summary
    assert "| 18 |" in plain
    assert "n (rounds)" in html
    assert "n = 3 blocks" in md.split("## Verdict")[1].split("\n## ")[0]
    assert "n (rounds)" in text and "n = 3 blocks" in " ".join(text.split())
    with open(run / "report" / "summary.csv", newline="") as handle:
        tpm = next(r for r in csv.DictReader(handle) if r["metric"] == "tpm" and r["config"] == "mariadb-none")
    assert (tpm["n"], tpm["n_unit"]) == ("18", "rounds")
    with open(run / "report" / "overhead.csv", newline="") as handle:
        o = next(r for r in csv.DictReader(handle) if r["metric"] == "tpm")
    assert (o["n"], o["n_unit"]) == ("3", "blocks")
    tpch = tmp_path / "tpch"
    write_precision_run(tpch, blocks=4, second=("mariadb-tde-aes-256-ctr", "tde:aes-256-ctr", 1.04))
    md = _md(tpch)
    assert "| n (trials) |" in md and "n = 4 trials" in md


# the verification table in words -----------------------------------------------------------------------------
STATUS = {  # what MariaDB's status query and SQLCipher's PRAGMAs hand back, nested as the engines record it
    "enabled": True, "plugin": "ACTIVE", "key_bits": None, "file_header_plaintext": False,
    "variables": {"innodb_encrypt_log": "ON", "innodb_encrypt_tables": "ON"},
    "tablespaces": {"schema": "tpcc", "total": 9, "encrypted": [f"tpcc/t{i}" for i in range(9)],
                    "unencrypted": [], "system_tablespace_encrypted": True},
    "cipher_settings": ["PRAGMA kdf_iter = 256000;", "PRAGMA cipher_page_size = 4096;"],
}


def test_the_verification_table_is_in_words(tmp_path: Path) -> None:
    import json
    import shutil

    from tests.unit.test_report_build import FIXTURE

    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("report", "*.py", "__pycache__"))
    verification = json.loads((run / "verification.json").read_text())
    encrypted = next(c for c in verification["configs"] if c != "sqlite-none")
    verification["configs"][encrypted]["status"] = STATUS
    (run / "verification.json").write_text(json.dumps(verification))
    md = _md(run)
    html = (run / "report" / "index.html").read_text()
    row = next(line for line in _section(md, "Verification").splitlines() if line.startswith(f"| {encrypted} |"))
    html_row = html.split('id="verification"')[1].split("</section>")[0]
    for text in (row, html_row.replace("<", " <").replace(">", "> ")):
        for raw in ("{", "}", "[", "'", "True", "False", "None", "=ON"):
            assert raw not in text.replace('class="', "").replace("[default", ""), (raw, text)
    assert "enabled: yes" in row and "key bits: none" in row and "file header plaintext: no" in row
    assert "innodb_encrypt_log ON" in row and "9 encrypted (tpcc/t0, tpcc/t1, tpcc/t2, tpcc/t3 and 5 more)" in row
    assert "unencrypted none" in row and "PRAGMA kdf_iter = 256000" in row


# warnings: one line, and a place to read them all ------------------------------------------------------------
def _write_noisy_run(run: Path, steps: int = 30) -> None:
    """A CRUD-like run whose 30 steps all vary by about 20% between trials: 60 noisy series."""
    import csv
    import json

    import numpy as np

    from tdebench.results.rundir import COLUMNS

    rng = np.random.default_rng(5)
    rows = []
    for block in range(4):
        for config, enc, factor in (("m-none", "none", 1.0), ("m-tde", "tde:aes-256-ctr", 1.05)):
            base = {"run_id": "w", "block": block, "trial": block, "config": config, "engine": "mariadb",
                    "encryption": enc, "workload": "crud", "test": "crud", "stream": "", "started_at": "",
                    "status": "warmup" if block == 0 else "ok", "round": "", "metric": "elapsed", "unit": "s"}
            values = factor * np.exp(rng.normal(0, 0.2, steps))
            rows += [{**base, "step": f"op_{i:02d}", "value": float(v)} for i, v in enumerate(values)]
            rows.append({**base, "step": "total", "value": float(values.sum() * (1 + rng.normal(0, 0.005)))})
    run.mkdir(parents=True)
    with open(run / "measurements.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (run / "manifest.json").write_text(json.dumps({
        "schema_version": 3, "run_id": "w", "status": "completed", "plan": {"workload": "crud", "trials": 3},
        "configs": [{"label": "m-none", "engine": "mariadb", "encryption": "none"},
                    {"label": "m-tde", "engine": "mariadb", "encryption": "tde:aes-256-ctr"}]}))


def test_warnings_are_one_line_with_a_place_to_read_them_all(tmp_path: Path) -> None:
    import re

    from rich.console import Console

    from tdebench.cli.summary import print_summary
    from tdebench.report.build import write_report
    from tdebench.report.model import summarize

    run = tmp_path / "run"
    _write_noisy_run(run)
    rs = summarize(run)
    write_report(rs, run / "report")
    md = (run / "report" / "summary.md").read_text()
    head = md.split("\n## Summary")[0]
    said = [line for line in head.splitlines() if "warning" in line.lower()]
    assert len(said) == 1, said
    total = int(re.search(r"(\d+) warnings", said[0]).group(1))
    assert total >= 50 and "warnings.md" in said[0], said[0]
    html = (run / "report" / "index.html").read_text()
    top = html.split('id="summary"')[0]
    assert top.count("<li") == 0 and f"{total} warnings" in top and 'href="warnings.md"' in top
    every = (run / "report" / "warnings.md").read_text()
    assert sum(1 for line in every.splitlines() if re.match(r"- .*CV \d+\.\d+% is above 5%", line)) >= 50
    assert len([line for line in every.splitlines() if line.startswith("- ")]) == total
    console = Console(record=True, width=200, color_system=None)
    print_summary(run, console, rs)
    lines = [line for line in console.export_text().splitlines() if "warning" in line.lower()]
    assert len(lines) == 1 and f"{total} warnings" in lines[0] and "warnings.md" in lines[0], lines
