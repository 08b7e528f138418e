"""The offline switch's own logic against a stand-in for an instance (the engines' side is covered by
tests/e2e/test_encrypt_offline.py on real SQLCipher and PostgreSQL): timing, the disk sampled while the method runs,
its stages, the engine's status checked after it, and the timeline figure of such a trial."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tdebench.api.switch import SwitchProgress
from tdebench.api.switcher import OfflineSwitcher
from tdebench.report.encrypt_timeline import timeline_svg
from tdebench.workloads.encrypt import record
from tdebench.workloads.encrypt.offline import allocated_bytes, run_offline
from tdebench.workloads.encrypt.options import parse_options


class CopyingSwitcher(OfflineSwitcher):
    """Writes a second 'database' next to the first for a while (a copy), then swaps it in."""

    method = "copy"

    def __init__(self, instance: "Copying", done: bool) -> None:
        super().__init__(instance)
        self.done = done

    @classmethod
    def switches(cls, spec) -> bool:
        return True

    def start_plain(self) -> dict:
        return {}

    def switch(self, on: bool, step) -> dict:
        root = self.instance.data_dir
        step("export")
        (root / "db.switch").write_bytes(b"\2" * 4_000_000)
        time.sleep(0.35)
        step("swap")
        (root / "db.switch").replace(root / "db")
        return {"method": "copy", "tables_count": 2}

    def progress(self, on: bool = True) -> SwitchProgress:
        return SwitchProgress(done=self.done, in_target=int(self.done), total=1)


class Copying:
    """A stand-in for an instance whose switcher copies its one file (the disk sampled is its data_dir)."""

    def __init__(self, root: Path, done: bool = True) -> None:
        self.data_dir = root
        self._switcher = CopyingSwitcher(self, done)
        (root / "db").write_bytes(b"\1" * 4_000_000)

    def switcher(self) -> CopyingSwitcher:
        return self._switcher

    def server_pids(self) -> list[int]:
        return []


def test_the_copy_is_timed_and_its_peak_disk_seen(tmp_path):
    switch = run_offline(Copying(tmp_path), "on", "offline.on", 7.0)  # type: ignore[arg-type]
    assert switch.done and switch.method == "offline" and switch.seconds >= 0.35
    assert switch.disk["peak_extra_bytes"] >= 3_900_000  # the copy beside the original, sampled meanwhile
    assert switch.disk["bytes_after"] == allocated_bytes(tmp_path) < switch.disk["bytes_peak"]
    assert [s["name"] for s in switch.stages] == ["export", "swap"]
    assert switch.stages[0]["end_bytes"] >= 7_900_000 and switch.stages[0]["seconds"] >= 0.35
    assert switch.progress[0] == (7.0, 0.0)


def test_a_method_the_engine_does_not_report_done_fails(tmp_path):
    with pytest.raises(RuntimeError, match="not done"):
        run_offline(Copying(tmp_path, done=False), "on", "offline.on", 0.0)  # type: ignore[arg-type]


def test_offline_seconds_are_in_the_series_but_measure_nothing(tmp_path):
    switch = run_offline(Copying(tmp_path), "on", "offline.on", 0.0)  # type: ignore[arg-type]
    series = record.Series(per_second=[[5, 2]] * 3)
    series.add_offline(switch)
    assert series.per_second[3:] == [[0, 0]] and series.offline == {"offline.during_on"}
    assert series.phases[-1].name == "offline.during_on" and series.phases[-1].start == 3


def test_timeline_of_an_offline_trial():
    rows = [{"second": str(i), "phase": p, "tpm_rate": "600", "latency_p95": "0.02",
             "background": "stopped" if "during" in p else "running"}
            for i, p in enumerate(["offline.before"] * 3 + ["offline.during_on"] * 2 + ["offline.after_on"] * 3)]
    facts = {"phases": [{"name": "offline.during_on", "start_s": 3, "end_s": 5, "background": "stopped"}],
             "windows": [{"first_second": 0, "seconds": 3}, {"first_second": 3, "seconds": 2},
                         {"first_second": 5, "seconds": 3}]}
    svg = timeline_svg(rows, facts, "x: switching on (trial 1)")
    assert svg and svg.startswith("<svg") and "offline: service stopped" in svg
    assert timeline_svg([], facts, "none") is None


@pytest.mark.parametrize("raw, words", [({"method": "sideways"}, "'auto', 'online' or 'offline'"),
                                        ({"rekey": "maybe"}, "auto, yes or no")])
def test_bad_method_and_rekey_values(raw, words):
    from tdebench.errors import UsageError

    with pytest.raises(UsageError, match=words):
        parse_options(raw)


def test_rekey_words():
    assert parse_options({"rekey": "false"}).rekey == "no" and parse_options({"rekey": "on"}).rekey == "yes"
