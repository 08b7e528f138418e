"""Plain-language text shared by the HTML and Markdown reports (methods, facts, labels)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tdebench.report.fmt import fmt_bytes
from tdebench.report.model import RunSummary, VerificationRow, headline_name
from tdebench.stats.analysis import StatsSettings
from tdebench.stats.coverage import (
    COMMAND, COVERAGE, P_METHOD_NAMES, coverage_phrase, estimate_name, measured, method_name,
    span_text,
)
from tdebench.stats.interval import BOOTSTRAP_MIN_N
from tdebench.stats.load import SeriesKey
from tdebench.stats.overhead import Overhead

#: the column of the headline's overhead in its time at a common wait per page read (pages read from the disk)
WAIT_COL = "at a common read wait"

RATIO_METHOD = (f"below {BOOTSTRAP_MIN_N} trials the geometric-mean ratio with a t-interval on the log "
                f"values, from {BOOTSTRAP_MIN_N} on the ratio of medians with a bootstrap interval; "
                "see Methods")


def headline_label(key: SeriesKey | None) -> str:
    """``power total`` for the headline series (``—`` when there is none)."""
    return "—" if key is None else headline_name(key)


def _bootstrap_text(s: StatsSettings) -> str:
    kind = "bias-corrected and accelerated (BCa)" if s.ci_method == "bca" else "percentile"
    return (f"median(config) / median(plain twin) − 1 with a {kind} bootstrap interval "
            f"({s.n_resamples:,} resamples, numpy default_rng, seed {s.seed}; blocks resampled as "
            "pairs when both configs have one value in the same blocks)")


_T_TEXT = ("when both configs have one value in the same blocks, the geometric mean of the per-block "
           "ratios config / plain − 1, with a t-interval on the log ratios (mean ± t(n−1) · sd / √n, "
           "then exp(·) − 1); otherwise the ratio of the geometric means − 1 with Welch's interval on "
           "the log values")


def overhead_method(s: StatsSettings) -> str:
    """How the overhead and its interval are computed under these settings."""
    conf = f"{s.confidence:.0%}"
    if s.ci_method == "auto":
        return (f"Overhead vs the plain twin and its {conf} confidence interval: below "
                f"{BOOTSTRAP_MIN_N} trials per config, {_T_TEXT}. From {BOOTSTRAP_MIN_N} trials on, "
                f"and whenever a value is not positive (no logarithm): {_bootstrap_text(s)}. The "
                "method of each row is in overhead.csv's ci_method column.")
    if s.ci_method == "t-log":
        return (f"Overhead vs the plain twin and its {conf} confidence interval: {_T_TEXT}; when a "
                f"value is not positive (no logarithm): {_bootstrap_text(s)}. The method of each row "
                "is in overhead.csv's ci_method column.")
    return f"Overhead = {_bootstrap_text(s)}, at {conf}."


def _why_auto() -> str:
    """Why ``auto`` switches methods at BOOTSTRAP_MIN_N, in the measured figures."""
    old, t10 = measured("bootstrap-percentile-paired", 3), measured("t-log-paired", 10)
    b10 = measured("bootstrap-percentile-paired", 10)
    if not (old and t10 and b10):
        return ""
    floor = min(min(m.low, m.outliers)
                for name in ("bootstrap-percentile-paired", "bootstrap-percentile")
                for n, m in COVERAGE[name].items() if n >= BOOTSTRAP_MIN_N)
    return (f" The paired percentile bootstrap covers only {span_text(old)} at n = 3, hence the "
            f"t-interval below {BOOTSTRAP_MIN_N} trials; from {BOOTSTRAP_MIN_N} on the bootstrap "
            f"covers {floor * 100:.1f}% or more and stays narrow with outliers "
            f"({b10.width_outliers_pp:.0f} vs {t10.width_outliers_pp:.0f} points for the "
            f"t-interval at n = 10).")


def coverage_method(s: StatsSettings) -> str:
    """Measured coverage of the intervals these settings use (from the simulation benchmark)."""
    t_cells = [("t-log-paired", 3), ("t-log-paired", 5), ("welch-log", 3)]
    used = {"auto": t_cells + [("bootstrap-percentile-paired", BOOTSTRAP_MIN_N)],
            "t-log": t_cells}.get(s.ci_method,
                                  [(f"bootstrap-{s.ci_method}-paired", n) for n in (3, 5, 10)])
    facts = "; ".join(f"{method_name(m)} at n = {n}: {coverage_phrase(m, n)}" for m, n in used)
    return (f"Measured coverage of a nominal 95% interval around a known +10% overhead in "
            f"simulation (“{COMMAND}”; lognormal noise with CV 2–15%, in paired cases with a block "
            f"effect shared by the twins; outliers: 5% of values doubled): {facts}."
            + (_why_auto() if s.ci_method == "auto" else ""))


def stats_methods(s: StatsSettings) -> list[str]:
    """The statistical methods, one paragraph each."""
    return [
        "Only rows with status ok count. Block 0 (warm-up) is discarded; failed and timed-out "
        "values are counted and excluded.",
        "Per config and step: n, mean, median, standard deviation (n−1), coefficient of variation "
        "(CV = sd / mean), min and max.",
        overhead_method(s),
        coverage_method(s),
        "The p-value is a two-sided t-test on the log values: paired by block (on the log ratios) "
        "when both configs have one value in the same blocks, Welch's otherwise, so with the "
        "t-interval p < 0.05 exactly when the interval excludes 0; when a value is not positive, "
        "Welch's test on the raw values (overhead.csv's p_method column). It needs at least 2 "
        f"values per config. The interval decides the verdict, in every view: slower or faster (higher or lower "
        "for a throughput) when it excludes 0, \"no difference resolved\" when it spans 0, \"no interval\" "
        f"without one; the p-value is shown beside it, and a warning says so when p < {s.alpha:g} while the "
        "interval spans 0 (the bootstrap interval and the t-test can disagree).",
        "With three or more configs of one engine: one-way ANOVA with eta-squared, Tukey HSD for "
        "each pair, and Kruskal–Wallis, which is the test to read when a group is skewed "
        "(|skew| > 1 or Shapiro–Wilk p < 0.05).",
        f"Minimum detectable effect: (t(1−α/2) + t(power)) · √2 · CV / √n with df = 2n − 2, "
        f"α = {s.alpha:g}, power = {s.power:g}, CV pooled over both configs; the trials needed "
        "to resolve an effect come from the same formula.",
        f"Warnings are raised for a CV above {s.cv_limit_pct:g}%, fewer than {s.min_trials} "
        "values, and intervals that span zero.",
    ]


def overhead_note(overheads: Iterable[Overhead]) -> str:
    """``overhead = …; p from …`` for the methods these rows actually used."""
    rows = list(overheads)
    if not rows:
        return "no overhead computed in this run (no plain config to compare with)."
    ci = sorted({o.ci_method for o in rows if o.ci_method})
    p = sorted({o.p_method for o in rows if o.p_method})
    if not ci:
        return "overhead = ratio of medians − 1 (no interval: too few trials)."
    parts = [f"{estimate_name(m)} with a 95% {method_name(m)}" for m in ci]
    tests = [P_METHOD_NAMES.get(m, m) for m in p]
    return ("overhead = " + "; or ".join(parts)
            + (f"; p from the {' or '.join(tests)}" if tests else "") + ".")


def yes_no(x: bool | None) -> str:
    """yes / no / not checked."""
    return "not checked" if x is None else ("yes" if x else "no")


#: items of a list a status shows before "and N more"
SHOWN_ITEMS = 4


def _items(values: list[Any] | tuple[Any, ...]) -> str:
    words = [_word(v) for v in values]
    more = f" and {len(words) - SHOWN_ITEMS} more" if len(words) > SHOWN_ITEMS else ""
    return ", ".join(words[:SHOWN_ITEMS]) + more


def _word(value: Any) -> str:
    """One value in words: yes/no, none, a number, a text without its statement's semicolon."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return _items(value) if value else "none"
    if isinstance(value, dict):
        return ", ".join(_entry(k, v) for k, v in value.items()) or "none"
    return str(value).strip().rstrip(";").strip()


