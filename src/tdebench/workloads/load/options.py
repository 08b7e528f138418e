"""Options of ``--workload load``: which load variants, and the client INSERT batch size."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from tdebench.workloads.options import ScaleFactorOption, word_list

VARIANTS = ("bulk", "bulk_keys", "insert", "insert_keys")


class LoadOptions(ScaleFactorOption):
    """``variants``: the load paths to time (all by default); ``batch_rows``: rows per client INSERT batch;
    ``sf``: the TPC-H scale factor of the data loaded."""

    workload_name = "load"
    fix_hint = f"variants: one or more of {', '.join(VARIANTS)}; batch_rows: 1 to 1000000"
    variants: list[str] = list(VARIANTS)
    batch_rows: int = Field(1000, ge=1, le=1_000_000)

    @field_validator("variants", mode="before")
    @classmethod
    def _variants(cls, value: Any) -> list[str]:
        out = word_list(value)
        if not out or any(v not in VARIANTS for v in out):
            raise ValueError(f"use one or more of {', '.join(VARIANTS)}")
        return [v for v in VARIANTS if v in out]


def parse_options(raw: dict[str, Any]) -> LoadOptions:
    """UsageError naming the option, the bad value and what is allowed."""
    return LoadOptions.parse(raw)
