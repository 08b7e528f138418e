"""External targets without servers: URL parsing, passwords, configs, the run options they refuse."""

from __future__ import annotations

import pytest

from tdebench.encryption import PLAIN, parse_spec, redact
from tdebench.engines import get_engine
from tdebench.engines.external.configs import check_run_options, target_configs, target_of
from tdebench.engines.external.target import parse_target, password_variable, resolve_password
from tdebench.errors import EnvironmentProblem, UsageError


def test_parse_full_url():
    t = parse_target("enc=mysql://bench@db1.example:3307/tpch?password_env=DB1_PW#tde:aes-256-cbc")
    assert (t.label, t.kind.scheme, t.user, t.host, t.port, t.database) == ("enc", "mysql", "bench", "db1.example",
                                                                            3307, "tpch")
    assert t.spec == parse_spec("tde:aes-256-cbc") and t.password_env == "DB1_PW"
    assert t.url == "mysql://bench@db1.example:3307/tpch?password_env=DB1_PW"  # no fragment, no password


@pytest.mark.parametrize("url,scheme,port,dialect", [
    ("postgres://u@h/db", "postgresql", 5432, "postgres"), ("postgresql://u@h/db", "postgresql", 5432, "postgres"),
    ("sqlserver://sa@h/tpch", "mssql", 1433, "tsql"), ("mssql://sa@h:14330/tpch", "mssql", 14330, "tsql"),
    ("oracle://bench@h/FREEPDB1", "oracle", 1521, "oracle"), ("mariadb://u@h/db", "mariadb", 3306, "mariadb"),
])
def test_schemes_ports_dialects(url, scheme, port, dialect):
    t = parse_target(f"x={url}")
    assert (t.kind.scheme, t.port, t.kind.dialect, t.spec) == (scheme, port, dialect, PLAIN)


def test_password_in_url_refused_and_not_echoed():
    with pytest.raises(UsageError) as err:
        parse_target("a=mysql://bench:S3cretPass@h/db")
    assert "S3cretPass" not in err.value.one_line() and "TDEBENCH_PASSWORD_A" in err.value.one_line()
    with pytest.raises(UsageError) as err:
        parse_target("a:mysql://bench:S3cretPass@h/db")  # not even a LABEL=URL
    assert "S3cretPass" not in err.value.one_line()


@pytest.mark.parametrize("text,words", [
    ("a=mysql://h/db", "needs a user and a host"),
    ("a=mysql://u@h", "needs a database"),
    ("a=mysql://u@h/db/x", "needs a database"),
    ("a=db2://u@h/db", "unknown URL scheme"),
    ("a=mysql://u@h/db?ssl=1", "unknown URL parameter"),
    ("a b=mysql://u@h/db", "bad target label"),
    ("a=mysql://u@h:notaport/db", "bad port"),
    ("a=mysql://u@h/db#tde:aes-128-cbc", "single key size: AES-256"),
    ("a=mysql://u@h/db#tde:aes-256-ctr", "CBC mode only"),
    ("a=postgresql://u@h/db#column:aes-256", "column encryption changes the schema"),
    ("a=mariadb://u@h/db#tde:aes-256-ctr@tables", "scopes"),
    ("a=mssql://u@h/db#sqlcipher:aes-256-cbc", "cannot declare"),
])
def test_bad_targets(text, words):
    with pytest.raises(UsageError, match=words):
        parse_target(text)


def test_fs_specs_can_be_declared_everywhere():
    assert parse_target("a=oracle://u@h/svc#fs:gocryptfs").spec.mechanism == "fs"


def test_password_sources(monkeypatch):
    monkeypatch.setenv("MY_PW", "from-password-env-1")
    assert resolve_password(parse_target("p1=mysql://u@h/db1?password_env=MY_PW"), interactive=False) == \
        "from-password-env-1"
    monkeypatch.setenv("TDEBENCH_PASSWORD_P_2", "from-default-var-2")
    assert password_variable("p-2") == "TDEBENCH_PASSWORD_P_2"
    assert resolve_password(parse_target("p-2=mysql://u@h/db2"), interactive=False) == "from-default-var-2"
    assert redact("x from-default-var-2 y") == "x *** y"  # registered for redaction
    with pytest.raises(UsageError, match="NOT_SET_PW"):
        resolve_password(parse_target("p3=mysql://u@h/db3?password_env=NOT_SET_PW"), interactive=False)
    with pytest.raises(UsageError, match="TDEBENCH_PASSWORD_P4"):
        resolve_password(parse_target("p4=mysql://u@h/db4"), interactive=False)


def test_prompt_when_interactive(monkeypatch):
    monkeypatch.setattr("getpass.getpass", lambda prompt: "typed-password-5")
    assert resolve_password(parse_target("p5=mysql://u@h/db5"), interactive=True) == "typed-password-5"


