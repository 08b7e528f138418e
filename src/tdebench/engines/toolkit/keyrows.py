"""The key rows engines return from :meth:`tdebench.api.threat_probes.ThreatProbes.key_storage`, for the threat
model's "copy of the whole disk" and "the running host" rows (docs/security.md).

A key row says where a key lives while tdebench runs, and also where it must live in a setup that restarts
unattended (``unattended``): a server or an application that starts on its own needs its key, or what unwraps it,
again at every start. Without a key server that is a file on the same host (a file key, a pass file, a key in the
application's configuration), so a copy of the disk holds it (``unwraps``: True); tdebench's own arrangement (a key
in its memory, a file key on tmpfs only while the server starts) is stated as the lab's (``lab``). With a key server
the host keeps only a token: what it may read, how long it lives and where from it may be used (``limits``) decide
whether a copy of the disk can still fetch the keys. ``running`` says where a process on the running host finds the
key (or the token) while the database runs.
"""

from __future__ import annotations

from typing import Any

from tdebench.api.keys import KeyAccess

TOKEN_KEEPS = "the token (in the server's configuration or its service's environment file)"


def unattended(keeps: str, lab: str = "") -> dict[str, Any]:
    """What an unattended restart keeps on the host's disk for a key that tdebench holds elsewhere (``lab``)."""
    return {"keeps": keeps, "unwraps": True, **({"lab": lab} if lab else {})}


def token_limits(access: KeyAccess) -> tuple[str, bool]:
    """(what the config's token may do, for how long and where from; whether a copy of it is bound to the host)."""
    grants = access.facts()
    bound = str(grants.get("bound_to") or "")
    text = "; ".join(t for t in (str(grants.get("may") or ""), f"lives {grants.get('token_lifetime')}",
                                 f"usable from {bound} only" if bound else "usable from anywhere that reaches the "
                                 "key server") if t)
    return text, bool(bound) and "not known" not in str(grants.get("token_lifetime") or "not known")


def server_key_row(access: KeyAccess, what: str, fetched: str, running: str,
                   found_in_clear: list[str]) -> dict[str, Any]:
    """A key that lives on the key server, ``fetched`` as the engine's key path says; ``running``: where the running
    host finds the token (e.g. the server's environment)."""
    limits, bounded = token_limits(access)
    return {"key": what, "source": access.source, "where": f"the key server, {access.mount_url}; {fetched}",
            "on_disk": False, "beside_data": False, "mode": None,
            "protected_by": "the key server: a token whose policy reads this config's keys only",
            "found_in_clear": found_in_clear,
            "unattended": {"keeps": TOKEN_KEEPS, "unwraps": not bounded, "limits": limits},
            "running": {"where": running, "token": True}}
