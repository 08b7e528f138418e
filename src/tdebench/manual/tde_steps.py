"""The texts of ``tdebench tde-setup``: commented, copy-pasteable steps per server (placeholders, no secrets)."""

from __future__ import annotations

from tdebench.manual.tdesetup import Setup, validate
from tdebench.sqltext.dialects import sql_dialect

TPCH_TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
_RULE = "=" * 92


def _head(setup: Setup, comment: str, lines: list[str]) -> list[str]:
    out = [f"{comment} tdebench tde-setup --engine {setup.engine} --encryption {setup.spec}",
           f"{comment} Replace every <PLACEHOLDER>. tdebench prints placeholders only, never a password or a key;",
           f"{comment} keep the real ones out of shell history and out of the run directory."]
    out += [f"{comment} {line}" if line else comment for line in lines]
    return out


def _step(comment: str, number: int, title: str) -> list[str]:
    return ["", f"{comment} {_RULE}", f"{comment} Step {number}: {title}", f"{comment} {_RULE}"]


def _import_hint(comment: str, dialect: str, setup: Setup) -> list[str]:
    label = "plain" if setup.plain else setup.spec.label
    spec = "" if setup.plain else f"#{setup.spec}"
    scheme = sql_dialect(dialect).url_scheme
    return [f"{comment} then measure it over the network (the login needs the grant above):",
            f"{comment}   tdebench run --target '{label}={scheme}://<TDEBENCH_USER>@<HOST>/<DATABASE>"
            f"{spec}' --target ...",
            f"{comment} or by hand with `tdebench script --dialect {dialect} …` and record the logs with",
            f"{comment}   tdebench import --dialect {dialect} --config {label} --encryption {setup.spec} "
            "--out <RUN_DIR> <LOGS>"]


def _grant_step(c: str, number: int, grants: list[str], dialect: str, setup: Setup) -> list[str]:
    """Every guide's last step: the grants that let tdebench's login read the encryption status, then how to
    measure."""
    return (_step(c, number, "let tdebench's login read the encryption status (for tdebench run --target)") + grants
            + [""] + _import_hint(c, dialect, setup))


def _plain(setup: Setup, c: str, notes: list[str], title: str, checks: list[str], dialect: str) -> str:
    """The steps of a plain baseline: notes, one step of checks, how to measure it."""
    lines = _head(setup, c, notes) + _step(c, 1, title) + checks + [""] + _import_hint(c, dialect, setup)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ MySQL
def mysql(setup: Setup) -> str:
    """MySQL 8.0.24+ / 8.4 / 9.x: component_keyring_file + InnoDB encryption (AES-256 only)."""
    if setup.plain:
        return _mysql_plain(setup)
    everything = setup.scope in ("", "all")
    return "\n".join(_mysql_keyring(setup, everything) + _mysql_encrypt(setup, everything))


