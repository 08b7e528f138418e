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
