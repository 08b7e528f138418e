"""Where an external server's keys live, as the server itself reports it through SQL (a server tdebench only reads).

* MariaDB: the active ``ENCRYPTION`` plugins and their non-secret settings: ``file_key_management`` (the key file's
  path; the file key's path when it is given as ``FILE:<path>``, never an inline file key),
  ``hashicorp_key_management`` (the key server's URL and CA; never the token), ``aws_key_management``.
* MySQL: the keyring component (``performance_schema.keyring_component_status``: its name, status and data file) and
  keyring plugins with their data files or configuration paths (never a keyring password).
* PostgreSQL: ``pg_tde``'s key providers (name and type) and its principal key's provider, when the extension is
  there and the functions answer.

Each finding says what the evidence shows and what it does not: tdebench reads no file of the server, so where a
key file really is (the data's disk or another) and what a token may do are never claimed. A value that could be a
secret is not kept; one read anyway (an inline file key) is registered for redaction.
"""

from __future__ import annotations

from typing import Any

from tdebench.encryption import redact, register_secret
from tdebench.engines.toolkit.dbapi.status import rows_or_none

NOT_SEEN = "tdebench reads no file of the server: where that file lies (the data's disk or another) is not shown"


def _variables(cur: Any, names: tuple[str, ...]) -> dict[str, str]:
    wanted = ", ".join(f"'{n}'" for n in names)
    rows = rows_or_none(cur, f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({wanted})") or []
    return {str(k).lower(): str(v) for k, v in rows}


def _mariadb(cur: Any) -> list[dict[str, Any]]:
    plugins = dict(rows_or_none(cur, "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS "
                              "WHERE PLUGIN_TYPE = 'ENCRYPTION'") or [])
    out = []
    for name, status in plugins.items():
        entry: dict[str, Any] = {"mechanism": f"MariaDB key management plugin {name}", "status": str(status)}
        if name == "file_key_management":
            v = _variables(cur, ("file_key_management_filename", "file_key_management_filekey",
                                 "file_key_management_encryption_algorithm"))
            filekey = v.pop("file_key_management_filekey", "")
            if filekey and not filekey.upper().startswith("FILE:"):
                register_secret(filekey)
            path = v.get("file_key_management_filename")
            entry.update(settings=v, keys=f"keys in a key file on the server's host ({path})",
                         file_key=(f"read from {filekey[5:]}" if filekey.upper().startswith("FILE:") else
                                   "given in the configuration itself (its value is not kept)" if filekey else
                                   "none (the key file is not encrypted)"),
                         not_shown=NOT_SEEN)
        elif name == "hashicorp_key_management":
            v = _variables(cur, ("hashicorp_key_management_vault_url", "hashicorp_key_management_vault_ca",
                                 "hashicorp_key_management_cache_timeout",
                                 "hashicorp_key_management_cache_version_timeout",
                                 "hashicorp_key_management_use_cache_on_timeout"))
            url = v.get("hashicorp_key_management_vault_url")
            entry.update(settings=v, keys=f"keys fetched from a key server ({url})",
                         not_shown="the token and what it may read (never read); the key server's own setup")
        elif name == "aws_key_management":
            v = _variables(cur, ("aws_key_management_master_key_id", "aws_key_management_region",
                                 "aws_key_management_rotate_key"))
            entry.update(settings=v, keys="keys from AWS KMS (data keys wrapped by its master key, in files on the "
                                          "host)",
                         not_shown=NOT_SEEN)
        else:
            entry.update(keys="keys kept as that plugin keeps them (not known to tdebench)", not_shown="its settings")
        out.append(entry)
    return out


_MYSQL_PATHS = ("keyring_file_data", "keyring_encrypted_file_data", "keyring_vault_config", "keyring_okv_conf_dir",
                "keyring_aws_cmk_id", "keyring_aws_region", "keyring_hashicorp_server_url")
_COMPONENT_KEYS = ("Component_name", "Component_status", "Implementation_name", "Data_file", "Read_only")


def _mysql(cur: Any) -> list[dict[str, Any]]:
    out = []
    component = {str(k): str(v) for k, v in rows_or_none(cur, "SELECT STATUS_KEY, STATUS_VALUE FROM "
                                                       "performance_schema.keyring_component_status") or []}
    if component:
        shown = {k: component[k] for k in _COMPONENT_KEYS if k in component}
        out.append({"mechanism": f"MySQL keyring component {shown.get('Component_name', '?')}",
                    "status": shown.get("Component_status", "?"), "settings": shown,
                    "keys": (f"keys in a keyring file on the server's host ({shown['Data_file']})"
                             if "Data_file" in shown else "keys kept as the component keeps them"),
                    "not_shown": NOT_SEEN})
    plugins = dict(rows_or_none(cur, "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS "
                              "WHERE PLUGIN_TYPE = 'KEYRING'") or [])
    paths = _variables(cur, _MYSQL_PATHS) if plugins else {}
    for name, status in plugins.items():
        mine = {k: v for k, v in paths.items() if k.startswith(name.removesuffix("_plugin"))}
        out.append({"mechanism": f"MySQL keyring plugin {name}", "status": str(status), "settings": mine,
                    "keys": "keys kept as the keyring plugin keeps them ("
                            + (", ".join(f"{k}={v}" for k, v in mine.items()) or "no path reported") + ")",
                    "not_shown": NOT_SEEN})
    return out


def _postgres(cur: Any) -> list[dict[str, Any]]:
    if not rows_or_none(cur, "SELECT 1 FROM pg_extension WHERE extname = 'pg_tde'"):
        return []
    providers = None
    for function in ("pg_tde_list_all_database_key_providers", "pg_tde_list_all_key_providers"):
        providers = rows_or_none(cur, f"SELECT provider_name, provider_type FROM {function}()")
        if providers is not None:
            break
    key = rows_or_none(cur, "SELECT key_name, key_provider_name FROM pg_tde_key_info()")
    listed = [{"name": str(n), "type": str(t)} for n, t in providers or []]
    principal = {"name": str(key[0][0]), "provider": str(key[0][1])} if key else None
    entry: dict[str, Any] = {"mechanism": "PostgreSQL pg_tde", "status": "installed",
                             "settings": {"key_providers": listed, "principal_key": principal}}
    entry["keys"] = ("keys from pg_tde's key providers: " + ", ".join(f"{p['name']} ({p['type']})" for p in
                                                                      entry["settings"]["key_providers"])
                     if providers else "keys from key providers not readable through SQL here")
    entry["not_shown"] = "the providers' options (paths, URLs, tokens: not read); " + NOT_SEEN
    return [entry]


PROBES = {"mysql": lambda cur: _mariadb(cur) or _mysql(cur), "mariadb": lambda cur: _mariadb(cur) or _mysql(cur),
          "postgresql": _postgres}


def key_management(scheme: str, conn: Any) -> list[dict[str, Any]]:
    """What ``conn``'s server reports of its key management ([] when nothing, or for a DBMS not probed)."""
    probe = PROBES.get(scheme)
    if probe is None:
        return []
    found = probe(conn.cursor())
    return [{k: redact(v) if isinstance(v, str) else v for k, v in entry.items()} for entry in found]


def key_text(entries: list[dict[str, Any]]) -> str:
    """One line: each mechanism, where it keeps the keys, and what the evidence does not show."""
    if not entries:
        return "the server reports no key management"
    return "; ".join(f"{e['mechanism']} ({e.get('status')}): {e.get('keys')}"
                     + (f", file key {e['file_key']}" if e.get("file_key") else "")
                     + f" (not shown: {e.get('not_shown')})" for e in entries)
