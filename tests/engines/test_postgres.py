"""PostgreSQL (plain, pgcrypto column encryption, gocryptfs) through the conformance kit, plus its own checks."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import psutil
import pytest

from tdebench.encryption import PLAIN, SecretKey, issued_secrets, parse_spec
from tdebench.engines import Config, get_engine
from tdebench.engines.toolkit import fsencrypt
from tdebench.engines.postgres.column import (EncryptedSchema, PgCipher, cipher_safety_check,
                                              legacy_provider_active, parse_create_table, parse_encrypt_columns)
from tdebench.engines.postgres.server import find_bindir
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.workloads.tpch import answers, params, refresh, schema
from tdebench.workloads.tpch.execute import run_query
from tdebench.workloads.tpch.loader import load_tpch
from tests.engines.kit import kit_for


def _missing(check) -> str | None:
    try:
        check()
    except EnvironmentProblem as exc:
        return exc.one_line()
    return None


PG_MISSING = _missing(find_bindir)
FS_MISSING = _missing(fsencrypt.check_available)
COLUMN_SPECS = ("column:aes-256", "column:pgp-aes256")
SF = 0.01

pytestmark = [pytest.mark.server,
              pytest.mark.skipif(PG_MISSING is not None, reason=f"PostgreSQL is not installed: {PG_MISSING}")]


@pytest.mark.slow(seconds=300)  # five configs provisioned and loaded, each scanned
class TestPostgresConformance(kit_for("postgres")):
    """The conformance kit (tests/engines/kit.py) and PostgreSQL's own checks on the same loaded instances."""

    def test_gocryptfs_is_part_of_the_kit(self, loaded):
        if FS_MISSING:
            pytest.skip(f"fs:gocryptfs left out of the kit: {FS_MISSING}")
        assert "fs:gocryptfs" in loaded and set(COLUMN_SPECS) <= set(loaded)

    def test_cipher_check_passed_for_every_column_spec(self, loaded):
        for text in COLUMN_SPECS:
            check = loaded[text].encryption_status()["cipher_check"]
            assert check["passed"] and not check["plaintext_in_ciphertext"] and check["wrong_key_rejected"], check

    def test_key_columns_plaintext_and_reported(self, loaded):
        status = loaded["column:aes-256"].encryption_status()
        assert status["plaintext_columns"]["lineitem"] == ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber"]
        assert "l_comment" in status["encrypted_columns"]["lineitem"]
        assert status["key_bits"] == 256 and "key columns" in status["plaintext_reason"]
        assert loaded["column:pgp-aes256"].encryption_status()["pgp_options"] == "s2k-mode=1"

    def test_no_secret_in_log_command_lines_or_activity(self, loaded):
        secrets_ = [s for s in issued_secrets() if len(s) >= 16]
        inst = loaded["column:aes-256"]
        conn = inst.connect()
        try:  # an error makes the server log the failing statement: the key must not be in it
            with pytest.raises(Exception):
                conn.execute("SELECT 1 / (SELECT count(*) - count(*) FROM region)")
            conn.rollback()
        finally:
            conn.close()
        for inst in loaded.values():
            log = inst.pgcluster.log_path.read_text(errors="replace")
            assert not any(s in log for s in secrets_), f"a secret is in {inst.pgcluster.log_path}"
        assert "division by zero" in loaded["column:aes-256"].pgcluster.log_path.read_text()
        for proc in psutil.process_iter(["cmdline"]):
            line = " ".join(proc.info["cmdline"] or [])
            assert not any(s in line for s in secrets_), f"a secret is on the command line of {proc.pid}"
        with loaded["column:aes-256"].connect() as conn:
            activity = " ".join(r[0] or "" for r in conn.execute("SELECT query FROM pg_stat_activity").fetchall())
            assert not any(s in activity for s in secrets_)

    def test_key_is_per_session_not_stored(self, loaded):
        inst = loaded["column:aes-256"]
        with inst.pgcluster.connect() as conn:  # a session without the key cannot read the data
            with pytest.raises(Exception, match="tdebench.key"):
                conn.execute("SELECT l_comment FROM lineitem LIMIT 1").fetchall()

    def test_storage_growth_of_column_encryption(self, loaded):
        plain = loaded["none"].storage_breakdown()
        assert plain["tables"]["lineitem"]["rows"] == 60175 and plain["data_dir_bytes"] > 0
        from tdebench.engines.postgres.instance import storage_growth

        for text in COLUMN_SPECS:
            sizes = loaded[text].storage_breakdown()
            assert sizes["tables"]["lineitem"]["relation"] == "lineitem_enc"
            growth = storage_growth(plain, sizes)
            print(f"{text}: total x{growth['totals']['total_bytes']}, table x{growth['totals']['table_bytes']}")
            assert growth["totals"]["total_bytes"] > 1 and growth["tables"]["lineitem"]["table_bytes"] > 1

    def test_settings_identical_across_twins(self, loaded):
        base = {k: v for k, v in loaded["none"].settings().items() if isinstance(v, str)}
        assert base["jit"] == "off" and base["shared_buffers"] == "512MB"
        for inst in loaded.values():
            other = {k: v for k, v in inst.settings().items() if isinstance(v, str)}
            assert other == base, inst.config.label

    def test_gocryptfs_status_and_cipher_dir(self, loaded):
        if "fs:gocryptfs" not in loaded:
            pytest.skip(f"gocryptfs not available: {FS_MISSING}")
        inst = loaded["fs:gocryptfs"]
        status = inst.encryption_status()
        assert status["mount"]["fstype"] == "fuse.gocryptfs" and status["data_directory_on_mount"]
        assert status["content_cipher"] == "AES-256-GCM" and "GCMIV128" in status["gocryptfs_conf"]["feature_flags"]
        assert inst.data_dir == inst.fs.cipher_dir and (inst.data_dir / "gocryptfs.conf").is_file()
        assert inst.fs.pids() and set(inst.fs.pids()) <= set(inst.server_pids())


