"""AES vs 3DES, as the TDE framework study compared them: shown when a run has 3DES configs.

Each 3DES config is paired with every AES config of the same engine and mechanism family (pgcrypto raw
``column:3des`` with ``column:aes-*``; OpenPGP ``column:pgp-3des`` with ``column:pgp-aes*``). Per step: the
medians and how many times longer 3DES took (the overhead estimate of :func:`compare_samples` + 1 with its
95% CI, paired by block when possible), beside how many times slower the 3DES cipher itself is than that AES
on this machine.
"""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.api.measurement import ONE_OFF_TESTS
from tdebench.encryption import EncryptionSpec, parse_spec
from tdebench.measure import cipherspeed as cm
from tdebench.report.model import RunSummary
from tdebench.stats.overhead import compare_samples

SKIP_TESTS = frozenset({"resources", *ONE_OFF_TESTS, "refresh", "trial"})


@dataclass
class PairRow:
    """One step of one (AES, 3DES) pair."""

    step: str
    test: str
    aes_s: float
    des_s: float
    ratio: float
    ci_low: float | None
    ci_high: float | None


@dataclass
class Pair:
    engine: str
    aes: str
    des: str
    aes_spec: str
    des_spec: str
    cipher_ratio: float | None  # AES speed / 3DES speed (encrypt), from the cipher table
    rows: list[PairRow]


def _family(spec: EncryptionSpec) -> tuple[str, bool]:
    return spec.mechanism, spec.cipher.startswith("pgp-")


def is_3des(spec: EncryptionSpec) -> bool:
    return spec.cipher in ("3des", "pgp-3des")


def _cipher_ratio(aes: EncryptionSpec, des: EncryptionSpec, speeds: list[cm.CipherSpeed] | None) -> float | None:
    if not speeds:
        return None
    a, d = cm.speed_for_spec(aes, speeds), cm.speed_for_spec(des, speeds)
    return a[0] / d[0] if a and d and d[0] > 0 else None


def _rows(rs: RunSummary, aes: str, des: str) -> list[PairRow]:
    m = rs.analysis.measurements
    rows = []
    for key in [k for k in m.series if k.config == des and k.metric == "elapsed" and k.test not in SKIP_TESTS]:
        base = m.sample(key._replace(config=aes))
        other = m.sample(key)
        if base is None or other is None or not base.n or not other.n:
            continue
        c = compare_samples(base, other)
        ratio = 1 + c.pct / 100
        rows.append(PairRow(key.step, key.test, c.median_base, c.median_other, ratio,
                            None if c.ci_low_pct is None else 1 + c.ci_low_pct / 100,
                            None if c.ci_high_pct is None else 1 + c.ci_high_pct / 100))
    return rows


def pairs(rs: RunSummary, speeds: list[cm.CipherSpeed] | None) -> list[Pair]:
    """Every (AES, 3DES) pair with data; empty when the run has no 3DES config."""
    m = rs.analysis.measurements
    specs = {c: parse_spec(e) for c, e in m.encryption.items() if e and e.lower() != "none"}
    out = []
    for es in rs.engines:
        mine = {c: s for c, s in specs.items() if c in es.configs}
        for des, dspec in ((c, s) for c, s in mine.items() if is_3des(s)):
            for aes, aspec in mine.items():
                if aspec.cipher.replace("pgp-", "").startswith("aes") and _family(aspec) == _family(dspec):
                    rows = _rows(rs, aes, des)
                    if rows:
                        out.append(Pair(es.engine, aes, des, str(aspec), str(dspec),
                                        _cipher_ratio(aspec, dspec, speeds), rows))
    return out


def needed(rs: RunSummary) -> bool:
    """True when some config uses 3DES."""
    return any(is_3des(parse_spec(e)) for e in rs.analysis.measurements.encryption.values()
               if e and e.lower() != "none")


def fmt_ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def table_rows(p: Pair) -> tuple[list[str], list[list[str]]]:
    from tdebench.report.fmt import fmt_value

    headers = ["test", "step", f"{p.aes_spec} (median)", f"{p.des_spec} (median)", "3DES / AES", "95% CI"]
    rows = [[r.test, r.step, fmt_value(r.aes_s, "s"), fmt_value(r.des_s, "s"), fmt_ratio(r.ratio),
             "—" if r.ci_low is None or r.ci_high is None else f"{r.ci_low:.2f}–{r.ci_high:.2f}×"]
            for r in p.rows]
    return headers, rows


def sentence(p: Pair) -> str:
    """Where the difference is resolved (CI excludes 1×): the range of 3DES / AES; and the cipher's own ratio."""
    cipher = (f" The 3DES cipher alone encrypts {p.cipher_ratio:.0f}× slower than {p.aes_spec}'s AES on one core "
              "here.") if p.cipher_ratio else ""
    resolved = [r for r in p.rows if r.ci_low is not None and r.ci_high is not None
                and (r.ci_low > 1 or r.ci_high < 1) and r.step != "total"]
    if not resolved:
        return f"{p.engine}: no step resolves a difference between {p.des_spec} and {p.aes_spec} at this n.{cipher}"
    lo, hi = min(resolved, key=lambda r: r.ratio), max(resolved, key=lambda r: r.ratio)
    steps = ", ".join(r.step for r in resolved)
    return (f"{p.engine}: {p.des_spec} took {lo.ratio:.2f}× to {hi.ratio:.2f}× the time of {p.aes_spec} where the "
            f"difference is resolved (95% CI excludes 1×: {steps}).{cipher}")
