"""The run directory: manifest.json, measurements.csv, verification.json, answers/. Written by the run
(:class:`RunDirectory`), read back by the report (:func:`load_run`).

Writes are atomic (manifest, verification) or appended and fsync'ed per trial (measurements), so
a killed run loses at most the trial in flight. Nothing secret is ever written: every text goes
through :func:`tdebench.encryption.redact` first.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.manifest import SCHEMA_VERSION, check_manifest
from tdebench.api.measurement import COLUMNS, Measurement, utc_now
from tdebench.api.regime import split_label
from tdebench.encryption import redact
from tdebench.errors import UsageError
from tdebench.stats.load import Measurements, load_measurements

__all__ = ["COLUMNS", "LoadedRun", "Measurement", "RunDirectory", "atomic_write_text", "load_run", "utc_now",
           "write_json"]

def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file + rename, fsync'ed; redacted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(redact(text))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


class RunDirectory:
    """One run's output directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def measurements_path(self) -> Path:
        return self.path / "measurements.csv"

    @property
    def verification_path(self) -> Path:
        return self.path / "verification.json"

    def answers_dir(self, config_label: str) -> Path:
        return self.path / "answers" / config_label

    @classmethod
    def create(cls, path: Path) -> "RunDirectory":
        """Create a new, empty run directory; UsageError if it cannot be written or is not empty."""
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".tdebench-write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as exc:
            raise UsageError(f"cannot write the output directory {path}: {exc.strerror or exc}",
                             "pass --out with a writable directory") from exc
        if any(p for p in path.iterdir() if not p.name.startswith(".")):
            raise UsageError(f"output directory {path} is not empty",
                             "pass --out with a new or empty directory (or --resume to continue a run)")
        rundir = cls(path)
        with open(rundir.measurements_path, "w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerow(COLUMNS)
        return rundir

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json(self.manifest_path, {"schema_version": SCHEMA_VERSION, **manifest})

    def read_manifest(self) -> dict[str, Any]:
        """manifest.json, its schema version checked (UsageError for a version this tdebench cannot read, or
        for a file that is not valid JSON)."""
        try:
            data = json.loads(self.manifest_path.read_text())
        except ValueError as exc:
            raise UsageError(f"{self.manifest_path} is not valid JSON ({exc})",
                             "restore it from a backup; tdebench writes it atomically, so it was edited by hand") from None
        check_manifest(data, str(self.manifest_path))
        return data

    def write_verification(self, verification: dict[str, Any]) -> None:
        write_json(self.verification_path, verification)

    def header(self) -> tuple[str, ...]:
        """The columns of this directory's measurements.csv as written (a file of schema version 2 lacks
        ``round``)."""
        with open(self.measurements_path, newline="", encoding="utf-8") as handle:
            return tuple(next(csv.reader(handle), COLUMNS))

    def append(self, measurements: Iterable[Measurement]) -> None:
        """Append rows (in the file's own column order) and fsync, so they survive a crash of tdebench or the
        machine."""
        rows = list(measurements)
        columns = self.header() if rows else COLUMNS
        if any(m.round is not None for m in rows) and "round" not in columns:
            raise UsageError(f"{self.measurements_path} has no 'round' column (written by an older tdebench), "
                             "and the interleaved schedule needs it",
                             "resume the run with --schedule block, or start a new run")
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        for m in rows:
            writer.writerow(m.row(columns))
        text = redact(buffer.getvalue())
        if not text:
            return
        data = text.encode("utf-8")
        fd = os.open(self.measurements_path, os.O_WRONLY | os.O_APPEND)
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            except OSError:
                os.ftruncate(fd, start)  # a full disk costs this call's rows, never a torn row
                raise
        finally:
            os.close(fd)

    def read_measurements(self) -> list[dict[str, str]]:
        with open(self.measurements_path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))


# reading ----------------------------------------------------------------------------------------------------
@dataclass
class LoadedRun:
    """The parsed files of one run directory."""

    run_dir: Path
    manifest: dict[str, Any]
    measurements: Measurements
    verification: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        """Run id from the manifest, else from the measurements, else the directory name."""
        rid = self.manifest.get("run_id") or (self.measurements.run_ids or ("",))[0]
        return str(rid or self.run_dir.name)

    def manifest_config(self, label: str) -> dict[str, Any]:
        """The ``configs[]`` entry of the manifest for a label ({} when absent)."""
        for entry in self.manifest.get("configs") or []:
            if isinstance(entry, dict) and entry.get("label") == label:
                return entry
        return {}

    def verification_for(self, label: str) -> dict[str, Any] | None:
        """The verification.json entry of a config, if any (a config at a memory ratio: its config's)."""
        configs = (self.verification or {}).get("configs")
        if isinstance(configs, dict) and label not in configs:
            label = split_label(label)[0]
        entry = configs.get(label) if isinstance(configs, dict) else None
        return entry if isinstance(entry, dict) else None


def _read_json(path: Path, problems: list[str]) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        problems.append(f"{path.name} could not be read ({exc}); it was ignored")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path.name} is not a JSON object; it was ignored")
        return None
    return data


def load_run(run_dir: Path) -> LoadedRun:
    """Load a run directory; only ``measurements.csv`` is required."""
    run_dir = Path(run_dir)
    csv_path = run_dir / "measurements.csv"
    if not csv_path.is_file():
        raise UsageError(f"{run_dir} has no measurements.csv, so there is nothing to report",
                         fix="point to a run directory written by `tdebench run`")
    problems: list[str] = []
    manifest = _read_json(run_dir / "manifest.json", problems)
    if manifest is None and not problems:
        problems.append("manifest.json is missing: machine, versions and plan are unknown")
    return LoadedRun(run_dir=run_dir, manifest=manifest or {},
                    measurements=load_measurements(csv_path),
                    verification=_read_json(run_dir / "verification.json", problems),
                    problems=problems)