# cipher safety -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def column_instance(tmp_path_factory):
    engine = get_engine("postgres")
    inst = engine.create_instance(Config("postgres", parse_spec("column:aes-128")), tmp_path_factory.mktemp("pgcol"))
    inst.start()
    yield inst
    inst.destroy()


def test_legacy_ciphers_refused_without_legacy_provider(column_instance):
    conn = column_instance.connect()
    try:
        if legacy_provider_active(conn):
            pytest.skip("OpenSSL's legacy provider is active in this server")
        for cipher in (PgCipher("pgp", "bf", 16), PgCipher("pgp", "cast5", 16), PgCipher("raw", "des", 8)):
            with pytest.raises(EnvironmentProblem, match="legacy provider"):
                cipher_safety_check(conn, cipher)
    finally:
        conn.close()


def test_cipher_check_catches_plaintext_pgp_bf(column_instance):
    """PostgreSQL < 15.19 without the legacy provider stores pgp bf data as plaintext (CVE-2026-14663);
    the marker check must catch it (fixed servers refuse the cipher with an error instead)."""
    conn = column_instance.connect()
    try:
        if legacy_provider_active(conn):
            pytest.skip("OpenSSL's legacy provider is active: bf really encrypts here")
        with pytest.raises(Exception) as err:
            cipher_safety_check(conn, PgCipher("pgp", "bf", 16), require_legacy_provider=False)
        if isinstance(err.value, EnvironmentProblem):
            assert "contains the plaintext" in str(err.value) or "wrong key" in str(err.value)
    finally:
        conn.close()


def test_cipher_check_passes_for_every_supported_column_cipher(column_instance):
    conn = column_instance.connect()
    try:
        for text in ("column:aes-128", "column:aes-192", "column:aes-256", "column:3des", "column:pgp-aes128",
                     "column:pgp-aes192", "column:pgp-aes256", "column:pgp-3des"):
            cipher = PgCipher.from_spec(parse_spec(text))
            key = SecretKey.generate(cipher.key_bytes * 8)
            conn.execute("SELECT set_config('tdebench.key', %s, false)", [key.hex()])
            result = cipher_safety_check(conn, cipher)
            assert result["passed"] and result["ciphertext_bytes"] >= result["marker_bytes"], text
    finally:
        conn.close()


