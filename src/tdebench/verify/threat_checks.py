"""The checks behind the threat-model rows (:mod:`tdebench.verify.threats`), one function per attacker.

Each check asks the instance's threat-model probes (:class:`tdebench.api.threat_probes.ThreatProbes`, from
:meth:`tdebench.api.engine.Instance.threats`; the instance itself is their ``instance``), runs what it must on the
live server (a lookup with literal values for the statement log, a spilling sort for the temp files, a SELECT-only
user), scans the files involved (:mod:`tdebench.verify.threat_scan`) and turns the result into a :class:`Row`.
Files are named relative to the instance directory where possible; hits are counted per needle *name*.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

from tdebench.api.threat_probes import ThreatProbes
from tdebench.engines.toolkit.exposure import files_on_disk
from tdebench.verify import hostfacts
from tdebench.verify.atrest import count_in_file
from tdebench.verify.live_scan import scan_tree_as
from tdebench.verify.threat_keys import host_keys_row, key_text, unattended_text
from tdebench.verify.threat_rows import (EXPOSED, NOT_APPLICABLE, NOT_CHECKED, PROTECTED, Needles, Row, backup_rows,
                                         fmt_bytes, guarded, join_words)
from tdebench.verify.threat_scan import (FileScan, Scan, at_rest_files, display, hits_text, inside, matches,
                                         scan_paths, temp_scan)

MAX_PROBE_SLEEP = 3.0  # a slow-query threshold above this is not waited for: the final scan decides
LOG_HINT = ("turn it on as users do with --server-setting, e.g. general_log=ON or slow_query_log=ON (MariaDB), "
            "log_statement=all or log_min_duration_statement=0 (PostgreSQL)")


# the rows -------------------------------------------------------------------------------------------
def statement_facts(probes: ThreatProbes) -> dict[str, Any] | None:
    try:
        return probes.statement_logs()
    except Exception:  # noqa: BLE001 - the statement-log row says it was not checked
        return None


def log_rel_paths(probes: ThreatProbes, facts: dict[str, Any] | None) -> set[str]:
    """Statement-log files inside the data_dir, relative to it (they have a row of their own)."""
    if not facts or not facts.get("enabled"):
        return set()
    root = os.path.realpath(probes.instance.data_dir)
    out = set()
    for path in facts.get("files", []):
        real = os.path.realpath(path)
        if real.startswith(root + "/"):
            out.add(real[len(root) + 1:])
    return out


def data_dir_row(probes: ThreatProbes, files: list[FileScan], logs: set[str]) -> Row:
    parts = probes.data_dir_parts()
    globs = (parts or {}).get("datadir") or ["*"]
    mine = Scan([f for f in files if matches(f.path, globs) and f.path not in logs])
    if not mine.files:
        return Row("data_dir", NOT_CHECKED, "the at-rest scan found no file of the data directory")
    breakdown = {}
    for part in ("redo", "temp"):
        if parts and parts.get(part):
            sub = [f for f in mine.files if matches(f.path, parts[part])]
            breakdown[part] = {"files": len(sub), "hits": sum(f.total_hits for f in sub)}
    where = "the data directory" + (f" ({', '.join(globs)})" if globs != ["*"] else "")
    evidence = {**mine.evidence(), "parts": breakdown, "statement_logs_excluded": sorted(logs)}
    status = EXPOSED if mine.total else PROTECTED
    return Row("data_dir", status, mine.text(where) + (" (statement logs in it: see their row)" if logs else ""),
               evidence)


def redo_row(probes: ThreatProbes, files: list[FileScan], data: Row) -> Row:
    parts = probes.data_dir_parts()
    if parts is None:
        if data.status == PROTECTED:
            return Row("redo_log", PROTECTED, "the redo log / WAL cannot be told apart on disk (encrypted file "
                       "names, or blocks of one disk image); no file of the data directory holds plaintext",
                       {"covered_by": "data_dir"})
        return Row("redo_log", NOT_CHECKED, "the redo log / WAL cannot be told apart on disk (encrypted file names, "
                   "or blocks of one disk image)")
    if not parts.get("redo"):
        return Row("redo_log", NOT_CHECKED, "the engine names no redo log / WAL files")
    redo = Scan([f for f in files if matches(f.path, parts["redo"])])
    if not redo.files:
        return Row("redo_log", NOT_APPLICABLE, f"no redo log / WAL file exists ({', '.join(parts['redo'])})")
    return Row("redo_log", EXPOSED if redo.total else PROTECTED, redo.text("the redo log / WAL"),
               {**redo.evidence(), "globs": parts["redo"]})


def replication_rows(probes: ThreatProbes, files: list[FileScan]) -> list[Row]:
    """A cluster's gcache and state-transfer files, from the at-rest scan; no row for engines without them."""
    facts = probes.replication_cache()
    if facts is None:
        return []
    globs = list(facts.get("globs") or [])
    enc = facts.get("encryption") or {}
    cache = Scan([f for f in files if matches(f.path, globs)])
    how = ("the provider encrypts it" if enc.get("enabled") else "the provider offers encryption, not enabled"
           if enc.get("offered") else str(enc.get("reason") or "the provider offers no encryption for it"))
    rows = [Row("gcache", NOT_APPLICABLE if not cache.files else EXPOSED if cache.total else PROTECTED,
                (cache.text(str(facts.get("what") or "the replication cache")) if cache.files
                 else "no replication cache file exists") + f"; {how}",
                {**cache.evidence(), "globs": globs, "encryption": enc})]
    transfer = list(facts.get("transfer_globs") or [])
    if transfer:
        received = Scan([f for f in files if matches(f.path, transfer) and not matches(f.path, globs)])
        what = f"the joining nodes ({facts.get('transfer') or 'state transfer'}), replication cache left out"
        rows.append(Row("state_transfer", NOT_APPLICABLE if not received.files else EXPOSED if received.total
                        else PROTECTED, received.text(what) if received.files else "no node received a transfer",
                        {**received.evidence(), "globs": transfer, "transfer": facts.get("transfer")}))
    return rows


