"""Read a run directory: manifest.json, measurements.csv, verification.json (all tolerant)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.api.regime import split_label
from tdebench.errors import UsageError
from tdebench.stats.load import Measurements, load_measurements


@dataclass
class RunFiles:
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


def load_run(run_dir: Path) -> RunFiles:
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
    return RunFiles(run_dir=run_dir, manifest=manifest or {},
                    measurements=load_measurements(csv_path),
                    verification=_read_json(run_dir / "verification.json", problems),
                    problems=problems)
