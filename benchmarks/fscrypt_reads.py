#!/usr/bin/env python3
"""What one random page read costs on ext4 encryption, against the plain image beside it.

    python benchmarks/fscrypt_reads.py [--mib 160] [--reads 20000] [--page 16384] [--cap-mib 32]

Needs root and loop devices. Makes two ext4 images the way tdebench's ``storage=ext4-loop`` does (one plain, one
with an fscrypt policy, both on loop devices with direct I/O), writes a file of ``--mib`` random MiB into each,
drops its cached pages, and times ``--reads`` random reads of one InnoDB page each, opened with ``O_DIRECT`` as
InnoDB opens its data files. ext4 serves ``O_DIRECT`` on an encrypted file as buffered I/O, so the fscrypt file's
reads go through the page cache. Each is timed twice: with the page cache unbounded, and with this process in a
memory cgroup of ``--cap-mib`` MiB (what a MariaDB fscrypt twin gets at a memory ratio, docs/fscrypt.md).

Prints µs per read, the ratio to the plain image's direct reads measured in the same run, and the bytes the loop
device read per byte asked for (below 1: part came from the page cache). Everything is removed at the end.
"""

from __future__ import annotations

import argparse
import mmap
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines.toolkit import memcap  # noqa: E402
from tdebench.engines.toolkit.fscrypt import Ext4Image, loop_devices, loop_sectors  # noqa: E402

MIB = 1024 * 1024


def random_reads(path: Path, size: int, page: int, reads: int) -> float:
    """Seconds per read of ``reads`` random pages (the same sequence on every call)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buffer = mmap.mmap(-1, page)  # page-aligned, as O_DIRECT wants
    rnd = random.Random(1)
    pages = size // page
    try:
        started = time.perf_counter()
        for _ in range(reads):
            os.preadv(fd, [buffer], rnd.randrange(pages) * page)
        return (time.perf_counter() - started) / reads
    finally:
        os.close(fd)
        buffer.close()


def measure(image: Ext4Image, args: argparse.Namespace, cap_bytes: int | None) -> tuple[float, float]:
    """(µs per read, image bytes read per byte asked) with the page cache of the file dropped first."""
    data = image.data_dir / "datafile"
    memcap.evict_files(image.data_dir)
    device = loop_devices([str(image.image_dir)])[0][0]
    before = loop_sectors(device)
    cap = None
    if cap_bytes is not None:
        cap = memcap.MemoryCap(f"fscrypt-reads-{os.getpid()}")
        cap.set_limit(cap_bytes)
        cap.add([os.getpid()])
    try:
        seconds = random_reads(data, args.mib * MIB, args.page, args.reads)
    finally:
        if cap is not None:
            (cap.path.parent / "cgroup.procs").write_text(str(os.getpid()))
            cap.remove()
    after = loop_sectors(device)
    assert before is not None and after is not None
    return seconds * 1e6, (after[0] - before[0]) * 512 / (args.reads * args.page)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=160, help="file size (the SF 0.1 data is about 164 MiB)")
    parser.add_argument("--reads", type=int, default=20000)
    parser.add_argument("--page", type=int, default=16384, help="bytes per read (InnoDB's page)")
    parser.add_argument("--cap-mib", type=int, default=32, help="the memory cgroup's limit")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("fscrypt_reads: needs root (losetup, mount, the fscrypt ioctls)", file=sys.stderr)
        return 3
    can_cap = not memcap.unavailable()
    root = Path(tempfile.mkdtemp(prefix="tdebench-fscrypt-reads-", dir="/var/tmp"))
    results: dict[tuple[str, str], tuple[float, float]] = {}
    try:
        for spec in ("none", "fs:fscrypt"):
            image = Ext4Image(parse_spec(spec), root / spec.replace(":", "-"), size=(args.mib + 256) * MIB)
            try:
                image.mount()
                with open(image.data_dir / "datafile", "wb") as handle:
                    for _ in range(args.mib):
                        handle.write(os.urandom(MIB))
                os.sync()
                results[(spec, "unbounded")] = measure(image, args, None)
                if can_cap:
                    results[(spec, f"cgroup {args.cap_mib} MiB")] = measure(image, args, args.cap_mib * MIB)
            finally:
                image.destroy()
    finally:
        for path in sorted(root.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        root.rmdir()
    base = results[("none", "unbounded")][0]
    print(f"{args.reads} random {args.page}-byte O_DIRECT reads of a {args.mib} MiB file, page cache dropped first")
    print(f"{'image':<12} {'page cache':<16} {'µs/read':>9} {'× plain':>8} {'image bytes / asked':>20}")
    for (spec, bound), (us, amplification) in results.items():
        print(f"{spec:<12} {bound:<16} {us:>9.1f} {us / base:>8.2f} {amplification:>20.2f}")
    if not can_cap:
        print(f"(no memory cgroup here: {memcap.unavailable()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
