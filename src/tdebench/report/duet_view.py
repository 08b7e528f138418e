"""Methods text of a ``--schedule duet`` run: how the twins ran side by side, read from the manifest alone."""

from __future__ import annotations

from typing import Any


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _io_sentence(groups: dict[str, Any]) -> str:
    io = [_dict(v) for v in _dict(groups.get("io")).values()]
    if not io:
        return "an equal I/O weight"
    schedulers = sorted({str(f.get("io_scheduler", "unknown")) for f in io})
    honoured = all(f.get("io_weight_honoured") for f in io)
    weight = io[0].get("io_weight", "?")
    if honoured:
        return f"an equal I/O weight ({weight}, shared by the device's {', '.join(schedulers)} scheduler)"
    return (f"an equal I/O weight ({weight}; the device's {', '.join(schedulers)} scheduler does not share by "
            "weight, so the twins' requests were served in arrival order)")


def _swap_text(entry: dict[str, Any]) -> str:
    seconds = entry.get("swap_seconds")
    if not seconds:
        return "and stayed put inside a pair"
    swaps = _dict(entry.get("swaps"))
    done = (f" ({swaps.get('count')} swaps, each written in a median {swaps.get('median_write_us')} µs)"
            if swaps else "")
    return f"and were swapped every {seconds} s while a pair ran{done}"


def _turns_text(entry: dict[str, Any], barrier: str) -> str:
    held = _dict(entry.get("holds"))
    holds = (f" (over {held.get('count')} freezes, a twin's tasks stopped a median {held.get('median_write_us')} µs "
             f"after the freeze began, at most {held.get('max_write_us')} µs)" if held else "")
    return ("Turns schedule: inside each block the two twins ran every step at the same moment and took turns on "
            "the machine: while a pair ran, one twin's server was frozen (cgroup freezer) and the other's ran, "
            f"swapped every {entry.get('turn_seconds', '?')} s{holds}, the first turn alternating from pair to pair "
            "from a random side per block; a twin whose step was done left the rotation and the other ran on "
            "alone. Each twin's client timed its step with a clock that stood still while its server was held, so "
            "a step's time is its own server's, with the machine to itself, while both twins' steps share the "
            f"same minutes of the disk and the host. One barrier released both twins' clients; {barrier}. One "
            "pair is one paired observation; the intervals count blocks (one value per step and block and their "
            "total). What each twin used in every pair is in measurements.csv, test duet.")


def duet_text(manifest: dict[str, Any]) -> str:
    """One paragraph: groups, CPU sets, I/O weight, the barrier's skew, the pairing unit."""
    entry = _dict(manifest.get("schedule"))
    groups = _dict(entry.get("cgroups"))
    slots = entry.get("cpu_slots") or []
    cpus = " and ".join(f"CPU{'s' if ',' in str(s) else ''} {s}" for s in slots) or "CPU sets of their own"
    skew = _dict(entry.get("skew_us"))
    barrier = (f"the two starts were a median {skew.get('median')} µs apart (95th percentile {skew.get('p95')} µs, "
               f"at most {skew.get('max')} µs, over {skew.get('pairs')} pairs)" if skew else
               "no pair was measured")
    if entry.get("name") == "turns":
        return _turns_text(entry, barrier)
    return ("Duet schedule: inside each block the two twins ran every step at the same moment, each in a cgroup of "
            f"its own (cgroup v{groups.get('version', '?')}: its server processes, its client and what that "
            f"started) with {cpus} and {_io_sentence(groups)}; the CPU sets alternated between the twins from pair "
            f"to pair, from a random side per block, {_swap_text(entry)}, so that neither kept the faster core. "
            "One barrier released both "
            f"twins' clients; {barrier} (per pair in manifest.json, schedule.pairs). One simultaneous pair is one "
            "paired observation; the intervals count blocks (stepped workloads: one value per step and block and "
            "their total; sliced ones: each block's geometric mean over its rounds). What each twin waited on in every pair (CPU, block "
            "I/O where the kernel accounts it, its device reads and CPU throttling) is in measurements.csv, test "
            "duet.")
