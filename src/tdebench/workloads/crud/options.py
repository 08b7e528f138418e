"""The CRUD workload's options (``--rows``, ``--batches``, ``--workload-option KEY=VALUE``, ``[run.options]``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from tdebench.workloads.options import WorkloadOptions, word_list

OPERATIONS = ("select", "insert", "delete")
DEFAULT_ROWS = 1_000_000
DEFAULT_BATCHES = (100_000,)
DEFAULT_SEED = 20240601


def int_list(value: Any) -> list[int]:
    """``"100000,200000"``, ``100000`` or ``[100000, 200000]`` -> [100000, 200000] (``_`` allowed in numbers)."""
    if isinstance(value, bool):
        raise ValueError("give whole numbers")
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        parts = [p.strip().replace("_", "") for p in value.split(",") if p.strip()]
        if not parts or not all(p.isdigit() for p in parts):
            raise ValueError("give whole numbers separated by commas, e.g. 100000,200000")
        return [int(p) for p in parts]
    if isinstance(value, (list, tuple)):
        return [n for item in value for n in int_list(item)]
    raise ValueError("give whole numbers separated by commas, e.g. 100000,200000")


class CrudOptions(WorkloadOptions):
    """Validated options; built by :func:`parse_options`."""

    workload_name = "crud"
    fix_hint = ("rows: whole number >= 1 (default 1000000); batches: sizes like 100000,200000, each <= rows; "
                "operations: select,insert,delete")
    rows: int = Field(DEFAULT_ROWS, ge=1, le=500_000_000)
    batches: list[int] = Field(default_factory=lambda: list(DEFAULT_BATCHES))
    operations: list[str] = Field(default_factory=lambda: list(OPERATIONS))
    seed: int = DEFAULT_SEED
    fetch_size: int = Field(10_000, ge=1)

    @field_validator("rows", "seed", "fetch_size", mode="before")
    @classmethod
    def _int(cls, value: Any) -> Any:
        text = value.strip().replace("_", "") if isinstance(value, str) else ""
        return int(text) if text.isdigit() else value  # anything else: pydantic's own message

    @field_validator("batches", mode="before")
    @classmethod
    def _batches(cls, value: Any) -> list[int]:
        out = int_list(value)
        if any(n < 1 for n in out):
            raise ValueError("every batch size must be at least 1")
        return list(dict.fromkeys(out))

    @field_validator("batches")
    @classmethod
    def _fits(cls, value: list[int], info: ValidationInfo) -> list[int]:
        rows = info.data.get("rows")  # absent when rows itself was refused
        too_big = [b for b in value if rows is not None and b > rows]
        if too_big:
            raise ValueError(f"batch {too_big[0]} is larger than rows ({rows}); "
                             f"each SELECT/DELETE batch must fit in the table")
        return value

    @field_validator("operations", mode="before")
    @classmethod
    def _operations(cls, value: Any) -> list[str]:
        out = word_list(value)
        bad = [o for o in out if o not in OPERATIONS]
        if bad or not out:
            raise ValueError(f"use one or more of {', '.join(OPERATIONS)}")
        return [o for o in OPERATIONS if o in out]

    @property
    def max_batch(self) -> int:
        return max(self.batches)


def parse_options(raw: dict[str, Any]) -> CrudOptions:
    """UsageError naming the option, the bad value and what is allowed."""
    return CrudOptions.parse(raw)
