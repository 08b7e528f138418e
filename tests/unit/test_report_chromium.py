"""Load the HTML report in headless Chromium: it renders, is not blank, logs no errors, fetches nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tdebench.report import build_report

CHROMIUM = Path("/usr/bin/chromium")
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rundir_sqlite"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
# console messages, failed loads and blocked requests; dbus/GPU noise of a headless box is ignored
BAD_LOG = re.compile(r"CONSOLE|Uncaught|net::ERR_|Failed to load resource|Refused to", re.I)

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="/usr/bin/chromium is not installed (apt install chromium)")


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("chromium") / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("report", "*.py", "__pycache__"))
    return build_report(run)


def test_screenshot_is_not_blank_and_no_console_errors(report: Path, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "report.png"
    proc = chromium(f"--screenshot={png}", "--window-size=1280,2000", report.as_uri(),
                    profile=tmp_path / "profile")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert png.is_file()
    with Image.open(png) as img:
        rgb = img.convert("RGB")
        assert rgb.size == (1280, 2000)
        colors = rgb.getcolors(maxcolors=1_000_000)
        assert colors is None or len(colors) > 50, "screenshot is (nearly) one color"
        lo, hi = zip(*rgb.getextrema())
        assert max(hi) - min(lo) > 128
    bad = [line for line in proc.stderr.splitlines() if BAD_LOG.search(line)]
    assert bad == []


def test_dom_renders_without_scripts(report: Path, tmp_path: Path) -> None:
    proc = chromium("--dump-dom", report.as_uri(), profile=tmp_path / "profile")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert "<script" not in dom.lower()
    assert "slower</strong> than plain" in dom and dom.count("<svg") >= 3
    assert [line for line in proc.stderr.splitlines() if BAD_LOG.search(line)] == []


# wide tables: a DBA reads every config at 1,400 px --------------------------------------------------------------
MEASURE = """<script>
const tables = [];
for (const wrap of document.querySelectorAll('.table-wrap')) {
  const first = wrap.querySelector('tr > :first-child');
  tables.push({section: (wrap.closest('section') || {}).id || '', scroll: wrap.scrollWidth, client: wrap.clientWidth,
               right: wrap.querySelector('table').getBoundingClientRect().right,
               sticky: first ? getComputedStyle(first).position : ''});
}
const page = {viewport: document.documentElement.clientWidth, page: document.documentElement.scrollWidth, tables};
document.body.insertAdjacentHTML('beforeend', '<pre id="layout">' + JSON.stringify(page) + '</pre>');
</script>"""


def layout_at(report: Path, width: int, tmp_path: Path) -> dict:
    """The report as Chromium lays it out in a window ``width`` px wide: every table's scroll and client width,
    its right edge and whether its first column stays in view (a test copy with a measuring script; the report
    itself has none)."""
    import html
    import json

    probe = report.with_name("layout-probe.html")
    probe.write_text(report.read_text().replace("</body>", MEASURE + "</body>"))
    proc = chromium("--dump-dom", f"--window-size={width},1200", probe.as_uri(), profile=tmp_path / "profile")
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'<pre id="layout">(\{.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stdout[-2000:]
    return json.loads(html.unescape(found.group(1)))


def wide_run(run: Path, encrypted: int) -> Path:
    """A TPC-H run of a plain config and ``encrypted`` encrypted ones with long labels: per query, a column
    group per config."""
    import json
    import math

    import numpy as np

    from tests.unit.test_one_number import QUERIES, write_measurements

    rng = np.random.default_rng(3)
    configs = [("mariadb-none", "none", 1.0)] + [(f"mariadb-tde-aes-256-ctr-{i}", "tde:aes-256-ctr", 1 + i / 50)
                                                 for i in range(encrypted)]
    rows = []
    for block in range(4):
        for label, enc, factor in configs:
            base = {"run_id": "wide", "block": block, "trial": block, "config": label, "engine": "mariadb",
                    "encryption": enc, "workload": "tpch", "test": "power", "stream": "", "started_at": "",
                    "status": "warmup" if block == 0 else "ok"}
            times = [(0.2 + 0.02 * i) * factor * math.exp(rng.normal(0, 0.02)) for i in range(len(QUERIES))]
            rows += [{**base, "step": q, "metric": "elapsed", "value": t, "unit": "s"} for q, t in zip(QUERIES, times)]
            rows.append({**base, "step": "total", "metric": "elapsed", "value": sum(times), "unit": "s"})
    write_measurements(run, rows)
    (run / "manifest.json").write_text(json.dumps({
        "schema_version": 3, "run_id": "wide", "status": "completed", "plan": {"workload": "tpch", "trials": 3},
        "configs": [{"label": c, "engine": "mariadb", "encryption": e} for c, e, _ in configs]}))
    return build_report(run)


def test_six_configs_fit_a_1400_px_window_and_wider_tables_scroll_with_their_first_column(tmp_path: Path) -> None:
    six = layout_at(wide_run(tmp_path / "six", 5), 1400, tmp_path)
    assert six["page"] <= six["viewport"], "the page itself scrolls sideways"
    for t in six["tables"]:
        assert t["scroll"] <= t["client"] + 1 and t["right"] <= six["viewport"], t  # every config in view
    twelve = layout_at(wide_run(tmp_path / "twelve", 11), 1400, tmp_path)
    assert twelve["page"] <= twelve["viewport"]
    queries = [t for t in twelve["tables"] if t["section"] == "queries"]
    assert queries and all(t["sticky"] == "sticky" for t in queries if t["scroll"] > t["client"] + 1), queries
