"""tdebench runs a test interrupts with SIGINT (Ctrl-C), and what such a run leaves when the test fails.

A shell that starts pytest in the background (``&``, a non-interactive script, some CI runners) starts it with
SIGINT ignored; a child inherits that, and tdebench keeps an ignored SIGINT ignored on purpose (as nohup expects),
so the test's Ctrl-C would be lost and the run, with its servers and mounts, would go on after the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def default_sigint() -> None:
    """``preexec_fn`` of a run the test will interrupt: SIGINT handled by default in the child, whatever pytest's."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop_and_clean(procs: list[subprocess.Popen[str]], state: Path) -> None:
    """After a test, whatever became of it: kill each run still alive, then `tdebench cleanup` what runs owning
    ``state`` (their ownership records) left: servers, helpers, mounts, loop devices, keys."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    if list((state / "tdebench" / "owned").glob("*.json")):  # a run left its record: it did not end cleanly
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(state)}
        subprocess.run([sys.executable, "-m", "tdebench", "cleanup"], env=env, capture_output=True, timeout=300,
                       check=False)
