"""TPC-C random values (clause 2.1.6 and 4.3.2): NURand, last names, a-/n-strings, seeded and fast."""

from __future__ import annotations

import random
import string

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")
# NURand constants (clause 2.1.6.1): C for C_LAST differs between load and run by 65..119, not 96 or 112
C_LAST_LOAD = 157
C_LAST_RUN = 223
C_ID = 259
C_OL_I_ID = 7911
ITEMS = 100_000
DISTRICTS = 10
CUSTOMERS = 3_000  # per district
ORDERS = 3_000  # per district
NEW_ORDERS_FROM = 2_101  # orders 2101..3000 of each district are undelivered (in new_order)
ORIGINAL = "ORIGINAL"
_ALNUM = string.ascii_letters + string.digits
_POOL_SIZE = 1 << 18


def last_name(number: int) -> str:
    """The customer last name for 0..999 (three syllables)."""
    return SYLLABLES[number // 100] + SYLLABLES[(number // 10) % 10] + SYLLABLES[number % 10]


class TpccRandom:
    """A seeded source of every random value TPC-C needs (one per generator or virtual user)."""

    def __init__(self, seed: int | str, c_last: int = C_LAST_LOAD) -> None:
        self.rng = random.Random(seed)
        self.c_last = c_last
        self._alpha = "".join(self.rng.choices(_ALNUM, k=_POOL_SIZE))
        self._digits = "".join(self.rng.choices(string.digits, k=_POOL_SIZE))

    def uniform_int(self, low: int, high: int) -> int:
        """An integer in [low, high]."""
        return low + int(self.rng.random() * (high - low + 1))

    def nurand(self, a: int, x: int, y: int, c: int) -> int:
        """NURand(A, x, y) with run-time constant C (clause 2.1.6)."""
        rnd = self.rng.random
        span = y - x + 1
        return (((int(rnd() * (a + 1)) | (x + int(rnd() * span))) + c) % span) + x

    def customer_id(self) -> int:
        return self.nurand(1023, 1, CUSTOMERS, C_ID)

    def item_id(self) -> int:
        return self.nurand(8191, 1, ITEMS, C_OL_I_ID)

    def last_name_run(self) -> str:
        """A last name for Payment/Order-Status by name (NURand(255, 0, 999) with C_LAST_RUN)."""
        return last_name(self.nurand(255, 0, 999, self.c_last))

    def astring(self, low: int, high: int) -> str:
        """Random alphanumeric text of length low..high (a slice of a seeded pool)."""
        n = self.uniform_int(low, high)
        start = int(self.rng.random() * (_POOL_SIZE - n))
        return self._alpha[start:start + n]

    def nstring(self, low: int, high: int) -> str:
        """Random digits, length low..high."""
        n = self.uniform_int(low, high)
        start = int(self.rng.random() * (_POOL_SIZE - n))
        return self._digits[start:start + n]

    def zip_code(self) -> str:
        return self.nstring(4, 4) + "11111"

    def state(self) -> str:
        return self.astring(2, 2).upper()

    def money(self, low: float, high: float) -> str:
        """A decimal with two places in [low, high], as text."""
        cents = self.uniform_int(round(low * 100), round(high * 100))
        return f"{cents / 100:.2f}"

    def rate(self, high: float) -> str:
        """A decimal with four places in [0, high] (taxes, discounts), as text."""
        return f"{self.uniform_int(0, round(high * 10000)) / 10000:.4f}"

    def data_with_original(self, low: int, high: int) -> str:
        """I_DATA / S_DATA: a-string(low, high), 10% holding "ORIGINAL" at a random position."""
        text = self.astring(low, high)
        if self.uniform_int(1, 10) == 1:
            pos = self.uniform_int(0, len(text) - len(ORIGINAL))
            text = text[:pos] + ORIGINAL + text[pos + len(ORIGINAL):]
        return text

    def permutation(self, n: int) -> list[int]:
        """1..n in random order (O_C_ID of the initial orders)."""
        values = list(range(1, n + 1))
        self.rng.shuffle(values)
        return values
