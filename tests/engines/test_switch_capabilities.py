"""Every engine that declares a way to switch encryption on (online or offline) or to re-key gives its instances the
methods the encrypt workload calls (a declaration without them would fail only deep inside a run)."""

from __future__ import annotations

import pytest

from tdebench.api.engine import Instance
from tdebench.engines import engine_names, get_engine


def declared() -> list[str]:
    return [n for n in engine_names()
            if get_engine(n).online_switch or get_engine(n).offline_switch or get_engine(n).rekey_method]


@pytest.mark.parametrize("name", declared())
def test_declared_switches_are_implemented(name, tmp_path):
    from tdebench.engines import Config

    engine = get_engine(name)
    try:
        engine.check_available()
    except Exception as exc:  # noqa: BLE001 - not installed here
        pytest.skip(f"{name}: {exc}")
    spec = engine.default_encrypted_spec()
    assert engine.can_switch(spec), f"{name} declares a switch but cannot switch its default spec {spec}"
    instance = engine.create_instance(Config(name, spec, engine.default_settings()), tmp_path)
    cls = type(instance)
    assert cls.start_plain is not Instance.start_plain and cls.encryption_progress is not Instance.encryption_progress
    if engine.online_switch:
        assert cls.switch_encryption is not Instance.switch_encryption
    if engine.offline_switch or (engine.rekey_method and not engine.rekey_online):
        assert cls.switch_offline is not Instance.switch_offline
    if engine.rekey_method and engine.rekey_online:
        assert cls.rekey is not Instance.rekey
    if engine.switch_whole_server:
        assert engine.online_switch and instance.server_access() is not None  # connect_to another database
    assert not engine.can_switch(next(s for s in engine.supported_specs() if s.is_plain))


@pytest.mark.parametrize("name", declared())
def test_every_switch_method_is_implemented(name, tmp_path):
    """Per spec the engine can switch (Engine.switch_method): the restart it declares, the offline method and the
    old copy's deletion of a method that copies are implemented by that spec's instances."""
    from tdebench.engines import Config

    engine = get_engine(name)
    try:
        engine.check_available()
    except Exception as exc:  # noqa: BLE001 - not installed here
        pytest.skip(f"{name}: {exc}")
    specs = engine.supported_specs()
    assert specs, name
    for spec in specs:
        method = engine.switch_method(spec)
        if method is None:
            continue
        try:
            settings = {**engine.default_settings(), **engine.plan_settings([spec])}
            cls = type(engine.create_instance(Config(name, spec, settings), tmp_path / str(spec).replace(":", "-")))
        except Exception:  # noqa: BLE001 - the spec's tools are not here (e.g. fscrypt without root)
            continue
        assert cls.start_plain is not Instance.start_plain, (name, spec)
        assert cls.switch_encryption is not Instance.switch_encryption or not method.online, (name, spec)
        assert cls.switch_offline is not Instance.switch_offline or method.online, (name, spec)
        assert cls.switch_restart is not Instance.switch_restart or not method.restart, (name, spec)
        assert cls.remove_old_copy is not Instance.remove_old_copy or not method.copies, (name, spec)
