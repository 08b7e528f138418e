"""--restart-twins: when twins restart before every block, and that the runner does it (fake engine, in-process)."""

from __future__ import annotations

import json

import pytest

from tdebench.api.cache import WarmCache
from tdebench.api.plan import RunPlan
from tdebench.encryption import parse_spec
from tdebench.engines import Config, get_engine
from tdebench.errors import UsageError
from tdebench.runner.restarts import decide
from tests.fakes import engine as fake_engine
from tests.unit.test_runner_fake import _fake, run, trials  # noqa: F401 - the fixture registers the fake engine

MARIADB = [Config("mariadb", parse_spec("none")), Config("mariadb", parse_spec("none"), name="mariadb-none-2")]
SQLITE = [Config("sqlite", parse_spec("none")), Config("sqlite", parse_spec("sqlcipher:aes-256-cbc"))]


def _warm(monkeypatch, save, load) -> None:
    """The fake engine's instances get a cache a restart keeps: ``save(instance)`` and ``load(instance, saved)``."""

    class FakeWarmCache(WarmCache):
        setting = "cache_size"

        def resize(self, cache_bytes, page_source=""):
            return {}

        def save(self):
            return save(self.instance)

        def load(self, saved):
            return load(self.instance, saved)

    monkeypatch.setattr(fake_engine.FakeEngine, "cache_type", FakeWarmCache)
    monkeypatch.setattr(fake_engine.FakeInstance, "cache", lambda self: FakeWarmCache(self))


def _decide(configs, **plan):
    engines = {c.engine: get_engine(c.engine) for c in configs}
    return decide(RunPlan(configs=configs, **plan), engines)


def test_on_by_default_for_servers_with_the_query_schedule_and_a_warm_cache():
    assert _decide(MARIADB, schedule="query") == (True, "default with --schedule query and a warm cache")
    assert _decide(MARIADB, schedule="block")[0] is False
    assert _decide(MARIADB, schedule="block", cache="cold")[0] is False
    assert _decide(MARIADB, schedule="query", restart_twins=False) == (False, "turned off (--no-restart-twins)")
    assert _decide(MARIADB, schedule="block", restart_twins=True)[0] is True  # asked for: any warm schedule


def test_engines_that_cannot_are_left_alone_or_refused_when_asked():
    on, reason = _decide(SQLITE, schedule="query")
    assert not on and reason == "sqlite cannot restart keeping its cache"
    with pytest.raises(UsageError, match="--restart-twins: sqlite cannot restart keeping its cache"):
        _decide(SQLITE, schedule="query", restart_twins=True)
    with pytest.raises(UsageError, match="--cache cold restarts every server"):
        RunPlan(configs=MARIADB, schedule="block", cache="cold", restart_twins=True)


def test_the_runner_restarts_every_twin_before_every_measured_block(capfd, tmp_path, monkeypatch):
    restarted: list[str] = []

    def save_cache(self):
        assert self.alive()
        return {"pages_cached": 10, "_private": object()}

    def load_cache(self, saved):
        assert self.alive() and "_private" in saved
        restarted.append(self.config.label)
        return {"pages_loaded": 10}

    _warm(monkeypatch, save_cache, load_cache)
    code, err, out = run(capfd, tmp_path, "--trials", "3", "--restart-twins")
    assert code == 0, err
    entry = json.loads((out / "manifest.json").read_text())["restarts"]
    assert entry["every_block"] and entry["reason"] == "asked for (--restart-twins)"
    assert sorted(entry["blocks"]) == ["1", "2", "3"]  # not before the warm-up block 0
    both = {"fake-none", "fake-tde-aes-256-ctr"}
    for facts in entry["blocks"].values():
        assert {k for k in facts if k not in ("seconds", "stop_order", "start_order")} == both
        assert set(facts["stop_order"]) == set(facts["start_order"]) == both
        assert all({k: v for k, v in facts[label].items() if not k.endswith("_wall_s")}
                   == {"pages_cached": 10, "pages_loaded": 10} for label in both)
        assert all(facts[label]["start_wall_s"] >= 0 for label in both)  # each step timed per config
    assert sorted(restarted) == sorted(["fake-none", "fake-tde-aes-256-ctr"] * 3)
    assert "every server restarts before every measured block" in err
    code, err, out = run(capfd, tmp_path, "--trials", "2", "--no-restart-twins", name="off")
    assert code == 0, err
    assert json.loads((out / "manifest.json").read_text())["restarts"] == {
        "every_block": False, "reason": "turned off (--no-restart-twins)", "blocks": {}}


