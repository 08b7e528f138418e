"""One trial of the ``encrypt`` workload on one config: its cycles, each a switch on, scans, a re-keying, with keys on
the run's key server a rotation by key version, and the way back, as the instance's
:class:`~tdebench.api.switcher.Switcher` can (its :class:`~tdebench.api.switch.SwitchMethod`).

Online (MariaDB TDE): a window ``before`` on the plaintext server; when the switch needs a restart
(:class:`~tdebench.api.switcher.Restarting`), the restart timed as an offline step ``<cycle>.restart_on`` (the
service is down meanwhile) and a window ``after_restart → during_on → after_on``, else one window ``before → during_on →
after_on``. The way back is a window ``before_off → during_off → after_off``, then the restart ``restart_off``.
Offline (SQLCipher, pgcrypto, ``fs:``): ``before``, the method with the background stopped, ``after_on``. A method
that copies (:class:`~tdebench.api.switcher.Copying`: ``fs:``) leaves the old copy in the clear: it is scanned
(``<cycle>.on.old_copy.scan``: a finding) and then deleted, timed (``wipe_seconds``, ``removed_bytes``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tdebench.api.switcher import Copying, OfflineSwitcher, OnlineSwitcher, Restarting, Switcher
from tdebench.api.trial import ConfigState, TrialResult
from tdebench.encryption import redact
from tdebench.workloads.encrypt import record, retire
from tdebench.workloads.encrypt.controller import SwitchController
from tdebench.workloads.encrypt.offline import run_offline
from tdebench.workloads.encrypt.options import Cycle, EncryptOptions
from tdebench.workloads.encrypt.scan import leftover_scan, old_copy_scan
from tdebench.workloads.tpcc.slices import VuPool

TEST = "encrypt"
OFFLINE = "offline"  # the cycle of an engine that switches with the background stopped
RESET_WAIT = 3600.0


class TrialRun:
    """The cycles of one trial (:meth:`run`), recorded into :attr:`series` with failures in :attr:`result`."""

    def __init__(self, opts: EncryptOptions, state: ConfigState, block: int, markers: list[str],
                 known: tuple[str, ...], alone: bool, rotates: bool = False) -> None:
        self.opts, self.state, self.block, self.markers, self.known, self.alone = (opts, state, block, markers,
                                                                                   known, alone)
        method = state.engine.switch_method(state.config.spec)
        assert method is not None  # EncryptOptions.check_configs refused the config otherwise
        self.method = method
        switcher = state.instance.switcher()
        assert switcher is not None  # of the class the method describes (the conformance kit checks it)
        self.switcher: Switcher[Any] = switcher
        self.rotates = rotates  # rotation by key version after the switch on (keys on the run's key server)
        self.online = opts.online(state.engine, state.config.spec)
        self.series = record.Series()
        self.result = TrialResult()

    def run(self) -> None:
        for cycle in self.opts.cycles() if self.online else [Cycle(OFFLINE, 1, None)]:
            if not self._cycle(cycle):
                break

    def _scan(self, name: str) -> None:
        self.series.scans[name] = leftover_scan(self.state.instance, self.markers, self.known)

    def _cycle(self, cycle: Cycle) -> bool:
        """One cycle: on, scan, [re-key, scan], [off]; False when a step failed (the trial stops there)."""
        prefix = cycle.prefix
        if not self._switch_on(cycle):
            return False
        self._scan(f"{prefix}.on")
        if self.opts.rekeys(self.state.engine, self.state.config.spec):
            if self.method.rekey_online and self.online:
                ok = self._window([("steady", f"{prefix}.before_rekey"), ("rekey", prefix),
                                   ("steady", f"{prefix}.after_rekey")])
            else:
                ok = self._offline("rekey", f"{prefix}.rekey") and self._window([("steady", f"{prefix}.after_rekey")])
            if not ok:
                return False
            self._scan(f"{prefix}.rekey")
        if self.online and self.rotates and not self._rotate(cycle):
            return False
        return self._way_back(cycle) if self.opts.way_back else True

    def _rotate(self, cycle: Cycle) -> bool:
        """Rotation by key version while the background runs, then (background stopped) what it left, the scan and
        the proof that the old versions are not needed (:mod:`tdebench.workloads.encrypt.retire`)."""
        prefix = cycle.prefix
        if not self._window([("steady", f"{prefix}.before_rotate"), ("rotate", prefix, cycle.threads),
                             ("steady", f"{prefix}.after_rotate")]):
            return False
        try:
            if self.opts.rotate != "threads":
                retire.complete(self.state.instance, self.series.switches[-1])
            self._scan(f"{prefix}.rotate")
            self.series.proofs[f"{prefix}.rotate"] = retire.prove(self.state.instance)
        except Exception as exc:  # noqa: BLE001 - the trial fails with it
            self.result.failures.append(f"{prefix}.rotate: {type(exc).__name__}: {redact(str(exc))[:400]}")
            return False
        return True

    def _switch_on(self, cycle: Cycle) -> bool:
        prefix, switch = cycle.prefix, ("switch", True, cycle.threads, cycle.iops, cycle.prefix)
        if self.online and self.method.restart:
            return (self._window([("steady", f"{prefix}.before")])
                    and self._offline("restart_on", f"{prefix}.restart_on")
                    and self._window([("steady", f"{prefix}.after_restart"), switch, ("steady", f"{prefix}.after_on")]))
        if self.online:
            return self._window([("steady", f"{prefix}.before"), switch, ("steady", f"{prefix}.after_on")])
        if self.alone:  # the control: the same scan sees TPC-H's plaintext before the switch
            self._scan(f"{prefix}.plain")
        return (self._window([("steady", f"{prefix}.before")]) and self._offline("on", f"{prefix}.on")
                and self._window([("steady", f"{prefix}.after_on")]))

    def _way_back(self, cycle: Cycle) -> bool:
        prefix = cycle.prefix
        if self.online:
            ok = self._window([("steady", f"{prefix}.before_off"), ("switch", False, cycle.threads, cycle.iops, prefix),
                               ("steady", f"{prefix}.after_off")])
            return ok and (not self.method.restart or self._offline("restart_off", f"{prefix}.restart_off"))
        return self._offline("off", f"{prefix}.off") and self._window([("steady", f"{prefix}.after_off")])

    def _offline(self, action: str, name: str) -> bool:
        """An offline step between two windows (no background: the service is stopped), then for a method that
        copies the old copy scanned (switching on) and deleted."""
        self.state.mark(name, test=TEST)
        try:
            switch = run_offline(self.state.instance, action, name, float(len(self.series.per_second)))
        except Exception as exc:  # noqa: BLE001 - the trial fails with it
            self.result.failures.append(f"{name}: {type(exc).__name__}: {redact(str(exc))[:400]}")
            return False
        finally:
            self.state.mark(None, test=TEST)
        self.series.add_offline(switch)
        if self.method.copies and action in ("on", "off"):
            self._old_copy(switch, action == "on")
        return True

    def _old_copy(self, switch: Any, scan: bool) -> None:
        """What the copy left in the old place: scanned when it is the plaintext, then deleted (timed)."""
        old = [Path(p) for p in switch.applied.get("old_copy", [])]
        if scan and old:
            self.series.scans[f"{switch.name}.old_copy"] = old_copy_scan(old, self.markers, self.known)
        started = time.monotonic()
        assert isinstance(self.switcher, Copying)
        removed = self.switcher.remove_old_copy()
        switch.stages.append({"name": "wipe", "start_s": round(switch.seconds, 3),
                              "seconds": round(time.monotonic() - started, 3)})
        switch.applied["removed_bytes"] = int(removed.get("removed_bytes", 0))

    def _window(self, steps: list[tuple[Any, ...]]) -> bool:
        """One background window (fresh virtual users, ramp-up) running ``steps``; False when it failed. None with
        TPC-H alone (no background: only the offline switches and their scans are measured)."""
        if self.alone:
            return True
        opts, state = self.opts, self.state
        seed = opts.seed + 7919 * self.block + len(self.series.windows)
        pool = VuPool(state.instance, state.dialect, opts.tpcc(), opts.vus, seed)
        controller = SwitchController(state.instance, opts, steps, lambda step: state.mark(step, test=TEST),
                                      pool.abort)
        background = None
        try:
            if opts.rampup:
                pool.run(opts.rampup, measured=False)
            controller.start(time.monotonic())
            background = pool.run(2 * opts.steady + opts.max_switch + 600.0)  # the schedule ends it earlier
        except Exception as exc:  # noqa: BLE001 - a lost background fails the trial, the schedule stops
            self.result.failures.append(f"background: {exc}")
        finally:
            controller.join()
            pool.close()
        if controller.error:
            self.result.failures.append(f"switch schedule: {controller.error}")
        if background is not None:
            self.result.failures += [f"background: {f}" for f in background.failures]
            self.series.add(background, controller)
        return background is not None and not controller.error


def ensure_plain(opts: EncryptOptions, state: ConfigState) -> float:
    """Back to the plaintext server a trial starts from, untimed, when a failed trial left it switched (or with
    the key plugin loaded); seconds it took (0: nothing to do)."""
    started = time.monotonic()
    switcher = state.instance.switcher()
    assert switcher is not None
    # a copy a failed trial left behind
    done = isinstance(switcher, Copying) and bool(switcher.remove_old_copy().get("removed_bytes"))
    if not switcher.progress(on=False).done:
        done = True
        if isinstance(switcher, OfflineSwitcher):
            switcher.switch(False, lambda stage: None)
            if isinstance(switcher, Copying):
                switcher.remove_old_copy()
        elif isinstance(switcher, OnlineSwitcher):
            switcher.switch(False, max(opts.threads), max(opts.iops or [0]) or None)
            while not switcher.progress(on=False).done:
                if time.monotonic() - started > RESET_WAIT:
                    raise RuntimeError(f"{state.label} did not return to plaintext within {RESET_WAIT:.0f} s")
                time.sleep(0.5)
    if isinstance(switcher, Restarting) and switcher.restart(False, lambda stage: None) is not None:
        done = True
    return time.monotonic() - started if done else 0.0
