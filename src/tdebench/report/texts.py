"""Plain-language text shared by the HTML and Markdown reports (methods, facts, labels)."""

from __future__ import annotations

from typing import Any

from tdebench.report.fmt import fmt_bytes
from tdebench.report.model import RunSummary, VerificationRow
from tdebench.stats.analysis import StatsSettings
from tdebench.stats.load import SeriesKey
from tdebench.stats.metrics import step_label


def headline_label(key: SeriesKey | None) -> str:
    """``power total`` for the headline series (``—`` when there is none)."""
    if key is None:
        return "—"
    if key.metric == "tpm":
        return f"TPM at {key.step}"
    return f"{key.test} {step_label(key.step)}"


def stats_methods(s: StatsSettings) -> list[str]:
    """The statistical methods, one paragraph each."""
    method = "percentile" if s.ci_method == "percentile" else "bias-corrected and accelerated (BCa)"
    return [
        "Only rows with status ok count. Block 0 (warm-up) is discarded; failed and timed-out "
        "values are counted and excluded.",
        "Per config and step: n, mean, median, standard deviation (n−1), coefficient of variation "
        "(CV = sd / mean), min and max.",
        f"Overhead = median(config) / median(plain twin) − 1. Its {s.confidence:.0%} confidence "
        f"interval is a {method} bootstrap with {s.n_resamples:,} resamples "
        f"(numpy default_rng, seed {s.seed}): when both configs have one value in the same "
        "blocks, blocks are resampled as pairs; otherwise each config is resampled on its own.",
        "The p-value is a two-sided Welch t-test (unequal variances) on the raw values; it needs at "
        f"least 2 values per config. \"Significant\" means p < {s.alpha:g} and an interval that "
        "excludes 0; \"inconclusive\" means the two disagree.",
        "With three or more configs of one engine: one-way ANOVA with eta-squared, Tukey HSD for "
        "each pair, and Kruskal–Wallis, which is the test to read when a group is skewed "
        "(|skew| > 1 or Shapiro–Wilk p < 0.05).",
        f"Minimum detectable effect: (t(1−α/2) + t(power)) · √2 · CV / √n with df = 2n − 2, "
        f"α = {s.alpha:g}, power = {s.power:g}, CV pooled over both configs; the trials needed "
        "to resolve an effect come from the same formula.",
        f"Warnings are raised for a CV above {s.cv_limit_pct:g}%, fewer than {s.min_trials} "
        "values, and intervals that span zero.",
    ]


def yes_no(x: bool | None) -> str:
    """yes / no / not checked."""
    return "not checked" if x is None else ("yes" if x else "no")


def status_text(v: VerificationRow) -> str:
    """The encryption status query results as ``key=value`` pairs."""
    if not v.status:
        return "—"
    return ", ".join(f"{k}={'none' if val is None else val}" for k, val in v.status.items())


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
    ]


def plan_facts(manifest: dict[str, Any]) -> list[tuple[str, object]]:
    """Plan and data facts from the manifest."""
    p = manifest.get("plan") if isinstance(manifest.get("plan"), dict) else {}
    d = manifest.get("data") if isinstance(manifest.get("data"), dict) else {}
    tool = manifest.get("tool") if isinstance(manifest.get("tool"), dict) else {}
    tests = p.get("tests")
    return [
        ("tool", f"{tool.get('name', 'tdebench')} {tool.get('version', '')}".strip()),
        ("workload", p.get("workload")),
        ("tests", ", ".join(map(str, tests)) if isinstance(tests, list) else tests),
        ("scale factor", p.get("sf", d.get("sf"))), ("trials per config", p.get("trials")),
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
        "Per config: the engine's encryption status query (results shown as reported), a scan of "
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
    return text + (f"; {m.skipped_rows} rows unreadable or with an unknown status" if m.skipped_rows else "")
