"""An interrupted run says so, and how to continue it, as its last line (typer 0.2x turns a KeyboardInterrupt
inside a command into a silent exit code 130; the hint was lost), and its log does not call the trial it cut
short "done"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _sigterm_during_a_trial(out: Path, tmp_path: Path, data_root: Path) -> tuple[int, list[str], str]:
    """Start a long SQLite run, send SIGTERM once a trial has begun; its exit code, log lines and log."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "run", "--sf", "0.01", "--trials", "50",
                             "--data-dir", str(data_root), "--out", str(out)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    log: list[str] = []
    reader = threading.Thread(target=lambda: [log.append(line) for line in proc.stderr], daemon=True)  # type: ignore[union-attr]
    reader.start()
    deadline = time.monotonic() + 120
    measurements = out / "measurements.csv"
    while time.monotonic() < deadline and proc.poll() is None:
        # a trial has completed, and the log's last line is the next trial starting ("… power …" then " …"):
        # signalling between one trial's end and the next start would rightly call nothing cut short
        started = [line for line in log if line.strip()]
        if (measurements.is_file() and ",power," in measurements.read_text() and started
                and started[-1].rstrip().endswith("…") and " trial " in started[-1]):
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    reader.join(timeout=10)
    err = "".join(log)
    return proc.returncode, [line for line in err.splitlines() if line.strip()], err


def _between_trials(lines: list[str]) -> bool:
    """The signal came after a trial's end and before the next began (the log read by this test lags the
    run's by a moment): the last trial line of the log says it was done, or repeats the start of the next."""
    trials = [line for line in lines if " trial " in line]
    if not trials:
        return False
    # or while the trial was being announced: its start line said twice and nothing of it run, so nothing to cut
    return ": done in " in trials[-1] or (len(trials) > 1 and trials[-1] == trials[-2])


def test_sigterm_during_a_trial_prints_the_resume_command(tmp_path: Path, data_root, tpch_sf001) -> None:
    for attempt in range(3):  # only a signal that missed every trial is tried again
        out = tmp_path / f"run{attempt}"
        code, lines, err = _sigterm_during_a_trial(out, tmp_path, data_root)
        if not _between_trials(lines):
            break
    assert code == 130, err
    assert lines[-1] == (f"tdebench: interrupted; servers stopped and temporary data removed; continue it with: "
                         f"tdebench run --resume {out}"), err
    assert any("interrupted after" in line for line in lines), f"the trial cut short is not called done:\n{err}"
    assert sum(line.startswith("tdebench: interrupted") for line in lines) == 1, err  # said once, not twice
