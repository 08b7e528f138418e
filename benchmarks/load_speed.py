#!/usr/bin/env python3
"""Load speed of TPC-H through tdebench's loader: plain SQLite vs SQLCipher, side by side in one run.

    python benchmarks/load_speed.py [--sf 0.1] [--repeats 3]
    python benchmarks/load_speed.py --engine mariadb [--sf 1]    (see load_speed_mariadb.py)

Prints rows/s and MB/s (MB = 1024² bytes of .tbl input) per config and repeat, the medians, and the
ratio of SQLCipher to plain measured in the same run (alternating order, so drift hits both).
"""

from __future__ import annotations

import argparse
import runpy
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import Config, get_engine  # noqa: E402
from tdebench.workloads.tpch.datagen import ensure_data  # noqa: E402
from tdebench.workloads.tpch.loader import load_tpch  # noqa: E402

SPECS = ("none", "sqlcipher:aes-256-cbc")


def load_once(spec: str, data_dir: Path, workdir: Path) -> tuple[int, float]:
    engine = get_engine("sqlite")
    instance = engine.create_instance(Config("sqlite", parse_spec(spec), engine.default_settings()), workdir)
    instance.start()
    try:
        result = load_tpch(instance, engine.dialect, data_dir)
        return result.rows, sum(seconds for _, seconds in result.tables.values())
    finally:
        instance.destroy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engine", default="sqlite", choices=("sqlite", "mariadb"))
    args, rest = parser.parse_known_args()
    if args.engine == "mariadb":
        sys.argv = [str(Path(__file__).with_name("load_speed_mariadb.py")), "--sf", str(args.sf), *rest]
        runpy.run_path(sys.argv[0], run_name="__main__")
        return
    data_dir, facts = ensure_data(args.sf)
    input_bytes = sum(f["bytes"] for f in facts["files"].values())
    rates: dict[str, list[tuple[float, float]]] = {spec: [] for spec in SPECS}
    print(f"TPC-H SF {args.sf:g}: {input_bytes / 1024**2:.1f} MiB of .tbl input, bulk path (table rows only; "
          "keys and indexes excluded)")
    with tempfile.TemporaryDirectory(prefix="tdebench-loadspeed-") as tmp:
        for repeat in range(args.repeats):
            order = SPECS if repeat % 2 == 0 else tuple(reversed(SPECS))
            for spec in order:
                rows, seconds = load_once(spec, data_dir, Path(tmp))
                rates[spec].append((rows / seconds, input_bytes / 1024**2 / seconds))
                print(f"  repeat {repeat + 1} {spec:<24} {rows:>9,} rows {seconds:7.2f} s "
                      f"{rows / seconds:>10,.0f} rows/s {input_bytes / 1024**2 / seconds:7.2f} MB/s")
    print("\nmedian over repeats:")
    medians = {spec: (statistics.median(r for r, _ in v), statistics.median(m for _, m in v)) for spec, v in rates.items()}
    for spec, (rps, mbps) in medians.items():
        print(f"  {spec:<24} {rps:>10,.0f} rows/s {mbps:7.2f} MB/s")
    ratio = medians["sqlcipher:aes-256-cbc"][1] / medians["none"][1]
    print(f"  SQLCipher / plain throughput ratio: {ratio:.3f} (load overhead {(1 / ratio - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
