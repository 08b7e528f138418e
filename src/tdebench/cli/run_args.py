"""The options of ``tdebench run``, as one dataclass: typer reads the command's parameters from its fields
(:func:`signature`), the command gets them back as one :class:`RunArgs`."""

from __future__ import annotations

import inspect
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Annotated, Optional, get_type_hints

import typer

from tdebench.engines import DEFAULT_ENGINE, engine_choices
from tdebench.workloads import DEFAULT_WORKLOAD, workload_names


def _choices(names: list[str], default: str) -> str:
    """``a, b (default), c``: the names a registry holds, the default marked."""
    return ", ".join(f"{n} (default)" if n == default else n for n in names)


# from the registries (the target engine is reached with --target, not --engine)
_ENGINE_CHOICES = _choices(engine_choices(), DEFAULT_ENGINE)
_WORKLOAD_CHOICES = _choices(workload_names(), DEFAULT_WORKLOAD)


@dataclass
class RunArgs:
    """Every option of ``tdebench run`` (help texts as ``--help`` shows them)."""

    experiment: Annotated[Optional[Path], typer.Argument(
        help="Experiment file (TOML); its [run] keys are the options below.", show_default=False)] = None
    engine: Annotated[str, typer.Option(help=f"Engine(s), comma-separated: {_ENGINE_CHOICES}.")] = DEFAULT_ENGINE
    encryption: Annotated[Optional[str], typer.Option(
        help="Comma-separated encryption specs; default: none plus each engine's default encrypted spec.")] = None
    workload: Annotated[str, typer.Option(help=f"Workload: {_WORKLOAD_CHOICES} (docs/workloads/).")] = DEFAULT_WORKLOAD
    workload_dir: Annotated[Optional[Path], typer.Option(
        help="sql: your workload's directory (schema.sql, data/, queries/; see docs/workloads/sql.md); replay: the "
             "schema and data to load (e.g. from tdebench capture).", show_default=False)] = None
    log: Annotated[Optional[Path], typer.Option(
        help="replay: the server log to replay (MariaDB/MySQL slow or general log, PostgreSQL stderr or csvlog; "
             "docs/workloads/replay.md).", show_default=False)] = None
    sf: Annotated[Optional[float], typer.Option(
        help="TPC-H scale factor (tpch, load, backup) (default: 0.01).", show_default=False)] = None
    tests: Annotated[Optional[str], typer.Option(
        help="TPC-H tests: power, throughput or power,throughput (default: power).", show_default=False)] = None
    streams: Annotated[Optional[int], typer.Option(help="Throughput streams (default: spec minimum, at least 2).")] = None
    trials: Annotated[int, typer.Option(help="Measured trials per config (after the warm-up).")] = 3
    warmup: Annotated[int, typer.Option(help="Warm-up trials per config, discarded (0 or 1; 0 by default when taking "
        "turns with pages read from the disk).")] = 1
    cache: Annotated[str, typer.Option(help="warm, or cold: restart the server and drop the OS page cache before each trial.")] = "warm"
    reset: Annotated[str, typer.Option(help="none, or snapshot: restore the loaded data before every trial.")] = "none"
    query_timeout: Annotated[float, typer.Option(help="Cancel a query after this many seconds (0 = never).")] = 0.0
    max_failures: Annotated[int, typer.Option(help="Consecutive failed trials before a config is abandoned.")] = 3
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Run directory (default results/<time>-<engine>).")] = None
    resume: Annotated[Optional[Path], typer.Option(help="Continue a killed run in this run directory.")] = None
    keep_answers: Annotated[bool, typer.Option(help="Write every config's query answers under answers/.")] = False
    data_dir: Annotated[Optional[Path], typer.Option(help="Where TPC-H data is generated once per scale factor and "
                                                          "cached (default: ~/.cache/tdebench/tpch).")] = None
    server_setting: Annotated[list[str], typer.Option(help="KEY=VALUE engine setting, same for every twin, recorded in the manifest; repeatable.")] = field(default_factory=list)
    encrypt_columns: Annotated[Optional[str], typer.Option(
        help="Column encryption: which columns (table.col,… or table.*); default every non-key column.")] = None
    seed: Annotated[Optional[int], typer.Option(help="Seed of the randomized block order.")] = None
    work_dir: Annotated[Optional[Path], typer.Option(help="Where instances keep their data (default: temp dir).")] = None
    nodes: Annotated[Optional[int], typer.Option(help="Cluster engines (galera): nodes per cluster, at least 2 "
        "(default: 3).", show_default=False)] = None
    tcp: Annotated[bool, typer.Option(help="Servers also listen on 127.0.0.1 (default: Unix socket only).")] = False
    keep: Annotated[bool, typer.Option(help="Keep instance data directories after the run.")] = False
    report: Annotated[bool, typer.Option(help="Build the HTML/Markdown report at the end.")] = True
    warehouses: Annotated[Optional[int], typer.Option(help="tpcc: warehouses.", show_default=False)] = None
    vus: Annotated[Optional[str], typer.Option(help="tpcc/sysbench: virtual users per step, e.g. 5,10,15; sql: "
        "connections running the statement mix (default: one connection, statement by statement).",
        show_default=False)] = None
    duration: Annotated[Optional[str], typer.Option(help="tpcc/sysbench: measured time per step, e.g. 30s, 5m; "
        "sql: per statement (with --vus: per VU count), config and block (sql default: 500ms; with --vus 10s).",
        show_default=False)] = None
    rampup: Annotated[Optional[str], typer.Option(help="tpcc/sysbench/sql --vus: ramp-up before measuring, e.g. 5s.",
        show_default=False)] = None
    slice_: Annotated[Optional[str], typer.Option("--slice", help="With --schedule query, measured slices of this "
        "length alternate between the configs: tpcc, sysbench, sql --vus (each round one paired observation); sql: "
        "one config's visit to a statement; replay: seconds of the log per segment (0: the whole log) "
        "(default: tpcc, sysbench, sql --vus 1s; sql 20ms; replay 1s).", show_default=False)] = None
    rows: Annotated[Optional[int], typer.Option(help="crud: rows in the table.", show_default=False)] = None
    batches: Annotated[Optional[str], typer.Option(help="crud: batch sizes, e.g. 100000,200000.", show_default=False)] = None
    option: Annotated[list[str], typer.Option("--workload-option", help="KEY=VALUE option of the workload; repeatable.")] = field(default_factory=list)
    targets: Annotated[list[str], typer.Option("--target", help="LABEL=URL[#SPEC]: a server tdebench does not manage "
        "(mysql://, mariadb://, postgresql://, mssql://, oracle://USER@HOST[:PORT]/DB), declared encryption after '#' "
        "(default none); password from ?password_env=VAR, TDEBENCH_PASSWORD_<LABEL> or a prompt; repeatable. "
        "Replaces --engine.")] = field(default_factory=list)
    override_check: Annotated[list[str], typer.Option("--override-encryption-check", help="Target LABEL (or all) "
        "kept with its declared encryption although the server does not confirm it; recorded. Repeatable.")] = field(default_factory=list)
    skip_disk_check: Annotated[bool, typer.Option(
        "--skip-disk-check", help="Run even if the work directory's filesystem looks too small for the databases.")] = False
    schedule: Annotated[Optional[str], typer.Option(help="block: whole trials in each block's random order; query: "
        "every twin stays up and each step (TPC-H query) runs on every config in a fresh random order before the "
        "next; duet: two twins run each step at the same moment, each in a cgroup with its own CPUs (root, 2 CPUs); "
        "turns: two twins run each step at the same moment taking turns on the machine, each frozen while the "
        "other runs (root; TPC-H power) (default: turns with pages read from the disk (--memory-ratio below 1) "
        "where it can serve the run, else query with --cache warm, else block).", show_default=False)] = None
    repeat: Annotated[Optional[int], typer.Option(help="--schedule query, duet or turns: runs of each step per config and block "
        "(their mean is recorded) (default: 1).", show_default=False)] = None
    precision: Annotated[Optional[str], typer.Option(help="Add blocks until the 95% CI half-width of every "
        "encrypted config's overhead on every watched headline is at most this, e.g. 1%; --trials is then the "
        "minimum, the stopping rule's pilot (default 8 blocks).",
        show_default=False)] = None
    precision_metric: Annotated[Optional[str], typer.Option(help="What --precision watches, comma-separated: "
        "headline (every headline of the workload: TPC-H power time, TPC-C TPM, sql reads, writes and each "
        "statement, replay wall time and each digest), headline names (sql: reads,writes; replay: wall), NAME=P% "
        "for a target of its own, cpu (the server's CPU time), p50, p95, p99 (TPC-C: New-Order's), power "
        "(TPC-H's Power@Size), common-wait (TPC-H's power time at a common wait per page read, with pages read from "
        "the disk) (default: common-wait when taking turns with pages read from the disk, else headline).",
        show_default=False)] = None
    max_time: Annotated[Optional[str], typer.Option(help="Start no block that would end after this time since the "
        "start, e.g. 20m (default with --precision alone: 30m).", show_default=False)] = None
    max_trials: Annotated[Optional[int], typer.Option(help="--precision: at most this many trials per config.",
        show_default=False)] = None
    pin: Annotated[Optional[bool], typer.Option("--pin/--no-pin", help="Pin tdebench to one CPU and the servers to "
        "the others, among them the CPU the data disk's interrupts go to, so that reads complete where the server "
        "waits (default: on for --workload sql on one connection, where it halved the noise of short statements, and "
        "when taking turns with pages read from the disk, where it keeps both twins' reads on the same CPU; else off).",
        show_default=False)] = None
    nice: Annotated[Optional[int], typer.Option(help="Run tdebench and the servers at this nice value, e.g. -10 "
        "(negative: root only), so other processes on a shared machine take less from the measurement.",
        show_default=False)] = None
    restart_twins: Annotated[Optional[bool], typer.Option("--restart-twins/--no-restart-twins", help="Restart "
        "every twin's server before every measured block, keeping its cache, so that no one server process's "
        "layout in memory decides a comparison (default: on with --schedule query and a warm cache on engines "
        "that can).", show_default=False)] = None
    fault: Annotated[Optional[str], typer.Option(help="Inject a fault into the trials of one measured block: "
        "kill-node@50% (or @20s) kills a node of every config's cluster that far into its trial and rejoins it by "
        "IST; add ,block=N ,node=K ,rejoin=sst. The trial is flagged and left out of the intervals "
        "(docs/faults.md). Implies --schedule block.", show_default=False)] = None
    keys: Annotated[Optional[str], typer.Option(help="Where the encrypted configs' keys live, each source a config "
        "of its own: file (the engine's own arrangement), openbao (a key server: a private OpenBao the run starts, "
        "or --key-server), e.g. file,openbao; labels end in +openbao (docs/key-management.md) (default: file).",
        show_default=False)] = None
    key_server: Annotated[Optional[str], typer.Option(help="--keys openbao from your own OpenBao or Vault, read only: "
        "https://HOST:PORT/v1/MOUNT, a KV v2 mount whose secrets 1, 2, ... hold the keys in hex in field data; token "
        "from VAULT_TOKEN, CA from VAULT_CACERT.", show_default=False)] = None
    baseline: Annotated[Optional[str], typer.Option(help="A plain config (label, e.g. sqlite-none) that every "
        "config of its engine family is also compared with, across engines (e.g. --engine sqlite,sqlite3mc); "
        "each config keeps its own plain twin too.", show_default=False)] = None
    memory_ratio: Annotated[Optional[str], typer.Option(
        help="Sweep each engine's cache (buffer pool, shared_buffers, page cache) as ratios of the loaded data, "
             "e.g. 0.05,0.25,1,2; each ratio runs its own warm-up and trials.", show_default=False)] = None
    page_source: Annotated[Optional[str], typer.Option(
        help="With --memory-ratio: where a page the cache misses comes from: disk (the OS page cache bypassed "
             "or bounded; mariadb's and postgres' default) or memory (the OS page cache holds the data: the cost "
             "of the encryption boundary without the device's latency; sqlite's and duckdb's only source).",
        show_default=False)] = None


def signature(ctx_annotation: object) -> inspect.Signature:
    """The parameters typer builds ``tdebench run``'s options from: the context, then :class:`RunArgs`' fields."""
    hints = get_type_hints(RunArgs, include_extras=True)
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ctx_annotation)]
    for f in fields(RunArgs):
        default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
        params.append(inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                        annotation=hints[f.name]))
    return inspect.Signature(params, return_annotation=None)
