"""Where the test suite's CPU goes: a pytest plugin that records each test's CPU, and a summary by file.

The suite is bound by the machine's CPU, not by waiting (docs/testing.md), so the CPU a test costs, not its
duration, says what shortens it. Each test's CPU is its worker's own and that of the children the worker reaped
during it (``resource.getrusage``: subprocess runs and the servers they started); a server a module fixture keeps
is counted in the test during which it is stopped.

    PYTHONPATH=benchmarks bash scripts/test.sh -p suite_cpu     # appends to suite-cpu.jsonl (SUITE_CPU_LOG)
    python benchmarks/suite_cpu.py suite-cpu.jsonl             # CPU-seconds by file, the largest first
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

LOG = os.path.abspath(os.environ.get("SUITE_CPU_LOG", "suite-cpu.jsonl"))  # where the suite starts, not a test's cwd


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    own0, children0 = _cpu()
    started = time.monotonic()
    yield
    own1, children1 = _cpu()
    with open(LOG, "a") as handle:
        handle.write(json.dumps({"id": item.nodeid, "self": round(own1 - own0, 2),
                                 "children": round(children1 - children0, 2),
                                 "wall": round(time.monotonic() - started, 2), "pid": os.getpid()}) + "\n")


def summary(rows: list[dict[str, Any]], top: int = 40) -> str:
    """CPU-seconds by test file (own + children), with the wall time its tests took, the largest first."""
    by: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in rows:
        entry = by[row["id"].split("::")[0]]
        entry[0] += row["self"]
        entry[1] += row["children"]
        entry[2] += row["wall"]
        entry[3] += 1
    lines = [f"{sum(r['self'] + r['children'] for r in rows):.0f} CPU-s in {len(rows)} tests "
             f"({sum(r['self'] for r in rows):.0f} in the workers, {sum(r['children'] for r in rows):.0f} in children)",
             f"{'CPU-s':>8} {'own':>7} {'children':>8} {'wall s':>7} {'tests':>5}  file"]
    for name, (own, children, wall, n) in sorted(by.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        lines.append(f"{own + children:8.1f} {own:7.1f} {children:8.1f} {wall:7.1f} {int(n):5d}  {name}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python benchmarks/suite_cpu.py LOG.jsonl", file=sys.stderr)
        return 2
    with open(argv[0]) as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