def disk_row(probes: ThreatProbes, files: list[FileScan], needles: Needles, logs: dict[str, Any] | None,
             keys: list[dict[str, Any]] | None) -> Row:
    """The instance's files as a copy of the disk holds them, and its keys (``keys``: :meth:`key_storage`) where
    a setup that restarts unattended keeps them."""
    roots = probes.disk_paths()
    log_paths = [Path(p) for p in (logs or {}).get("files", []) + (logs or {}).get("server_logs", [])]
    log_rel = set()
    for p in log_paths:
        if inside(p, [probes.instance.data_dir]):
            log_rel.add(str(Path(os.path.realpath(p)).relative_to(os.path.realpath(probes.instance.data_dir))))
    base = [f for f in files if f.path not in log_rel]  # statement logs are rescanned below (after the probe)
    rest = [p for p in files_on_disk(roots, exclude=[probes.instance.data_dir])]
    fresh = scan_paths(rest + [p for p in log_paths if p.is_file() and inside(p, [probes.instance.data_dir])], needles,
                       roots)
    scan = Scan(base + fresh.files)
    clear = [k for k in keys or [] if k.get("found_in_clear")]
    bare = [k for k in keys or [] if k.get("on_disk") and k.get("protected_by") in (None, "", "none")]
    key_part = ("keys: not known" if keys is None else "no key" if not keys else
                "keys: " + "; ".join(key_text(k) for k in keys))
    restart, unwraps = unattended_text(keys or [])
    status = EXPOSED if scan.total or clear or bare or unwraps else PROTECTED
    evidence = {**scan.evidence(), "paths": [str(p) for p in roots], "keys": keys,
                "key_beside_data": any(k.get("beside_data") for k in keys or []) if keys is not None else None,
                "unattended_restart": restart or None}
    return Row("disk", status, f"{scan.text('the instance on disk')}; {key_part}"
               + (f"; {restart}" if restart else ""), evidence)


