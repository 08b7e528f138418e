"""The ranking rule a decision states on its page, and its result.

1. A mechanism is a candidate when the threat model shows it stops every attacker of ``--against``: each of the
   attacker's rows is *protected* or *not applicable*. One *exposed* row leaves it out (it leaks); a row *not
   checked* leaves it out as *not known*.
2. Among candidates, A is **cheaper** than B when, on at least one ranking figure (each headline of the workload in
   each regime), A's 95% interval of the overhead against the plain twin lies entirely on the better side of B's,
   and on no figure entirely on the worse side. Overlapping intervals (and a figure without an interval) are ties,
   never wins.
3. The candidates no other candidate is cheaper than come first (one of them: the answer; several: a tie, said as
   one); then the same among the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tdebench.decide.attackers import Attacker
from tdebench.decide.protection import LEAKS, STOPS, UNKNOWN, Protection
from tdebench.stats.overhead import Overhead
from tdebench.stats.wording import metric_kind
from tdebench.verify.threat_rows import join_words


@dataclass
class Candidate:
    """One mechanism as the rule sees it: what it does against each attacker, and its ranking figures."""

    encryption: str
    against: dict[str, tuple[str, str]]  # attacker name -> (stops / does not stop / not known, why)
    costs: list[Overhead | None]
    rank: int | None = None  # 1 = cheapest group; None: not a candidate
    beats: list[tuple[str, list[str]]] = field(default_factory=list)  # (B, the figures) it is cheaper than

    @property
    def status(self) -> str:
        """stops (every attacker), does not stop (one at least), or not known."""
        verdicts = [v for v, _ in self.against.values()]
        if LEAKS in verdicts:
            return LEAKS
        return UNKNOWN if UNKNOWN in verdicts else STOPS


@dataclass
class Ranking:
    rule: str
    attackers: list[Attacker]
    figures: list[str]
    candidates: list[Candidate]
    answer: str


def better(a: Overhead | None, b: Overhead | None) -> int:
    """+1 when ``a``'s interval lies entirely on the better side of ``b``'s, -1 on the worse side, 0 otherwise
    (overlap, or no interval)."""
    if a is None or b is None or None in (a.ci_low_pct, a.ci_high_pct, b.ci_low_pct, b.ci_high_pct):
        return 0
    higher_better = metric_kind(a.metric, a.unit) == "throughput"
    if a.ci_high_pct < b.ci_low_pct:  # type: ignore[operator]
        return -1 if higher_better else 1
    if a.ci_low_pct > b.ci_high_pct:  # type: ignore[operator]
        return 1 if higher_better else -1
    return 0


def cheaper(a: Candidate, b: Candidate, figures: list[str]) -> list[str]:
    """The figures on which ``a`` is cheaper than ``b`` when it is worse on none ([] otherwise)."""
    signs = [better(x, y) for x, y in zip(a.costs, b.costs)]
    if -1 in signs:
        return []
    return [f for f, s in zip(figures, signs) if s == 1]


def rule_text(attackers: list[Attacker], figures: list[str]) -> str:
    who = join_words([f"{a.name} ({a.phrase})" for a in attackers])
    return (f"the candidates are the mechanisms the runs' threat model shows stopping {who}: every row of each attacker "
            "protected or not applicable (an exposed row: it does not stop it; a row not checked: not known). "
            "Among them A ranks above B when A's 95% interval of the overhead lies entirely below B's (for a "
            "throughput, above) on at least one ranking figure and entirely above it on none; overlapping "
            f"intervals are ties, not wins. Ranking figures: {'; '.join(figures) or 'none measured'}.")


def _rank(candidates: list[Candidate], figures: list[str]) -> None:
    left = [c for c in candidates if c.status == STOPS]
    rank = 1
    while left:
        for c in left:
            c.beats = [(o.encryption, fs) for o in left if o is not c for fs in [cheaper(c, o, figures)] if fs]
        top = [c for c in left if not any(cheaper(o, c, figures) for o in left if o is not c)] or left
        for c in top:
            c.rank = rank
        left = [c for c in left if c not in top]
        rank += 1


def beaten(c: Candidate) -> str:
    """``, cheaper than A and B on F`` (``, cheaper than A (on F1) and B (on F2)`` when the figures differ)."""
    if not c.beats:
        return ""
    figures = {tuple(fs) for _, fs in c.beats}
    if len(figures) == 1:
        return f", cheaper than {join_words([o for o, _ in c.beats])} on {join_words(list(figures.pop()))}"
    return ", cheaper than " + join_words([f"{o} (on {join_words(fs)})" for o, fs in c.beats])


def answer(candidates: list[Candidate], attackers: list[Attacker]) -> str:
    """The one sentence the rule gives."""
    who = join_words([a.phrase for a in attackers])
    top = [c for c in candidates if c.rank == 1]
    if not top:
        why = "; ".join(f"{c.encryption}: {c.status} " + join_words(
            [a for a, (v, _) in c.against.items() if v != STOPS]) for c in candidates)
        return f"No mechanism measured is shown to stop {who} ({why}), so the rule recommends none."
    if len(top) == 1 and not any(c.rank for c in candidates if c is not top[0]):
        others = "; ".join(f"{c.encryption}: {c.status}" for c in candidates if c is not top[0])
        return f"{top[0].encryption}: the only mechanism measured that stops {who}" + (
            f" ({others})." if others else ".")
    if len(top) == 1:
        c = top[0]
        return f"{c.encryption}: the cheapest mechanism measured that stops {who}{beaten(c)}."
    names = join_words([c.encryption for c in top])
    return (f"{names} tie: each stops {who}, and no interval of one lies apart from the other's on the ranking "
            "figures, so the figures do not tell them apart (measure longer, or choose on what switching each on "
            "takes).")


def rank(protections: list[Protection], attackers: list[Attacker], figures: list[str],
         costs: dict[str, list[Overhead | None]]) -> Ranking:
    """Apply the rule to every mechanism (``costs``: spec -> its ranking figures' overheads, in ``figures`` order)."""
    candidates = [Candidate(p.encryption, {a.name: p.verdict(a) for a in attackers},
                            costs.get(p.encryption, [None] * len(figures))) for p in protections]
    _rank(candidates, figures)
    ordered = sorted(candidates, key=lambda c: (c.rank is None, c.rank or 0, [STOPS, UNKNOWN, LEAKS].index(c.status)))
    return Ranking(rule_text(attackers, figures), attackers, figures, ordered, answer(ordered, attackers))
