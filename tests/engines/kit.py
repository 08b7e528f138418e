"""The conformance kit every engine passes (as BenchBase does per benchmark), applied to every registered engine
by tests/engines/test_conformance.py.

Two parts:

* :class:`DeclarationKit` -- what can be checked without a DBMS: declared specs and refusals, the dialect's
  capabilities are consistent, ``check_available`` passes or says in one line what is missing and how to fix it,
  settings are validated. Every engine gets it, ``external`` and ``mysql`` included.
* :class:`EngineKit` -- a DBMS is needed: every config of the engine's :class:`Profile` is provisioned privately
  and loaded with TPC-H SF 0.01, answers match the reference, the status query and the at-rest scan agree with
  the spec, no key or password is in any file, stopping leaves no process. Skipped, with the reason, where the
  engine is not available here; servers tdebench does not manage (``external``) are checked against real servers
  by tests/engines/test_external.py instead.

An engine's own test module may subclass :func:`kit_for` to add checks that need the same loaded instances
(listed in :data:`OWN_CLASS`, so they are loaded once).
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from tdebench.api.cache import WarmCache
from tdebench.api.server import DatabaseFile, ServerAccess
from tdebench.api.threat_probes import ThreatProbes
from tdebench.api.dialect import FAMILIES
from tdebench.api.switcher import Switcher
from tdebench.encryption import PLAIN, issued_secrets, parse_spec
from tdebench.engines.toolkit.exposure import files_holding
from tdebench.engines import Config, get_engine
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.verify.atrest import verify_at_rest
from tdebench.workloads.tpch import answers, params
from tdebench.workloads.tpch.execute import run_query
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch.workload import TpchWorkload

SF = 0.01
# small server settings for tests: the defaults (1G pool, 512M redo) are for benchmarks
MARIADB_SMALL = {"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "32M", "innodb_log_buffer_size": "4M"}


@dataclass(frozen=True)
class Profile:
    """What the kit provisions for one engine: its encrypted specs (besides ``none``), settings, and specs it
    must refuse. An engine without a profile gets its default encrypted spec."""

    encrypted: tuple[str, ...] = ()
    settings: dict[str, str] = field(default_factory=dict)
    unsupported: tuple[str, ...] = ("tde:aes-512-cbc",)


PROFILES: dict[str, Profile] = {
    "sqlite": Profile(("sqlcipher:aes-256-cbc",), unsupported=("tde:aes-128-cbc", "column:aes-256",
                                                               "sqlcipher:aes-128-cbc")),
    "mariadb": Profile(("tde:aes-128-cbc", "tde:aes-192-ctr", "tde:aes-256-ctr", "fs:gocryptfs"), MARIADB_SMALL,
                       ("tde:aes-512-cbc", "column:aes-256", "sqlcipher:aes-256-cbc")),
    "postgres": Profile(("column:aes-256", "column:pgp-aes256", "fs:gocryptfs"),  # raw and OpenPGP pgcrypto
                        unsupported=("tde:aes-256-cbc", "sqlcipher:aes-256-cbc", "column:aes-256-ctr",
                                     "fs:gocryptfs@tables")),
    "mysql": Profile(("tde:aes-256-cbc",), unsupported=("tde:aes-128-ctr", "column:aes-256")),
    "duckdb": Profile(("tde:aes-256-gcm", "tde:aes-256-ctr"), {"memory_limit": "512MB"},
                      ("tde:aes-128-gcm", "tde:aes-256-cbc", "sqlcipher:aes-256-cbc", "column:aes-256")),
    "sqlite3mc": Profile(("sqlite3mc:chacha20", "sqlite3mc:aes-128-cbc", "sqlite3mc:aes-256-cbc", "sqlite3mc:sqlcipher",
                          "sqlite3mc:ascon128", "sqlite3mc:aegis", "sqlite3mc:aegis-128l"),
                         unsupported=("sqlcipher:aes-256-cbc", "tde:aes-256-cbc", "sqlite3mc:aes-192-cbc",
                                      "sqlite3mc:aes-256-ctr")),
    # two nodes keep the kit short; a small gcache is read whole by the secret check (files < 64 MiB)
    "galera": Profile(("tde:aes-256-ctr",), {**MARIADB_SMALL, "nodes": "2", "gcache_size": "16M"},
                      ("tde:aes-512-cbc", "column:aes-256", "sqlcipher:aes-256-cbc")),
}
# engines whose test module holds their kit class (with checks of their own on the same instances)
OWN_CLASS = {"mariadb": "tests/engines/test_mariadb.py", "postgres": "tests/engines/test_postgres.py",
             "galera": "tests/engines/test_galera.py"}


def profile(name: str) -> Profile:
    found = PROFILES.get(name)
    if found is not None:
        return found
    return Profile((str(get_engine(name).default_encrypted_spec()),))


# class-scoped fixtures run once per class, so they are classmethods reading the class's attributes (as
# instance methods pytest deprecates them); any such deprecation fails the kit
@pytest.mark.filterwarnings("error::pytest.PytestRemovedIn10Warning")
class DeclarationKit:
    """Checks that need no DBMS."""

    engine_name: str = ""

    @property
    def kit(self) -> Profile:
        return profile(self.engine_name)

    @pytest.fixture(scope="class")
    @classmethod
    def declared(cls):
        return get_engine(cls.engine_name)

    def test_name_and_description(self, declared):
        assert declared.name == self.engine_name and declared.description.strip()

    def test_declares_plain_and_encrypted_specs(self, declared):
        specs = declared.supported_specs()
        assert PLAIN in specs and declared.default_encrypted_spec() in specs
        assert not declared.default_encrypted_spec().is_plain
        for text in self.kit.encrypted:
            assert declared.supports(parse_spec(text)), text

    def test_rejects_unsupported_specs_listing_supported(self, declared):
        for text in self.kit.unsupported:
            try:
                spec = parse_spec(text)
            except UsageError:
                continue  # rejected by the grammar already
            with pytest.raises(UsageError) as err:
                declared.validate_spec(spec)
            assert str(declared.default_encrypted_spec()) in str(err.value) and "\n" not in err.value.one_line()

    def test_dialect_capabilities_are_consistent(self, declared):
        d = declared.dialect
        assert d.family in FAMILIES and d.product and d.protocol
        assert d.paramstyle in ("qmark", "format")
        assert d.storage_catalog in ("dbstat", "information_schema", "pg_class", "none")
        if d.translated:  # rewritten for another server: takes the canonical (postgres family) SQL
            assert d.family == "postgres"
        if d.autocommit:
            assert d.begin_sql.strip().upper().startswith("BEGIN")
        if d.procedure_language is not None:
            assert d.family != "sqlite"
        if d.lock_timeout_sql is not None:
            assert d.lock_timeout(2.5) and "{" not in d.lock_timeout(2.5)
        assert d.bulk_load.strip()

    def test_switchers_are_complete(self, declared):
        """Every switcher class the engine names is a complete :class:`~tdebench.api.switcher.Switcher` (one left
        abstract could not be made, while :meth:`Engine.switch_method` would describe it), and no plain spec is
        switched."""
        for cls in declared.switcher_types:
            assert issubclass(cls, Switcher) and not inspect.isabstract(cls), cls
            assert cls.method.strip(), cls
        assert declared.switch_method(PLAIN) is None and declared.switcher_type(PLAIN) is None

    def test_available_or_says_why_in_one_line(self, declared):
        try:
            declared.check_available()
        except EnvironmentProblem as exc:
            assert "\n" not in exc.one_line() and exc.fix, exc.one_line()

    def test_settings_are_validated(self, declared):
        defaults = declared.default_settings()
        declared.validate_settings({**defaults, **self.kit.settings})
        try:
            declared.validate_settings({"no_such_setting_at_all": "1"})
        except UsageError as exc:  # an engine that checks its settings names the bad one
            assert "no_such_setting_at_all" in exc.one_line()


class EngineKit(DeclarationKit):
    """Checks on real instances of every config of the engine's profile (TPC-H SF 0.01 loaded)."""

    @pytest.fixture(scope="class")
    @classmethod
    def engine(cls):
        engine = get_engine(cls.engine_name)
        if engine.remote:
            pytest.skip(f"{cls.engine_name}: servers tdebench does not manage (tests/engines/test_external.py)")
        try:
            engine.check_available()
        except EnvironmentProblem as exc:
            pytest.skip(f"{cls.engine_name} is not available here: {exc.one_line()}")
        return engine

    def test_capability_objects_are_of_the_declared_classes(self, engine, tmp_path):
        """An unstarted instance returns what its engine's declarations promise: a cluster of
        :attr:`Engine.cluster_type` (from which ``--fault`` and ``--nodes`` follow) and a cache of
        :attr:`Engine.cache_type` (from which ``--memory-ratio``, ``--page-source`` and ``--restart-twins`` follow),
        None where the engine names none; threat probes of its own; and for each backup tool its dialect names the
        object that tool's kinds use (a server's tools: a ServerAccess; SQLite's: the database file)."""
        spec = engine.default_encrypted_spec()
        instance = engine.create_instance(Config(self.engine_name, spec, engine.default_settings()), tmp_path)
        cluster, cache = instance.cluster(), instance.cache()
        if engine.cluster_type is None:
            assert cluster is None and engine.faults == () and engine.cluster_nodes == 0
        else:
            assert type(cluster) is engine.cluster_type and engine.faults and engine.cluster_nodes >= 2
        if engine.cache_type is None:
            assert cache is None and not engine.cache_setting and not engine.warm_restart
        else:
            assert type(cache) is engine.cache_type and engine.cache_setting and engine.page_sources
            assert engine.warm_restart is isinstance(cache, WarmCache)
        probes = instance.threats()
        assert probes is None or (isinstance(probes, ThreatProbes) and probes.instance is instance)
        tools = engine.dialect.backup_tools
        server, file = instance.server_access(), instance.database_file()
        if any(not t.startswith("sqlite-") for t in tools):
            assert isinstance(server, ServerAccess) and server.instance is instance, tools
        if any(t.startswith("sqlite-") for t in tools):
            assert isinstance(file, DatabaseFile) and file.path.name, tools

    def test_switchers_are_of_the_declared_classes(self, engine, tmp_path):
        """Per kind of spec (its mechanism and the switcher class named for it), an unstarted instance returns a
        switcher of the class :meth:`Engine.switcher_type` names (from which :meth:`Engine.switch_method` and the
        ``encrypt`` workload's checks follow), the same object at every call; None where it names none. A switch of
        the whole server comes with a ServerAccess (the second database it covers is reached through it)."""
        kinds: set[tuple[str, object]] = set()
        for spec in engine.supported_specs():
            expected = engine.switcher_type(spec)
            if (spec.mechanism, expected) in kinds:
                continue
            kinds.add((spec.mechanism, expected))
            settings = {**engine.default_settings(), **engine.plan_settings([spec])}
            try:
                engine.check_spec_available(spec)
                instance = engine.create_instance(Config(self.engine_name, spec, settings), tmp_path / str(len(kinds)))
            except EnvironmentProblem as exc:  # the spec's tools are not here
                print(f"kit: {self.engine_name} {spec} left out: {exc.one_line()}")
                continue
            switcher = instance.switcher()
            if expected is None:
                assert switcher is None and engine.switch_method(spec) is None, spec
            else:
                assert type(switcher) is expected and instance.switcher() is switcher, spec
                assert engine.switch_method(spec) == expected.describe() and not spec.is_plain, spec
                if expected.whole_server:  # the encrypt workload's second database: ServerAccess.connect_to
                    assert isinstance(instance.server_access(), ServerAccess), spec
        assert any(expected is not None for _, expected in kinds) == bool(engine.switcher_types)

    @pytest.fixture(scope="class")
    @classmethod
    def loaded(cls, engine, tpch_sf001, tmp_path_factory):
        """Every config of the kit, loaded with TPC-H SF 0.01, started; destroyed afterwards."""
        data_dir, _ = tpch_sf001
        kit = profile(cls.engine_name)
        instances = {}
        cls.issued_before = issued_secrets()  # the secrets scans look for: those issued from here on
        try:
            for text in ("none", *kit.encrypted):
                try:
                    engine.check_spec_available(parse_spec(text))
                except EnvironmentProblem as exc:
                    print(f"kit: {cls.engine_name} {text} left out: {exc.one_line()}")
                    continue
                workdir = tmp_path_factory.mktemp(f"kit-{cls.engine_name}")  # one per instance: scanned alone
                config = Config(cls.engine_name, parse_spec(text), dict(kit.settings))
                inst = engine.create_instance(config, workdir, TpchWorkload.database)
                instances[text] = inst
                inst.start()
                load_tpch(inst, engine.dialect, data_dir)
            yield instances
        finally:
            for inst in instances.values():
                inst.destroy()

    issued_before: frozenset[str] = frozenset()

    def instance_secrets(self) -> list[bytes]:
        """The secrets (16 characters or more) issued since the loaded instances were made: theirs, and whatever
        the class's tests issued for them; each file is searched for these (read once, its written extents)."""
        return [s.encode() for s in issued_secrets() - self.issued_before if len(s) >= 16]

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
        """No issued secret in any file an instance wrote: its work directory, followed through symlinks (a
        server may live elsewhere behind one), mounts left out (a decrypted view, not what is on disk)."""
        secrets_ = self.instance_secrets()
        for text, inst in loaded.items():
            found = files_holding(_files_on_disk(Path(inst.workdir)), secrets_)
            assert not found, f"{text}: a secret appears in {found[:5]}"

    def test_restart_keeping_cache_keeps_the_cached_pages(self, engine, loaded):
        """Engines whose cache is a ``WarmCache`` (``warm_restart``): new server processes whose cache serves a
        warm query (at most 5%
        of the cached pages are read again: MariaDB's load leaves a few system-tablespace pages out; without the
        load, this query reads a third of them), with the same answers and encryption."""
        query = params.render_query(1, engine.dialect.family, SF)  # scans lineitem, the largest table
        for text, inst in loaded.items():
            cache = inst.cache()
            if not isinstance(cache, WarmCache):
                assert not engine.warm_restart
                continue
            conn = inst.connect()
            try:
                before = run_query(conn, 1, query).rows
                run_query(conn, 1, query)  # warm: every page it needs is cached
            finally:
                conn.close()
            old = set(inst.server_pids())
            facts = cache.restart_keeping(inst.restart)
            assert old and not old & set(inst.server_pids()), (text, "the server processes must be new ones")
            assert facts["pages_cached"] > 0 and facts["pages_loaded"] > 0, (text, facts)
            misses = inst.counters().get("cache_misses")
            conn = inst.connect()
            try:
                assert run_query(conn, 1, query).rows == before
            finally:
                conn.close()
            if misses is not None:
                again = inst.counters()["cache_misses"] - misses
                assert again <= 0.05 * facts["pages_cached"], (text, f"{again} pages read again", facts)
            assert inst.encryption_status()["enabled"] is (text != "none")

    def test_stop_leaves_no_process(self, engine, tmp_path):
        inst = engine.create_instance(Config(self.engine_name, PLAIN, dict(profile(self.engine_name).settings)),
                                      tmp_path)
        inst.start()
        pids = [p for p in inst.server_pids() if p != psutil.Process().pid]
        inst.destroy()
        inst.destroy()  # idempotent
        for pid in pids:
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def _files_on_disk(root: Path) -> list[Path]:
    """Regular files below ``root`` (symlinked directories followed once, mount points skipped)."""
    out, seen = [], set()
    for base, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(base)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = [d for d in dirs if not os.path.ismount(os.path.join(base, d))]
        out += [Path(base) / f for f in files if os.path.isfile(os.path.join(base, f))
                and not os.path.islink(os.path.join(base, f))]
    return out


def kit_for(name: str) -> type[EngineKit]:
    """The kit class for engine ``name`` (subclass it to add checks on the same loaded instances)."""
    return type(f"Kit_{name}", (EngineKit,), {"engine_name": name})
