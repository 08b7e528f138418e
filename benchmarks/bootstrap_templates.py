#!/usr/bin/env python3
"""What a private instance's first start costs with and without its bootstrap template (toolkit/templates).

    python benchmarks/bootstrap_templates.py [--rounds 5] [--engines mariadb,postgres] [--specs none]

For each engine and spec, instances are created, started, connected to and destroyed, ``--rounds`` times each way,
the two ways alternating: ``bootstrap`` (``TDEBENCH_TEMPLATE_DIR=off``: ``mariadb-install-db`` / ``initdb`` for every
instance, what tdebench did before templates) and ``template`` (a copy of a template made once before the rounds, in
a temporary directory). Prints the median CPU seconds (this process and every child it reaped: the bootstrap
tools and the servers, stopped by then) and wall seconds of one instance's whole life either way, and their ratio.
The servers' settings are tdebench's defaults (a 512 MiB redo log for MariaDB). Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tdebench.api.engine import Config  # noqa: E402
from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import get_engine  # noqa: E402
from tdebench.engines.toolkit.templates import ENV  # noqa: E402


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one_life(engine_name: str, spec: str, templates: str, workdir: Path) -> tuple[float, float]:
    """(CPU s, wall s) of create, start, one query and destroy of one instance with ``TDEBENCH_TEMPLATE_DIR``."""
    os.environ[ENV] = templates
    engine = get_engine(engine_name)
    inst = engine.create_instance(Config(engine_name, parse_spec(spec), engine.default_settings()), workdir)
    cpu, wall = _cpu(), time.perf_counter()
    try:
        inst.start()
        conn = inst.connect()
        conn.cursor().execute("SELECT 1")
        conn.close()
    finally:
        inst.destroy()
    return _cpu() - cpu, time.perf_counter() - wall


def compare(engine_name: str, spec: str, rounds: int, base: Path) -> None:
    templates = str(base / "templates")
    one_life(engine_name, spec, templates, base)  # writes the template
    runs: dict[str, list[tuple[float, float]]] = {"bootstrap": [], "template": []}
    for _ in range(rounds):
        runs["bootstrap"].append(one_life(engine_name, spec, "off", base))
        runs["template"].append(one_life(engine_name, spec, templates, base))
    cpu = {way: statistics.median(r[0] for r in rows) for way, rows in runs.items()}
    wall = {way: statistics.median(r[1] for r in rows) for way, rows in runs.items()}
    print(f"{engine_name:<9} {spec:<16} {cpu['bootstrap']:>13.2f} {cpu['template']:>12.2f} "
          f"{cpu['template'] / cpu['bootstrap']:>6.2f} {wall['bootstrap']:>13.2f} {wall['template']:>12.2f} "
          f"{wall['template'] / wall['bootstrap']:>6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--engines", default="mariadb,postgres")
    parser.add_argument("--specs", default="none", help="comma-separated specs tried on every engine")
    args = parser.parse_args()
    print(f"median of {args.rounds} instance lives (create, start, SELECT 1, destroy) per way")
    print(f"{'engine':<9} {'spec':<16} {'CPU bootstrap':>13} {'CPU template':>12} {'ratio':>6} "
          f"{'wall bootstrap':>13} {'wall template':>12} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="tdebench-bench-templates-", dir="/var/tmp") as base:
        os.chmod(base, 0o755)  # the servers' OS user reaches the instances where they are made
        for engine_name in args.engines.split(","):
            for spec in args.specs.split(","):
                compare(engine_name, spec, args.rounds, Path(base))


if __name__ == "__main__":
    main()
