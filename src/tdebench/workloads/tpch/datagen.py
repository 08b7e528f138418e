"""TPC-H data from ``tpchgen-cli``: generated once per machine and scale factor, then cached.

The cache lives under ``$XDG_CACHE_HOME/tdebench/tpch/sf<SF>`` (``~/.cache`` by default) or a
``--data-dir`` of the user's. A ``manifest.json`` written last marks a complete generation and
holds each file's size, row count and SHA-256, which go into every run's manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.lifeline import helper_preexec
from tdebench.workloads.scalefactor import SCALE_FACTOR_FIX, scale_factor_problem

# bytes of .tbl files per unit of scale factor (measured: SF 1 is ~1050 MiB), the disk guard's estimate
TPCH_RAW_PER_SF = 1050 * 1024 * 1024
TABLE_FILES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
_MANIFEST = "manifest.json"


def sf_text(sf: float) -> str:
    """Scale factor as a compact string: 0.01 -> '0.01', 1.0 -> '1'."""
    return f"{sf:g}"


def publish(staging: Path, target: Path, facts: dict[str, Any]) -> None:
    """Write ``facts`` into the freshly generated ``staging`` directory, then put it in ``target``'s place."""
    (staging / _MANIFEST).write_text(json.dumps(facts, indent=2))
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)


def default_cache_root() -> Path:
    """``$XDG_CACHE_HOME/tdebench/tpch`` or ``~/.cache/tdebench/tpch``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tdebench" / "tpch"


def find_generator() -> Path:
    """The ``tpchgen-cli`` executable (next to this Python first, then PATH)."""
    beside = Path(sys.executable).parent / "tpchgen-cli"
    if beside.is_file():
        return beside
    found = shutil.which("tpchgen-cli")
    if found:
        return Path(found)
    raise EnvironmentProblem("cannot find tpchgen-cli", "pip install tpchgen-cli",
                             [str(beside), "tpchgen-cli on PATH"])


def generator_version(tool: Path) -> str:
    out = subprocess.run([str(tool), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or "tpchgen-cli (unknown version)"


def file_facts(path: Path) -> dict[str, Any]:
    """Size, row count (lines) and SHA-256 of one ``.tbl`` file."""
    digest = hashlib.sha256()
    rows = 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            rows += chunk.count(b"\n")
    return {"bytes": path.stat().st_size, "rows": rows, "sha256": digest.hexdigest()}


def _data_target(sf: float, data_dir: Path | None) -> Path:
    return (data_dir or default_cache_root()) / f"sf{sf_text(sf)}"


def _is_complete(target: Path) -> bool:
    """The data of ``target`` was generated completely (its manifest and all eight files are there)."""
    return (target / _MANIFEST).is_file() and all((target / f"{t}.tbl").is_file() for t in TABLE_FILES)


def _unwritable(root: Path, exc: OSError) -> UsageError:
    return UsageError(f"cannot write the TPC-H data directory {root}: {exc.strerror}",
                      "pass --data-dir with a writable directory")


def _check_scale_factor(sf: float) -> None:
    if sf <= 0:
        raise UsageError(f"scale factor must be > 0, not {sf}", "use e.g. --sf 0.01, 0.1 or 1")
    problem = scale_factor_problem(sf)
    if problem:
        raise UsageError(problem, SCALE_FACTOR_FIX)


def check_data_root(sf: float, data_dir: Path | None) -> None:
    """Before the data phase: the scale factor makes valid data, and the data is cached, or the generator is there
    and the data directory can be created (UsageError / EnvironmentProblem naming the fix otherwise)."""
    _check_scale_factor(sf)
    target = _data_target(sf, data_dir)
    if _is_complete(target):
        return
    find_generator()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(target.parent, exc) from exc


def ensure_data(sf: float, data_dir: Path | None = None,
                progress: Callable[[str], None] | None = None) -> tuple[Path, dict[str, Any]]:
    """Directory holding the eight ``.tbl`` files for ``sf`` and their facts; generates them if needed."""
    _check_scale_factor(sf)
    target = _data_target(sf, data_dir)
    if _is_complete(target):
        return target, json.loads((target / _MANIFEST).read_text())
    tool = find_generator()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".sf{sf_text(sf)}-", dir=target.parent))
    except OSError as exc:
        raise _unwritable(target.parent, exc) from exc
    try:
        if progress:
            progress(f"generating TPC-H data at SF {sf_text(sf)} with {tool.name}")
        result = subprocess.run([str(tool), "-s", sf_text(sf), "--output-dir", str(staging)],
                                capture_output=True, text=True, check=False, preexec_fn=helper_preexec())
        if result.returncode != 0:
            raise EnvironmentProblem(f"tpchgen-cli failed: {result.stderr.strip()[-300:]}",
                                     "check free disk space and the tpchgen-cli installation")
        facts = {
            "generator": generator_version(tool),
            "sf": sf,
            "files": {f"{t}.tbl": file_facts(staging / f"{t}.tbl") for t in TABLE_FILES},
        }
        publish(staging, target, facts)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target, facts
