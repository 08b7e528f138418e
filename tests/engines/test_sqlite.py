"""SQLite/SQLCipher through the engine conformance kit, plus SQLite-specific checks."""

from __future__ import annotations

from tests.engines.conformance import EngineConformance


class TestSqliteConformance(EngineConformance):
    engine_name = "sqlite"
    encrypted_specs = ("sqlcipher:aes-256-cbc",)
    unsupported_specs = ("tde:aes-128-cbc", "column:aes-256", "sqlcipher:aes-128-cbc")
