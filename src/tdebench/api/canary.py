"""The table at-rest verification plants its canary rows in (every engine creates it the way it stores data)."""

CANARY_TABLE = "tdebench_canary"