def test_a_cache_that_cannot_be_given_back_restarts_cold_and_says_why(capfd, tmp_path, monkeypatch):
    """A memory regime smaller than the data (an index cached in part): the servers still restart before every
    block, so the process placement is drawn afresh (docs/precision.md), but with an empty cache, every twin
    alike, and nothing is loaded back."""
    from tdebench.api.cache import CacheNotRestorable

    def save_cache(self):
        raise CacheNotRestorable("the buffer pool holds 3 of the 10 leaf pages of index PRIMARY of `t`")

    starts = []
    real_start = fake_engine.FakeInstance.start

    def start(self):
        starts.append(self.config.label)
        real_start(self)

    monkeypatch.setattr(fake_engine.FakeInstance, "start", start)
    loads = []
    _warm(monkeypatch, save_cache, lambda self, saved: loads.append(saved) or {})
    code, err, out = run(capfd, tmp_path, "--trials", "2", "--restart-twins")
    assert code == 0, err
    entry = json.loads((out / "manifest.json").read_text())["restarts"]
    assert entry["every_block"] is True and sorted(entry["blocks"]) == ["1", "2"]
    assert entry["cold"]["from_block"] == 1
    assert entry["cold"]["reason"] == "the buffer pool holds 3 of the 10 leaf pages of index PRIMARY of `t`"
    assert all(entry["blocks"][b][c] == {"cold": True} or "cold" in entry["blocks"][b][c]
               for b in ("1", "2") for c in ("fake-none", "fake-tde-aes-256-ctr"))
    assert "every server restarts before every measured block with an empty cache" in " ".join(err.split())
    assert sorted(starts) == ["fake-none", "fake-none", "fake-none", "fake-tde-aes-256-ctr", "fake-tde-aes-256-ctr",
                              "fake-tde-aes-256-ctr"]  # started, then restarted before each of the 2 blocks
    assert loads == []  # nothing is given back


def test_a_server_that_does_not_come_back_fails_its_trial_and_is_recovered(capfd, tmp_path, monkeypatch):
    """A failed start is recorded and said; that config's trial fails and is restarted like any failed trial,
    its twin's block is measured."""
    fails = {"left": 1}
    real_start = fake_engine.FakeInstance.start

    def start(self):
        if self.config.label == "fake-none" and self.starts and fails["left"]:
            fails["left"] -= 1
            raise RuntimeError("the server did not start")
        real_start(self)

    _warm(monkeypatch, lambda self: {"pages_cached": 1}, lambda self, saved: {"pages_loaded": 1})
    monkeypatch.setattr(fake_engine.FakeInstance, "start", start)
    code, err, out = run(capfd, tmp_path, "--trials", "2", "--restart-twins")
    assert code == 1, err  # one failed trial
    entry = json.loads((out / "manifest.json").read_text())["restarts"]
    assert entry["blocks"]["1"]["fake-none"]["error"] == "start: the server did not start"
    assert "restart of fake-none failed (start): the server did not start" in err
    assert sorted(t for t in trials(out) if t[0]) == [(1, "fake-none", "failed"), (1, "fake-tde-aes-256-ctr", "ok"),
                                   (2, "fake-none", "ok"), (2, "fake-tde-aes-256-ctr", "ok")]


def test_the_methods_section_says_whether_and_why_servers_were_restarted():
    from tdebench.report.precision_view import restarts_text

    on = {"restarts": {"every_block": True, "reason": "default with --schedule query and a warm cache", "blocks": {
        "1": {"a": {"pages_cached": 100, "pages_loaded": 98}, "b": {"pages_cached": 100, "pages_loaded": 99},
              "seconds": 4.0, "stop_order": ["a", "b"], "start_order": ["b", "a"]},
        "2": {"a": {"pages_cached": 100, "pages_loaded": 100}, "b": {"pages_cached": 100, "pages_loaded": 100},
              "seconds": 5.0, "stop_order": ["b", "a"], "start_order": ["a", "b"]}}}}
    text = restarts_text(on)
    assert "restarted before each of the 2 measured blocks" in text and "397 of 400 pages" in text
    assert "median 4.5 s per block" in text and "page cache" not in text
    on["restarts"]["blocks"]["1"]["a"]["page_cache_refilled_bytes"] = 1000
    assert "every twin's data files was dropped and read back in" in " ".join(restarts_text(on).split())
    off = {"restarts": {"every_block": False, "reason": "turned off (--no-restart-twins)", "blocks": {}}}
    assert restarts_text(off).startswith("Server restarts: none (turned off (--no-restart-twins)); each twin's")
    embedded = {"restarts": {"every_block": False, "reason": "sqlite cannot restart keeping its cache", "blocks": {}}}
    assert restarts_text(embedded) == "Server restarts: none (sqlite cannot restart keeping its cache)."
    assert restarts_text({}) == ""
    stopped = {"restarts": {"every_block": True, "reason": "asked for (--restart-twins)", "blocks": {},
                            "stopped": {"before_block": 3, "reason": "the buffer pool holds 3 of 10 pages"}}}
    assert restarts_text(stopped).endswith("Restarts stopped before block 3: the buffer pool holds 3 of 10 pages.")
    cold = {"restarts": {"every_block": True, "reason": "asked for (--restart-twins)",
                         "blocks": {"1": {"a": {"cold": True, "quiet_waited_s": 0.1}, "seconds": 2.0}},
                         "cold": {"from_block": 1, "reason": "the buffer pool holds 3 of 10 pages"}}}
    assert "From block 1 on the servers restarted with an empty cache (the buffer pool holds 3 of 10 pages)" in \
        restarts_text(cold)


