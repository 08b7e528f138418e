"""The backup workload's options: which kinds, and with or without compression."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from tdebench.workloads.options import ScaleFactorOption, word_list

ALL_KINDS = ("mariadb_backup", "mariadb_dump", "pg_basebackup", "pg_dump", "sqlite_backup_api", "vacuum_into")
COMPRESSION = ("both", "none", "gzip")


class BackupOptions(ScaleFactorOption):
    """``kinds``: base kinds to run (``_gz`` variants follow ``compression``); default: every kind of each engine."""

    workload_name = "backup"
    fix_hint = "e.g. --workload-option kinds=mariadb_dump,pg_dump --workload-option compression=gzip"
    kinds: list[str] = list(ALL_KINDS)
    compression: str = "both"

    @field_validator("kinds", mode="before")
    @classmethod
    def _kinds(cls, value: Any) -> list[str]:
        out = [k.replace("-", "_").removesuffix("_gz") for k in word_list(value)]
        bad = [k for k in out if k not in ALL_KINDS]
        if bad or not out:
            raise ValueError(f"use one or more of {', '.join(ALL_KINDS)}")
        return list(dict.fromkeys(out))

    @field_validator("compression", mode="before")
    @classmethod
    def _compression(cls, value: Any) -> str:
        text = str(value).strip().lower()
        if text not in COMPRESSION:
            raise ValueError(f"use one of {', '.join(COMPRESSION)}")
        return text

    def wants(self, name: str) -> bool:
        """True if the kind called ``name`` (e.g. ``pg_dump_gz``) is selected."""
        compressed = name.endswith("_gz")
        if self.compression == ("none" if compressed else "gzip"):
            return False
        return name.removesuffix("_gz") in self.kinds


def parse_options(raw: dict[str, Any]) -> BackupOptions:
    """UsageError naming the option, the bad value and what is allowed."""
    return BackupOptions.parse(raw)
