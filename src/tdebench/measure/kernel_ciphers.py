"""The kernel's own AES-256-XTS (what fscrypt and dm-crypt encrypt file contents with), read through AF_ALG.

One ``xts(aes)`` socket with a 512-bit key; each call encrypts or decrypts one 4 KiB data unit (fscrypt's unit:
one filesystem block, its number as the tweak) in the kernel, so the figure includes a system call per unit, as
fscrypt's own work does not: it is a lower bound of the kernel's speed. Kernels built without AF_ALG (the
``socket(AF_ALG, ...)`` call fails) cannot be read this way; :func:`usable` then says so and the table leaves the
entry out (OpenSSL's AES-256-XTS, same AES-NI instructions, stands in).
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable
from typing import Any

NAME = "AES-256-XTS (kernel)"
UNIT = 4096
NOTE = "the kernel's xts(aes) through AF_ALG, one 4 KiB data unit per call (a system call each), as fscrypt uses it"


def usable() -> str:
    """"" when the kernel's xts(aes) can be reached through AF_ALG here; else why not."""
    try:
        sock = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)  # type: ignore[attr-defined]
    except (AttributeError, OSError) as exc:
        return f"this kernel offers no AF_ALG sockets ({exc}), so its xts(aes) cannot be timed from user space"
    try:
        sock.bind(("skcipher", "xts(aes)"))
    except OSError as exc:
        return f"the kernel has no xts(aes) for AF_ALG ({exc})"
    finally:
        sock.close()
    return ""


def step(operation: str, data: bytes) -> Callable[[], Any]:
    """One call: ``data`` (a multiple of 4 KiB) through the kernel, one data unit after another."""
    algo = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)  # type: ignore[attr-defined]
    algo.bind(("skcipher", "xts(aes)"))
    algo.setsockopt(socket.SOL_ALG, socket.ALG_SET_KEY, secrets.token_bytes(64))  # type: ignore[attr-defined]
    op, _ = algo.accept()
    mode = socket.ALG_OP_ENCRYPT if operation == "encrypt" else socket.ALG_OP_DECRYPT  # type: ignore[attr-defined]
    units = [data[i:i + UNIT] for i in range(0, len(data), UNIT)]
    tweaks = [n.to_bytes(16, "little") for n in range(len(units))]

    def run() -> None:
        for unit, tweak in zip(units, tweaks):
            op.sendmsg_afalg([unit], op=mode, iv=tweak)
            op.recv(UNIT)
    run._sockets = (algo, op)  # type: ignore[attr-defined]  # kept open as long as the step lives
    return run
