"""TPC-H takes no workload options: it is set with --sf, --tests, --streams and --query-timeout."""

from __future__ import annotations

from typing import Any

from tdebench.workloads.options import WorkloadOptions


class TpchOptions(WorkloadOptions):
    """No keys: any option given for tpch is refused rather than silently ignored."""

    workload_name = "tpch"


def parse_options(raw: dict[str, Any]) -> TpchOptions:
    """UsageError for any option (TPC-H's knobs are run options: sf, tests, streams, query_timeout)."""
    return TpchOptions.parse(raw)
