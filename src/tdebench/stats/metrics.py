"""What metrics mean: direction (is higher better?) and plain-language names."""

from __future__ import annotations

import re

HIGHER_IS_BETTER_METRICS = frozenset({
    "power_at_size", "throughput_at_size", "qphh_at_size", "tpm", "nopm", "tps", "qps", "qph",
    "ops", "throughput", "rows_per_s", "bytes_per_s", "mb_per_s",
})
HIGHER_IS_BETTER_UNITS = frozenset({"qph", "tpm", "tps", "qps", "ops/s", "rows/s", "bytes/s",
                                    "mb/s", "mib/s"})
STEP_LABELS = {"power_at_size": "Power@Size", "qphh_at_size": "QphH@Size",
               "throughput_at_size": "Throughput@Size", "total": "total"}
QUERY_STEP = re.compile(r"^q(\d{1,2})$")
VU_STEP = re.compile(r"^vu(\d+)$")


def higher_is_better(metric: str, unit: str = "") -> bool:
    """True for throughput-like metrics (TPM, QphH, ...); False for times, sizes and counts."""
    return metric.lower() in HIGHER_IS_BETTER_METRICS or unit.lower() in HIGHER_IS_BETTER_UNITS


def query_number(step: str) -> int | None:
    """12 for ``q12``; None for anything that is not a TPC-H query step."""
    match = QUERY_STEP.match(step)
    return int(match.group(1)) if match else None


def vu_count(step: str) -> int | None:
    """5 for ``vu5`` (TPC-C virtual users); None otherwise."""
    match = VU_STEP.match(step)
    return int(match.group(1)) if match else None


def step_label(step: str) -> str:
    """Human label of a step (``power_at_size`` → ``Power@Size``)."""
    return STEP_LABELS.get(step, step)
