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


def test_sigterm_during_a_trial_prints_the_resume_command(tmp_path: Path, data_root, tpch_sf001) -> None:
    out = tmp_path / "run"
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
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 130, err
    assert lines[-1] == (f"tdebench: interrupted; servers stopped and temporary data removed; continue it with: "
                         f"tdebench run --resume {out}"), err
    assert any("interrupted after" in line for line in lines), "the trial cut short is not called done"
    assert sum(line.startswith("tdebench: interrupted") for line in lines) == 1, err  # said once, not twice
