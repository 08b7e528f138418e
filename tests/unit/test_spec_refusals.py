"""pgcrypto Blowfish and CAST5 are refused with the real reason, wherever they are asked for."""

from __future__ import annotations

import pytest

from tdebench.encryption import LEGACY_PGCRYPTO_REASON, parse_spec
from tdebench.errors import UsageError


@pytest.mark.parametrize("text", ["column:bf", "column:cast5", "column:pgp-bf", "column:pgp-cast5", "tde:bf"])
def test_blowfish_and_cast5_are_refused_with_the_reason(text: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_spec(text)
    line = err.value.one_line()
    assert "unknown cipher" not in line
    assert "plaintext" in line and "15.19" in line and "legacy provider" in line and "CVE-2026-14663" in line
    assert "fix: use AES (column:aes-256, column:pgp-aes256)" in line


def test_the_runtime_guard_gives_the_same_reason() -> None:
    """A server without OpenSSL's legacy provider: the cipher check refuses Blowfish with the same words."""
    from tdebench.engines.postgres.column import PgCipher, cipher_safety_check
    from tdebench.errors import EnvironmentProblem

    class NoLegacyProvider:
        def transaction(self):
            raise RuntimeError("Cipher cannot be initialized")  # what pgcrypto says for 'bf' without it

    with pytest.raises(EnvironmentProblem) as err:
        cipher_safety_check(NoLegacyProvider(), PgCipher("pgp", "bf", 16))
    assert LEGACY_PGCRYPTO_REASON in err.value.one_line() and "OpenSSL 3" in LEGACY_PGCRYPTO_REASON
