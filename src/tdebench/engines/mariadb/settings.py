"""MariaDB server settings: benchmark defaults, ``--server-setting`` validation, encryption scopes.

Every twin gets the same :data:`DEFAULTS` overridden by the same user settings; only the options
that :func:`encryption_options` derives from the encryption spec differ between twins. Options
that tdebench manages itself (paths, networking, the key plugin, encryption switches) cannot be
overridden: they would make twins differ in more than encryption or move files out of the scan.
"""

from __future__ import annotations

from tdebench.encryption import EncryptionSpec
from tdebench.engines.toolkit.mycnf import check_settings, normalize_key

# Benchmark defaults (KEY -> VALUE, written to the [mariadbd] group of the instance's my.cnf).
DEFAULTS: dict[str, str] = {
    "innodb_buffer_pool_size": "1G",
    "innodb_log_file_size": "512M",
    "innodb_log_buffer_size": "16M",
    "innodb_flush_method": "O_DIRECT",       # reads really go through InnoDB (and its decryption), not the OS cache
    "innodb_flush_log_at_trx_commit": "1",
    "innodb_doublewrite": "ON",
    "innodb_file_per_table": "ON",
    "innodb_io_capacity": "1000",
    "innodb_buffer_pool_dump_at_shutdown": "OFF",  # a restart must give a cold buffer pool
    "innodb_buffer_pool_load_at_startup": "OFF",
    "max_connections": "200",
    "max_allowed_packet": "64M",
    "tmp_table_size": "16M",
    "max_heap_table_size": "16M",
    "character_set_server": "utf8mb4",
    "collation_server": "utf8mb4_bin",      # case-sensitive comparisons, as TPC-H and the other engines
    "log_bin": "OFF",
    "performance_schema": "OFF",
    "query_cache_type": "OFF",
    "query_cache_size": "0",
    # twins must choose the same plans: sampled index statistics (20 random pages) made identical twins differ
    # (TPC-H q18 took another plan after a re-ANALYZE at SF 0.1); with enough sample pages ANALYZE reads every
    # leaf page, and no automatic recalculation changes one twin's plans in the middle of a run (docs/precision.md)
    "innodb_stats_persistent_sample_pages": "100000",
    "innodb_stats_auto_recalc": "OFF",
}

# Managed by tdebench: exact names, and prefixes (ending in "*"), with the reason
_RESERVED: dict[str, str] = dict((
    ("datadir", "the instance's private directory"), ("tmpdir", "the instance's private directory"),
    ("socket", "the instance's private socket"), ("pid_file", "the instance's private directory"),
    ("port", "networking (use the tcp option)"), ("bind_address", "networking (use the tcp option)"),
    ("skip_networking", "networking (use the tcp option)"), ("user", "the service user"),
    ("log_error", "start-up diagnostics"), ("basedir", "the installed server"), ("plugin_dir", "the installed server"),
    ("plugin_load*", "the encryption spec"), ("plugin_maturity", "the encryption spec"),
    ("file_key_management*", "the encryption spec"), ("innodb_encrypt*", "the encryption spec"),
    ("hashicorp_key_management_vault*", "the key source (--keys, --key-server)"),
    ("hashicorp_key_management_token", "the key source (the token goes in the server's environment)"),
    ("hashicorp_key_management_check_kv_version", "the key source (--keys, --key-server)"),
    ("innodb_default_encryption_key_id", "the encryption spec"), ("encrypt_*", "the encryption spec"),
    ("aria_encrypt*", "the encryption spec"),
    ("innodb_data_home_dir", "files must stay in the scanned directory"),
    ("innodb_log_group_home_dir", "files must stay in the scanned directory"),
    ("innodb_undo_directory", "files must stay in the scanned directory"),
    ("innodb_temp_data_file_path", "files must stay in the scanned directory"),
    ("log_bin_index", "files must stay in the scanned directory"), ("local_infile", "the bulk loader needs it"),
    ("init_file", "start-up of the instance"),
))
_TRUE = ("on", "1", "true", "yes")
_FALSE = ("off", "0", "false", "no")

