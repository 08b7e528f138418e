"""The data of a user's workload, ready to load: the ``generate`` command run (once per content of the
directory), every CSV/TSV checked and converted (cached), values sampled for the at-rest scan."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from tdebench.errors import UsageError
from tdebench.api.tables import escape_field
from tdebench.lifeline import helper_preexec
from tdebench.workloads.sql import csvdata
from tdebench.workloads.sql.layout import DirProblem, WorkloadDir, check_data, display

GENERATE_TIMEOUT = 3600


def cache_root(data_dir: Path | None) -> Path:
    """``<--data-dir>/sql`` or ``$XDG_CACHE_HOME/tdebench/sql``."""
    from tdebench.workloads.tpch.datagen import default_cache_root

    return (data_dir / "sql") if data_dir else default_cache_root().parent / "sql"


def directory_key(wd: WorkloadDir) -> str:
    """A hash of every file of the directory but data/ (what a generate command may read)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in wd.root.rglob("*") if p.is_file()):
        rel = path.relative_to(wd.root)
        if rel.parts[0] == "data" or any(part.startswith(".") for part in rel.parts):
            continue
        digest.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def generate(wd: WorkloadDir, cache: Path) -> dict[str, csvdata.DataFile]:
    """Run the generate command into a cached directory (reused while the workload directory is unchanged);
    the data files it wrote for the tables that have none in data/."""
    command = wd.settings.data.generate or []
    out = cache / f"generated-{directory_key(wd)}"
    toml = display(wd.root / "workload.toml")
    if not (out / ".complete").is_file():
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        argv = [arg.replace("{out}", str(tmp)) for arg in command]
        try:
            done = subprocess.run(argv, cwd=wd.root, env={**os.environ, "TDEBENCH_DATA_OUT": str(tmp)},
                                  capture_output=True, text=True, timeout=GENERATE_TIMEOUT,
                                  preexec_fn=helper_preexec())
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise UsageError(f"{toml}: the [data] generate command {command[0]!r} could not run: {exc}",
                             "check the command (it runs in the workload directory)") from None
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or ["(no output)"])[-1]
            raise UsageError(f"{toml}: the [data] generate command exited with code {done.returncode}: {last}",
                             f"run it by hand in {display(wd.root)} to see why")
        (tmp / ".complete").write_text(" ".join(command) + "\n")
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    files = {}
    for table in wd.missing_data:
        found = [p for p in (out / f"{table}.csv", out / f"{table}.tsv") if p.is_file()]
        if not found:
            raise UsageError(f"{toml}: the [data] generate command wrote no data for table {table}",
                             f"make it write {{out}}/{table}.csv (or .tsv) with a header row")
        files[table] = csvdata.DataFile(table, found[0])
    return files


def prepare_data(wd: WorkloadDir, cache: Path) -> list[csvdata.Converted]:
    """Every table's converted data file, in schema order (generated and checked first where needed)."""
    files = dict(wd.data)
    if wd.missing_data:
        generated = generate(wd, cache)
        try:
            check_data(wd, generated)
        except DirProblem as exc:
            raise UsageError(str(exc), f"{exc.fix} (the file was written by the [data] generate command)") from None
        files.update(generated)
    out = []
    for spec in wd.tables:
        try:
            out.append(csvdata.convert(files[spec.name], spec, wd.settings.data.null, cache / "converted"))
        except csvdata.DataProblem as exc:  # changed since the check
            raise UsageError(f"{display(files[spec.name].path)}: {exc}", exc.fix) from None
    return out


def known_plaintext(wd: WorkloadDir, converted: list[csvdata.Converted]) -> tuple[str, ...]:
    """The values the at-rest scan looks for: those workload.toml names (each must be in the data), else a
    sample of text values from non-key columns."""
    given = wd.settings.verify.known_plaintext
    if given is None:
        return tuple(csvdata.sample_values(converted, wd.settings.verify.samples, wd.sql_text()))
    for value in given:
        needle = escape_field(value).encode()
        if not any(needle in c.path.read_bytes() for c in converted):
            raise UsageError(f"{display(wd.root / 'workload.toml')}: [verify] known_plaintext value {value!r} is "
                             f"not in the data", "list values that occur in your data (in a text column)")
    return tuple(given)