def live_host_row(probes: ThreatProbes, needles: Needles) -> Row:
    """The files as the running host shows them: a filesystem encryption's unlocked mount hands them out in clear
    to root and to the files' owner; an engine's own encryption does not (its keys are in the server's memory)."""
    roots = probes.live_paths()
    if roots is None:
        return Row("live_host", NOT_CHECKED, "the engine does not say where its files are read while it runs")
    reader = probes.live_reader()
    if reader is None:
        scan = scan_paths(list(files_on_disk(roots)), needles, roots)
    else:  # a mount only the server's user may enter: read as that user, whom root can become
        values = [v.encode() for v in needles.values()]
        scan = Scan([FileScan(name, size, needles.name_counts(counts)) for root in roots
                     for name, size, counts in scan_tree_as(reader, root, values)])
    status = EXPOSED if scan.total else PROTECTED
    who = f", read as the server's OS user '{reader.pw_name}', whom root can become" if reader else ""
    return Row("live_host", status, f"{scan.text('the files as the running host reads them')} (while the instance "
               f"runs, unlocked{who}; root can also read a server's memory, where every key is)",
               {**scan.evidence(), "paths": [str(p) for p in roots]})


def statement_log_row(probes: ThreatProbes, needles: Needles, facts: dict[str, Any] | None) -> Row:
    if facts is None:
        return Row("statement_log", NOT_CHECKED, "the engine does not report its statement logging")
    if facts.get("applicable") is False:
        return Row("statement_log", NOT_APPLICABLE, str(facts.get("reason", "")))
    roots = probes.disk_paths()
    settings = ", ".join(f"{k}={v}" for k, v in (facts.get("settings") or {}).items() if v not in ("", None))
    statement_files = [Path(p) for p in facts.get("files", [])]
    if not facts.get("enabled"):
        server = scan_paths([Path(p) for p in facts.get("server_logs", []) if Path(p).is_file()], needles, roots)
        evidence = {**server.evidence(), "settings": facts.get("settings"), "statement_logging": False}
        if server.total:
            return Row("statement_log", EXPOSED, "statement logging is off, but " + server.text("the server log"),
                       evidence)
        return Row("statement_log", NOT_APPLICABLE, f"statement logging is off ({settings}); "
                   f"{server.text('the server log')}. To check it, {LOG_HINT}", evidence)
    probe = run_log_probe(probes, needles, facts.get("min_duration_s"))
    scan = scan_paths([p for p in statement_files if p.is_file()], needles, roots)
    tag_seen = bool(probe.get("tag")) and any(_holds(p, probe["tag"]) for p in statement_files if p.is_file())
    evidence = {**scan.evidence(), "settings": facts.get("settings"), "statement_logging": True,
                "probe": {k: v for k, v in probe.items() if k != "tag"}, "probe_recorded": tag_seen}
    if scan.total:
        return Row("statement_log", EXPOSED, f"statement logging on ({settings}); " + scan.text("the statement log"),
                   evidence)
    if tag_seen:
        return Row("statement_log", PROTECTED, "the log recorded the probe without its literal values; "
                   + scan.text("the statement log"), evidence)
    why = probe.get("skipped") or "the log did not record the probe"
    return Row("statement_log", NOT_CHECKED, f"statement logging on ({settings}), but {why}", evidence)


def _holds(path: Path, text: str) -> bool:
    try:
        return sum(count_in_file(path, [text.encode()]).values()) > 0
    except (OSError, ValueError):
        return False


def run_log_probe(probes: ThreatProbes, needles: Needles, min_duration: float | None) -> dict[str, Any]:
    """A lookup with the canary values as literals, as slow as the log's threshold needs."""
    if min_duration is not None and min_duration > MAX_PROBE_SLEEP:
        return {"skipped": f"only statements over {min_duration:g} s are logged; the probe does not wait that long "
                           "(the workload's slow statements are caught by the final scan)"}
    seconds = 0.0 if min_duration is None else min_duration + 0.25
    tag = f"tdebench-log-probe-{secrets.token_hex(6)}"
    conn = probes.instance.connect()
    try:
        cur = conn.cursor()
        cur.execute(f"/* {tag} */ " + probes.literal_lookup_sql(list(needles.canaries), seconds))
        cur.fetchall()
        conn.commit()
    finally:
        conn.close()
    return {"tag": tag, "statement": "a SELECT of the canary rows with their values as literals in the statement "
            "text, as applications write lookups" + (f", lasting at least {seconds:g} s" if seconds else "")}


