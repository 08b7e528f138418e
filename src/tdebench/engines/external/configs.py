"""``--target`` options turned into run configs (and back): labels, overrides, passwords and a first login."""

from __future__ import annotations

from dataclasses import dataclass, fields

from tdebench.api.engine import Config
from tdebench.engines.external.access import preflight
from tdebench.engines.external.connect import connect
from tdebench.engines.external.target import (CHECK_OVERRIDDEN, CHECK_STRICT, ENGINE, Target, parse_target,
                                              resolve_password)
from tdebench.engines.toolkit.dbapi.kinds import check_driver
from tdebench.errors import UsageError


@dataclass(frozen=True)
class TargetConfig(Config):
    """A config whose label is the target's own (``settings['label']``).

    Stop-gap until :class:`Config` carries a user-chosen name itself (docs/engines/external.md).
    """

    @property
    def label(self) -> str:
        return self.settings.get("label") or f"{self.engine}-{self.spec.label}"


def target_config(target: Target, override: bool = False) -> Config:
    """The config of one target: settings hold the password-free URL, the label and the check mode."""
    settings = {"url": target.url, "label": target.label,
                "encryption_check": CHECK_OVERRIDDEN if override else CHECK_STRICT}
    if "name" in {f.name for f in fields(Config)}:  # Config carries user-chosen names: resumable as is
        return Config(ENGINE, target.spec, settings, name=target.label)  # type: ignore[call-arg]
    return TargetConfig(ENGINE, target.spec, settings)


def target_of(config: Config) -> Target:
    """The target a config describes (from its recorded URL and spec)."""
    url = config.settings.get("url", "")
    label = config.settings.get("label") or config.label
    if not url:
        raise UsageError(f"config {config.label} has no target URL", "give --target LABEL=URL")
    spec_text = "" if config.spec.is_plain else f"#{config.spec}"
    return parse_target(f"{label}={url}{spec_text}")


def target_configs(texts: list[str], overrides: list[str], interactive: bool | None = None,
                   reach: bool = False) -> list[Config]:
    """Configs for ``--target`` options; passwords resolved now so prompts come before any work.

    ``reach``: also log in to every target once, so a wrong host or password fails before the run starts.
    """
    targets = [parse_target(t) for t in texts]
    labels = [t.label for t in targets]
    if not targets:
        raise UsageError("no --target given", "write --target LABEL=URL, e.g. plain=mysql://bench@db:3306/tpch")
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise UsageError(f"target label(s) used twice: {', '.join(duplicates)}", "give every target its own label")
    kinds = {t.kind.scheme for t in targets}
    if len(kinds) > 1:
        raise UsageError(f"targets of one run must be one DBMS, got {', '.join(sorted(kinds))}",
                         "the plain target is the baseline of the encrypted ones; run each DBMS separately")
    places = [t.where for t in targets]
    shared = sorted({f"{h}:{p}/{d}" for h, p, d in places if places.count((h, p, d)) > 1})
    if shared:
        raise UsageError(f"two targets use the same database ({', '.join(shared)})",
                         "each target needs its own database: tdebench drops and re-creates its TPC-H tables")
    unknown = sorted(set(o for o in overrides if o != "all") - set(labels))
    if unknown:
        raise UsageError(f"--override-encryption-check names unknown target(s): {', '.join(unknown)}",
                         f"use one of: {', '.join(labels)} or all")
    configs = []
    for target in targets:
        check_driver(target.kind)
        password = resolve_password(target, interactive)
        override = "all" in overrides or target.label in overrides
        if reach:
            _reach(target, password, override)
        configs.append(target_config(target, override=override))
    return configs


def _reach(target: Target, password: str, override: bool) -> None:
    """Log in once: a wrong host or password, a wrong scheme or a status the login cannot read fail now."""
    raw = connect(target, password, timeout=10)
    try:
        preflight(target, raw, override)
    finally:
        raw.close()


def check_run_options(cache: str, reset: str) -> None:
    """Cold caches and snapshot resets need a server tdebench controls."""
    if cache != "warm":
        raise UsageError("--cache cold needs a server tdebench can restart; external targets cannot be",
                         "use --cache warm, or restart the servers yourself and run one trial per invocation")
    if reset != "none":
        raise UsageError("--reset snapshot copies data directories; external targets have none tdebench can read",
                         "use --reset none (refresh functions keep twins identical anyway)")


__all__ = ["TargetConfig", "check_run_options", "target_config", "target_configs", "target_of"]
