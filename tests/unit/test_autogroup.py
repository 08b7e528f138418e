"""--nice under Linux's autogroup scheduler: the session's autogroup gets the value too (runner/pinning.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tdebench.measure.host import autogroup_enabled, host_facts
from tdebench.runner.pinning import set_autogroup_nice


def _nice_of_group() -> int:
    return int(Path("/proc/self/autogroup").read_text().split("nice")[1])


def test_the_session_autogroup_takes_the_value_and_gives_it_back():
    if not Path("/proc/self/autogroup").exists():
        pytest.skip("this kernel has no autogroups")
    if "nice" not in Path("/proc/self/autogroup").read_text():
        # a process in a CPU cgroup of its own (CI's containers) has no autogroup: the file is empty
        assert set_autogroup_nice(os.getpid(), 5) is None and autogroup_enabled() is not True
        return
    own = _nice_of_group()
    value = min(own + 3, 19)  # a higher value needs no privilege
    before = set_autogroup_nice(os.getpid(), value)
    if before is None:
        pytest.skip("this process may not change its autogroup")
    try:
        assert before == own and _nice_of_group() == value
    finally:
        set_autogroup_nice(os.getpid(), before)
    if os.geteuid() == 0:  # only root may lower it back
        assert _nice_of_group() == own


def test_a_missing_process_changes_nothing():
    assert set_autogroup_nice(2**22 + 7, 5) is None


def test_the_host_facts_say_whether_autogroups_are_on():
    assert host_facts()["autogroup"] == autogroup_enabled()
    assert autogroup_enabled() in (True, False, None)
