"""Bulk-load statements of the server families (data files as :mod:`tdebench.api.tables` writes them: ``|`` between
fields and after the last, backslash escapes), shared by the engines that load into them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

_COPY_CHUNK = 1 << 20


def load_data_sql(table: str, columns: list[str]) -> str:
    """The LOAD DATA statement for one data file (``%s`` = file name): ``|`` between fields and after the last,
    backslash escapes (LOAD DATA's default ``ESCAPED BY '\\\\'``: ``\\N`` is NULL)."""
    return (f"LOAD DATA LOCAL INFILE %s INTO TABLE `{table}` CHARACTER SET utf8mb4 "
            f"FIELDS TERMINATED BY '|' LINES TERMINATED BY '\\n' ({', '.join(columns)}, @trailing)")


def copy_file(conn: Any, target: str, columns: list[str], path: Path) -> int:
    """COPY a data file (``|`` between fields and after the last, backslash escapes: the layout of
    :mod:`tdebench.api.tables`, which is COPY's text format but for the trailing ``|``) into ``target``."""
    rows = 0
    with conn.cursor() as cur:
        sql = f"COPY {target} ({', '.join(columns)}) FROM STDIN (FORMAT text, DELIMITER '|')"
        with cur.copy(sql) as copy, open(path, "rb") as handle:
            rest = b""
            while True:
                block = handle.read(_COPY_CHUNK)
                data = rest + block
                cut = data.rfind(b"\n") + 1 if block else len(data)
                chunk, rest = data[:cut], data[cut:]
                if chunk:
                    if not chunk.endswith(b"\n"):
                        chunk += b"\n"
                    rows += chunk.count(b"\n")
                    copy.write(chunk.replace(b"|\n", b"\n"))
                if not block:
                    break
    return rows


__all__ = ["copy_file", "load_data_sql"]
