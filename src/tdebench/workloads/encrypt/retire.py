"""After a rotation by key version (the ``encrypt`` workload's ``rotate``, docs/workloads/encrypt.md): what the
engine's background re-encryption left under the old versions re-encrypted too (:meth:`KeyRotation.finish`, the
background stopped), then the proof that no old version is needed any more.

The proof lists first what still needs an older version (tablespaces the threads have not reached, a redo log, tables
of another storage engine): when anything does, nothing is retired and the list is the finding. Otherwise the old
versions are deleted on the key server (unreadable, but recoverable), the server restarts and every table is read;
only then are they destroyed for good. A server that does not start, or a table that cannot be read, gets the old
versions back (undeleted, restarted) and the error is the finding.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from tdebench.api.engine import Instance

_RETIRED: "weakref.WeakKeyDictionary[Instance, dict[int, int]]" = weakref.WeakKeyDictionary()  # key id -> version
from tdebench.encryption import redact
from tdebench.workloads.encrypt.controller import Switch


def complete(instance: Instance, switch: Switch) -> None:
    """:meth:`KeyRotation.finish`, each part timed as a stage of the rotation's ``switch``."""
    rotation = instance.key_rotation()
    assert rotation is not None
    started = time.monotonic()

    def stage(name: str) -> None:
        now = round(time.monotonic() - started, 3)
        if switch.stages:
            switch.stages[-1]["seconds"] = round(now - switch.stages[-1]["start_s"], 3)
        switch.stages.append({"name": name, "start_s": now})

    facts = rotation.finish(stage)
    if switch.stages:
        switch.stages[-1]["seconds"] = round(time.monotonic() - started - switch.stages[-1]["start_s"], 3)
    switch.applied.update(facts)


def prove(instance: Instance) -> dict[str, Any]:
    """Retire the versions older than the newest of every key in use, proving first that nothing needs them."""
    rotation, access = instance.key_rotation(), instance.key_access
    assert rotation is not None and access is not None
    targets = {k: access.latest_version(k) for k in rotation.versions_in_use()}
    left = rotation.left_behind(targets)
    proof: dict[str, Any] = {"targets": targets, "left_behind": len(left), "left_behind_what": left[:20]}
    if left:
        proof["verdict"] = ("not retired: " + "; ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5
                                                                     else "") + " still need an older version")
        return proof
    done = _RETIRED.setdefault(instance, {})  # versions retired by an earlier rotation are gone already
    old = {k: list(range(done.get(k, 0) + 1, v)) for k, v in targets.items() if v > done.get(k, 0) + 1}
    for key_id, versions in old.items():
        access.retire_versions(key_id, versions, "delete")
    try:
        proof.update(rotation.read_all(), restarted=1)
    except Exception as exc:  # noqa: BLE001 - the finding: an old version was still needed
        for key_id, versions in old.items():
            access.retire_versions(key_id, versions, "undelete")
        instance.restart()
        proof.update(restarted=0, error=redact(str(exc))[-800:],
                     verdict="an old key version was still needed: the server did not start or read without it "
                             "(the versions were restored)")
        return proof
    for key_id, versions in old.items():
        access.retire_versions(key_id, versions, "destroy")
        done[key_id] = versions[-1]
    proof.update(old_versions_destroyed=sum(len(v) for v in old.values()),
                 verdict=f"versions {', '.join(f'{k}: {v[0]}-{v[-1]}' for k, v in old.items())} of the keys "
                         f"destroyed; the server restarted and read all {proof['tables_read']} tables")
    return proof
