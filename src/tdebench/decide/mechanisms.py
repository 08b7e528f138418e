"""The mechanisms a decision compares: one spec per way an engine can encrypt (its TDE, its page cipher, its
column encryption, each filesystem layer), or the specs ``--mechanisms`` names.

A spec's *family* is its mechanism, and for filesystem encryption the filesystem (``fs:fscrypt`` and
``fs:gocryptfs`` are two families: the kernel's and a FUSE daemon's). A family is represented by the engine's
default encrypted spec when that is one of it, else by its spec with the shortest cipher name (``fs:fscrypt``
rather than ``fs:fscrypt-adiantum``)."""

from __future__ import annotations

from tdebench.api.engine import Engine
from tdebench.encryption import EncryptionSpec, parse_spec
from tdebench.errors import UsageError


def family(spec: EncryptionSpec) -> str:
    """``tde``, ``column``, ``fs:fscrypt``, ``fs:gocryptfs``, ... (``none`` for the plain spec)."""
    if spec.is_plain:
        return "none"
    if spec.mechanism == "fs":
        return f"fs:{spec.cipher.split('-')[0]}"
    return spec.mechanism


def families(engine: Engine) -> dict[str, EncryptionSpec]:
    """Every family of ``engine``'s encrypted specs -> the spec that represents it, in the engine's order."""
    default = engine.default_encrypted_spec()
    grouped: dict[str, list[EncryptionSpec]] = {}
    for spec in engine.supported_specs():
        if not spec.is_plain:
            grouped.setdefault(family(spec), []).append(spec)
    out = {}
    for name, specs in grouped.items():
        plain_scope = [s for s in specs if not s.scope] or specs
        out[name] = default if default in specs else min(plain_scope, key=lambda s: (len(s.cipher), s.cipher))
    return out


def _one(engine: Engine, word: str, known: dict[str, EncryptionSpec]) -> EncryptionSpec:
    """A family name (``tde``, ``fscrypt``, ``fs:fscrypt``) or a full spec the engine supports."""
    text = word.strip().lower()
    for name, spec in known.items():
        if text in (name, name.split(":", 1)[-1]):
            return spec
    if ":" not in text and text not in ("none", "plain"):
        raise UsageError(f"engine '{engine.name}' has no mechanism '{word.strip()}'",
                         f"use one of: {', '.join(known)} (or a spec of tdebench engines)")
    spec = parse_spec(text)
    engine.validate_spec(spec)
    if spec.is_plain:
        raise UsageError("--mechanisms lists none", "leave it out: the plain twin is always measured")
    return spec


def choose(engine: Engine, text: str | None) -> list[EncryptionSpec]:
    """The mechanisms to compare: ``--mechanisms`` (family names or specs) or one spec per family of ``engine``;
    UsageError when fewer than two remain (a decision compares mechanisms)."""
    known = families(engine)
    if text is None:
        chosen = list(known.values())
    else:
        chosen = list(dict.fromkeys(_one(engine, w, known) for w in text.split(",") if w.strip()))
    if len(known) < 2:
        only = ", ".join(str(s) for s in known.values()) or "none"
        raise UsageError(f"engine '{engine.name}' has one way to encrypt ({only}), so there is nothing to decide "
                         "between", f"measure it with tdebench run --engine {engine.name} --encryption none,{only}, "
                         "or decide on an engine with several: " + ", ".join(_engines_with_choice()))
    if len(chosen) < 2:
        raise UsageError(f"--mechanisms names {len(chosen)} mechanism; a decision compares two or more",
                         f"name two or more, e.g. --mechanisms {','.join(list(known)[:2])} (or leave it out: "
                         "every mechanism of the engine)")
    return chosen


def _engines_with_choice() -> list[str]:
    from tdebench.engines import engine_choices, get_engine

    return [n for n in engine_choices() if len(families(get_engine(n))) >= 2]
