"""``--fault keyserver-down``: the run's key server stopped (or sealed) during a trial of a config whose keys live
on it (docs/faults.md).

A thread waits until the fault's time, stops the key server (SIGTERM: requests are refused; ``mode=seal``: sealed,
requests answered 503) and then probes the database once a second on a fresh connection (a query that reads a
table): does it keep serving from its cached keys, how long, with which errors. The key server stays down until the
trial ends. Then, still down: the rows of every table are counted and checksummed, the database is restarted (a
restart must fail: its keys are out of reach; the server's own error line is kept), the key server comes back
(started and unsealed, or unsealed), the database starts, and the rows are counted and checksummed again: nothing
committed may be lost.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from tdebench.api.trial import ConfigState
from tdebench.encryption import redact
from tdebench.runner.keyserver.bao import PrivateOpenBao

PROBE_EVERY = 1.0
_ERROR = re.compile(r"\[ERROR\][^\n]*")


def first_error(text: str) -> str:
    """The server's first error line in ``text`` (a log tail), else its first line."""
    found = [f.removeprefix("[ERROR]").strip() for f in _ERROR.findall(text)]
    line = next((f for f in found if "hashicorp" in f or "key" in f.lower()), found[0] if found else text)
    return redact(line.strip().splitlines()[0] if line.strip() else text)[:300]


class Outage:
    """Takes the key server down ``at`` seconds into one config's trial, and puts it back afterwards."""

    def __init__(self, state: ConfigState, server: PrivateOpenBao, mode: str, at: float,
                 probe_sql: str) -> None:
        self.state, self.server, self.mode, self.at = state, server, mode, at
        self.probe_sql = probe_sql
        self.done = threading.Event()
        self.facts: dict[str, Any] = {"node": "the key server", "at": round(at, 3), "injected": False, "mode": mode}
        self.errors: dict[str, int] = {}
        self.thread = threading.Thread(target=self._work, name="tdebench-keyserver-outage", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _work(self) -> None:
        if self.done.wait(self.at):
            self.facts["note"] = f"not injected: the trial ended before {self.at:.1f} s"
            return
        try:
            if self.mode == "seal":
                self.server.seal()
            else:
                self.server.stop_process()
            self.facts["injected"] = True
        except Exception as exc:  # noqa: BLE001 - the trial fails with the reason
            self.facts["error"] = f"could not take the key server down: {redact(str(exc))[:300]}"
            return
        down, ok, failed = time.monotonic(), 0, 0
        while not self.done.wait(PROBE_EVERY):
            try:
                conn = self.state.instance.connect()
                try:
                    cur = conn.cursor()
                    cur.execute(self.probe_sql)
                    cur.fetchall()
                finally:
                    conn.close()
                ok += 1
            except Exception as exc:  # noqa: BLE001 - what the database does without its key server
                failed += 1
                self.facts.setdefault("first_error_after_s", round(time.monotonic() - down, 1))
                text = first_error(str(exc))
                self.errors[text] = self.errors.get(text, 0) + 1
        self.facts.update(down_within_trial_s=round(time.monotonic() - down, 1), probes_ok=ok, probes_failed=failed)

    def finish(self) -> dict[str, Any]:
        """After the trial: the restart that must fail, the key server back, the rows compared."""
        self.done.set()
        self.thread.join(60)
        if not self.facts.get("injected"):
            return self.facts
        if self.errors:
            self.facts["errors"] = [{"error": e, "count": n} for e, n in list(self.errors.items())[:5]]
        rotation = self.state.instance.key_rotation()
        before = rotation.table_sums() if rotation is not None else {}
        self._restart_without_keys()
        started = time.monotonic()
        if self.mode == "seal":
            self.server.unseal_again()
        else:
            self.server.restart()
        self.facts["key_server_back_s"] = round(time.monotonic() - started, 3)
        started = time.monotonic()
        self.state.instance.start()
        self.facts["database_back_s"] = round(time.monotonic() - started, 3)
        if rotation is not None:
            after = rotation.table_sums()
            self.facts.update(tables_checked=len(after), rows_counted=sum(
                int(v.split()[0].partition("=")[2]) for v in after.values()), rows_equal=before == after,
                tables_differing=sorted(t for t in set(before) | set(after) if before.get(t) != after.get(t))[:10])
        else:
            self.facts["rows_equal"] = "not checked (the engine does not checksum its tables)"
        return self.facts

    def _restart_without_keys(self) -> None:
        """Stop the database and start it while the key server is down: it must refuse to start."""
        started = time.monotonic()
        try:
            self.state.instance.restart()
        except Exception as exc:  # noqa: BLE001 - what is expected: no keys, no start
            self.facts.update(restart_refused=True, restart_message=first_error(str(exc)),
                              restart_failed_after_s=round(time.monotonic() - started, 1))
            return
        self.facts.update(restart_refused=False, restart_message="the database started without its key server "
                          "(it kept a key it should not have)")
        self.state.instance.stop()
