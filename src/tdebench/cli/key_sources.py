"""``--keys`` and ``--key-server`` on the command line and in experiment files: each encrypted config crossed with
each key source (:mod:`tdebench.api.keys`), refused before any work where an engine has no way to take a spec's
keys from a key server, where no config has a key, or where ``--key-server`` has nothing to serve."""

from __future__ import annotations

from dataclasses import replace

from tdebench.api.engine import Config, Engine
from tdebench.api.keys import FILE, KEY_SOURCES, keyed_label, parse_key_sources
from tdebench.encryption import EncryptionSpec
from tdebench.errors import UsageError


def sources_of(keys: object) -> tuple[str, ...]:
    """The run's key sources (``[run] keys`` / ``--keys``); ``file`` alone when not given."""
    return parse_key_sources(keys) if keys not in (None, "", []) else (FILE,)


def check_key_path(engine: Engine, spec: EncryptionSpec) -> None:
    """UsageError unless ``engine`` can take ``spec``'s keys from a key server (naming the specs that can)."""
    if engine.key_path(spec) is not None:  # an engine may raise its own reason instead
        return
    able = [str(s) for s in engine.supported_specs() if not s.is_plain and _has_path(engine, s)]
    raise UsageError(f"engine '{engine.name}' has no way to take the keys of '{spec}' from a key server",
                     f"leave --keys openbao out, or use a spec that can: {', '.join(able[:6])}" if able
                     else f"leave --keys openbao out: {engine.name} takes its keys from no key server")


def _has_path(engine: Engine, spec: EncryptionSpec) -> bool:
    try:
        return engine.key_path(spec) is not None
    except UsageError:
        return False


def cross(engine: Engine, config: Config, sources: tuple[str, ...]) -> list[Config]:
    """``config`` once per key source (a plain config once: it has no key); in a run of several sources every
    keyed config's label names its source, ``+file`` included."""
    if config.spec.is_plain:
        return [config]
    out = []
    for source in sources:
        if source != FILE:
            check_key_path(engine, config.spec)
        name = keyed_label(config.label, FILE) if source == FILE and len(sources) > 1 else config.name
        out.append(replace(config, keys=source, name=name))
    return out


def check_sources(configs: list[Config], sources: tuple[str, ...], key_server: str | None) -> None:
    """A key server must have a config to serve; ``--key-server`` needs a key server source."""
    servers = [s for s in sources if s != FILE]
    if servers and not any(c.keys != FILE for c in configs):
        raise UsageError(f"--keys {','.join(sources)}: no config has a key (encryption none has none)",
                         "add an encrypted spec, e.g. --encryption none,tde:aes-256-cbc")
    if key_server and not servers:
        raise UsageError("--key-server names where the keys of --keys " + "/".join(KEY_SOURCES[1:]) + " live",
                         "add --keys openbao (or --keys file,openbao), or leave --key-server out")