# scope word -> (description, what it encrypts beyond the InnoDB tablespaces)
SCOPES: dict[str, str] = {
    "": "everything MariaDB can encrypt: InnoDB tablespaces (file-per-table, system tablespace with undo), "
        "redo log, InnoDB temporary tablespace, temporary files, on-disk temporary tables, Aria tables, "
        "binary log when on",
    "innodb": "InnoDB only: tablespaces, redo log and the InnoDB temporary tablespace",
    "tables": "InnoDB tablespaces only (file-per-table and system tablespace); redo log, temporary files, "
              "Aria tables and the binary log stay plaintext",
}
# files (globs relative to the data directory) a scope leaves plaintext by design
_OUTSIDE: dict[str, tuple[str, ...]] = {
    # the mysql schema's Aria system tables are made by mariadb-install-db and stay plaintext under
    # aria_encrypt_tables; a GRANT rewrites their index pages, which were seen carrying a canary from server
    # memory (tests/e2e/test_sysbench_e2e.py): reported as outside-scope hits, not as a failed encryption
    "": ("mysql/*.MAD", "mysql/*.MAI"),
    "innodb": ("aria_log.*", "aria_log_control", "**/*.MAD", "**/*.MAI", "binlog.*", "../tmp/*"),
    "tables": ("ib_logfile*", "ibtmp1", "aria_log.*", "aria_log_control", "**/*.MAD", "**/*.MAI", "binlog.*",
               "../tmp/*"),
}


def validate_settings(settings: dict[str, str]) -> None:
    """UsageError for a malformed or reserved ``--server-setting``; unknown names fail at start-up."""
    check_settings(settings, "mariadb", _RESERVED, DEFAULTS, "tde:aes-256-ctr@tables")


def merged(settings: dict[str, str]) -> dict[str, str]:
    """Defaults overridden by the user's settings (names normalized)."""
    out = dict(DEFAULTS)
    out.update({normalize_key(k): str(v) for k, v in settings.items()})
    return out


def binlog_on(options: dict[str, str]) -> bool:
    return options.get("log_bin", "OFF").lower() not in _FALSE


def server_lines(options: dict[str, str]) -> list[str]:
    """``key=value`` lines for my.cnf; ``log_bin`` ON/OFF becomes ``log_bin=binlog`` / ``skip_log_bin``."""
    lines = []
    for key, value in options.items():
        if key == "log_bin":
            low = value.lower()
            lines.append("skip_log_bin" if low in _FALSE else f"log_bin={'binlog' if low in _TRUE else value}")
        else:
            lines.append(f"{key}={value}")
    return lines


def encryption_options(spec: EncryptionSpec, key_plugin: dict[str, str], binlog: bool,
                       threads: int = 4) -> dict[str, str]:
    """Server options for a ``tde:`` spec whose keys come through ``key_plugin`` (the key plugin's own lines:
    :mod:`tdebench.engines.mariadb.keyplugins`); empty for ``none`` and filesystem encryption."""
    if spec.mechanism != "tde":
        return {}
    opts = {
        **key_plugin,
        "innodb_encrypt_tables": "ON",
        "innodb_encryption_threads": str(threads),
        "innodb_default_encryption_key_id": "1",
    }
    if spec.scope in ("", "innodb"):
        opts.update(innodb_encrypt_log="ON", innodb_encrypt_temporary_tables="ON")
    if spec.scope == "":
        opts.update(encrypt_tmp_files="ON", encrypt_tmp_disk_tables="ON", aria_encrypt_tables="ON")
        if binlog:
            opts["encrypt_binlog"] = "ON"
    return opts


def files_outside_scope(spec: EncryptionSpec) -> list[str]:
    """Globs (relative to the data directory) that ``spec``'s scope leaves plaintext by design."""
    return list(_OUTSIDE.get(spec.scope, ())) if spec.mechanism == "tde" else []


def render_cnf(lines: list[str]) -> str:
    return "[mariadbd]\n" + "\n".join(lines) + "\n"
