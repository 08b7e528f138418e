"""``tdebench ciphers``: this machine's cipher throughput per core (what encryption itself can cost)."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from tdebench.errors import UsageError

if TYPE_CHECKING:
    from tdebench.measure.cipherspeed import CipherSpeed

# defaults repeated here so that registering the command does not import `cryptography` (tdebench --help stays fast)
DEFAULT_SECONDS = 0.3
DEFAULT_BLOCK = 16384
REFERENCE = "AES-256-CTR"


def _check(seconds: float, block_bytes: int) -> None:
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"--seconds must be a positive number of seconds, not {seconds}",
                         "give e.g. --seconds 0.3 (each cipher and direction is timed for about that long)")
    if block_bytes < 16 or block_bytes % 16 or block_bytes > 64 * 1024 * 1024:
        raise UsageError(f"--block-bytes must be a multiple of 16 between 16 and 67108864, not {block_bytes}",
                         "give e.g. --block-bytes 16384 (the 16 KiB buffers of `openssl speed -evp`)")


def _existing_parent(path: Path) -> Path:
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def _relative(speed: CipherSpeed, table: list[CipherSpeed]) -> str:
    from tdebench.measure.cipherspeed import DECRYPT, ENCRYPT, lookup

    reference = lookup(table, REFERENCE, speed.operation if speed.operation in (ENCRYPT, DECRYPT) else ENCRYPT)
    if reference is None or reference.bytes_per_second <= 0:
        return "-"
    ratio = speed.bytes_per_second / reference.bytes_per_second
    return f"{ratio:.2f}×" if ratio >= 0.1 else f"1/{1 / ratio:.0f}"


def _render(table: list[CipherSpeed], facts: dict, console: Console) -> None:
    view = Table(title=f"Cipher throughput per core ({table[0].block_bytes // 1024 or table[0].block_bytes} "
                       f"{'KiB' if table[0].block_bytes >= 1024 else 'B'} buffers)", title_justify="left")
    view.add_column("cipher")
    view.add_column("operation")
    view.add_column("MB/s per core", justify="right")
    view.add_column("GB/s", justify="right")
    view.add_column("± spread", justify="right")
    view.add_column(f"vs {REFERENCE}", justify="right")
    view.add_column("note", overflow="fold")
    for speed in table:
        view.add_row(speed.name, speed.operation, f"{speed.mib_per_second:,.0f}", f"{speed.gb_per_second:.3f}",
                     f"{speed.spread_pct:.0f}%", _relative(speed, table), speed.note)
    console.print(view)
    aes = {True: "yes (the 'aes' flag is in /proc/cpuinfo)", False: "NO (no 'aes' flag in /proc/cpuinfo): AES runs in "
           "software and costs far more", None: "unknown (/proc/cpuinfo unreadable)"}[facts.get("aes_ni")]
    console.print(f"CPU: {facts.get('cpu_model')}, {facts.get('cores')} cores; AES-NI: {aes}")
    console.print(f"Library: cryptography {facts.get('cryptography')} with {facts.get('openssl', 'OpenSSL ?')}. "
                  "MB/s = 1024² bytes per second of one core's CPU time; median of 5 interleaved repetitions; "
                  "per-call Python overhead taken out of all but the AEADs; "
                  "'± spread' = (max - min) / median. Bytes read ÷ decrypt speed + bytes written ÷ encrypt speed "
                  "is the least time encryption itself can add.", highlight=False)
    noisy = [s for s in table if s.spread_pct > 25]
    if noisy:
        worst = max(noisy, key=lambda s: s.spread_pct)
        console.print(f"[yellow]note:[/yellow] {len(noisy)} figures vary by more than 25% between repetitions "
                      f"(up to {worst.spread_pct:.0f}%, {worst.name} {worst.operation}): the machine is busy or "
                      "changing clock speed; rerun on an idle machine or with a larger --seconds.")


def ciphers_command(
    seconds: Annotated[float, typer.Option(
        "--seconds", help="CPU seconds spent timing each cipher and direction (after a warm-up).")] = DEFAULT_SECONDS,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON instead of a table.")] = False,
    block_bytes: Annotated[int, typer.Option(
        "--block-bytes", help="Buffer size per cipher call, a multiple of 16 (openssl speed: 16384).")] = DEFAULT_BLOCK,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Also write the table as JSON to this file (e.g. into a run directory).")] = None,
) -> None:
    """Measure this machine's cipher speed per core: AES CBC/CTR/GCM/XTS, 3DES, ChaCha20-Poly1305, AES-SIV."""
    _check(seconds, block_bytes)
    if out is not None and (out.is_dir() or not _existing_parent(out).is_dir()
                            or not os.access(_existing_parent(out), os.W_OK)):
        raise UsageError(f"cannot write the cipher table to {out}", "give --out a file path in a writable directory")
    from tdebench.measure import cipherspeed as measure

    console = Console() if sys.stdout.isatty() else Console(width=140)
    err = Console(stderr=True)
    with Progress(TextColumn("timing ciphers"), BarColumn(), TimeRemainingColumn(), console=err,
                  transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("ciphers", total=None)
        table = measure.measure_ciphers(
            seconds, block_bytes, progress=lambda done, total: progress.update(task, completed=done, total=total))
    document = measure.table_to_json(table, seconds)
    if out is not None:
        try:
            measure.save_table(out, table, seconds)
        except OSError as exc:
            raise UsageError(f"cannot write the cipher table to {out}: {exc.strerror}",
                             "give --out a path in a writable directory") from exc
    if as_json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        sys.stdout.flush()
        return
    _render(table, document, console)
    if out is not None:
        console.print(f"written: {out}")