# partial encryption, refresh functions through the views, restart ---------------------------------------
def test_encrypt_columns_subset_answers_and_refresh(tpch_sf001, tmp_path):
    data_dir, _ = tpch_sf001
    engine = get_engine("postgres")
    chosen = "lineitem.l_shipdate,lineitem.l_comment,orders.o_totalprice,customer.*"
    inst = engine.create_instance(Config("postgres", parse_spec("column:aes-256"), {"encrypt_columns": chosen}),
                                  tmp_path)
    try:
        inst.start()
        load_tpch(inst, engine.dialect, data_dir)
        status = inst.encryption_status()
        assert status["encrypted_columns"]["lineitem"] == ["l_shipdate", "l_comment"]
        assert status["encrypted_columns"]["customer"] == ["c_name", "c_address", "c_phone", "c_acctbal",
                                                            "c_mktsegment", "c_comment"]
        assert "part" not in status["encrypted_columns"] and status["enabled"]
        conn = inst.connect()
        ref = answers.reference_dir(SF)
        for number in (1, 3, 10, 13, 18):
            result = run_query(conn, number, params.render_query(number, engine.dialect.family, SF))
            _, expected = answers.read_answer_csv(ref / f"q{number:02d}.csv")
            assert answers.compare_answers(number, expected, [answers.normalize_row(r) for r in result.rows]) == []
        rs = refresh.refresh_set(SF, 1)
        rf1 = refresh.apply_rf1(conn, engine.dialect, rs)
        first = rs.lineitems[0]
        row = conn.execute("SELECT l_shipdate, l_comment FROM lineitem WHERE l_orderkey = %s AND l_linenumber = %s",
                           [first[0], first[3]]).fetchone()
        columns = schema.column_names("lineitem")
        assert row == (first[columns.index("l_shipdate")], first[columns.index("l_comment")])
        stored = conn.execute("SELECT l_comment FROM lineitem_enc WHERE l_orderkey = %s LIMIT 1", [first[0]]).fetchone()
        assert isinstance(stored[0], bytes) and first[columns.index("l_comment")].encode() not in stored[0]
        rf2 = refresh.apply_rf2(conn, engine.dialect, rs)
        conn.commit()
        assert rf1.orders == rf2.orders and rf2.lineitems > 0
        count = conn.execute("SELECT count(*) FROM orders").fetchone()[0]
        assert count == 15000
        conn.close()
        inst.restart()  # the key is sent again on every new connection
        with inst.connect() as again:
            assert again.execute("SELECT count(*) FROM lineitem WHERE l_shipdate > date '1990-01-01'").fetchone()[0] > 0
    finally:
        inst.destroy()


# lifecycle -----------------------------------------------------------------------------------------------
def _our_processes(paths: list[Path]) -> list[str]:
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if any(str(p) in line for p in paths):
            out.append(f"{proc.pid} {line}")
    return out


@pytest.mark.skipif(FS_MISSING is not None, reason=f"gocryptfs not available: {FS_MISSING}")
@pytest.mark.parametrize("spec", ["fs:gocryptfs-aessiv", "fs:gocryptfs-xchacha"])
def test_gocryptfs_variants_restart_and_destroy_leave_nothing(spec, tmp_path):
    engine = get_engine("postgres")
    inst = engine.create_instance(Config("postgres", parse_spec(spec)), tmp_path)
    try:
        inst.start()
        flags = inst.encryption_status()["gocryptfs_conf"]["feature_flags"]
        assert ("AESSIV" in flags) if spec.endswith("aessiv") else ("XChaCha20Poly1305" in flags)
        with inst.connect() as conn:
            conn.execute("CREATE TABLE t AS SELECT 'TDEBENCH-FS-PROBE-' || i AS v FROM generate_series(1, 500) i")
        inst.restart()  # unmount + remount
        assert inst.alive() and inst.encryption_status()["enabled"]
        with inst.connect() as conn:
            assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 500
        inst.flush_to_disk()
        for path in inst.data_dir.rglob("*"):
            if path.is_file():
                assert b"TDEBENCH-FS-PROBE-" not in path.read_bytes(), path
        pids = inst.server_pids()
    finally:
        inst.destroy()
    time.sleep(0.2)
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not fsencrypt.mount_entry(inst.fs.plain_dir)
    assert not _our_processes([inst.home]) and not inst.home.exists()


def test_destroy_leaves_no_process_socket_or_directory(tmp_path):
    engine = get_engine("postgres")
    inst = engine.create_instance(Config("postgres", PLAIN), tmp_path)
    inst.start()
    assert inst.alive()
    pids = inst.server_pids()
    socket_dir = inst.pgcluster.socket_dir
    assert oct(socket_dir.stat().st_mode & 0o777) == "0o700"
    inst.destroy()
    inst.destroy()
    assert not inst.alive()
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not inst.home.exists() and not _our_processes([inst.home])


