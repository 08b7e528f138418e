"""The node types of a parsed statement (sqlglot's expressions), for code elsewhere that reads or edits a tree
this package parsed: capture's redaction and undo statements, the sql workload's schema, replay's undo. Parsing,
dialect names and writing SQL for a dialect stay in this package."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

#: the version of sqlglot that parses and writes tdebench's SQL (named in generated scripts)
SQLGLOT_VERSION: str = sqlglot.__version__

__all__ = ["SQLGLOT_VERSION", "exp"]
