"""A power test's time at the block's common wait per page read: what each twin's time would have been had every
page it read from the disk waited as long as it did, on average, for every twin of the block.

A twin's time E is its server's CPU time C plus what it waited for, W = E − C: with pages read from the disk, mostly
its reads. Two twins of the same data read the same pages in the same number, but on a virtual disk a read's wait
drifts from minute to minute, and a twin whose reads fell in slower seconds looks slower for it. The time at the
common wait per read,

    E* = C + P · w̄,   w̄ = ΣW / ΣP over the block's twins,

keeps what each twin's own work adds (its CPU time, decrypting pages included, and the reads it makes) and charges
every twin the same wait for each read. It leaves out any difference a config makes to the wait of one read, so it
is only for twins whose encryption runs in the server's own threads (not an encrypted filesystem's, which the
kernel or a FUSE daemon does while the server waits), and only beside the elapsed time, whose estimate it must agree
with (docs/precision.md, "The time at a common wait per page read").
"""

from __future__ import annotations

import numpy as np

TITLE = "time at a common wait per page read"
#: the manifest's record of every block's common wait per read: {memory ratio: {block: seconds}}
WAITS_KEY = "common_wait_per_read_s"


def at_common_wait(elapsed: np.ndarray, cpu: np.ndarray, reads: np.ndarray) -> np.ndarray:
    """E* per twin (axis 0) from each twin's elapsed time, server CPU time and pages read from the disk in one block
    (further axes: blocks side by side). NaN where the block's twins read no page."""
    c, p = (np.asarray(x, dtype=float) for x in (cpu, reads))
    return c + p * common_wait(elapsed, cpu, reads)


def common_wait(elapsed: np.ndarray, cpu: np.ndarray, reads: np.ndarray) -> np.ndarray:
    """w̄ = ΣW / ΣP over the twins (axis 0): the block's wait per page read, in the unit of the times; NaN where the
    twins read no page."""
    e, c, p = (np.asarray(x, dtype=float) for x in (elapsed, cpu, reads))
    total = p.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (e - c).sum(axis=0) / total, np.nan)
