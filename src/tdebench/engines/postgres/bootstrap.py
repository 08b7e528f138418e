"""A new cluster from a template of what ``initdb`` writes, with the instance's own password set afterwards.

``initdb`` writes the same files for every cluster of the same binaries (C locale, UTF8, SCRAM authentication: its
flags are fixed), except the superuser's password. A cluster whose data directory tdebench can write directly (not
in a gocryptfs mount, which only the server's user enters) copies a template
(:mod:`tdebench.engines.toolkit.templates`); on a miss ``initdb`` writes one with a throwaway password nobody keeps.
The instance's password then replaces it: its SCRAM-SHA-256 verifier, computed here, is set by
``postgres --single`` reading the statement from a pipe, before the server first starts. The password itself never
leaves this process; the verifier is on no command line, in no file but ``pg_authid``, and in no log.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import pwd
import secrets
from pathlib import Path

from tdebench.engines.toolkit.templates import Template, binary_identity

ITERATIONS = 4096  # PostgreSQL's scram_iterations default
# single-user mode reads postgresql.conf: whatever the user's logging settings, the statement is not logged
QUIET = ("-c", "log_statement=none", "-c", "log_min_duration_statement=-1", "-c", "log_min_error_statement=panic",
         "-c", "log_min_messages=warning")


def scram_verifier(password: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """The SCRAM-SHA-256 verifier PostgreSQL stores for ``password`` (RFC 5802/7677; the passwords tdebench
    generates are ASCII, which SASLprep leaves as they are)."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = base64.b64encode
    return (f"SCRAM-SHA-256${iterations}:{b64(salt).decode()}"
            f"${b64(stored_key).decode()}:{b64(server_key).decode()}")


def template(bindir: Path, role: str, initdb_flags: tuple[str, ...], user: pwd.struct_passwd | None) -> Template:
    """The template of ``initdb`` with these flags, by these binaries, for this OS user."""
    return Template("postgres", {
        "postgres": binary_identity(bindir / "postgres"), "initdb": binary_identity(bindir / "initdb"),
        "role": role, "flags": initdb_flags, "user": user.pw_name if user is not None else getpass.getuser()})


def password_statement(role: str, password: str) -> str:
    """``ALTER ROLE`` with the verifier of ``password`` (never the password itself)."""
    return f"ALTER ROLE {role} PASSWORD '{scram_verifier(password)}';\n"


def single_user_argv(postgres: Path, pgdata: Path) -> list[str]:
    return [str(postgres), "--single", "-D", str(pgdata), *QUIET, "postgres"]
