"""DuckDB's httpfs extension from the ``duckdb-ext-httpfs`` PyPI package, loaded without any download.

DuckDB encrypts with OpenSSL only once httpfs is loaded; without it DuckDB has a read-only crypto module and
refuses to write an encrypted database (its ``force_mbedtls_unsafe`` fallback is never used here). DuckDB would
download httpfs at run time; the PyPI package ships it as ``duckdb_ext/extensions/v<version>/<platform>/``, which
is the layout of an extension directory, so ``extension_directory`` points there and ``LOAD httpfs`` reads it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb

from tdebench.errors import EnvironmentProblem

DUCKDB_VERSION = "1.4.4"
HTTPFS_PACKAGE = "duckdb-ext-httpfs==1.4.4.20260205"
INSTALL_FIX = f"pip install duckdb=={DUCKDB_VERSION} {HTTPFS_PACKAGE}"
#: DuckDB's words when it has no OpenSSL to write an encrypted database with
READ_ONLY_CRYPTO = "read-only crypto module"


def extension_root() -> Path | None:
    """The ``duckdb_ext/extensions`` directory of the installed ``duckdb-ext-*`` packages, or None."""
    spec = importlib.util.find_spec("duckdb_ext")
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = Path(location) / "extensions"
        if root.is_dir():
            return root
    return None


def platform() -> str:
    """DuckDB's platform name, e.g. ``linux_amd64`` (the extension directory's second level)."""
    conn = duckdb.connect(":memory:")
    try:
        return str(conn.execute("PRAGMA platform").fetchone()[0])
    finally:
        conn.close()


def httpfs_file() -> Path | None:
    """The httpfs extension built for the running DuckDB, or None when the package is missing."""
    root = extension_root()
    if root is None:
        return None
    found = root / f"v{duckdb.__version__}" / platform() / "httpfs.duckdb_extension"
    return found if found.is_file() else None


def missing_httpfs(detail: str) -> EnvironmentProblem:
    """The one-line problem for an encrypted DuckDB database without OpenSSL."""
    return EnvironmentProblem(f"DuckDB cannot write an encrypted database here: {detail} (DuckDB takes OpenSSL from "
                              "its httpfs extension and tdebench never falls back to its unsafe Mbed TLS mode)",
                              INSTALL_FIX)


def check_httpfs() -> Path:
    """The httpfs file, or EnvironmentProblem naming the pip command."""
    found = httpfs_file()
    if found is None:
        raise missing_httpfs(f"the httpfs extension for DuckDB {duckdb.__version__} is not installed")
    return found


def load_httpfs(conn: "duckdb.DuckDBPyConnection") -> None:
    """Load httpfs from the package's directory (never downloaded); EnvironmentProblem when it cannot be."""
    found = check_httpfs()
    conn.execute("SET extension_directory = ?", [str(found.parents[2])])
    try:
        conn.execute("LOAD httpfs")
    except duckdb.Error as exc:
        raise missing_httpfs(f"httpfs does not load ({str(exc).splitlines()[0]})") from None
