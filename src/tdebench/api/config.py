"""One arm of a comparison (:class:`Config`): what every engine, workload and view names a config by."""

from __future__ import annotations

from dataclasses import dataclass, field

from tdebench.api.keys import FILE, keyed_label
from tdebench.encryption import EncryptionSpec


@dataclass(frozen=True)
class Config:
    """One arm of a comparison: engine + encryption spec + key source + settings shared with its twins."""

    engine: str
    spec: EncryptionSpec
    settings: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    tcp: bool = field(default=False, compare=False)  # servers: listen on 127.0.0.1 too (default: socket only)
    keep: bool = field(default=False, compare=False)  # leave data directories behind after the run
    name: str = ""  # a user-chosen label (external targets: --target LABEL=URL); default engine-spec
    #: where the keys live (:mod:`tdebench.api.keys`): ``file`` (the engine's own arrangement) or a key server
    keys: str = FILE

    @property
    def label(self) -> str:
        """File-system-safe label, e.g. ``sqlite-sqlcipher-aes-256-cbc``, or the config's ``name``; a key source
        other than ``file`` is marked after it (``mariadb-tde-aes-256-ctr+openbao``)."""
        base = self.name or f"{self.engine}-{self.spec.label}"
        return keyed_label(base, self.keys) if self.keys != FILE and not self.spec.is_plain else base
