"""Statements that carry credentials -- a password (CREATE/ALTER USER, SET PASSWORD, GRANT ... IDENTIFIED BY,
CREATE/ALTER ROLE ... PASSWORD, replication and foreign-server settings) or a key passed to a function
(pgcrypto's ``pgp_sym_encrypt(data, 'key')``, ``encrypt()``, MariaDB's ``AES_ENCRYPT(data, 'key')``, ...).

Whoever reads statements from a server's log or statistics (``tdebench capture``, the replay workload) asks
:func:`credential_kind` first, before any parser sees the text, and drops the statement: it is never parsed,
printed, logged or written, only counted by its kind (a fixed label, never a part of the statement).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar

# (kind, pattern on the statement without its leading comments); the first that matches names the kind
_STATEMENTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern, re.I | re.S)) for kind, pattern in (
    ("CREATE USER", r"^CREATE\s+(?:OR\s+REPLACE\s+)?USER\b"),
    ("ALTER USER", r"^ALTER\s+USER\b"),
    ("SET PASSWORD", r"^SET\s+PASSWORD\b"),
    ("GRANT ... IDENTIFIED BY", r"^GRANT\b.*\bIDENTIFIED\b"),
    ("CREATE ROLE", r"^CREATE\s+(?:OR\s+REPLACE\s+)?ROLE\b"),
    ("ALTER ROLE", r"^ALTER\s+ROLE\b"),
    ("CREATE/ALTER SERVER", r"^(?:CREATE|ALTER)\s+SERVER\b"),
    ("CHANGE MASTER", r"^CHANGE\s+(?:MASTER|REPLICATION\s+SOURCE)\b"),
    ("IDENTIFIED BY", r"\bIDENTIFIED\s+(?:BY|WITH|VIA|USING)\b"),
    ("a password", r"\b(?:password|passwd|pwd)\b"),
))
# functions whose arguments hold a key or a password
_KEYED = ("pgp_sym_encrypt", "pgp_sym_decrypt", "pgp_sym_encrypt_bytea", "pgp_sym_decrypt_bytea",
          "pgp_pub_encrypt", "pgp_pub_decrypt", "pgp_pub_encrypt_bytea", "pgp_pub_decrypt_bytea", "encrypt",
          "decrypt", "encrypt_iv", "decrypt_iv", "hmac", "crypt", "aes_encrypt", "aes_decrypt", "des_encrypt",
          "des_decrypt", "old_password", "dblink_connect", "dblink_connect_u", "dblink")
_CALL = re.compile(r"\b(" + "|".join(sorted(_KEYED, key=len, reverse=True)) + r"|encode|decode)\s*\(", re.I)
_CODECS = ("hex", "base64", "escape", "base32", "base64url")  # PostgreSQL's encode()/decode(): no key
_LEADING = re.compile(r"^(?:\s+|/\*.*?\*/|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$))+", re.S)


def _second_argument(text: str, start: int) -> str | None:
    """The second top-level argument of the call whose '(' is at ``start`` (None if it has one argument)."""
    depth, quote, arg, args = 0, "", [], []
    for ch in text[start + 1:]:
        if quote:
            arg.append(ch)
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
            arg.append(ch)
        elif ch == "(":
            depth += 1
            arg.append(ch)
        elif ch == ")" and depth:
            depth -= 1
            arg.append(ch)
        elif ch == ")" or (ch == "," and not depth):
            args.append("".join(arg).strip())
            arg = []
            if ch == ")" or len(args) == 2:
                break
        else:
            arg.append(ch)
    return args[1] if len(args) > 1 else None


def credential_kind(text: str) -> str | None:
    """The kind of credential ``text`` carries (a fixed label such as ``CREATE USER`` or ``pgp_sym_encrypt()``),
    or None for a statement that carries none."""
    body = _LEADING.sub("", text, count=1)
    for kind, pattern in _STATEMENTS:
        if pattern.search(body):
            return kind
    for call in _CALL.finditer(body):
        name = call.group(1).lower()
        if name in ("encode", "decode"):  # MariaDB's ENCODE(str, password); PostgreSQL's encode(data, 'hex')
            second = _second_argument(body, call.end() - 1)
            if second is None or second.strip("'\"").lower() in _CODECS:
                continue
        return f"{name}()"
    return None


class HasText(Protocol):
    text: str


T = TypeVar("T", bound=HasText)


def without_credentials(statements: Iterable[T], skipped: Counter[str]) -> Iterator[T]:
    """``statements`` without those that carry credentials, each counted in ``skipped`` by its kind."""
    for statement in statements:
        kind = credential_kind(statement.text)
        if kind is None:
            yield statement
        else:
            skipped[kind] += 1