def test_keep_leaves_the_data_directory(tmp_path):
    engine = get_engine("postgres")
    inst = engine.create_instance(Config("postgres", PLAIN, keep=True), tmp_path)
    try:
        inst.start()
        inst.destroy()
        assert (inst.pgcluster.pgdata / "PG_VERSION").is_file() and not inst.alive()
        assert (tmp_path / inst.config.label / "pgdata").is_dir()  # reachable through the work dir
    finally:
        shutil.rmtree(inst.home, ignore_errors=True)


# no server needed ----------------------------------------------------------------------------------------
def test_supported_specs_and_default():
    engine = get_engine("postgres")
    texts = {str(s) for s in engine.supported_specs()}
    assert {"none", "column:aes-128", "column:aes-192", "column:aes-256", "column:3des", "column:pgp-aes128",
            "column:pgp-aes192", "column:pgp-aes256", "column:pgp-3des", "fs:gocryptfs", "fs:gocryptfs-aessiv",
            "fs:gocryptfs-xchacha", "fs:fscrypt", "fs:fscrypt-adiantum"} == texts
    assert str(engine.default_encrypted_spec()) == "column:aes-256"


def test_cipher_mapping():
    assert PgCipher.from_spec(parse_spec("column:aes-192")) == PgCipher("raw", "aes", 24)
    assert PgCipher.from_spec(parse_spec("column:3des")).key_bytes == 24
    pgp = PgCipher.from_spec(parse_spec("column:pgp-aes128"))
    assert pgp.family == "pgp" and pgp.key_bytes == 16
    assert "cipher-algo=aes128, s2k-mode=1" in pgp.encrypt_sql("x")
    assert "'aes-cbc/pad:pkcs'" in PgCipher.from_spec(parse_spec("column:aes-256")).decrypt_sql("c")


def test_settings_validation():
    engine = get_engine("postgres")
    engine.validate_settings({"work_mem": "128MB", "encrypt_columns": "lineitem.l_comment",
                              "pgp_options": "s2k-mode=3", "log_statement": "all",
                              "log_min_duration_statement": "0"})  # statement logging: the threat model scans it
    for bad in ({"listen_addresses": "*"}, {"log_parameter_max_length": "-1"}, {"port": "1"}, {"Bad Name": "1"},
                {"encrypt_columns": "lineitem"}, {"pgp_options": "cipher-algo=bf"}, {"work_mem": "1\n2"}):
        with pytest.raises(UsageError):
            engine.validate_settings(bad)
    # columns are checked against the workload's tables, before any work (the orchestrator asks)
    for bad, words in (("lineitem.l_orderkey", "key column"), ("lineitem.nope", "no column nope"),
                       ("nation2.n_name", "does not create")):
        config = Config("postgres", parse_spec("column:aes-256"), {"encrypt_columns": bad})
        with pytest.raises(UsageError, match=words):
            engine.check_tables(config, schema.TABLES)
    engine.check_tables(Config("postgres", parse_spec("column:aes-256"), {"encrypt_columns": "customer.*"}),
                        schema.TABLES)


def test_encrypted_schema_sql():
    statements = schema.create_table_sql("postgres")
    tables = [parse_create_table(s) for s in statements]
    assert all(tables) and tables[-1].name == "lineitem" and ("l_quantity", "NUMERIC(15,2)") in tables[-1].columns
    enc = EncryptedSchema(PgCipher("raw", "aes", 16), parse_encrypt_columns("lineitem.l_shipdate"))
    for t in tables:
        enc.add(t, schema.table(t.name))
    assert enc.relation("lineitem") == "lineitem_enc" and enc.relation("orders") == "orders"
    ddl = enc.ddl(tables[-1])
    assert "l_shipdate BYTEA NOT NULL" in ddl[0] and "CREATE VIEW lineitem" in ddl[1] and "INSTEAD OF INSERT" in ddl[3]
    rewritten = [enc.rewrite(s) for s in schema.constraint_and_index_sql("postgres", date_indexes=True)]
    assert "ALTER TABLE lineitem_enc ADD CONSTRAINT lineitem_pk" in " ".join(filter(None, rewritten))
    assert "REFERENCES orders (o_orderkey)" in " ".join(filter(None, rewritten))
    assert any("l_shipdate" in s for s in enc.skipped)  # no index on ciphertext


def test_missing_gocryptfs_names_packages(monkeypatch, tmp_path):
    monkeypatch.setattr(fsencrypt, "_SEARCH", (tmp_path,))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem) as err:
        fsencrypt.check_available()
    assert "gocryptfs fuse3" in str(err.value) or "/dev/fuse" in str(err.value)