def temp_row(probes: ThreatProbes, needles: Needles) -> Row:
    locations = probes.temp_locations()
    if locations is None:
        return Row("temp_files", NOT_CHECKED, "the engine does not say where its temporary files go")
    where = join_words([display(p, probes.disk_paths()) for p in locations])
    started = time.time() - 1.0
    with probes.spill_probe(list(needles.canaries)) as facts:
        if facts is None:
            return Row("temp_files", NOT_CHECKED, "the engine has no spill probe")
        if "in_memory" in facts:
            return Row("temp_files", NOT_APPLICABLE, str(facts["in_memory"]), {"probe": facts})
        scan, unreadable = temp_scan(probes, needles, since=started)
    spilled = bool(facts.get("spill_files")) or any(f.bytes for f in scan.files)
    evidence = {**scan.evidence(), "locations": [str(p) for p in locations], "probe": facts,
                "unreadable_open_files": unreadable}
    probe_text = "spill probe"
    if "spill_files" in facts:  # what the server itself counted (an embedded engine has no such counter)
        probe_text += (f" ({facts['spill_files']} spill file(s) reported by the server"
                       + (f", {fmt_bytes(int(facts['spill_bytes']))}" if facts.get("spill_bytes") else "") + ")")
    if scan.total:
        return Row("temp_files", EXPOSED, f"{probe_text}: {scan.text('temporary files in ' + where)}", evidence)
    if spilled and scan.files:
        return Row("temp_files", PROTECTED, f"{probe_text}: {scan.text('temporary files in ' + where)}", evidence)
    return Row("temp_files", NOT_CHECKED, f"{probe_text}: the probe's sort did not reach a file that could be "
               f"read ({len(scan.files)} scanned, {unreadable} unreadable)", evidence)


def swap_core_row(probes: ThreatProbes) -> Row:
    facts = hostfacts.memory_facts(probes.instance.server_pids())
    engine = probes.core_dump_facts() or {}
    applies = set(engine.get("applies_to") or [])
    dumping, unknown = [], []
    for p in facts.processes:
        dumps = facts.dumps_core(p)
        if dumps and engine.get("server_dumps_core") is False and p.name in applies:
            dumps = False
        (dumping if dumps else unknown if dumps is None else []).append(p)
    swap = facts.clear_swap
    locked = bool(engine.get("memory_locked"))
    holds = "keys and decrypted rows" if not probes.instance.config.spec.is_plain else "rows"
    limits = join_words(sorted({f"{p.name} {p.core_soft}" for p in facts.processes})) or "no process"
    core = (f"core_pattern {facts.core_pattern!r}, RLIMIT_CORE (soft) {limits}"
            + (f", {', '.join(f'{k}={v}' for k, v in (engine.get('settings') or {}).items())}" if engine else ""))
    swap_text = ("no active swap" if not facts.swaps else
                 f"swap active: {', '.join(s['device'] for s in facts.swaps)}"
                 + (" (not encrypted)" if swap else " (dm-crypt)") + (", server memory locked" if locked else ""))
    evidence = {**facts.to_json(), "engine": engine}
    if dumping or (swap and not locked):
        what = []
        if dumping:
            what.append(f"a crash of {join_words(sorted({p.name for p in dumping}))} writes a core with its {holds}")
        if swap and not locked:
            what.append(f"its {holds} can be paged to unencrypted swap")
        who = "keys could" if not probes.instance.config.spec.is_plain else "decrypted rows could"
        return Row("swap_core", EXPOSED, f"{'; '.join(what)}: {who} land on disk ({core}; {swap_text})",
                   evidence)
    if unknown:
        return Row("swap_core", NOT_CHECKED, f"the core limit of {len(unknown)} process(es) could not be read "
                   f"({core}; {swap_text})", evidence)
    who = "keys cannot" if not probes.instance.config.spec.is_plain else "nothing in memory can"
    return Row("swap_core", PROTECTED, f"no core dump and no swap for the {holds} in memory: {who} land "
               f"on disk this way ({core}; {swap_text})", evidence)


