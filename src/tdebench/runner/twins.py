"""Which twin a config's answers are checked against, and whether twins of one block answered alike."""

from __future__ import annotations

from tdebench.api.engine import Config
from tdebench.api.plan import RunPlan

Digests = dict[tuple[int, str], dict[int, str]]  # (block, config) -> query number -> digest of its answer


def plain_twin(plan: RunPlan, config: Config) -> str | None:
    """The first plain config of ``config``'s engine (its answers are the reference), None when it has none."""
    twins = [c.label for c in plan.configs if c.engine == config.engine and c.spec.is_plain]
    return twins[0] if twins else None


def answer_difference(plan: RunPlan, digests: Digests, block: int, config: Config) -> str | None:
    """Twins in one block ran on identical data: a problem naming the power-stream queries whose answers differ
    from the plain twin's, or None."""
    twin = plain_twin(plan, config)
    mine = digests.get((block, config.label))
    theirs = digests.get((block, twin)) if twin else None
    if not mine or not theirs or twin == config.label:
        return None
    differ = sorted(n for n in set(mine) & set(theirs) if mine[n] != theirs[n])
    if not differ:
        return None
    return f"answers of {config.label} differ from {twin} in block {block}: " + ", ".join(f"q{n:02d}" for n in differ)
