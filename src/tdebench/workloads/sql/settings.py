"""``workload.toml``: the optional settings of a user's workload directory (docs/workloads/sql.md).

::

    database = "orders"              # database (schema) name the engines create; default: the directory's name
    dialect = "postgres"             # the family the canonical files (schema.sql, queries/x.sql) are written in
    order = ["q1", "new_order"]      # steps of a trial in this order; default: queries, then writes, by name

    [data]
    null = ""                        # a field equal to this is NULL (default: an empty field)
    generate = ["python3", "generate.py", "{out}"]   # writes <table>.csv/.tsv into {out} for tables
                                                     # without a file in data/ (run in the directory)

    [weights]                        # how often each step occurs in your mix (default 1): the trial's
    q1 = 5                           # "total" is the weighted sum of the steps' times

    [writes]
    restore = "undo"                 # undo: writes/<name>.undo.sql after the trial; snapshot: --reset snapshot

    [verify]
    samples = 4                      # values sampled from your data for the at-rest scan
    known_plaintext = ["..."]        # or: exactly these values (each must be in the data)
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tdebench.api.dialect import Family

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataSettings(_Strict):
    null: str = ""
    generate: list[str] | None = Field(None, min_length=1)


class WriteSettings(_Strict):
    restore: Literal["undo", "snapshot"] = "undo"


class VerifySettings(_Strict):
    samples: int = Field(4, ge=1, le=50)
    known_plaintext: list[str] | None = None

    @field_validator("known_plaintext")
    @classmethod
    def _long_enough(cls, value: list[str] | None) -> list[str] | None:
        short = [v for v in value or () if len(v.encode()) < 6]
        if short:
            raise ValueError(f"{short[0]!r} is too short to prove anything (give values of 6 bytes or more)")
        return value


class WorkloadSettings(_Strict):
    """The whole file; every key optional."""

    database: str | None = None
    dialect: Family = "postgres"
    order: list[str] | None = None
    data: DataSettings = Field(default_factory=DataSettings)
    weights: dict[str, float] = Field(default_factory=dict)
    writes: WriteSettings = Field(default_factory=WriteSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)

    @field_validator("database")
    @classmethod
    def _database(cls, value: str | None) -> str | None:
        if value is not None and not NAME.match(value):
            raise ValueError("use letters, digits and _ (not starting with a digit), at most 63 characters")
        return value.lower() if value else value

    @field_validator("weights")
    @classmethod
    def _weights(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [k for k, w in value.items() if not w > 0]
        if bad:
            raise ValueError(f"the weight of {bad[0]} must be a number > 0")
        return value


def read_settings(path: Path) -> WorkloadSettings:
    """The settings in ``path`` (defaults when it does not exist); ValueError with a one-line reason."""
    if not path.is_file():
        return WorkloadSettings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"is not valid TOML: {exc}") from None
    try:
        return WorkloadSettings.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"])
        if error["type"] == "extra_forbidden":
            raise ValueError(f"unknown key '{key}'") from None
        reason = str(error["msg"]).removeprefix("Value error, ")
        raise ValueError(f"bad value {error.get('input')!r} for '{key}': {reason}") from None
