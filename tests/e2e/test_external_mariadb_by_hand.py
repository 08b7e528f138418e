"""External targets against MariaDB servers a DBA started by hand (not tdebench's mariadb engine).

The worked example of docs/engines/external.md, run as written: two servers from ``mariadb-install-db`` and
``mariadbd`` (127.0.0.1 and a Unix socket, generated passwords), the accounts from the docs, encryption turned on
by the steps ``tdebench tde-setup --engine mariadb --encryption tde:aes-256-ctr`` prints, then one run that
measures the encrypted server as ``mariadb://...#tde:aes-256-ctr`` beside the plain one and, in the same run, a
plain database declared encrypted and kept by ``--override-encryption-check``. Both servers are stopped and their
directory removed at the end, on failure too.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.mariadb_by_hand import HandServer, binaries, destroy, new_root, password

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "engines" / "external.md"
SPEC = "tde:aes-256-ctr"

pytestmark = [pytest.mark.server,
              pytest.mark.skipif(binaries() is None, reason="mariadb-install-db / mariadbd not installed")]


def tdebench(*args: str, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=full,
                          timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)


def doc_block(name: str) -> str:
    """The fenced block after ``<!-- e2e:NAME -->`` in docs/engines/external.md."""
    match = re.search(rf"<!-- e2e:{name} -->\s*```\w*\n(.*?)```", DOC.read_text(), re.S)
    assert match, f"docs/engines/external.md has no e2e:{name} block"
    return match.group(1)


def statements(sql: str) -> list[str]:
    return [s.strip() for s in re.sub(r"--[^\n]*", "", sql).split(";") if s.strip()]


def steps(script: str) -> dict[int, list[str]]:
    """``tde-setup`` output by step number: the lines that are not comments."""
    out: dict[int, list[str]] = {}
    current = 0
    for line in script.splitlines():
        header = re.match(r"# Step (\d+):", line)
        if header:
            current = int(header.group(1))
            out[current] = []
        elif current and line.strip() and not line.lstrip().startswith("#"):
            out[current].append(line)
    return out


def as_printed(server: HandServer, pw: str) -> None:
    """Turn encryption on with the steps tde-setup prints (its key directory and owner swapped for ours)."""
    printed = tdebench("tde-setup", "--engine", "mariadb", "--encryption", SPEC)
    assert printed.returncode == 0, printed.stderr
    step = steps(printed.stdout)
    keys, owner = server.dir / "keys", (server.user.pw_name if server.user else os.environ.get("USER", "root"))

    def ours(line: str) -> str:
        return (line.replace("/etc/mysql/encryption", str(keys)).replace("-o mysql -g mysql", f"-o {owner} -g {owner}")
                .replace("chown mysql:mysql", f"chown {owner}:{owner}"))

    shell = subprocess.run(["bash", "-e", "-c", "\n".join(ours(line) for line in step[1])], capture_output=True,
                           text=True, timeout=60)
    assert shell.returncode == 0, shell.stderr
    assert not (keys / "keyfile").exists() and (keys / "keyfile.enc").read_bytes().startswith(b"Salted__")
    assert step[2][0] == "[mariadb]"  # the group the script names
    server.extra_cnf = [ours(line) for line in step[2]]
    assert step[3][0] == "systemctl restart mariadb"
    server.restart()
    check = re.search(r'-e "(.*)"', step[3][1])
    assert check and server.sql(check.group(1)) == [("file_key_management", "ACTIVE")]
    grant = step[5][0].replace("<TDEBENCH_USER>", "bench").replace("<CLIENT_HOST>", "127.0.0.1")
    server.sql(grant.rstrip(";"))


@pytest.fixture(scope="module")
def servers():
    """{"plain": (server, password), "tde": (server, password)}: two hand-started MariaDB servers."""
    root = new_root()
    plain, tde = HandServer(root, "plain"), HandServer(root, "tde")
    try:
        pws = {}
        for name, server in (("plain", plain), ("tde", tde)):
            server.install()
            server.start()
            pws[name] = password()
            # the password goes in after the comments are stripped: token_urlsafe can hold "--"
            server.sql(*(s.replace("<PASSWORD>", pws[name]) for s in statements(doc_block("accounts"))))
        as_printed(tde, pws["tde"])
        yield {"plain": (plain, pws["plain"]), "tde": (tde, pws["tde"])}
    finally:
        destroy([plain, tde], root)


def test_worked_example_two_servers_and_an_overridden_label(servers, tpch_sf001, tmp_path):
    started = time.monotonic()
    (plain, plain_pw), (tde, tde_pw) = servers["plain"], servers["tde"]
    out = tmp_path / "run"
    env = {"TDEBENCH_PASSWORD_PLAIN": plain_pw, "TDEBENCH_PASSWORD_ENC": tde_pw, "TDEBENCH_PASSWORD_FAKE": plain_pw}
    result = tdebench(
        "run", "--target", f"plain=mariadb://bench@127.0.0.1:{plain.port}/tpch",
        "--target", f"enc=mariadb://bench@127.0.0.1:{tde.port}/tpch#{SPEC}",
        "--target", f"fake=mariadb://bench@127.0.0.1:{plain.port}/tpch2#{SPEC}", "--override-encryption-check", "fake",
        "--sf", "0.01", "--trials", "1", "--warmup", "0", "--data-dir", str(Path(tpch_sf001[0]).parent),
        "--out", str(out), env=env)
    console = result.stdout + result.stderr
    assert result.returncode == 0, console[-4000:]  # an override is no failure; it is marked everywhere

    # console: said while running and at the end, and the summary marks the labels
    assert "OVERRIDDEN, NOT CONFIRMED" in result.stderr and "overridden, not confirmed" in result.stdout
    assert "unverifiable: key length" in result.stdout
    assert "verifying encryption at rest for" not in console and "checking the encryption status" in console
    assert "n/a: files not visible" in result.stdout and "TO_REGCLASS" not in console

    report = out / "report"
    assert "overridden, not confirmed" in (report / "summary.md").read_text()
    assert "overridden, not confirmed" in (report / "index.html").read_text()
    with open(report / "overhead.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    status = {r["config"]: (r["label_status"], r["plain_label_status"]) for r in rows}
    assert status == {"enc": ("unverifiable", "confirmed"), "fake": ("overridden", "confirmed")}
    with open(report / "summary.csv", newline="") as handle:
        assert {r["config"]: r["label_status"] for r in csv.DictReader(handle)} == {
            "plain": "confirmed", "enc": "unverifiable", "fake": "overridden"}

    manifest = json.loads((out / "manifest.json").read_text())
    configs = {c["label"]: c for c in manifest["configs"]}
    assert configs["enc"]["settings"]["product"].startswith("MariaDB 10.")
    assert configs["enc"]["storage"]["scope"] == "catalog" and configs["enc"]["storage"]["tables"]["lineitem"][
        "table_bytes"] > 0
    verification = json.loads((out / "verification.json").read_text())["configs"]
    assert verification["enc"]["status"]["mode"] == "ctr" and verification["enc"]["label_status"] == "unverifiable"
    assert verification["fake"]["label_status"] == "overridden" and verification["plain"]["label_status"] == "confirmed"
    for path in out.rglob("*"):  # no password in any file of the run directory
        if path.is_file():
            data = path.read_bytes()
            assert plain_pw.encode() not in data and tde_pw.encode() not in data, path
    assert time.monotonic() - started < 90


def test_missing_process_privilege_is_refused_before_any_load(servers, tmp_path):
    plain, _ = servers["plain"]
    pw = password()
    plain.sql("CREATE DATABASE tpch3", f"CREATE USER 'nopriv'@'127.0.0.1' IDENTIFIED BY '{pw}'",
              "GRANT ALL ON tpch3.* TO 'nopriv'@'127.0.0.1'")
    result = tdebench("run", "--target", f"np=mariadb://nopriv@127.0.0.1:{plain.port}/tpch3", "--sf", "0.01",
                      "--trials", "1", "--out", str(tmp_path / "run"), env={"TDEBENCH_PASSWORD_NP": pw})
    assert result.returncode == 3, result.stderr
    line = result.stderr.strip()
    assert "GRANT PROCESS ON *.* TO 'nopriv'@'127.0.0.1'" in line and line.count("fix:") == 1, line
    assert "information_schema.INNODB_SYS_TABLESPACES" in line and "..." not in line  # named, not cut off
    assert not (tmp_path / "run").exists()
    assert plain.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE table_schema = 'tpch3'") == [(0,)]


def test_mysql_url_on_mariadb_names_the_right_scheme(servers, tmp_path):
    tde, pw = servers["tde"]
    result = tdebench("run", "--target", f"enc=mysql://bench@127.0.0.1:{tde.port}/tpch", "--out",
                      str(tmp_path / "run"), env={"TDEBENCH_PASSWORD_ENC": pw})
    assert result.returncode == 2, result.stderr
    assert "this server is MariaDB 10." in result.stderr
    assert f"use mariadb://: --target 'enc=mariadb://bench@127.0.0.1:{tde.port}/tpch'" in result.stderr


def test_a_pbkdf2_key_file_stops_mariadb_10_11(tmp_path):
    """What tde-setup warns about: the key file written with OpenSSL 3's -pbkdf2 advice is unreadable."""
    root = new_root()
    server = HandServer(root, "pbkdf2")
    try:
        server.install()
        keys = server.dir / "keys"
        keys.mkdir()
        owner = server.user.pw_name if server.user else "root"
        script = (f"cd {keys}; ( umask 077; echo \"1;$(openssl rand -hex 32)\" > keyfile; "
                  "openssl rand -hex 128 > keyfile.key ); openssl enc -aes-256-cbc -md sha1 -pbkdf2 "
                  f"-pass file:keyfile.key -in keyfile -out keyfile.enc; chown {owner} keyfile.enc keyfile.key")
        subprocess.run(["bash", "-e", "-c", script], check=True, capture_output=True, timeout=60)
        server.extra_cnf = ["plugin_load_add = file_key_management",
                            f"file_key_management_filename = {keys}/keyfile.enc",
                            f"file_key_management_filekey = FILE:{keys}/keyfile.key", "innodb_encrypt_tables = ON"]
        with pytest.raises(RuntimeError, match="exited"):
            server.start(timeout=60)
        assert "Cannot decrypt" in server.log.read_text()
    finally:
        destroy([server], root)
