"""``decision.json``: what a decision was asked, its plan, and how each of its sub-runs went.

Written atomically at the start (status ``running``) and after every sub-run, so that a decision cut short (Ctrl-C,
SIGKILL) still says what it did; ``tdebench report DECISION_DIR`` builds the page from it and the sub-runs'
directories alone."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tdebench.errors import UsageError

FILE = "decision.json"
SCHEMA = 1


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_decision(path: Path) -> bool:
    """Whether ``path`` is a decision directory (it holds decision.json)."""
    return (Path(path) / FILE).is_file()


@dataclass
class DecisionRecord:
    """The content of decision.json."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(cls, path: Path, request: dict[str, Any], plan: dict[str, Any], command: list[str]) -> DecisionRecord:
        from tdebench import __version__

        path = Path(path)
        if path.exists() and any(path.iterdir()):
            raise UsageError(f"{path} exists and is not empty", "choose a new --out directory")
        path.mkdir(parents=True, exist_ok=True)
        record = cls(path, {"schema": SCHEMA, "tool": {"name": "tdebench", "version": __version__},
                            "command_line": command, "created_at": utc_now(), "status": "running",
                            "owner": {"pid": os.getpid()}, "request": request, "plan": plan, "runs": {}})
        record.write()
        return record

    @classmethod
    def read(cls, path: Path) -> DecisionRecord:
        try:
            data = json.loads((Path(path) / FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}/{FILE} cannot be read ({exc})",
                             "pass the --out directory of a tdebench decide") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise UsageError(f"{path}/{FILE} is not a decision this version reads", "run tdebench decide again")
        return cls(Path(path), data)

    @property
    def request(self) -> dict[str, Any]:
        return self.data.get("request") or {}

    @property
    def plan(self) -> dict[str, Any]:
        return self.data.get("plan") or {}

    def run_entry(self, name: str) -> dict[str, Any]:
        """What decision.json says of sub-run ``name`` ({} before it started)."""
        return (self.data.get("runs") or {}).get(name) or {}

    def started(self, name: str) -> None:
        self.data.setdefault("runs", {})[name] = {"status": "running", "started_at": utc_now()}
        self.write()

    def finished(self, name: str, status: str, seconds: float, note: str = "", exit_code: int | None = None) -> None:
        entry = self.data.setdefault("runs", {}).setdefault(name, {})
        entry.update(status=status, seconds=round(seconds, 3), finished_at=utc_now())
        if note:
            entry["note"] = note
        if exit_code is not None:
            entry["exit_code"] = exit_code
        self.write()

    def close(self, status: str, seconds: float) -> None:
        self.data.update(status=status, finished_at=utc_now(), seconds=round(seconds, 3))
        self.write()

    def write(self) -> None:
        target = self.path / FILE
        tmp = target.with_suffix(".json.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(self.data, handle, indent=2, sort_keys=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
