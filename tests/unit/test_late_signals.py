"""A signal that lands after the CLI has finished cannot turn a finished run into a death by signal."""

from __future__ import annotations

import json
import signal
from datetime import datetime, timedelta, timezone

import pytest

import tdebench.__main__ as entry
import tdebench.cli.app as app

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture
def saved_handlers():
    saved = {sig: signal.getsignal(sig) for sig in SIGNALS}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("ending", ["returns", "exits 0", "exits 2"])
def test_the_finished_cli_ignores_the_signals_that_would_kill_it(monkeypatch, saved_handlers, ending):
    def main() -> None:
        assert signal.getsignal(signal.SIGTERM) is entry._interrupted  # while it runs, a signal interrupts
        if ending != "returns":
            raise SystemExit(int(ending.split()[1]))

    monkeypatch.setattr(app, "main", main)
    if ending == "returns":
        entry.run()
    else:
        with pytest.raises(SystemExit):
            entry.run()
    assert all(signal.getsignal(sig) is signal.SIG_IGN for sig in SIGNALS)


def test_the_interrupt_harness_tells_a_run_finished_before_its_signal(tmp_path):
    from tests.e2e.test_interrupt import H

    moment = datetime.now(timezone.utc)
    stamp = lambda t: t.isoformat(timespec="milliseconds").replace("+00:00", "Z")  # noqa: E731
    (tmp_path / "manifest.json").write_text(json.dumps({"status": "completed", "finished_at": stamp(moment)}))
    assert H.finished_before(tmp_path, moment + timedelta(milliseconds=5))
    assert not H.finished_before(tmp_path, moment - timedelta(seconds=1))  # finished after the signal: it ignored it
    (tmp_path / "manifest.json").write_text(json.dumps({"status": "interrupted", "finished_at": stamp(moment)}))
    assert not H.finished_before(tmp_path, moment + timedelta(seconds=1))
    assert not H.finished_before(tmp_path / "absent", moment)