def test_configs_carry_label_url_and_check(monkeypatch):
    monkeypatch.setenv("TDEBENCH_PASSWORD_PLAIN", "pw-plain-123")
    monkeypatch.setenv("TDEBENCH_PASSWORD_ENC", "pw-enc-4567")
    plain, enc = target_configs(["plain=mysql://u@h:1/a", "enc=mysql://u@h:2/a#tde:aes-256-cbc"], ["enc"],
                                interactive=False)
    assert (plain.label, enc.label) == ("plain", "enc") and plain.engine == enc.engine == "external"
    assert enc.settings == {"url": "mysql://u@h:2/a", "label": "enc", "encryption_check": "overridden"}
    assert plain.settings["encryption_check"] == "required"
    assert "pw-" not in repr(plain) + repr(enc)
    assert target_of(enc).spec == parse_spec("tde:aes-256-cbc") and target_of(enc).port == 2
    get_engine("external").validate_settings(enc.settings)


@pytest.mark.parametrize("targets,overrides,words", [
    (["a=mysql://u@h/x", "a=mysql://u@h/y"], [], "used twice"),
    (["a=mysql://u@h/x", "b=postgresql://u@h/y"], [], "one DBMS"),
    (["a=mysql://u@h/x", "b=mysql://u@H:3306/X"], [], "same database"),
    (["a=mysql://u@h/x"], ["b"], "unknown target"),
    ([], [], "no --target"),
])
def test_bad_target_sets(targets, overrides, words):
    with pytest.raises(UsageError, match=words):
        target_configs(targets, overrides, interactive=False)


def test_missing_driver_names_the_pip_package(monkeypatch):
    monkeypatch.setenv("TDEBENCH_PASSWORD_MS", "pw-ms-12345")
    monkeypatch.setattr("tdebench.engines.toolkit.dbapi.kinds.find_spec", lambda name: None)
    with pytest.raises(EnvironmentProblem, match="pip install 'pymssql'"):
        target_configs(["ms=mssql://sa@h/tpch#tde:aes-256"], [], interactive=False)


def test_cold_cache_and_snapshots_refused():
    check_run_options("warm", "none")
    with pytest.raises(UsageError, match="restart"):
        check_run_options("cold", "none")
    with pytest.raises(UsageError, match="snapshot"):
        check_run_options("warm", "snapshot")


def test_engine_declares_specs():
    engine = get_engine("external")
    assert PLAIN in engine.supported_specs() and engine.default_encrypted_spec() in engine.supported_specs()
    with pytest.raises(UsageError, match="no server settings"):
        engine.validate_settings({"innodb_buffer_pool_size": "1G"})


# refusals give the DBMS's own reason -------------------------------------------------------------

def test_mysql_3des_is_refused_for_having_no_3des() -> None:
    with pytest.raises(UsageError) as err:
        parse_target("a=mysql://u@h/db#tde:3des")
    text = err.value.one_line()
    assert "has no 3DES" in text and "AES-128/192" not in text
    from tdebench.engines.mysql.engine import MysqlEngine

    with pytest.raises(UsageError, match="has no 3DES"):
        MysqlEngine().validate_spec(parse_spec("tde:3des"))


@pytest.mark.parametrize("spec", ["tde:aes-256-ctr", "tde:aes-128-cbc"])
def test_mysql_refusals_point_a_mariadb_server_to_mariadb_urls(spec: str) -> None:
    with pytest.raises(UsageError, match="mariadb://USER@HOST/DB"):
        parse_target(f"a=mysql://u@h/db#{spec}")
    assert parse_target(f"a=mariadb://u@h/db#{spec}").spec == parse_spec(spec)


@pytest.mark.parametrize("url", ["mssql://sa@h/tpch#tde:aes-256-cbc", "oracle://u@h/svc#tde:aes-128-cbc"])
def test_modes_that_no_status_view_reports_are_refused_as_tde_setup_does(url: str) -> None:
    from tdebench.manual.tdesetup import validate

    with pytest.raises(UsageError, match="no mode option|algorithm name only"):
        parse_target(f"a={url}")
    engine = "sqlserver" if url.startswith("mssql") else "oracle"
    with pytest.raises(UsageError):
        validate(engine, url.split("#")[1])


def test_external_doc_and_tde_setup_agree_on_sql_server_and_oracle_specs() -> None:
    from pathlib import Path

    from tdebench.engines.toolkit.dbapi.kinds import KINDS
    from tdebench.manual.tdesetup import validate

    doc = (Path(__file__).resolve().parents[2] / "docs" / "engines" / "external.md").read_text()
    for scheme, engine in (("mssql", "sqlserver"), ("oracle", "oracle")):
        row = next(line for line in doc.splitlines() if line.startswith(f"| `{scheme}`"))
        assert "cbc" not in row, row
        for spec in KINDS[scheme].specs:
            validate(engine, str(spec))  # every declarable spec has DBA steps


def test_engines_lists_what_each_scheme_can_declare() -> None:
    notes = get_engine("external").spec_notes()
    mysql = next(n for n in notes if n.startswith("mysql://"))
    assert "tde:aes-256-cbc" in mysql and "aes-128" not in mysql and "CBC mode only" in mysql
    assert any(n.startswith("mssql://") and "tde:3des" in n and "-cbc" not in n for n in notes)
    assert any(n.startswith("mariadb://") and "unverifiable" in n for n in notes)