def _mysql_plain(setup: Setup) -> str:
    return _plain(setup, "#", ["Plain MySQL baseline: make sure nothing is encrypted."], "check (mysql client)", [
        "SELECT NAME, ENCRYPTION FROM INFORMATION_SCHEMA.INNODB_TABLESPACES",
        " WHERE NAME LIKE '<DATABASE>/%' OR NAME = 'mysql' OR SPACE_TYPE = 'Undo';",
        "#   every row: ENCRYPTION = N",
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('default_table_encryption', 'innodb_redo_log_encrypt',",
        "  'innodb_undo_log_encrypt', 'innodb_temp_tablespace_encrypt', 'binlog_encryption');",
        "#   every value: OFF. Redo/undo/binlog/temporary encryption is instance-wide: a baseline on an",
        "#   instance that has them ON is not plain; give the baseline its own instance.",
    ], "mysql")


def _mysql_keyring(setup: Setup, everything: bool) -> list[str]:
    """The notes and steps 1-3: the keyring component."""
    c = "#"
    lines = _head(setup, c, [
        "MySQL InnoDB data-at-rest encryption: AES-256 (CBC for pages), the only key size InnoDB has.",
        "Keys live in the component_keyring_file keyring (MySQL 8.0.24+, 8.4, 9.x). The keyring_file *plugin*",
        "(early-plugin-load) is deprecated and gone in 8.4: use the component.",
        "",
        "Scope: " + ("everything InnoDB can encrypt (tables, the mysql tablespace, redo, undo, temporary "
                     "tablespaces, binary log)." if everything else "the TPC-H tablespaces only (@tables)."),
        *(["TRAP: redo/undo/binlog/temporary encryption is instance-wide; a plain baseline on this instance is",
           "not plain. Run the baseline on its own instance (same version, my.cnf without these lines)."]
          if everything else
          ["Redo, undo, temporary tablespaces and the binary log stay plaintext, so a plain baseline may share",
           "this instance (in its own schema without ENCRYPTION='Y')."]),
        "Back up the keyring file (step 3) apart from the data: without it the tables can never be read again.",
    ])
    lines += _step(c, 1, "find the directories (shell)") + [
        "mysql -u root -p -e \"SELECT @@version, @@basedir, @@plugin_dir, @@datadir\"",
        "#   <MYSQLD_DIR> = the directory of the mysqld binary (e.g. /usr/sbin, or <basedir>/bin)",
        "#   <PLUGIN_DIR> = @@plugin_dir",
    ]
    lines += _step(c, 2, "global manifest mysqld.my beside mysqld (shell, as root)") + [
        "cat > <MYSQLD_DIR>/mysqld.my <<'EOF'",
        "{",
        "  \"components\": \"file://component_keyring_file\"",
        "}",
        "EOF",
        "chown root:mysql <MYSQLD_DIR>/mysqld.my && chmod 0640 <MYSQLD_DIR>/mysqld.my",
    ]
    lines += _step(c, 3, "component configuration component_keyring_file.cnf in the plugin directory") + [
        "install -d -o mysql -g mysql -m 0750 <KEYRING_DIR>",
        "cat > <PLUGIN_DIR>/component_keyring_file.cnf <<'EOF'",
        "{",
        "  \"path\": \"<KEYRING_DIR>/component_keyring_file\",",
        "  \"read_only\": false",
        "}",
        "EOF",
        "chown root:mysql <PLUGIN_DIR>/component_keyring_file.cnf",
        "chmod 0640 <PLUGIN_DIR>/component_keyring_file.cnf",
        "# AppArmor/SELinux: mysqld must be allowed to write <KEYRING_DIR>.",
        "# Back up <KEYRING_DIR>/component_keyring_file after step 6, and after every key rotation.",
    ]
    return lines


def _mysql_encrypt(setup: Setup, everything: bool) -> list[str]:
    """Steps 4-8: server options, restart, encrypting and checking the data, the status grant."""
    c = "#"
    cnf = ["[mysqld]", "default_table_encryption = ON      # new schemas/tablespaces default to ENCRYPTION='Y'"]
    if everything:
        cnf += ["innodb_redo_log_encrypt = ON", "innodb_undo_log_encrypt = ON",
                "innodb_temp_tablespace_encrypt = ON  # 8.0.16+",
                "binlog_encryption = ON             # with the binary log on"]
    lines = _step(c, 4, "server options (my.cnf)") + cnf
    lines += _step(c, 5, "restart and check the keyring (shell)") + [
        "systemctl restart mysqld     # or: systemctl restart mysql",
        "mysql -u root -p -e \"SELECT * FROM performance_schema.keyring_component_status\"",
        "#   expect Component_status = Active (otherwise read the error log before going on)",
    ]
    alters = [f"ALTER TABLE <DATABASE>.{t} ENCRYPTION = 'Y';" for t in TPCH_TABLES]
    lines += _step(c, 6, "encrypt the TPC-H data (mysql client)") + [
        "-- a new database: its tables inherit the default",
        "CREATE DATABASE <DATABASE> DEFAULT ENCRYPTION = 'Y';",
        "-- an existing database: set the default, then rebuild every table (takes about as long as a load)",
        "ALTER SCHEMA <DATABASE> DEFAULT ENCRYPTION = 'Y';",
        *alters,
    ] + (["ALTER TABLESPACE mysql ENCRYPTION = 'Y';"] if everything else [])
    lines += _step(c, 7, "check before measuring (mysql client)") + [
        "SELECT NAME, ENCRYPTION FROM INFORMATION_SCHEMA.INNODB_TABLESPACES",
        " WHERE NAME LIKE '<DATABASE>/%' OR NAME = 'mysql' OR SPACE_TYPE = 'Undo';",
        "--   every TPC-H row must say ENCRYPTION = Y" + (" (and mysql, undo too)" if everything else ""),
        "SELECT TABLE_NAME, CREATE_OPTIONS FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = '<DATABASE>';",
        "--   CREATE_OPTIONS contains ENCRYPTION='Y'",
        "SHOW GLOBAL VARIABLES LIKE '%encrypt%';",
    ]
    lines += _grant_step(c, 8, [
        "GRANT PROCESS ON *.* TO '<TDEBENCH_USER>'@'<CLIENT_HOST>';   -- INFORMATION_SCHEMA.INNODB_TABLESPACES",
        "GRANT SELECT ON performance_schema.keyring_component_status TO '<TDEBENCH_USER>'@'<CLIENT_HOST>';",
    ], "mysql", setup)
    return lines


# ------------------------------------------------------------------------------------------------ SQL Server
def sqlserver(setup: Setup) -> str:
    """SQL Server TDE: master key, certificate (+ backup), DEK, SET ENCRYPTION ON, wait for state 3."""
    if setup.plain:
        return _sqlserver_plain(setup)
    des = setup.algorithm == "TRIPLE_DES_3KEY"
    lines = _sqlserver_keys(setup, des) + _sqlserver_wait() + _sqlserver_check(setup, des)
    return "\n".join(lines)


_SQLSERVER_TRAP = [
    "TRAP (shared tempdb): as soon as one database of an instance uses TDE, SQL Server encrypts tempdb",
    "for the whole instance. A plain baseline database on that instance then sorts, hashes and spills",
    "through an encrypted tempdb and is not plain. Run the baseline on a separate instance that has no",
    "TDE database at all, and check it with the plain variant:",
    "  tdebench tde-setup --engine sqlserver --encryption none",
]


def _sqlserver_plain(setup: Setup) -> str:
    return _plain(setup, "--", ["Plain SQL Server baseline: make sure nothing on the instance uses TDE.", "",
                                *_SQLSERVER_TRAP], "check on the baseline instance (sqlcmd)", [
        "SELECT DB_NAME(database_id) AS database_name, encryption_state FROM sys.dm_database_encryption_keys;",
        "GO",
        "--   must return no rows at all: a row for tempdb (database_id 2) means some database uses TDE",
        "SELECT name, is_encrypted, compatibility_level FROM sys.databases;",
        "GO",
        "--   is_encrypted = 0 everywhere. Compared with tde:3des, the baseline database needs the same",
        "--   compatibility level as the 3DES one (120 from SQL Server 2016 on: 3DES requires it):",
        "--   ALTER DATABASE <DATABASE> SET COMPATIBILITY_LEVEL = 120;",
    ], "tsql")


def _sqlserver_keys(setup: Setup, des: bool) -> list[str]:
    """The notes and steps 1-4: master key, certificate and its backup, the database key, encryption on."""
    c = "--"
    notes = [f"SQL Server Transparent Data Encryption, DEK WITH ALGORITHM = {setup.algorithm}, database <DATABASE>.",
             "Run in sqlcmd or SSMS as sysadmin. TDE needs Enterprise or Developer edition (Standard from 2019).",
             "", *_SQLSERVER_TRAP]
    if des:
        notes += ["", "TRIPLE_DES_3KEY is deprecated since SQL Server 2016 and far slower than AES; measure it only "
                  "to show that.",
                  "From SQL Server 2016 (13.x) on, CREATE DATABASE ENCRYPTION KEY accepts TRIPLE_DES_3KEY only in a",
                  "database at compatibility level 120 or lower (Microsoft Learn, CREATE DATABASE ENCRYPTION KEY):",
                  "step 3 sets 120. That level also selects the SQL Server 2014 query optimizer, so set the plain",
                  "baseline database to 120 as well, or the comparison measures the optimizer, not the cipher."]
    lines = _head(setup, c, notes)
    lines += _step(c, 1, "database master key and certificate in master") + [
        "USE master;",
        "GO",
        "IF NOT EXISTS (SELECT 1 FROM sys.symmetric_keys WHERE name = '##MS_DatabaseMasterKey##')",
        "    CREATE MASTER KEY ENCRYPTION BY PASSWORD = '<MASTER_KEY_PASSWORD>';",
        "GO",
        "CREATE CERTIFICATE tdebench_tde_cert WITH SUBJECT = 'tdebench TDE certificate';",
        "GO",
    ]
    lines += _step(c, 2, "back up the certificate and its private key NOW (restores need them)") + [
        "BACKUP CERTIFICATE tdebench_tde_cert",
        "    TO FILE = '<BACKUP_DIR>\\tdebench_tde_cert.cer'",
        "    WITH PRIVATE KEY (",
        "        FILE = '<BACKUP_DIR>\\tdebench_tde_cert.pvk',",
        "        ENCRYPTION BY PASSWORD = '<CERTIFICATE_BACKUP_PASSWORD>');",
        "GO",
        "-- keep both files and the password away from the server and from the database backups",
    ]
    compat = ([
        "-- SQL Server 2016+ refuses TRIPLE_DES_3KEY above compatibility level 120; note the old level first:",
        "SELECT name, compatibility_level FROM sys.databases WHERE name = N'<DATABASE>';",
        "GO",
        "ALTER DATABASE <DATABASE> SET COMPATIBILITY_LEVEL = 120;   -- and the same on the plain baseline database",
        "GO",
    ] if des else [])
    lines += _step(c, 3, f"database encryption key with ALGORITHM = {setup.algorithm}") + compat + [
        "USE <DATABASE>;",
        "GO",
        "CREATE DATABASE ENCRYPTION KEY",
        f"    WITH ALGORITHM = {setup.algorithm}",
        "    ENCRYPTION BY SERVER CERTIFICATE tdebench_tde_cert;",
        "GO",
    ]
    lines += _step(c, 4, "turn encryption on (a background scan rewrites every page)") + [
        "ALTER DATABASE <DATABASE> SET ENCRYPTION ON;",
        "GO",
    ]
    return lines


def _sqlserver_wait() -> list[str]:
    """Step 5: wait for the background scan to finish."""
    c = "--"
    return _step(c, 5, "wait until encryption_state = 3 (encrypted), at most <MAX_WAIT_SECONDS>") + [
        "-- encryption_state: 0 no key, 1 unencrypted, 2 encryption in progress, 3 encrypted, 4 key change in",
        "-- progress, 5 decryption in progress, 6 protection change in progress. Only 2, 4 and 6 are on the way",
        "-- to 3; 1 means SET ENCRYPTION ON did not take effect. SQL Server 2019+: a scan that stays at 2 may be",
        "-- suspended (encryption_scan_state = 2): ALTER DATABASE <DATABASE> SET ENCRYPTION RESUME;",
        "DECLARE @state int, @waited int = 0, @limit int = <MAX_WAIT_SECONDS>;   -- e.g. 3600; more for large data",
        "WHILE 1 = 1",
        "BEGIN",
        "    SET @state = NULL;",
        "    SELECT @state = encryption_state FROM sys.dm_database_encryption_keys",
        "     WHERE database_id = DB_ID(N'<DATABASE>');",
        "    IF @state = 3 BREAK;",
        "    IF @state IS NULL OR @state NOT IN (2, 4, 6)",
        "    BEGIN",
        "        RAISERROR('encryption_state is %d, not on its way to 3 (1: not started): check the error log',",
        "                  16, 1, @state);",
        "        BREAK;",
        "    END;",
        "    IF @waited >= @limit",
        "    BEGIN",
        "        RAISERROR('still encrypting after %d s: check percent_complete and encryption_scan_state',",
        "                  16, 1, @waited);",
        "        BREAK;",
        "    END;",
        "    WAITFOR DELAY '00:00:10';",
        "    SET @waited = @waited + 10;",
        "END;",
        "GO",
    ]


def _sqlserver_check(setup: Setup, des: bool) -> list[str]:
    """Steps 6-7: check, and the status grant."""
    c = "--"
    algorithm, bits = ("TRIPLE_DES_3KEY", 192) if des else ("AES", setup.bits)
    lines = _step(c, 6, "check before measuring") + [
        "SELECT DB_NAME(database_id) AS database_name, encryption_state, key_algorithm, key_length, percent_complete",
        "  FROM sys.dm_database_encryption_keys;",
        "GO",
        f"--   <DATABASE>: encryption_state 3, key_algorithm {algorithm}, key_length {bits}",
        "--   tempdb (database_id 2) now shows encryption_state 3 too: the shared-tempdb trap above",
        "SELECT name, is_encrypted, compatibility_level FROM sys.databases WHERE name IN (N'<DATABASE>', N'tempdb');",
        "GO",
        *(["--   compatibility_level 120 (3DES), like the plain baseline database"] if des else []),
    ]
    lines += _grant_step(c, 7, [
        "USE master;",
        "GO",
        "GRANT VIEW SERVER STATE TO [<TDEBENCH_LOGIN>];            -- SQL Server 2016-2019",
        "-- GRANT VIEW SERVER SECURITY STATE TO [<TDEBENCH_LOGIN>]; -- SQL Server 2022 and later",
        "-- Azure SQL Database (in the database): GRANT VIEW DATABASE STATE TO [<TDEBENCH_USER>];",
        "GO",
    ], "tsql", setup)
    return lines


# ------------------------------------------------------------------------------------------------ Oracle
def oracle(setup: Setup) -> str:
    """Oracle 19c+: keystore (ADMINISTER KEY MANAGEMENT) and an encrypted tablespace for the TPC-H data."""
    if setup.plain:
        return _oracle_plain(setup)
    return "\n".join(_oracle_keystore(setup) + _oracle_tablespace(setup))


_ORACLE_CHECK_PARAM = [
    "SHOW PARAMETER tablespace_encryption",
    "--   Oracle 19.16 (19c RU 19.16) and later: TABLESPACE_ENCRYPTION takes precedence over",
    "--   ENCRYPT_NEW_TABLESPACES. AUTO_ENABLE (the default on Oracle Cloud) encrypts every new",
    "--   tablespace, whatever CREATE TABLESPACE says: a 'plain' baseline there is not plain.",
    "--   MANUAL_ENABLE (on-premises default) leaves it to CREATE TABLESPACE and ENCRYPT_NEW_TABLESPACES;",
    "--   DECRYPT_ONLY forbids encrypting. Before 19.16 the parameter does not exist (no rows).",
    "SHOW PARAMETER encrypt_new_tablespaces",
    "--   with MANUAL_ENABLE, or before 19.16: ALWAYS (the default on Oracle Cloud) encrypts every new",
    "--   tablespace with TABLESPACE_ENCRYPTION_DEFAULT_ALGORITHM; DDL and CLOUD_ONLY (on-premises) do not.",
]


def _oracle_plain(setup: Setup) -> str:
    return _plain(setup, "--", ["Plain Oracle baseline: make sure the TPC-H tablespace is not encrypted."],
                  "check (SQL*Plus, in the PDB holding the data)", _ORACLE_CHECK_PARAM + [
        "SELECT tablespace_name, encrypted FROM dba_tablespaces;",
        "--   the tablespace(s) of the TPC-H segments: ENCRYPTED = NO",
        "SELECT DISTINCT tablespace_name FROM dba_segments WHERE owner = UPPER('<TPCH_USER>');",
        "--   with TABLESPACE_ENCRYPTION = AUTO_ENABLE every new tablespace comes out encrypted: keep the",
        "--   baseline's data in a tablespace created before it was set, or on another database.",
    ], "oracle")


def _oracle_keystore(setup: Setup) -> list[str]:
    """The notes and steps 1-2: the keystore and the master key."""
    c = "--"
    notes = [f"Oracle TDE tablespace encryption, ENCRYPTION USING '{setup.algorithm}' (Oracle 19c and later).",
             "Run in SQL*Plus as SYSDBA (SYSKM suffices for ADMINISTER KEY MANAGEMENT). Multitenant: steps 1-2 in",
             "CDB$ROOT (united mode, CONTAINER = ALL), steps 3-4 in the PDB that holds the TPC-H data.",
             "Undo, redo and temp blocks of an encrypted tablespace are encrypted too."]
    if setup.algorithm == "3DES168":
        notes += ["3DES168 is far slower than AES; measure it only to show that."]
    notes += ["Oracle 19.16+: with TABLESPACE_ENCRYPTION = DECRYPT_ONLY no tablespace can be encrypted (step 4",
              "shows it)."]
    lines = _head(setup, c, notes)
    lines += _step(c, 1, "where the keystore lives (one restart)") + [
        "ALTER SYSTEM SET WALLET_ROOT = '<WALLET_ROOT_DIR>' SCOPE = SPFILE;",
        "SHUTDOWN IMMEDIATE",
        "STARTUP",
        "ALTER SYSTEM SET TDE_CONFIGURATION = 'KEYSTORE_CONFIGURATION=FILE' SCOPE = BOTH;",
    ]
    lines += _step(c, 2, "keystore: create, open, set the master key (with a backup)") + [
        "ADMINISTER KEY MANAGEMENT CREATE KEYSTORE IDENTIFIED BY \"<KEYSTORE_PASSWORD>\";",
        "ADMINISTER KEY MANAGEMENT SET KEYSTORE OPEN IDENTIFIED BY \"<KEYSTORE_PASSWORD>\" CONTAINER = ALL;",
        "ADMINISTER KEY MANAGEMENT SET KEY IDENTIFIED BY \"<KEYSTORE_PASSWORD>\"",
        "  WITH BACKUP USING 'tdebench' CONTAINER = ALL;",
        "-- optional, opens the keystore at every startup:",
        "-- ADMINISTER KEY MANAGEMENT CREATE AUTO_LOGIN KEYSTORE FROM KEYSTORE IDENTIFIED BY \"<KEYSTORE_PASSWORD>\";",
        "SELECT wrl_parameter, status, wallet_type, con_id FROM v$encryption_wallet;",
        "--   STATUS must be OPEN. Back up <WALLET_ROOT_DIR>/tde: without it the data can never be read again.",
    ]
    return lines


def _oracle_tablespace(setup: Setup) -> list[str]:
    """Steps 3-5: the encrypted tablespace, the check and the status grant."""
    c = "--"
    moves = [f"ALTER TABLE <TPCH_USER>.{t} MOVE TABLESPACE tpch_tde;" for t in TPCH_TABLES]
    lines = _step(c, 3, f"encrypted tablespace ({setup.algorithm}) for the TPC-H data") + [
        "ALTER SESSION SET CONTAINER = <PDB_NAME>;   -- multitenant only",
        "CREATE TABLESPACE tpch_tde",
        "  DATAFILE '<DATAFILE_DIR>/tpch_tde01.dbf' SIZE <SIZE> AUTOEXTEND ON",
        f"  ENCRYPTION USING '{setup.algorithm}' ENCRYPT;",
        "ALTER USER <TPCH_USER> DEFAULT TABLESPACE tpch_tde QUOTA UNLIMITED ON tpch_tde;",
        "-- load the data now, or move existing tables (this leaves their indexes UNUSABLE):",
        *moves,
        "-- rebuild every index of the user in tpch_tde; run the statements this query prints:",
        "SELECT 'ALTER INDEX ' || owner || '.' || index_name || ' REBUILD TABLESPACE tpch_tde;'",
        "  FROM dba_indexes WHERE owner = UPPER('<TPCH_USER>');",
        "EXEC DBMS_STATS.GATHER_SCHEMA_STATS('<TPCH_USER>');",
    ]
    lines += _step(c, 4, "check before measuring") + [
        "SELECT t.name, e.encryptionalg, e.encryptedts, e.status",
        "  FROM v$encrypted_tablespaces e JOIN v$tablespace t ON t.ts# = e.ts# AND t.con_id = e.con_id;",
        f"--   TPCH_TDE  {setup.algorithm}  YES  NORMAL",
        "SELECT DISTINCT tablespace_name FROM dba_segments WHERE owner = UPPER('<TPCH_USER>');",
        "--   only TPCH_TDE",
        "-- for the plain baseline, on its own tablespace:",
        *_ORACLE_CHECK_PARAM,
    ]
    lines += _grant_step(c, 5, [
        "GRANT SELECT_CATALOG_ROLE TO <TPCH_USER>;   -- as SYS, in the PDB; or, view by view:",
        "-- GRANT SELECT ON SYS.V_$ENCRYPTED_TABLESPACES TO <TPCH_USER>;  (and V_$TABLESPACE, V_$ENCRYPTION_WALLET,",
        "-- V_$VERSION)",
    ], "oracle", setup)
    return lines


# ------------------------------------------------------------------------------------------------ MariaDB
def mariadb(setup: Setup) -> str:
    """MariaDB: file_key_management plugin (AES-128/192/256 by key length, AES_CBC or AES_CTR)."""
    if setup.plain:
        return _mariadb_plain(setup)
    return "\n".join(_mariadb_keys(setup) + _mariadb_server(setup))


def _mariadb_plain(setup: Setup) -> str:
    return _plain(setup, "#", ["Plain MariaDB baseline: make sure nothing is encrypted."], "check (mariadb client)", [
        "SELECT NAME, ENCRYPTION_SCHEME FROM information_schema.INNODB_TABLESPACES_ENCRYPTION",
        " WHERE ENCRYPTION_SCHEME <> 0;",
        "#   no rows",
        "SHOW GLOBAL VARIABLES WHERE Variable_name LIKE '%encrypt%';",
        "#   innodb_encrypt_tables, innodb_encrypt_log, encrypt_* and aria_encrypt_tables: OFF",
    ], "mariadb")


def _mariadb_keys(setup: Setup) -> list[str]:
    """The notes and step 1: the key file."""
    c = "#"
    hexlen = setup.bits // 4
    scope = setup.scope or "all"
    lines = _head(setup, c, [
        f"MariaDB data-at-rest encryption with the bundled file_key_management plugin: AES-{setup.bits} "
        f"(set by the key length, {hexlen} hex digits), mode {setup.algorithm}.",
        f"Scope @{scope}: " + {"all": "InnoDB tablespaces, redo log, temporary tables and files, Aria, binary log.",
                               "innodb": "InnoDB tablespaces, redo log and InnoDB temporary tables.",
                               "tables": "InnoDB tablespaces only."}[scope],
        "On a machine where tdebench can start mariadbd, `tdebench run --engine mariadb` does all of this itself.",
        "TRAP: with innodb_encryption_threads = 0, tablespaces that existed before are NOT encrypted.",
    ])
    lines += _step(c, 1, "keys (generated on the server; shell, as root)") + [
        "install -d -o mysql -g mysql -m 0750 /etc/mysql/encryption",
        "cd /etc/mysql/encryption",
        f"( umask 077; for id in 1 2; do echo \"$id;$(openssl rand -hex {setup.bits // 8})\"; done > keyfile )",
        "# key 1: tables and system data, key 2: temporary data. Encrypt the key file with a file key:",
        "( umask 077; openssl rand -hex 128 > keyfile.key )",
        "openssl enc -aes-256-cbc -md sha1 -pass file:keyfile.key -in keyfile -out keyfile.enc",
        "# OpenSSL 3 warns 'deprecated key derivation used. Using -iter or -pbkdf2 would be better.' Do NOT",
        "# follow that advice: MariaDB 10.11's file_key_management decrypts the key file only as written",
        "# above (aes-256-cbc, key from EVP_BytesToKey with SHA-1 and one iteration: -md sha1, no -pbkdf2,",
        "# no -iter); a file written with -pbkdf2 or -iter cannot be decrypted and the server does not start.",
        "# (OpenSSL 3's default digest is SHA-256, so -md sha1 is needed too.)",
        "shred -u keyfile",
        "chown mysql:mysql keyfile.enc keyfile.key && chmod 0400 keyfile.enc keyfile.key",
        "# back up keyfile.enc and keyfile.key apart from the data",
    ]
    return lines


#: the encryption threads advised, as measured (not a rule of thumb): on 2 vCPUs under a TPC-C load, 1 thread
#: encrypted TPC-H SF 1 faster than 4 and cost the load less (docs/workloads/encrypt.md)
ENCRYPTION_THREADS = [
    "# 1 encryption thread: measured faster than 4 on 2 vCPUs under load, and gentler on the workload meanwhile",
    "# (docs/workloads/encrypt.md, \"Measured: TPC-H SF 1 switched on with 1, 2 and 4 threads\"). Measure your",
    "# host: tdebench run --engine mariadb --workload encrypt --workload-option threads=1,2,4",
    "innodb_encryption_threads = 1",
]


def _mariadb_server(setup: Setup) -> list[str]:
    """Steps 2-5: server options, restart, the check and the status grant."""
    c = "#"
    scope = setup.scope or "all"
    cnf = ["[mariadb]", "plugin_load_add = file_key_management",
           "file_key_management_filename = /etc/mysql/encryption/keyfile.enc",
           "file_key_management_filekey = FILE:/etc/mysql/encryption/keyfile.key",
           f"file_key_management_encryption_algorithm = {setup.algorithm}",
           "innodb_encrypt_tables = ON", *ENCRYPTION_THREADS, "innodb_default_encryption_key_id = 1"]
    if scope in ("all", "innodb"):
        cnf += ["innodb_encrypt_log = ON", "innodb_encrypt_temporary_tables = ON"]
    if scope == "all":
        cnf += ["encrypt_tmp_files = ON", "encrypt_tmp_disk_tables = ON", "aria_encrypt_tables = ON",
                "encrypt_binlog = ON"]
    lines = _step(c, 2, "server options: a file of their own, group [mariadb]") + [
        "# Debian/Ubuntu: /etc/mysql/mariadb.conf.d/99-encryption.cnf (read through the !includedir in",
        "# /etc/mysql/mariadb.cnf, after 50-server.cnf); RHEL/Fedora/SUSE: /etc/my.cnf.d/encryption.cnf.",
        "# [mariadb] is read by MariaDB servers only ([mysqld] works too, but MySQL would also read it).",
    ] + cnf
    lines += _step(c, 3, "restart and check the plugin") + [
        "systemctl restart mariadb",
        "mariadb -u root -p -e \"SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS "
        "WHERE PLUGIN_NAME = 'file_key_management'\"",
        "#   PLUGIN_STATUS = ACTIVE",
    ]
    lines += _step(c, 4, "wait until the background threads have encrypted everything, then check") + [
        "SELECT NAME, ENCRYPTION_SCHEME, CURRENT_KEY_ID, ROTATING_OR_FLUSHING",
        "  FROM information_schema.INNODB_TABLESPACES_ENCRYPTION WHERE NAME LIKE '<DATABASE>/%';",
        "#   every TPC-H table: ENCRYPTION_SCHEME = 1, ROTATING_OR_FLUSHING = 0",
        "# a table that stays at 0: ALTER TABLE <DATABASE>.<TABLE> ENCRYPTED = YES ENCRYPTION_KEY_ID = 1;",
        "# The key length (AES-128/192/256) is set by the key file and no SQL reports it: tdebench records it as",
        "# declared but unverifiable.",
    ]
    lines += _grant_step(c, 5, [
        "GRANT PROCESS ON *.* TO '<TDEBENCH_USER>'@'<CLIENT_HOST>';",
        "#   PROCESS: information_schema.INNODB_SYS_TABLESPACES and INNODB_TABLESPACES_ENCRYPTION",
    ], "mariadb", setup)
    return lines


def steps_for(setup: Setup) -> str:
    """The steps for ``setup``'s server (its function in this module, named after it; ``fs:`` specs:
    :func:`tdebench.manual.fs_steps.fs_text`)."""
    if setup.spec.mechanism == "fs":
        from tdebench.manual.fs_steps import fs_text

        return fs_text(setup)
    builders = {f.__name__: f for f in (mysql, sqlserver, oracle, mariadb)}
    return builders[setup.engine](setup)


def setup_text(engine: str, spec_text: str) -> str:
    """The commented steps for a DBA (validated first)."""
    return steps_for(validate(engine, spec_text)).rstrip() + "\n"
