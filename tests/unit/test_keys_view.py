"""The key server's note says what an openbao config is compared with: its file-key twin, or its plain twin."""

from types import SimpleNamespace

from tdebench.report.keys_view import lines

SERVER = {"kind": "private OpenBao started by the run", "start_s": {"unsealed": 1.5}}


def _summary(labels: list[str]) -> SimpleNamespace:
    return SimpleNamespace(manifest={"key_server": SERVER, "configs": [{"label": label} for label in labels]})


def test_with_a_file_key_twin_the_key_server_alone_is_compared():
    text = " ".join(lines(_summary(["mariadb-tde-aes-256-cbc+file", "mariadb-tde-aes-256-cbc+openbao"])))
    assert "compared with its file-key twin" in text and "plain twin" not in text


def test_without_one_the_plain_twin_is_named():
    text = " ".join(lines(_summary(["postgres-none", "postgres-fs-gocryptfs+openbao"])))
    assert "compared with its plain twin" in text and "file-key twin (+file)" not in text
