"""The key source axis and the key-path capability (:mod:`tdebench.api.keys`): labels, the plan's crossing of
specs with sources and its record, and every engine's answer to ``key_path``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tdebench.api.engine import Config
from tdebench.api.keys import FILE, OPENBAO, KeyNeed, KeyPath, file_twin, keyed_label, parse_key_sources, split_keys
from tdebench.runner.precision import compared_labels
from tdebench.api.plan import plan_from_json
from tdebench.cli.run import experiment_from_options, plan_from_experiment
from tdebench.encryption import PLAIN, SecretKey, parse_spec
from tdebench.engines import engine_names, get_engine
from tdebench.errors import UsageError


def test_sources_parse_and_labels_name_them():
    assert parse_key_sources("file, OpenBao") == (FILE, OPENBAO) and parse_key_sources(["openbao"]) == (OPENBAO,)
    for bad in ("vault", "", "file,file"):
        with pytest.raises(UsageError):
            parse_key_sources(bad)
    spec = parse_spec("tde:aes-256-cbc")
    assert Config("mariadb", spec, keys=OPENBAO).label == "mariadb-tde-aes-256-cbc+openbao"
    assert Config("mariadb", spec).label == "mariadb-tde-aes-256-cbc"
    assert Config("mariadb", PLAIN, keys=OPENBAO).label == "mariadb-none"  # a plain config has no key
    assert split_keys("mariadb-tde-aes-256-cbc+openbao") == ("mariadb-tde-aes-256-cbc", OPENBAO)
    assert split_keys(keyed_label("x", FILE)) == ("x", FILE) and split_keys("x+y") == ("x+y", "")


def test_a_key_servers_config_is_compared_with_its_file_twin():
    labels = ["m-none", "m-tde+file", "m-tde+openbao", "m-x+openbao", "m-tde+file@mem0.5", "m-tde+openbao@mem0.5"]
    assert file_twin("m-tde+openbao", labels) == "m-tde+file" and file_twin("m-x+openbao", labels) is None
    assert file_twin("m-tde+openbao@mem0.5", labels) == "m-tde+file@mem0.5" and file_twin("m-tde+file", labels) is None
    assert file_twin("m-tde+openbao", ["m-tde", "m-tde+openbao"]) == "m-tde"
    plan = _plan("none,sqlcipher:aes-256-cbc", "file,openbao")
    assert compared_labels(plan) == {"sqlite-sqlcipher-aes-256-cbc+file": "sqlite-none",
                                     "sqlite-sqlcipher-aes-256-cbc+openbao": "sqlite-sqlcipher-aes-256-cbc+file"}
    alone = _plan("sqlcipher:aes-256-cbc", "file,openbao")  # no plain twin: the key server's cost alone
    assert compared_labels(alone) == {"sqlite-sqlcipher-aes-256-cbc+openbao": "sqlite-sqlcipher-aes-256-cbc+file"}


def _plan(encryption: str, keys: str, engine: str = "sqlite"):
    return plan_from_experiment(experiment_from_options(engine, encryption, {}, {"keys": keys}))


def test_the_plan_crosses_encrypted_specs_with_sources_and_records_them():
    plan = _plan("none,sqlcipher:aes-256-cbc", "file,openbao")
    assert plan.labels == ["sqlite-none", "sqlite-sqlcipher-aes-256-cbc+file", "sqlite-sqlcipher-aes-256-cbc+openbao"]
    again = plan_from_json(plan.to_json())
    assert again.labels == plan.labels and [c.keys for c in again.configs] == [FILE, FILE, OPENBAO]
    assert _plan("none,sqlcipher:aes-256-cbc", "openbao").labels == ["sqlite-none",
                                                                     "sqlite-sqlcipher-aes-256-cbc+openbao"]


@pytest.mark.parametrize("name", engine_names())
def test_every_engine_answers_key_path_for_every_spec(name):
    """A key path holds at least one required key of a whole number of bytes, or the engine says why it has none."""
    engine = get_engine(name)
    specs = engine.supported_specs()
    assert specs, f"{name} supports no spec"
    for spec in specs:
        try:
            path = engine.key_path(spec)
        except UsageError as exc:
            assert exc.fix, f"{name} {spec}: a refusal names its fix"
            continue
        if spec.is_plain:
            assert path is None, f"{name}: none has no key"
        if path is not None:
            assert isinstance(path, KeyPath) and any(n.required for n in path.needs) and path.how, (name, spec)


def test_mariadb_takes_cbc_keys_by_version_and_refuses_ctr():
    engine = get_engine("mariadb")
    path = engine.key_path(parse_spec("tde:aes-128-cbc@tables"))
    assert path is not None and path.versions and path.needs[0] == KeyNeed(1, 128, path.needs[0].what)
    with pytest.raises(UsageError, match="AES-CBC only"):
        engine.key_path(parse_spec("tde:aes-256-ctr"))


class _Access:
    source = OPENBAO
    mount_url = "https://127.0.0.1:1/v1/tdebench-1"
    ca_file = Path("/nonexistent/ca.pem")

    def token(self) -> str:
        return "s.token-that-must-not-be-written"

    def fetch(self, key_id: int, version: int | None = None) -> SecretKey:
        raise AssertionError("not fetched while rendering")


def test_mariadb_takes_the_key_server_plugin_and_writes_no_token(tmp_path):
    engine = get_engine("mariadb")
    settings = {**engine.default_settings(), "hashicorp_key_management_cache_timeout": "0"}
    config = Config("mariadb", parse_spec("tde:aes-256-cbc"), settings, keys=OPENBAO)
    instance = engine.create_instance(config, tmp_path)
    instance.take_keys(_Access())
    instance.root = tmp_path
    cnf = instance._render_cnf()
    assert "plugin_load_add=hashicorp_key_management" in cnf and "file_key_management" not in cnf
    assert f"hashicorp_key_management_vault_url={_Access.mount_url}" in cnf and "cache_timeout=0" in cnf
    assert "token" not in cnf and instance.encrypted and instance._keys is None
    plain = engine.create_instance(Config("mariadb", PLAIN, settings), tmp_path / "plain")
    plain.root = tmp_path / "plain"
    assert "hashicorp" not in plain._render_cnf()  # the plugin's settings go to the twins that load it only
