"""MariaDB's two key management plugins as tdebench configures them.

* ``file_key_management`` (key source ``file``): the keys in an encrypted key file beside the data, its file key on
  tmpfs while the server starts (:mod:`tdebench.engines.mariadb.keys`); AES-CBC or AES-CTR
  (``file_key_management_encryption_algorithm``).
* ``hashicorp_key_management`` (a key server): the keys are KV v2 secrets of an OpenBao or Vault mount, one per key
  id (field ``data`` = the key in hex, key versions = the secret's versions), fetched by the server over TLS (verified
  against the key server's CA) with a token given in its environment (``VAULT_TOKEN``: never in my.cnf or on a
  command line). The plugin provides no cipher of its own, so the server's default applies: AES-CBC only (its
  descriptor leaves the crypt functions empty), with the key length of the key it returns.
"""

from __future__ import annotations

import os
from pathlib import Path

from tdebench.api.keys import BY_SERVER, KeyAccess, KeyNeed, KeyPath
from tdebench.encryption import EncryptionSpec
from tdebench.errors import EnvironmentProblem, UsageError

FILE_PLUGIN = "file_key_management"
VAULT_PLUGIN = "hashicorp_key_management"
VAULT_PACKAGE = "mariadb-plugin-hashicorp-key-management"
#: the key server plugin's settings a user may give (``--server-setting``); the twins that load it take them
VAULT_SETTINGS = ("hashicorp_key_management_cache_timeout", "hashicorp_key_management_cache_version_timeout",
                  "hashicorp_key_management_caching_enabled", "hashicorp_key_management_use_cache_on_timeout",
                  "hashicorp_key_management_timeout", "hashicorp_key_management_max_retries")
#: environment variables of the caller's that must not reach a server (the plugin would read VAULT_TOKEN)
_CALLER_VAULT = ("VAULT_TOKEN", "VAULT_ADDR", "VAULT_CACERT", "BAO_TOKEN", "BAO_ADDR", "BAO_CACERT")


def key_path(spec: EncryptionSpec) -> KeyPath:
    """The ``tde:`` specs' path to a key server (UsageError for AES-CTR, which the plugin cannot give)."""
    if spec.mode == "ctr":
        raise UsageError(f"MariaDB's {VAULT_PLUGIN} plugin encrypts with AES-CBC only (it leaves the cipher to the "
                         f"server's default), so '{spec}' cannot take its keys from a key server",
                         f"use tde:aes-{spec.key_bits}-cbc{'@' + spec.scope if spec.scope else ''} with --keys openbao")
    bits = spec.key_bits or 256
    return KeyPath(
        (KeyNeed(1, bits, "tablespaces, redo log, undo (innodb_default_encryption_key_id)"),
         KeyNeed(2, bits, "temporary files and tables (key 1 when absent)", required=False),
         KeyNeed(3, bits, "the encrypt workload's re-keying target", required=False)),
        BY_SERVER, f"MariaDB's {VAULT_PLUGIN} plugin fetches each key id's newest version (and any older version a "
                   "page names) over TLS at start-up and whenever its cache expires",
        versions=True, settings=VAULT_SETTINGS)


def check_available(plugin_dir: Path | None) -> None:
    """EnvironmentProblem naming the Debian package when the key server plugin is missing."""
    if plugin_dir is not None and not any(plugin_dir.glob(f"{VAULT_PLUGIN}.*")):
        raise EnvironmentProblem(f"MariaDB's {VAULT_PLUGIN} plugin is missing in {plugin_dir} (needed by "
                                 "--keys openbao)", f"install the Debian package {VAULT_PACKAGE}")


def file_options(spec: EncryptionSpec, key_file: Path, filekey: Path) -> dict[str, str]:
    """The ``file_key_management`` lines of a ``tde:`` twin's my.cnf."""
    return {"plugin_load_add": FILE_PLUGIN, "file_key_management_filename": str(key_file),
            "file_key_management_filekey": f"FILE:{filekey}",
            "file_key_management_encryption_algorithm": f"AES_{(spec.mode or 'cbc').upper()}"}


def vault_options(access: KeyAccess | None, tunables: dict[str, str]) -> dict[str, str]:
    """The ``hashicorp_key_management`` lines (no token: it goes in the environment); ``access`` None: the lines'
    names only (what the settings report)."""
    opts = {"plugin_load_add": VAULT_PLUGIN,
            "hashicorp_key_management_vault_url": access.mount_url if access else "(the config's KV mount)",
            "hashicorp_key_management_vault_ca": str(access.ca_file) if access and access.ca_file else ""}
    if not opts["hashicorp_key_management_vault_ca"]:
        opts.pop("hashicorp_key_management_vault_ca")
    return {**opts, **tunables}


def server_env(access: KeyAccess | None) -> dict[str, str] | None:
    """The environment of a server (and of mariadb-install-db) that takes its keys from ``access``: ours without
    any key server variable of the caller's, and the config's token; None (inherit ours) without a key server."""
    if access is None:
        return None
    env = {k: v for k, v in os.environ.items() if k not in _CALLER_VAULT}
    env["VAULT_TOKEN"] = access.token()
    return env


def split_settings(options: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the server's other options, the key server plugin's settings) of ``options``."""
    tunables = {k: v for k, v in options.items() if k in VAULT_SETTINGS}
    return {k: v for k, v in options.items() if k not in tunables}, tunables
