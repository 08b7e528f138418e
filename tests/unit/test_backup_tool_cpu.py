"""The backup workload's tool CPU is the tools' own: a server reaped meanwhile (a restore restarts it) is not in it."""

from __future__ import annotations

import subprocess
import sys

from tdebench.workloads.backup import tools

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def test_tool_cpu_counts_the_tools_run_and_not_other_children(tmp_path) -> None:
    server = subprocess.Popen([sys.executable, "-c", BUSY.format(s=0.6)])  # stands for a server that exits
    before = tools.tool_cpu()
    tools.run([sys.executable, "-c", BUSY.format(s=0.3)])
    server.wait()  # reaped inside the window: os.times() would now count its 0.6 s too
    tools.run([sys.executable, "-c", "print('x' * 100000)"], stdout=tmp_path / "out.txt", gzip_out=True)
    used = tools.tool_cpu() - before
    assert 0.3 <= used < 0.8, used
    assert (tmp_path / "out.txt").stat().st_size < 1000  # gzipped on the fly


def test_a_failing_tool_still_reports_its_exit_code() -> None:
    import pytest

    from tdebench.errors import EnvironmentProblem

    with pytest.raises(EnvironmentProblem, match="exit code 3"):
        tools.run([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"])