def _entry(key: str, value: Any) -> str:
    """One entry of a nested status: ``innodb_encrypt_log ON`` (a setting keeps its name), ``9 encrypted (a, b,
    c, d and 5 more)``, ``unencrypted none``, ``system tablespace encrypted yes``."""
    if isinstance(value, str):
        return f"{key} {_word(value)}"
    name = str(key).replace("_", " ")
    if isinstance(value, (list, tuple)) and value:
        return f"{len(value)} {name} ({_items(value)})"
    return f"{name} {_word(value)}"


def status_text(v: VerificationRow) -> str:
    """The encryption status query results in words: ``enabled: yes; variables: innodb_encrypt_log ON, …;
    tablespaces: schema tpcc, 9 encrypted (tpcc/customer, … and 5 more), unencrypted none``."""
    if not v.status:
        return "—"
    return "; ".join(f"{str(k).replace('_', ' ')}: {_word(val)}" for k, val in v.status.items())


def host_facts(manifest: dict[str, Any]) -> list[tuple[str, object]]:
    """Machine facts from the manifest."""
    h = manifest.get("host") if isinstance(manifest.get("host"), dict) else {}
    aes = h.get("aes_ni")
    return [
        ("host", h.get("hostname")), ("CPU", h.get("cpu_model")),
        ("AES-NI", None if aes is None else ("yes" if aes else "no")),
        ("cores", h.get("cores")),
        ("memory", fmt_bytes(h["memory_bytes"]) if isinstance(h.get("memory_bytes"), (int, float))
         and h.get("memory_bytes") else None),
        ("kernel", h.get("kernel")), ("OS", h.get("os")), ("Python", h.get("python")),
        ("autogroup", None if h.get("autogroup") is None else ("on" if h["autogroup"] else "off")),
    ]


