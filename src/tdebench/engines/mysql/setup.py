"""MySQL (8.0.24+) server configuration for the ``mysql`` engine: defaults, settings, keyring component files.

InnoDB data-at-rest encryption needs a keyring. tdebench uses ``component_keyring_file`` the way MySQL
documents it: a *global* manifest ``mysqld.my`` beside the mysqld binary and a global
``component_keyring_file.cnf`` in the plugin directory, both only saying "read the local one"; the *local*
manifest and configuration live in each instance's data directory, so every instance has its own keyring
file (``keys/component_keyring_file``, 0600 in a 0700 directory). tdebench never writes outside its
instance directories: when the two global files are missing it says exactly what to create.

MySQL encrypts with AES-256 only (CBC for data; the tablespace keys are wrapped by the master key).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tdebench.encryption import EncryptionSpec
from tdebench.engines.toolkit.mycnf import check_settings, normalize_key
from tdebench.errors import EnvironmentProblem

GLOBAL_MANIFEST = {"read_local_manifest": True}
GLOBAL_CONFIG = {"read_local_config": True}
LOCAL_MANIFEST = {"components": "file://component_keyring_file"}

DEFAULTS: dict[str, str] = {
    "innodb_buffer_pool_size": "1G",
    "innodb_flush_method": "O_DIRECT",
    "innodb_flush_log_at_trx_commit": "1",
    "innodb_doublewrite": "ON",
    "innodb_file_per_table": "ON",
    "innodb_change_buffering": "none",  # no buffered index records in ibdata1, which MySQL cannot encrypt
    "innodb_buffer_pool_dump_at_shutdown": "OFF",
    "innodb_buffer_pool_load_at_startup": "OFF",
    "max_connections": "200",
    "max_allowed_packet": "64M",
    "character_set_server": "utf8mb4",
    "collation_server": "utf8mb4_bin",
    "skip_log_bin": "",
    "mysqlx": "OFF",  # the X plugin would listen on port 33060 in every instance
}
_RESERVED = ("datadir", "tmpdir", "socket", "pid_file", "port", "bind_address", "skip_networking", "user",
             "log_error", "basedir", "plugin_dir", "local_infile", "init_file", "early_plugin_load",
             "keyring*", "default_table_encryption", "table_encryption_privilege_check", "innodb_redo_log_encrypt",
             "innodb_undo_log_encrypt", "innodb_temp_tablespace_encrypt", "binlog_encryption",
             "innodb_data_home_dir", "innodb_log_group_home_dir", "innodb_undo_directory", "mysqlx*")


def validate_settings(settings: dict[str, str]) -> None:
    """UsageError for a malformed or tdebench-managed ``--server-setting``."""
    check_settings(settings, "mysql", dict.fromkeys(_RESERVED, ""), DEFAULTS, "tde:aes-256-cbc")


def merged(settings: dict[str, str]) -> dict[str, str]:
    return {**DEFAULTS, **{normalize_key(k): str(v) for k, v in settings.items()}}


def encryption_options(spec: EncryptionSpec, binlog: bool) -> dict[str, str]:
    """Server options of the encrypted twin: tables, redo, undo, temporary tablespace (and binlog when on)."""
    if spec.is_plain:
        return {}
    opts = {"default_table_encryption": "ON", "table_encryption_privilege_check": "OFF",
            "innodb_redo_log_encrypt": "ON", "innodb_undo_log_encrypt": "ON", "innodb_temp_tablespace_encrypt": "ON"}
    if binlog:
        opts["binlog_encryption"] = "ON"
    return opts


def render_cnf(paths: dict[str, Path], port: int | None, options: dict[str, str],
               encryption: dict[str, str]) -> str:
    """The instance's my.cnf (``paths``: datadir, tmpdir, socket, pid_file, log_error)."""
    lines = [f"{k}={v}" for k, v in paths.items()] + ["skip_name_resolve", "local_infile=ON"]
    lines += ["bind_address=127.0.0.1", f"port={port}"] if port else ["skip_networking"]
    lines += [k if v == "" else f"{k}={v}" for k, v in {**options, **encryption}.items()]
    return "[mysqld]\n" + "\n".join(lines) + "\n"


def write_local_keyring_files(datadir: Path, keyring: Path) -> list[Path]:
    """The local manifest and component configuration inside the data directory."""
    manifest = datadir / "mysqld.my"
    config = datadir / "component_keyring_file.cnf"
    manifest.write_text(json.dumps(LOCAL_MANIFEST) + "\n")
    config.write_text(json.dumps({"path": str(keyring), "read_only": False}) + "\n")
    for path in (manifest, config):
        path.chmod(0o600)
    return [manifest, config]


def _reads_local(path: Path, key: str) -> bool:
    try:
        return json.loads(path.read_text()).get(key) is True
    except (OSError, ValueError, AttributeError):
        return False


def check_global_keyring_files(mysqld: Path, plugin_dir: Path) -> None:
    """EnvironmentProblem (with the exact files to create) unless MySQL will read the local keyring files."""
    manifest = mysqld.resolve().parent / "mysqld.my"
    config = plugin_dir / "component_keyring_file.cnf"
    missing = []
    if not _reads_local(manifest, "read_local_manifest"):
        missing.append(f"{manifest} containing {json.dumps(GLOBAL_MANIFEST)}")
    if not _reads_local(config, "read_local_config"):
        missing.append(f"{config} containing {json.dumps(GLOBAL_CONFIG)}")
    if not (plugin_dir / "component_keyring_file.so").exists():
        raise EnvironmentProblem(f"component_keyring_file.so is missing in {plugin_dir}",
                                 "install a MySQL 8.0.24+ server package that ships the keyring components")
    if missing:
        raise EnvironmentProblem(
            "MySQL reads keyring components only through a global manifest beside mysqld; tdebench does not "
            "write outside its instance directories",
            "as the administrator, create once: " + " and ".join(missing)
            + " (each instance then uses its own keyring file in its data directory)")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """(8, 4, 2) from ``mysqld --version`` output (None if not found)."""
    match = re.search(r"Ver\s+(\d+)\.(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


__all__ = ["DEFAULTS", "check_global_keyring_files", "encryption_options", "merged", "parse_version",
           "render_cnf", "validate_settings", "write_local_keyring_files"]