def rows_bytes(rows: list[list[Any]]) -> bytes:
    out = []
    for row in rows:
        for v in row:
            out.append(v if isinstance(v, bytes) else str(v).encode())
    return b"\n".join(out)


def select_user_row(probes: ThreatProbes, needles: Needles) -> Row:
    result = probes.read_as_select_user()
    if result is None:
        return Row("select_user", NOT_CHECKED, "the engine has no SELECT-user probe")
    if result.get("applicable") is False:
        return Row("select_user", NOT_APPLICABLE, str(result.get("reason", "")))
    hits: dict[str, int] = {}
    read, parts, relations = 0, [], {}
    for name, outcome in (result.get("relations") or {}).items():
        if "error" in outcome:
            error = needles.scrub(str(outcome["error"]))[:200]
            relations[name] = {"error": error}
            parts.append(f"{name}: refused ({error})")
            continue
        rows = outcome.get("rows") or []
        found = needles.count_in(rows_bytes(rows))
        for k, n in found.items():
            hits[k] = hits.get(k, 0) + n
        read += len(rows)
        relations[name] = {"rows": len(rows), "hits": found}
        parts.append(f"{name}: {len(rows)} row(s), " + (hits_text(found) if found else "no plaintext"))
    evidence = {"user": result.get("user"), "grants": result.get("grants"), "relations": relations, "hits": hits}
    head = f"as {result.get('user')} ({result.get('grants')}): {'; '.join(parts) or 'nothing to read'}"
    if hits:
        return Row("select_user", EXPOSED, head, evidence)
    if read:
        return Row("select_user", PROTECTED, head, evidence)
    return Row("select_user", NOT_CHECKED, head, evidence)


def network_row(probes: ThreatProbes) -> Row:
    t = probes.transport_security()
    if t is None:
        return Row("network", NOT_CHECKED, "the engine does not report its TLS settings")
    if t.get("applicable") is False:
        return Row("network", NOT_APPLICABLE, str(t.get("reason", "")))
    settings = ", ".join(f"{k}={v}" for k, v in (t.get("settings") or {}).items())
    own = f"tdebench itself connects through {t.get('listen')}"
    if t.get("tls") and t.get("required"):
        return Row("network", PROTECTED, f"TLS is required of every network client ({settings}); {own}", t)
    if t.get("tls"):
        return Row("network", EXPOSED, f"TLS is offered but not required ({settings}): a remote client that does "
                   f"not ask for it sends statements and receives rows in clear; {own}", t)
    return Row("network", EXPOSED, f"TLS is off ({settings}): a remote client would send its statements and "
               f"receive every row in clear, decrypted by the server; {own}", t)


def replication_transport_rows(probes: ThreatProbes) -> list[Row]:
    """A cluster's traffic between its nodes (``transport_security()['replication']``); no row for single servers."""
    t = probes.transport_security() or {}
    rep = t.get("replication")
    if not isinstance(rep, dict):
        return []
    what = str(rep.get("what", "write sets between the nodes"))
    if rep.get("tls"):
        return [Row("replication", PROTECTED, f"TLS between the nodes ({rep.get('settings')}): {what}", rep)]
    return [Row("replication", EXPOSED, f"no TLS between the nodes ({rep.get('settings')}): {what} cross in clear, "
                "whatever the tables' encryption", rep)]


