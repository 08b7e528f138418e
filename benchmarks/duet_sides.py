"""Whether a duet run's twins ran a step faster on one CPU set: per block, the CPU sets the configs had when the
step's pair began, the step's log ratio (second config against the first, %), and the CPU time each twin's group was
charged (first and second config); then, per CPU set, in how many blocks the twin on it was the faster and by how much.

A machine that routes its disk's interrupts to one CPU serves the twin on that CPU sooner (and charges its group the
interrupts' CPU time); this shows it for one long step, e.g. TPC-H's q14 with pages read from the disk, and whether
the swaps inside a pair (the manifest's ``schedule.pairs``, fourth field) took it away.

    python benchmarks/duet_sides.py RUN_DIR [--step q14] [--test power] [--metric elapsed]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from block_ratios import block_values  # noqa: E402


def pair_of(manifest: dict, step: str) -> dict[int, tuple[str, int | None]]:
    """block -> (the CPU sets of the configs in plan order when the step's pair began, swaps while it ran)."""
    out: dict[int, tuple[str, int | None]] = {}
    for block, pairs in manifest["schedule"]["pairs"].items():
        for entry in pairs:
            if entry[0] == step:
                out[int(block)] = (entry[1], entry[3] if len(entry) > 3 else None)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--step", default="q14")
    parser.add_argument("--test", default="power")
    parser.add_argument("--metric", default="elapsed")
    args = parser.parse_args(argv)
    manifest = json.loads((args.run_dir / "manifest.json").read_text())
    if (manifest.get("schedule") or {}).get("name") != "duet":
        print(f"{args.run_dir} is not a --schedule duet run", file=sys.stderr)
        return 2
    csv_path = args.run_dir / "measurements.csv"
    values = block_values(csv_path, args.test, args.metric).get(args.step, {})
    cpu = block_values(csv_path, "duet", "cgroup_cpu").get(args.step, {})
    configs = sorted(values, key=lambda c: (len(c), c))
    if len(configs) != 2:
        print(f"no {args.test}/{args.step}/{args.metric} values of two configs in {csv_path}", file=sys.stderr)
        return 2
    first, second = configs
    pairs = pair_of(manifest, args.step)
    print(f"{args.test}/{args.step}/{args.metric}: {second} against {first}, per block")
    print(f"{'block':>5} {'CPU sets':>9} {'swaps':>5} {'log ratio %':>11} {'CPU s, 1st':>11} {'CPU s, 2nd':>11}")
    faster: dict[str, list[float]] = {}
    charged: dict[str, list[float]] = {}
    for block in sorted(set(values[first]) & set(values[second])):
        sets, swaps = pairs.get(block, ("?|?", None))
        d = 100 * math.log(values[second][block] / values[first][block])
        c1, c2 = cpu.get(first, {}).get(block), cpu.get(second, {}).get(block)
        print(f"{block:>5} {sets:>9} {'' if swaps is None else swaps:>5} {d:>+11.2f} "
              f"{'' if c1 is None else f'{c1:.1f}':>11} {'' if c2 is None else f'{c2:.1f}':>11}")
        side = sets.split("|")
        if len(side) == 2:
            faster.setdefault(side[1] if d < 0 else side[0], []).append(abs(d))
            if c1 is not None and c2 is not None:
                charged.setdefault(side[0], []).append(c1 - c2)
                charged.setdefault(side[1], []).append(c2 - c1)
    for cpus, gaps in sorted(faster.items()):
        print(f"the twin that began on CPU set {cpus} was the faster in {len(gaps)} blocks, by "
              f"{min(gaps):.2f}% to {max(gaps):.2f}% (median {statistics.median(gaps):.2f}%)")
    for cpus, more in sorted(charged.items()):
        print(f"the group that began on CPU set {cpus} was charged {min(more):+.1f} to {max(more):+.1f} s of CPU "
              f"more than the other (median {statistics.median(more):+.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
