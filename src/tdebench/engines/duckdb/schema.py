"""Foreign keys left out of a workload's DDL on DuckDB.

DuckDB checks a delete of a parent row against its index, which still holds child rows deleted earlier in the
same transaction ("over-eager constraint checking"), so a transaction that deletes children and then their
parents fails, and it cannot add a foreign key to an existing table at all. Foreign keys play no part in DuckDB's
plans, so tdebench leaves them out: inline ``REFERENCES`` clauses, ``FOREIGN KEY`` table constraints, and ``ALTER
TABLE ... ADD ... FOREIGN KEY`` statements (the instance lists what it left out in its settings).
"""

from __future__ import annotations

import re

_ACTIONS = r"(?:\s+ON\s+(?:DELETE|UPDATE)\s+(?:CASCADE|RESTRICT|SET\s+NULL|SET\s+DEFAULT|NO\s+ACTION))*"
_REFERENCES = re.compile(r"\s+REFERENCES\s+[\w.\"]+\s*(?:\([^)]*\))?" + _ACTIONS, re.IGNORECASE)
_TABLE_FK = re.compile(r",\s*(?:CONSTRAINT\s+[\w\"]+\s+)?FOREIGN\s+KEY\s*\([^)]*\)\s*REFERENCES\s+[\w.\"]+\s*"
                       r"(?:\([^)]*\))?" + _ACTIONS, re.IGNORECASE)
_ADD_FOREIGN_KEY = re.compile(r"^\s*ALTER\s+TABLE\s+\S+\s+ADD\s+(CONSTRAINT\s+\S+\s+)?FOREIGN\s+KEY", re.IGNORECASE)


def without_foreign_keys(statements: list[str]) -> tuple[list[str], list[str]]:
    """(the statements with every foreign key removed, one short description per statement that lost one)."""
    kept, removed = [], []
    for statement in statements:
        if _ADD_FOREIGN_KEY.match(statement):
            removed.append(" ".join(statement.split()[:3]) + " ... FOREIGN KEY")
            continue
        stripped = _REFERENCES.sub("", _TABLE_FK.sub("", statement))
        if stripped != statement:
            removed.append(" ".join(statement.split()[:3]) + " ... REFERENCES")
        kept.append(stripped)
    return kept, removed