# all rows -------------------------------------------------------------------------------------------
def all_rows(probes: ThreatProbes, at_rest: dict[str, Any], needles: Needles, backup_note: str) -> list[Row]:
    """Every row of a local instance, in the order that lets each check see the others' traces."""
    scrub = needles.scrub
    files = at_rest_files(at_rest)
    facts = statement_facts(probes)
    logs = log_rel_paths(probes, facts)
    data = guarded("data_dir", lambda: data_dir_row(probes, files, logs), scrub)
    rows = [data, guarded("redo_log", lambda: redo_row(probes, files, data), scrub)]
    try:
        rows += replication_rows(probes, files)
    except Exception as exc:  # noqa: BLE001 - one failing probe must not hide the other rows
        rows.append(Row("gcache", NOT_CHECKED, f"the check failed: {scrub(f'{type(exc).__name__}: {exc}')[:300]}"))
    rows.append(guarded("statement_log", lambda: statement_log_row(probes, needles, facts), scrub))
    try:
        keys = probes.key_storage()
    except Exception as exc:  # noqa: BLE001 - the key rows say the keys could not be told
        keys, failure = None, scrub(f"{type(exc).__name__}: {exc}")[:300]
        rows.append(Row("host_keys", NOT_CHECKED, f"the check failed: {failure}"))
    rows.append(guarded("disk", lambda: disk_row(probes, files, needles, facts, keys), scrub))
    rows.append(guarded("live_host", lambda: live_host_row(probes, needles), scrub))
    if not any(r.id == "host_keys" for r in rows):
        rows.append(guarded("host_keys", lambda: host_keys_row(probes.instance, keys), scrub))
    rows += backup_rows({}, backup_note)
    rows.append(guarded("temp_files", lambda: temp_row(probes, needles), scrub))
    rows.append(guarded("swap_core", lambda: swap_core_row(probes), scrub))
    rows.append(guarded("select_user", lambda: select_user_row(probes, needles), scrub))
    rows.append(guarded("network", lambda: network_row(probes), scrub))
    try:
        rows += replication_transport_rows(probes)
    except Exception as exc:  # noqa: BLE001 - one failing probe must not hide the other rows
        rows.append(Row("replication", NOT_CHECKED, f"the check failed: {scrub(f'{type(exc).__name__}: {exc}')[:300]}"))
    return rows


def unreachable(probes: ThreatProbes, needles: Needles) -> list[Row]:
    """An external server: its files and processes are out of reach; its own SQL probes may still answer."""
    why = probes.instance.scan_note or "the server's files are out of reach"
    try:
        keys = probes.key_storage()  # what the server says of its key management, claimed no further
    except Exception:  # noqa: BLE001 - the rows stay "not checked" without it
        keys = None
    told = ("; the server reports " + "; ".join(f"{k['key']}: {k['where']} (not shown: {k.get('not_shown')})"
                                                 for k in keys)) if keys else ""
    rows = [Row(i, NOT_CHECKED, f"files out of reach: {why}" + (told if i in ("disk", "host_keys") else ""),
                {"keys": keys} if i in ("disk", "host_keys") and keys else {})
            for i in ("data_dir", "redo_log", "disk", "live_host", "host_keys", "statement_log", "temp_files")]
    rows.append(Row("swap_core", NOT_CHECKED, "the server's processes are out of reach"))
    rows.append(guarded("select_user", lambda: select_user_row(probes, needles), needles.scrub))
    rows.append(guarded("network", lambda: network_row(probes), needles.scrub))
    return rows


def final_rows(probes: ThreatProbes, rows: list[Row], needles: Needles) -> list[Row]:
    """After the workload: the statement logs and the temporary locations are scanned again."""
    out = []
    for row in rows:
        if row.id == "statement_log":
            row = guarded(row.id, lambda r=row: _final_log(probes, r, needles), needles.scrub, "final_seconds")
        elif row.id == "temp_files" and row.status != NOT_APPLICABLE:
            row = guarded(row.id, lambda r=row: _final_temp(probes, r, needles), needles.scrub, "final_seconds")
        out.append(row)
    return out


def _final_log(probes: ThreatProbes, row: Row, needles: Needles) -> Row:
    facts = statement_facts(probes)
    if not facts or facts.get("applicable") is False or not facts.get("enabled"):
        return row
    scan = scan_paths([Path(p) for p in facts.get("files", []) if Path(p).is_file()], needles,
                      probes.disk_paths())
    row.evidence["final_scan"] = scan.evidence()
    if scan.total and row.status != EXPOSED:
        return Row(row.id, EXPOSED, "after the workload, " + scan.text("the statement log"), row.evidence)
    return row


def _final_temp(probes: ThreatProbes, row: Row, needles: Needles) -> Row:
    scan, unreadable = temp_scan(probes, needles, since=None)
    row.evidence["final_scan"] = {**scan.evidence(), "unreadable_open_files": unreadable}
    if scan.total and row.status != EXPOSED:
        return Row(row.id, EXPOSED, "left after the workload: " + scan.text("the temporary locations"),
                   row.evidence)
    return row
