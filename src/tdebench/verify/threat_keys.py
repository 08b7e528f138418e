"""Where each config's keys live, as the threat model's "copy of the whole disk" and "the running host" rows read
it (docs/security.md): from the engine's key rows (:meth:`tdebench.api.threat_probes.ThreatProbes.key_storage`,
:mod:`tdebench.engines.toolkit.keyrows`), for a setup that restarts unattended.

Without a key server, whatever a restart needs to decrypt (a file key, a pass file, a key in the application's
configuration) is on the host's disk in such a setup: a copy of the disk decrypts the data, whatever tdebench's own
run kept on tmpfs or in its memory (stated as the lab's arrangement, with what the scan found here). With a key
server the disk holds a token: the verdict then rests on what the token may read, how long it lives and where from
it may be used. On the running host, root (or the server's OS user) reaches every key: the row says how (memory, a
file, the token in a process's environment, checked) and what the key server sees of it.
"""

from __future__ import annotations

import os
from typing import Any

from tdebench.api.engine import Instance
from tdebench.verify.threat_rows import EXPOSED, NOT_APPLICABLE, NOT_CHECKED, Row, join_words


def key_text(k: dict[str, Any]) -> str:
    """One key row as the disk row's summary names it."""
    where = f"{k.get('key')}: {k.get('where')}"
    facts = [f"mode {k['mode']}" if k.get("mode") else "",
             "beside the data" if k.get("beside_data") else "",
             f"protected by {k['protected_by']}" if k.get("on_disk") and k.get("protected_by") else "",
             f"named in {k['named_in']}" if k.get("named_in") else "",
             "not on disk" if not k.get("on_disk") else "",
             f"IN CLEAR in {', '.join(k['found_in_clear'][:3])}" if k.get("found_in_clear") else ""]
    return where + (f" ({'; '.join(f for f in facts if f)})" if any(facts) else "")


def unattended_text(keys: list[dict[str, Any]]) -> tuple[str, bool]:
    """(what a setup that restarts unattended keeps on this disk, and whether a copy of the disk then decrypts)."""
    parts, unwraps = [], False
    for k in keys:
        u = k.get("unattended") or {}
        if not u:
            continue
        if u.get("unwraps"):
            unwraps = True
            lab = f" (here {u['lab']}: a lab arrangement no unattended restart has)" if u.get("lab") else ""
            parts.append(f"{u.get('keeps')}, with which a copy of the disk decrypts the {k.get('key')}{lab}")
        else:
            parts.append(f"{u.get('keeps')} for the {k.get('key')}: it {u.get('limits')}")
    if not parts:
        return "", False
    return "a setup that restarts unattended keeps on this disk " + "; and ".join(parts), unwraps


def host_keys_row(instance: Instance, keys: list[dict[str, Any]] | None) -> Row:
    """The running host (root, or the server's OS user): how it takes each key while the database runs."""
    if instance.config.spec.is_plain or keys == []:
        return Row("host_keys", NOT_APPLICABLE, "no key: the data are plaintext to whoever reads them")
    if keys is None:
        return Row("host_keys", NOT_CHECKED, "the engine does not say where its keys are while it runs")
    parts, evidence = [], {"keys": []}
    for k in keys:
        running = k.get("running") or {}
        if not running:
            continue
        text = f"{k.get('key')} in {running.get('where')}"
        seen = token_holders(instance) if running.get("token") else []
        if running.get("token"):
            u = k.get("unattended") or {}
            text += (f" (VAULT_TOKEN found in the environment of {len(seen)} of its processes)" if seen else "")
            text += f": with it the key server hands out the keys; it {u.get('limits')}; every fetch is a request " \
                    "the key server sees, and revoking the token stops the next restart"
        evidence["keys"].append({"key": k.get("key"), "where": running.get("where"),
                                 **({"token_in_environment_of": seen} if running.get("token") else {})})
        parts.append(text)
    if not parts:
        return Row("host_keys", NOT_CHECKED, "the engine does not say where its keys are while it runs")
    return Row("host_keys", EXPOSED, "while it runs, root (and the server's OS user) reach "
               + join_words(parts) + "; encryption at rest does not stop the running host", evidence)


def token_holders(instance: Instance) -> list[int]:
    """The instance's processes whose environment holds VAULT_TOKEN (the name only is looked for)."""
    found = []
    for pid in instance.server_pids():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if any(item.startswith(b"VAULT_TOKEN=") for item in handle.read().split(b"\0")):
                    found.append(pid)
        except OSError:
            continue
    return found