def workload_option(plan: dict[str, Any], key: str, default: object = None) -> object:
    """A workload option of the manifest's plan (schema 1 kept TPC-H's options at the top of the plan)."""
    options = plan.get("workload_options") if isinstance(plan.get("workload_options"), dict) else {}
    return options.get(key, plan.get(key, default))


def plan_facts(manifest: dict[str, Any]) -> list[tuple[str, object]]:
    """Plan and data facts from the manifest."""
    p = manifest.get("plan") if isinstance(manifest.get("plan"), dict) else {}
    d = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
    tool = manifest.get("tool") if isinstance(manifest.get("tool"), dict) else {}
    options = p.get("workload_options") if isinstance(p.get("workload_options"), dict) else {}
    tests = workload_option(p, "tests")
    others = {k: v for k, v in options.items() if k not in ("sf", "tests")}
    return [
        ("tool", f"{tool.get('name', 'tdebench')} {tool.get('version', '')}".strip()),
        ("workload", p.get("workload")),
        ("tests", ", ".join(map(str, tests)) if isinstance(tests, list) else tests),
        ("workload options", ", ".join(f"{k} {v}" for k, v in others.items()) or None),
        ("scale factor", workload_option(p, "sf", d.get("sf"))), ("trials per config", p.get("trials")),
        ("warm-up trials", p.get("warmup_trials")), ("cache", p.get("cache")),
        ("plan seed", p.get("seed")), ("data generator", d.get("generator")),
        ("started", manifest.get("created_at")), ("finished", manifest.get("finished_at")),
        ("status", manifest.get("status")),
    ]


def blocks(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """Trial order: (block, "a → b → c") per block of the plan."""
    plan = manifest.get("plan") if isinstance(manifest.get("plan"), dict) else {}
    out = []
    for b in plan.get("blocks") or []:
        if isinstance(b, dict):
            label = "0 (warm-up)" if b.get("block") == 0 else str(b.get("block", ""))
            out.append((label, " → ".join(map(str, b.get("order") or []))))
    return out


def settings_text(settings: dict[str, Any]) -> str:
    """Engine settings as ``key=value`` pairs."""
    return ", ".join(f"{k}={v}" for k, v in settings.items()) or "defaults"


def verification_method(rs: RunSummary) -> list[str]:
    """What was verified and how, from verification.json."""
    v = rs.files.verification
    if v is None:
        return ["No verification.json in this run: encryption on disk and answer equality were "
                "not checked."]
    notes = [f"{k.replace('_', ' ')}: {val}" for k, val in v.items()
             if isinstance(val, (str, int, float)) and not isinstance(val, bool)]
    return notes + [
        "Per config: the engine's encryption status query (what it reported, in words), a scan of "
        "every file of the data directory for canary plaintext (marker hits must be 0 for an "
        "encrypted config while the plain twin shows them), and equality of query answers "
        "between twins.",
    ]


def measurement_counts(rs: RunSummary) -> str:
    """Rows kept, discarded and failed."""
    m = rs.analysis.measurements
    failed, timeouts = sum(m.failed.values()), sum(m.timeouts.values())
    text = (f"{len(m.rows)} values kept; {m.warmup_rows} warm-up values discarded; "
            f"{failed} failed, {timeouts} timed out")
    faulted = sum(m.faulted.values())
    text += f"; {faulted} values of trials flagged by a fault (shown under Faults, not in the intervals)" if faulted \
        else ""
    return text + (f"; {m.skipped_rows} rows unreadable or with an unknown status" if m.skipped_rows else "")
