"""What the OLTP workloads (TPC-C, sysbench) show alike: latency percentiles and the engine's counters per
committed transaction (tdebench.api.presentation)."""

from __future__ import annotations

LATENCIES = ("latency_p50", "latency_p95", "latency_p99")
#: the engine's counters per committed transaction (interleaved OLTP schedule, step ``vuN.per_txn``): they say
#: whether a write overhead is the redo log's, the pages' or neither
WRITE_COSTS = ("log_bytes", "pages_written", "bytes_encrypted", "bytes_decrypted")
OLTP_METRICS = {
    "server_cpu_per_txn": "server CPU per transaction", "log_bytes": "redo/WAL bytes per transaction",
    "pages_written": "pages written per transaction", "bytes_encrypted": "bytes encrypted per transaction",
    "bytes_decrypted": "bytes decrypted per transaction",
}
