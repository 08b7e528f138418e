"""STAND-IN for the per-step probe of issue #14: the engine's counters at every ``ConfigState.mark()`` boundary.

Issue #14 builds the real probe (server CPU, client CPU and ``Instance.counters()`` read at each mark, recorded as
``test="counters"`` rows). Until it is merged, this module records the counters part only, in the same shape:
one row per step and counter, ``test="counters"``, ``metric`` = counter name, unit from
:data:`tdebench.api.counters.COUNTERS`; the value is the difference over the step (summed over every span marked
with that name), except the :data:`~tdebench.api.counters.LEVELS` (``page_size``), which are recorded as read.
The orchestrator touches it in two lines (:func:`attach`, :func:`record`); replace both by the real probe.

A counter that went down during a span (a restart reset the server's counters) is not recorded for that span.
Reading the counters never fails a trial: a failing read drops that boundary and is reported once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tdebench.api.counters import LEVELS, unit_of
from tdebench.api.engine import Instance
from tdebench.api.trial import Recorder

TEST = "counters"


class CounterProbe:
    """Wraps a :class:`~tdebench.measure.sampler.ResourceSampler`: every ``mark`` also reads the counters."""

    def __init__(self, sampler: Any, read: Callable[[], dict[str, float]]) -> None:
        self.sampler = sampler
        self._read = read
        self._step: str | None = None
        self._last: dict[str, float] | None = None
        self.steps: dict[str, dict[str, float]] = {}
        self.problem = ""

    def __enter__(self) -> "CounterProbe":
        self.sampler.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self.sampler.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:  # snapshot(), series, ... of the sampler
        return getattr(self.sampler, name)

    def _now(self) -> dict[str, float] | None:
        try:
            return self._read()
        except Exception as exc:  # noqa: BLE001 - counters never cost a measured step
            self.problem = self.problem or f"{type(exc).__name__}: {exc}"
            return None

    def _close_span(self) -> None:
        if self._step is None or self._last is None:
            return
        now = self._now()
        if now is None:
            return
        values = self.steps.setdefault(self._step, {})
        for name, value in now.items():
            if name in LEVELS:
                values[name] = value
            elif name in self._last and value >= self._last[name]:
                values[name] = values.get(name, 0.0) + value - self._last[name]

    def mark(self, step: str | None) -> None:
        """Close the current step's span, then start ``step`` (None: no step) in the sampler and here."""
        self._close_span()
        self.sampler.mark(step)
        self._step = step
        self._last = self._now() if step is not None else None

    def stop(self) -> Any:
        self._close_span()
        self._step = self._last = None
        return self.sampler.stop()


def attach(sampler: Any, instance: Instance) -> Any:
    """The sampler to put in ``ConfigState.sampler``: wrapped when the engine counts something."""
    if sampler is None:
        return None
    try:
        if not instance.counters():
            return sampler
    except Exception:  # noqa: BLE001 - an engine that cannot count now records no counters
        return sampler
    return CounterProbe(sampler, instance.counters)


def record(probe: Any, rec: Recorder, status: str | None) -> str:
    """The probe's rows into the trial's recorder; returns a problem to report ("" when none)."""
    if not isinstance(probe, CounterProbe):
        return ""
    for step, values in probe.steps.items():
        for name, value in values.items():
            rec.add(TEST, step, name, value, unit_of(name), status=status)
    return probe.problem
