"""Private MariaDB and PostgreSQL instances made from a bootstrap template (tdebench.engines.toolkit.templates): the
first instance writes it, the next copies it, each has its own password, and the template holds no secret."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymysql
import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines import Config, get_engine
from tdebench.engines.mariadb.support import native_password_hash
from tdebench.engines.postgres.bootstrap import scram_verifier
from tdebench.engines.toolkit import templates
from tests.engines.kit import MARIADB_SMALL
from tests.engines.test_postgres import PG_MISSING

pytestmark = pytest.mark.server
HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or bool(shutil.which("mariadbd"))


@pytest.fixture
def template_dir(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "templates"
    monkeypatch.setenv(templates.ENV, str(root))
    return root


def _template_bytes(root: Path) -> list[bytes]:
    return [p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def _two_started(engine_name: str, settings: dict[str, str], workdir: Path) -> list:
    engine = get_engine(engine_name)
    instances = []
    for label in ("first", "second"):
        inst = engine.create_instance(Config(engine_name, PLAIN, settings, name=label), workdir)
        instances.append(inst)
        inst.start()
    return instances


@pytest.mark.skipif(not HAVE_MARIADB, reason="mariadbd is not installed (Debian package mariadb-server)")
def test_mariadb_instances_copy_one_template_without_its_users(template_dir, tmp_path):
    instances = _two_started("mariadb", MARIADB_SMALL, tmp_path / "work")
    try:
        assert len(list(template_dir.iterdir())) == 1
        first, second = instances
        for inst in instances:
            conn = inst.connect()
            try:
                cur = conn.cursor()
                cur.execute("SELECT DATABASE(), (SELECT COUNT(*) FROM mysql.global_priv WHERE User = 'bench')")
                assert cur.fetchone() == (inst.database, 1)
            finally:
                conn.close()
        assert first._password != second._password
        with pytest.raises(pymysql.err.OperationalError):  # the first one's password does not open the second
            pymysql.connect(user="bench", password=first._password, unix_socket=str(second.socket)).close()
        secrets = [s.encode() for inst in instances for s in (inst._password, native_password_hash(inst._password))]
        stored = _template_bytes(template_dir)
        assert stored and not any(s in data for s in secrets for data in stored)
        grants = [p.read_bytes() for p in template_dir.rglob("mysql/global_priv.*")]
        assert grants and not any(b"bench" in data for data in grants), "the benchmark user is in the template"
    finally:
        for inst in instances:
            inst.destroy()


def test_mariadb_encrypted_bootstrap_is_never_templated(tmp_path):
    engine = get_engine("mariadb")
    encrypted = engine.create_instance(Config("mariadb", parse_spec("tde:aes-256-ctr"), MARIADB_SMALL), tmp_path)
    plain = engine.create_instance(Config("mariadb", PLAIN, MARIADB_SMALL), tmp_path)
    assert encrypted._template() is None
    assert plain._template() is not None
    resized = engine.create_instance(Config("mariadb", PLAIN, {**MARIADB_SMALL, "innodb_buffer_pool_size": "96M"}),
                                     tmp_path)
    assert resized._template().key == plain._template().key  # a runtime setting: the same bootstrap
    redo = engine.create_instance(Config("mariadb", PLAIN, {**MARIADB_SMALL, "innodb_log_file_size": "48M"}), tmp_path)
    assert redo._template().key != plain._template().key


@pytest.mark.skipif(PG_MISSING is not None, reason=f"PostgreSQL is not installed: {PG_MISSING}")
def test_postgres_instances_copy_one_template_and_set_their_own_password(template_dir, tmp_path):
    instances = _two_started("postgres", {"shared_buffers": "32MB"}, tmp_path / "work")
    try:
        assert len(list(template_dir.iterdir())) == 1
        for inst in instances:
            with inst.connect() as conn:
                assert conn.execute("SELECT current_database()").fetchone() == (inst.database,)
        first, second = instances
        assert first.pgcluster.password != second.pgcluster.password
        stored = _template_bytes(template_dir)
        assert stored and not any(inst.pgcluster.password.encode() in data for data in stored for inst in instances)
    finally:
        for inst in instances:
            inst.destroy()


def test_scram_verifier_has_postgres_form():
    verifier = scram_verifier("secret", salt=b"0123456789abcdef")
    assert verifier == scram_verifier("secret", salt=b"0123456789abcdef")
    method, rest = verifier.split("$", 1)
    iterations_salt, keys = rest.split("$")
    assert method == "SCRAM-SHA-256" and iterations_salt == "4096:MDEyMzQ1Njc4OWFiY2RlZg=="
    assert [len(k) for k in keys.split(":")] == [44, 44]  # base64 of two SHA-256 digests
    assert scram_verifier("secret") != scram_verifier("secret")  # a fresh salt each time