def test_a_server_that_died_before_the_restart_is_left_to_the_trials_recovery(capfd, tmp_path, monkeypatch):
    def save_cache(self):
        if self.config.label == "fake-tde-aes-256-ctr" and not saved:
            saved.append(1)
            self.crash()
            raise RuntimeError("lost connection to the server")
        return {"pages_cached": 1}

    saved: list[int] = []
    _warm(monkeypatch, save_cache, lambda self, saved: {"pages_loaded": 1})
    code, err, out = run(capfd, tmp_path, "--trials", "2", "--restart-twins")
    assert code == 1, err
    blocks = json.loads((out / "manifest.json").read_text())["restarts"]["blocks"]
    assert blocks["1"]["fake-tde-aes-256-ctr"] == {"error": "save: lost connection to the server"}
    assert {k: v for k, v in blocks["1"]["fake-none"].items() if not k.endswith("_wall_s")} == {
        "pages_cached": 1, "pages_loaded": 1}
    assert "error" not in blocks["2"]["fake-tde-aes-256-ctr"]  # recovered, restarted like its twin
    assert sorted(t for t in trials(out) if t[0]) == [(1, "fake-none", "ok"), (1, "fake-tde-aes-256-ctr", "failed"),
                                                      (2, "fake-none", "ok"), (2, "fake-tde-aes-256-ctr", "ok")]


def test_with_every_server_restarted_each_twins_os_cache_is_filled_again_before_the_loads(capfd, tmp_path, monkeypatch):
    """--page-source memory: between the starts and the loads of every restart, every twin's data files are read
    back into the OS page cache, all twins' at once, and each restart records what each got."""
    from tdebench.engines.toolkit import pagecache
    from tdebench.runner import restarts

    instances = {}

    def dirs(cache):
        inst = cache.instance
        instances[inst.config.label] = inst
        data = tmp_path / "files" / inst.config.label / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / "t.ibd").write_bytes(b"x" * 5000)
        return data.parent, data

    filled: list[list[bool]] = []
    loaded: list[int] = []
    real = pagecache.refill_together

    def refill_together(sets):
        filled.append([inst.alive() for inst in instances.values()] + [len(loaded)])
        return real(sets)

    _warm(monkeypatch, lambda self: {"pages_cached": 1}, lambda self, saved: loaded.append(1) or {"pages_loaded": 1})
    monkeypatch.setattr(fake_engine.FakeEngine.cache_type, "os_cache_files", dirs, raising=False)
    monkeypatch.setattr(restarts.pagecache, "refill_together", refill_together)
    code, err, out = run(capfd, tmp_path, "--trials", "2", "--restart-twins")
    assert code == 0, err
    assert filled == [[True, True, 0], [True, True, 2]]  # once per block: both servers started, none loaded yet
    blocks = json.loads((out / "manifest.json").read_text())["restarts"]["blocks"]
    for facts in blocks.values():
        assert facts["page_cache_refill_s"] >= 0
        assert all(facts[label]["page_cache_refilled_bytes"] == 5000 for label in instances)


def test_every_twin_gets_its_pages_back_at_the_same_time(capfd, tmp_path, monkeypatch):
    """The loads overlap: a twin's cache fills while its twin's does (each takes memory as it fills)."""
    import threading
    import time

    spans: dict[str, list[tuple[float, float]]] = {}
    lock = threading.Lock()

    def load_cache(self, saved):
        began = time.monotonic()
        time.sleep(0.2)
        with lock:
            spans.setdefault(self.config.label, []).append((began, time.monotonic()))
        return {"pages_loaded": 10}

    _warm(monkeypatch, lambda self: {"pages_cached": 10}, load_cache)
    code, err, _ = run(capfd, tmp_path, "--trials", "2", "--restart-twins")
    assert code == 0, err
    assert len(spans) >= 2 and all(len(s) == 2 for s in spans.values())
    for block in range(2):
        starts = [s[block][0] for s in spans.values()]
        ends = [s[block][1] for s in spans.values()]
        assert max(starts) < min(ends)  # every load began before any ended
