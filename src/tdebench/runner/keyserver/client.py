"""Talking to an OpenBao (or Vault) server: its JSON API over HTTPS, the server's certificate verified against a CA
file (or the system's store), and one config's read-only access to its keys (:class:`KvAccess`, the
:class:`tdebench.api.keys.KeyAccess` engines are handed).

Every refusal becomes one line naming the reason and the fix (unreachable, sealed, token refused, no such secret);
no token, key or response body with a key ever reaches an error text (:func:`tdebench.encryption.redact`).
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tdebench.encryption import SecretKey, redact, register_secret
from tdebench.errors import EnvironmentProblem

TIMEOUT = 10.0


class KeyServerError(EnvironmentProblem):
    """The key server refused a request or could not be reached (``status``: the HTTP status, 0: no answer)."""

    def __init__(self, problem: str, fix: str, status: int = 0) -> None:
        super().__init__(problem, fix)
        self.status = status


def tls_context(ca_file: Path | None) -> ssl.SSLContext:
    """A client context that verifies the server against ``ca_file`` (None: the system's store) and its name."""
    return ssl.create_default_context(cafile=str(ca_file) if ca_file else None)


class KvClient:
    """JSON requests to ``server_url`` (``https://HOST:PORT``) under ``/v1/``."""

    def __init__(self, server_url: str, ca_file: Path | None, timeout: float = TIMEOUT) -> None:
        self.server_url = server_url.rstrip("/")
        self.ca_file = ca_file
        self.timeout = timeout
        self._context = tls_context(ca_file) if server_url.startswith("https:") else None

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                token: str | None = None) -> dict[str, Any]:
        """One request; its JSON answer ({} when empty). :class:`KeyServerError` for any refusal."""
        text = self.send(method, path, body, token)
        return json.loads(text) if text.strip() else {}

    def send(self, method: str, path: str, body: dict[str, Any] | None = None, token: str | None = None) -> bytes:
        """One request; the answer's bytes. :class:`KeyServerError` for any refusal."""
        url = f"{self.server_url}/v1/{path.lstrip('/')}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method)
        if token:
            req.add_header("X-Vault-Token", token)
        try:
            with urllib.request.urlopen(req, context=self._context, timeout=self.timeout) as answer:
                text = answer.read()
        except urllib.error.HTTPError as exc:
            raise self._refusal(exc.code, path, exc.read()) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, ssl.SSLError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise KeyServerError(f"the key server at {self.server_url} has a certificate that was not verified "
                                     f"({reason.verify_message})",
                                     "give its CA with VAULT_CACERT, or check --key-server") from None
            raise KeyServerError(f"the key server at {self.server_url} cannot be reached ({reason})",
                                 "start it, or check the address given with --key-server") from None
        return text

    def _refusal(self, status: int, path: str, body: bytes) -> KeyServerError:
        try:
            errors = json.loads(body).get("errors") or []
        except (ValueError, AttributeError):
            errors = []
        said = redact("; ".join(str(e).strip() for e in errors))[:200] or f"HTTP {status}"
        where = f"{self.server_url}/v1/{path.split('?')[0]}"
        if status == 403:
            return KeyServerError(f"the key server refused the token for {where} ({said})",
                                  "give a token whose policy may read that path (VAULT_TOKEN)", status)
        if status == 404:
            return KeyServerError(f"the key server has nothing at {where}",
                                  "store the keys there first, or give the path that holds them (--key-server)", status)
        if status == 503:
            return KeyServerError(f"the key server at {self.server_url} is sealed or in standby ({said})",
                                  "unseal it (bao operator unseal) and run again", status)
        return KeyServerError(f"the key server answered HTTP {status} for {where} ({said})",
                              "look at the key server's log", status)


def kv_key(answer: dict[str, Any], where: str) -> tuple[SecretKey, int]:
    """(the key, its version) from a KV v2 read whose field ``data`` holds the key as hex digits."""
    data = (answer.get("data") or {}).get("data") or {}
    text = str(data.get("data", "")).strip()
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if not raw:
        raise KeyServerError(f"the secret at {where} has no key in hex digits in its field 'data'",
                             "store the key as hex digits in field 'data', e.g. bao kv put -mount=M 1 data=<hex>")
    version = int(((answer.get("data") or {}).get("metadata") or {}).get("version") or 0)
    return SecretKey(raw), version


@dataclass
class KvAccess:
    """One config's read-only access to its keys: the KV v2 ``mount`` of ``server_url``, one secret per key id."""

    source: str
    server_url: str
    mount: str
    ca_file: Path | None
    _token: str = field(repr=False)
    #: what the token may do and how long it lives, for the manifest and the threat model
    grants: dict[str, Any] = field(default_factory=dict)
    #: keys this process fetched (a forked client's count is its own)
    fetched: int = 0
    #: the key server's administrator (the run's own server), who writes and retires versions; None: read only
    admin: Any = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        register_secret(self._token)
        self._client = KvClient(self.server_url, self.ca_file)

    @property
    def mount_url(self) -> str:
        return f"{self.server_url}/v1/{self.mount}"

    def token(self) -> str:
        return self._token

    def secret_url(self, key_id: int) -> str:
        return f"{self.mount_url}/data/{key_id}"

    def fetch(self, key_id: int, version: int | None = None) -> SecretKey:
        path = f"{self.mount}/data/{key_id}" + (f"?version={version}" if version else "")
        key, _ = kv_key(self._client.request("GET", path, token=self._token), f"{self.mount_url}/data/{key_id}")
        with self._lock:
            self.fetched += 1
        return key

    def latest_version(self, key_id: int) -> int:
        """The newest version of key ``key_id`` (one request)."""
        answer = self._client.request("GET", f"{self.mount}/data/{key_id}", token=self._token)
        return kv_key(answer, f"{self.mount_url}/data/{key_id}")[1]

    @property
    def rotatable(self) -> bool:
        return self.admin is not None

    def new_version(self, key_id: int) -> int:
        return int(self._admin().new_version(self.mount, key_id, self.fetch(key_id).bits))

    def retire_versions(self, key_id: int, versions: list[int], how: str) -> None:
        self._admin().retire(self.mount, key_id, versions, how)

    def _admin(self) -> Any:
        if self.admin is None:
            raise KeyServerError(f"tdebench only reads the keys at {self.mount_url} (a key server of your own)",
                                 "rotate the key there yourself, or use the run's own key server (no --key-server)")
        return self.admin

    def facts(self) -> dict[str, Any]:
        return {"source": self.source, "server": self.server_url, "mount": self.mount,
                "ca_file": str(self.ca_file) if self.ca_file else "the system's CA store", **self.grants}
