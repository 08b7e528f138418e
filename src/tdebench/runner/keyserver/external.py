"""A user's own OpenBao or Vault (``--key-server https://HOST:PORT/v1/<mount>``), used read-only.

The URL names a KV v2 mount whose secrets are named by key id (``1``, ``2``, ...), field ``data`` holding the key in
hex: the layout MariaDB's ``hashicorp_key_management`` plugin reads, and every engine's key path here. tdebench
writes nothing there: it checks before any work that the server answers, accepts the token and holds every key
the configs need at the right length, then hands every config the same read-only access. The token comes from
``VAULT_TOKEN`` (or ``BAO_TOKEN``), the CA that verifies the server from ``VAULT_CACERT`` (or ``BAO_CACERT``; the
system's store when neither is set); neither is written anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tdebench.api.keys import OPENBAO, KeyNeed
from tdebench.errors import UsageError
from tdebench.runner.keyserver.client import KeyServerError, KvAccess, KvClient, kv_key

TOKEN_VARIABLES = ("VAULT_TOKEN", "BAO_TOKEN")
CA_VARIABLES = ("VAULT_CACERT", "BAO_CACERT")
FORMAT = "https://HOST:PORT/v1/MOUNT (a KV v2 mount whose secrets 1, 2, ... hold the keys in hex in field 'data')"


def parse_url(text: str) -> tuple[str, str]:
    """(``https://HOST:PORT``, mount) of a ``--key-server`` URL; UsageError naming the expected form."""
    parts = urlsplit(text.strip())
    path = parts.path.rstrip("/")
    if parts.scheme not in ("https", "http") or not parts.netloc or not path.startswith("/v1/") \
            or len(path) <= len("/v1/") or parts.query or parts.fragment:
        raise UsageError(f"bad --key-server '{text}'", f"give {FORMAT}")
    return f"{parts.scheme}://{parts.netloc}", path[len("/v1/"):]


def _first(names: tuple[str, ...]) -> str:
    return next((os.environ[n] for n in names if os.environ.get(n)), "")


class ExternalKeyServer:
    """The user's key server, read only (see the module docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.server_url, self.mount = parse_url(url)
        ca = _first(CA_VARIABLES)
        self.ca_file = Path(ca) if ca else None
        self._token = _first(TOKEN_VARIABLES)
        self._lookup: dict[str, Any] = {}

    def check(self, needs: list[tuple[str, tuple[KeyNeed, ...]]]) -> None:
        """Before any work: a token, a CA file that exists, the server reachable, the token accepted, and every
        required key of every config there at its length (``needs``: (config label, its keys))."""
        if not self._token:
            raise UsageError("--key-server needs a token: VAULT_TOKEN (or BAO_TOKEN) is not set",
                             "export VAULT_TOKEN=<a token that may read the mount> and run again")
        if self.ca_file is not None and not self.ca_file.is_file():
            raise UsageError(f"VAULT_CACERT names {self.ca_file}, which is not a file",
                             "give the path of the key server's CA certificate (PEM)")
        client = KvClient(self.server_url, self.ca_file)
        try:
            self._lookup = client.request("GET", "auth/token/lookup-self", token=self._token).get("data") or {}
        except KeyServerError as exc:
            if exc.status != 403:  # a token that may not look itself up may still read the keys
                raise
        for label, wanted in needs:
            for need in wanted:
                self._check_key(client, label, need)

    def _check_key(self, client: KvClient, label: str, need: KeyNeed) -> None:
        where = f"{self.server_url}/v1/{self.mount}/data/{need.key_id}"
        try:
            key, _ = kv_key(client.request("GET", f"{self.mount}/data/{need.key_id}", token=self._token), where)
        except KeyServerError as exc:
            if exc.status == 404 and not need.required:
                return
            raise
        if key.bits != need.bits:
            raise UsageError(f"the key at {where} has {key.bits} bits; {label} needs {need.bits} ({need.what})",
                             "store a key of that length there, or choose a spec that takes it")

    def access(self, label: str) -> KvAccess:
        """The read-only access every config shares."""
        ttl = self._lookup.get("ttl")
        bound = ", ".join(self._lookup.get("bound_cidrs") or [])
        grants = {"policy": ", ".join(self._lookup.get("policies") or []) or "the user's (not known)",
                  "may": "may do what the user's policy allows (tdebench only reads)",
                  "token_lifetime": f"{ttl} s left when the run started" if ttl else "not known (not renewed)",
                  **({"bound_to": bound} if bound else {})}
        return KvAccess(OPENBAO, self.server_url, self.mount, self.ca_file, self._token, grants)

    def facts(self) -> dict[str, Any]:
        return {"kind": "the user's key server (--key-server), read only", "server": self.server_url,
                "mount": self.mount, "ca": str(self.ca_file) if self.ca_file else "the system's CA store"}
