"""The conformance kit every engine passes (as BenchBase does per benchmark).

An engine's test module subclasses :class:`EngineConformance` and provides the ``engine_name``,
``encrypted_specs`` and (optionally) ``unsupported_specs`` class attributes. Everything runs on
real databases: a private file or server per config, started and stopped by the test.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from tdebench.encryption import PLAIN, issued_secrets, parse_spec
from tdebench.engines import Config, get_engine
from tdebench.errors import UsageError
from tdebench.verify.atrest import verify_at_rest
from tdebench.workloads.tpch import answers, params
from tdebench.workloads.tpch.execute import run_query
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch.workload import TpchWorkload

SF = 0.01


# class-scoped fixtures run once per class, so they are classmethods reading the subclass's attributes
# (as instance methods pytest deprecates them); any such deprecation fails the kit
@pytest.mark.filterwarnings("error::pytest.PytestRemovedIn10Warning")
class EngineConformance:
    engine_name: str = ""
    encrypted_specs: tuple[str, ...] = ()
    unsupported_specs: tuple[str, ...] = ("tde:aes-512-cbc",)
    settings: dict[str, str] = {}

    @pytest.fixture(scope="class")
    @classmethod
    def engine(cls):
        engine = get_engine(cls.engine_name)
        engine.check_available()
        return engine

    @pytest.fixture(scope="class")
    @classmethod
    def loaded(cls, engine, tpch_sf001, tmp_path_factory):
        """Every config of the kit, loaded with TPC-H SF 0.01, started; destroyed afterwards."""
        data_dir, _ = tpch_sf001
        workdir = tmp_path_factory.mktemp(f"conf-{cls.engine_name}")
        instances = {}
        try:
            for text in ("none", *cls.encrypted_specs):
                config = Config(cls.engine_name, parse_spec(text), dict(cls.settings))
                inst = engine.create_instance(config, workdir, TpchWorkload.database)
                instances[text] = inst
                inst.start()
                load_tpch(inst, engine.dialect, data_dir)
            yield instances
        finally:
            for inst in instances.values():
                inst.destroy()

    def test_declares_plain_and_encrypted_specs(self, engine):
        specs = engine.supported_specs()
        assert PLAIN in specs
        assert engine.default_encrypted_spec() in specs
        for text in self.encrypted_specs:
            assert engine.supports(parse_spec(text))

    def test_rejects_unsupported_specs_listing_supported(self, engine):
        for text in self.unsupported_specs:
            try:
                spec = parse_spec(text)
            except UsageError:
                continue  # rejected by the grammar already
            with pytest.raises(UsageError) as err:
                engine.validate_spec(spec)
            assert str(engine.default_encrypted_spec()) in str(err.value)

    def test_version_is_reported(self, engine):
        assert engine.version().strip()

    def test_answers_match_reference(self, engine, loaded):
        ref = answers.reference_dir(SF)
        assert ref is not None
        for text, inst in loaded.items():
            conn = inst.connect()
            try:
                for number in params.QUERY_NUMBERS:
                    result = run_query(conn, number, params.render_query(number, engine.dialect.family, SF))
                    _, expected = answers.read_answer_csv(ref / f"q{number:02d}.csv")
                    actual = [answers.normalize_row(r) for r in result.rows]
                    assert answers.compare_answers(number, expected, actual) == [], f"{text} q{number}"
            finally:
                conn.close()

    def test_encryption_status_matches_config(self, loaded):
        for text, inst in loaded.items():
            status = inst.encryption_status()
            assert status["enabled"] is (text != "none"), (text, status)
            inst.check_encrypted(["lineitem", "orders"])

    def test_at_rest_scan_plain_hits_encrypted_none(self, loaded):
        for text, inst in loaded.items():
            verdict = verify_at_rest(inst, known_plaintext=TpchWorkload.known_plaintext)
            assert verdict["files_scanned"] > 0
            if text == "none":
                assert verdict["marker_hits"] > 0 and verdict["known_plaintext_hits"] > 0, verdict["files_with_hits"]
            else:
                assert verdict["marker_hits"] == 0, (text, verdict["files_with_hits"])
            assert verdict["passed"], (text, verdict["files_with_hits"])

    def test_no_key_or_password_in_data_files(self, loaded):
        secrets_ = [s.encode() for s in issued_secrets() if len(s) >= 16]
        for inst in loaded.values():
            # follow links: server engines may relocate an instance and leave a symlink in the workdir
            for root, _, files in os.walk(inst.workdir, followlinks=True):
                for name in files:
                    path = Path(root) / name
                    if path.is_file() and path.stat().st_size < 64 << 20:
                        data = path.read_bytes()
                        for secret in secrets_:
                            assert secret not in data, f"a secret appears in {path}"

    def test_stop_leaves_no_process(self, engine, tpch_sf001, tmp_path):
        inst = engine.create_instance(Config(self.engine_name, PLAIN, dict(self.settings)), tmp_path)
        inst.start()
        pids = [p for p in inst.server_pids() if p != psutil.Process().pid]
        inst.destroy()
        inst.destroy()  # idempotent
        for pid in pids:
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
