"""``tdebench decide`` end to end on SQLite (the plain twin, SQLCipher and fs:fscrypt on docs/examples/orders-sql):
its sub-runs, the page in three views with every figure equal to the runs' CSVs, the page rendered in headless
Chromium, nothing left behind; and a decision interrupted in a sub-run, continued with --resume.

Needs root and loop devices (fs:fscrypt's ext4 image); skipped elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.decidepage import check_cost, check_switching, page_tables
from tests.fscrypt_keys import assert_no_key_left, fscrypt_keys
from tests.interruptible import default_sigint, stop_and_clean

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "docs" / "examples" / "orders-sql"
CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not Path("/dev/loop-control").exists(),
                                reason="fs:fscrypt needs root and loop devices")
#: short switching phases: what is tested is the decision, not the switch's precision
FAST = ["--switch-option", "steady=1s", "--switch-option", "rampup=1s", "--switch-option", "vus=1"]


#: the runs each sandbox's test started, stopped and cleaned up after it (a failed test's too)
STARTED: dict[Path, list[subprocess.Popen[str]]] = {}


@pytest.fixture
def sandbox():
    """A private TMPDIR for the work directories and an ownership-state directory; the fscrypt keys before."""
    base = Path(tempfile.mkdtemp(prefix="t-decide-", dir="/var/tmp"))
    (base / "tmp").mkdir()
    os.chmod(base / "tmp", 0o1777)
    keys = fscrypt_keys()
    STARTED[base] = []
    yield base, keys
    stop_and_clean(STARTED.pop(base), base / "state")
    for line in Path("/proc/mounts").read_text().splitlines():
        if line.split()[1].startswith(str(base)):
            subprocess.run(["umount", "-l", line.split()[1]], check=False)
    shutil.rmtree(base, ignore_errors=True)


def start(base: Path, args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(base / "tmp"),
           "XDG_STATE_HOME": str(base / "state"), "COLUMNS": "220"}
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "decide", *args], env=env, cwd=base, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=default_sigint)
    STARTED[base].append(proc)
    return proc


def assert_nothing_left(base: Path, keys: set[str]) -> None:
    assert not [l for l in Path("/proc/mounts").read_text().splitlines() if l.split()[1].startswith(str(base))]
    assert_no_key_left(base, keys)
    assert not [p for p in (base / "tmp").iterdir() if p.name.startswith("tdebench-")], list((base / "tmp").iterdir())
    records = list((base / "state").rglob("*.json")) if (base / "state").exists() else []
    assert not records, [r.read_text() for r in records]


def screenshot(page: Path, png: Path, profile: Path) -> str:
    """Render the page in headless Chromium into ``png``; its log."""
    proc = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", f"--screenshot={png}",
                           "--window-size=1400,2600", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stderr


@pytest.mark.slow(seconds=90)
def test_decide_on_sqlite(sandbox, data_root) -> None:
    base, keys = sandbox
    out = base / "decision"
    proc = start(base, ["--engine", "sqlite", "--workload-dir", str(ORDERS), "--budget", "3m", "--trials", "3",
                        "--workload-option", "duration=20ms", *FAST, "--data-dir", str(data_root), "--out", str(out)])
    log, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, log[-4000:]
    decision = json.loads((out / "decision.json").read_text())
    assert decision["status"] == "completed"
    assert decision["request"]["mechanisms"] == ["sqlcipher:aes-256-cbc", "fs:fscrypt"]
    assert {n: e["status"] for n, e in decision["runs"].items()}["cost"] == "completed"
    assert check_cost(out) == 8 * 2 * 2  # (reads, writes, six statements) × two mechanisms, each with the time it adds
    assert check_switching(out) >= 1  # SQLCipher's offline switch at least
    answer = page_tables(out)["The answer"][0]
    assert {row[1] for row in answer[1:]} == {"sqlcipher:aes-256-cbc", "fs:fscrypt"}
    summary = (out / "report" / "summary.md").read_text()
    sentence = summary.split("## The answer", 1)[1].split("**")[1]
    assert " ".join(sentence.split()) in " ".join(log.split())  # the terminal says the same answer
    assert_nothing_left(base, keys)
    if CHROMIUM.exists():
        from PIL import Image

        png = base / "page.png"
        chromium_log = screenshot(out / "report" / "index.html", png, base / "profile")
        assert not [l for l in chromium_log.splitlines() if "CONSOLE" in l or "Uncaught" in l or "ERR_" in l]
        with Image.open(png) as img:
            assert len(img.convert("RGB").getcolors(maxcolors=1_000_000) or range(51)) > 50


@pytest.mark.heavy  # its parts: test_decide_on_sqlite (a decision), test_interrupt*.py (a run cut short, resumed)
@pytest.mark.slow(seconds=60)
def test_an_interrupted_decision_is_continued(sandbox, data_root) -> None:
    base, keys = sandbox
    out = base / "decision"
    args = ["--engine", "sqlite", "--workload-dir", str(ORDERS), "--budget", "3m", "--trials", "1",
            "--switch-trials", "1", *FAST, "--data-dir", str(data_root), "--out", str(out)]
    proc = start(base, args)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (out / "switch-sqlcipher-aes-256-cbc" / "measurements.csv").is_file():
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    log, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, log[-3000:]
    assert log.strip().splitlines()[-1] == (f"tdebench: interrupted; servers stopped and temporary data removed; "
                                            f"continue it with: tdebench decide --resume {out}")
    assert json.loads((out / "decision.json").read_text())["status"] == "interrupted"
    assert_nothing_left(base, keys)
    proc = start(base, ["--resume", str(out), "--data-dir", str(data_root)])
    log, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, log[-4000:]
    decision = json.loads((out / "decision.json").read_text())
    assert decision["status"] == "completed" and all(e["status"] == "completed" for e in decision["runs"].values())
    assert (out / "report" / "index.html").is_file() and check_cost(out) == 8 * 2  # one trial: no time added
    assert_nothing_left(base, keys)
