"""Statistics checked against scipy/numpy computed here on fixed data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tdebench.stats import (
    BOOTSTRAP_MIN_N, SeriesKey, StatsSettings, all_caveats, analyze, anova_by_step,
    bootstrap_median_ci, bootstrap_ratio_ci, compare_samples, compute_overheads, condense, describe,
    eta_squared, log_t, mde_pct, overhead_interval, parse_rows, summarize_series,
    trials_needed, welch_p,
)
from tdebench.stats.anova import ALL_CONFIGS, ENCRYPTED_ONLY, skewness_check
from tdebench.stats.coverage import COMMAND, COVERAGE, coverage_phrase
from tdebench.stats.load import Sample
from tdebench.stats.wording import outcome_word, verdict_word

PLAIN = [10.2, 10.5, 9.9, 10.8, 10.1, 10.4, 9.7, 10.6, 10.3, 10.0, 10.9, 10.2]
ENC = [11.1, 11.6, 10.9, 11.8, 11.0, 11.5, 10.8, 11.9, 11.2, 11.1, 12.0, 11.3]


def rows(config: str, encryption: str, values: list[float], *, step: str = "total",
         start_block: int = 1, status: str = "ok", engine: str = "sqlite") -> list[dict[str, str]]:
    """measurements.csv records for one series, one value per block."""
    return [{"run_id": "r", "block": str(start_block + i), "trial": str(start_block + i),
             "config": config, "engine": engine, "encryption": encryption, "workload": "tpch",
             "test": "power", "stream": "", "step": step, "metric": "elapsed",
             "value": "" if math.isnan(v) else repr(v), "unit": "s",
             "started_at": "2026-01-01T00:00:00Z", "status": status}
            for i, v in enumerate(values)]


def test_load_keeps_ok_rows_and_counts_the_rest() -> None:
    recs = (rows("p", "none", [9.0], start_block=0, status="warmup")
            + rows("p", "none", [5.0], start_block=0)            # block 0 is warm-up whatever status
            + rows("p", "none", [1.0, 2.0, 3.0])
            + rows("p", "none", [float("nan")], start_block=4, status="failed")
            + rows("p", "none", [float("nan")] * 2, start_block=5, status="timeout")
            + rows("p", "none", [float("nan")], start_block=7))   # ok but no value
    m = parse_rows(recs)
    key = SeriesKey("sqlite", "p", "tpch", "power", "total", "elapsed")
    assert m.sample(key).values.tolist() == [1.0, 2.0, 3.0]
    assert m.sample(key).blocks.tolist() == [1, 2, 3]
    assert m.warmup_rows == 2 and m.failed[key] == 1 and m.timeouts[key] == 2
    assert m.skipped_rows == 1
    s = summarize_series(m)[key]
    assert (s.n, s.n_failed, s.n_timeout) == (3, 1, 2)


def test_concurrent_streams_of_one_trial_are_one_observation() -> None:
    """Two throughput streams per block: one value per block (their mean), so an interval or an ANOVA counts
    trials, not streams, and the comparison pairs by block."""
    def streams(config: str, enc: str, per_block: list[tuple[float, float]]) -> list[dict[str, str]]:
        out = []
        for b, pair in enumerate(per_block, start=1):
            for stream, v in enumerate(pair, start=1):
                (rec,) = rows(config, enc, [v], start_block=b)
                out.append({**rec, "test": "throughput", "stream": str(stream)})
        return out
    m = parse_rows(streams("p", "none", [(10.0, 12.0), (11.0, 13.0), (9.0, 11.0)])
                   + streams("e", "tde:aes-256-cbc", [(10.5, 12.5), (11.5, 13.5), (9.5, 11.5)]))
    key = SeriesKey("sqlite", "p", "tpch", "throughput", "total", "elapsed")
    assert m.sample(key).values.tolist() == [11.0, 12.0, 10.0] and m.sample(key).blocks.tolist() == [1, 2, 3]
    (o,) = compute_overheads(m, n_resamples=200)
    assert (o.n_plain, o.n_config) == (3, 3) and o.ci_method.endswith("paired")


def test_describe_matches_numpy_and_scipy() -> None:
    v = np.array(PLAIN)
    d = describe(v)
    assert d["n"] == v.size
    assert d["mean"] == pytest.approx(np.mean(v))
    assert d["median"] == pytest.approx(np.median(v))
    assert d["stddev"] == pytest.approx(np.std(v, ddof=1))
    assert d["cv_pct"] == pytest.approx(stats.variation(v, ddof=1) * 100)
    assert (d["min"], d["max"]) == (v.min(), v.max())
    assert describe(np.array([3.0]))["stddev"] is None
    assert describe(np.array([]))["n"] == 0


def test_welch_p_matches_scipy_and_needs_two_values() -> None:
    expected = stats.ttest_ind(ENC, PLAIN, equal_var=False).pvalue
    assert welch_p(np.array(PLAIN), np.array(ENC)) == pytest.approx(expected)
    assert welch_p(np.array([1.0]), np.array(ENC)) is None
    assert welch_p(np.array([1.0, 1.0]), np.array([1.0, 1.0])) is None  # nan -> None


def test_overhead_from_ten_trials_is_the_bootstrapped_ratio_of_medians() -> None:
    assert len(PLAIN) >= BOOTSTRAP_MIN_N
    m = parse_rows(rows("p", "none", PLAIN) + rows("e", "sqlcipher:aes-256-cbc", ENC))
    (o,) = compute_overheads(m, n_resamples=2000)
    assert o.overhead_pct == pytest.approx((np.median(ENC) / np.median(PLAIN) - 1) * 100)
    assert o.median_plain == pytest.approx(np.median(PLAIN))
    assert o.p_value == pytest.approx(stats.ttest_rel(np.log(ENC), np.log(PLAIN)).pvalue)
    assert (o.ci_method, o.p_method) == ("bootstrap-percentile-paired", "t-log-paired")
    assert o.paired and o.n == 12 and o.plain_config == "p"
    assert o.ci_low_pct < o.overhead_pct < o.ci_high_pct
    assert verdict_word(o) == "slower" and o.p_value < 0.05
    # different blocks -> independent resampling and Welch on the logs
    m2 = parse_rows(rows("p", "none", PLAIN) + rows("e", "x", ENC, start_block=20))
    o2 = compute_overheads(m2, n_resamples=500)[0]
    assert not o2.paired and (o2.ci_method, o2.p_method) == ("bootstrap-percentile", "welch-log")
    assert o2.p_value == pytest.approx(
        stats.ttest_ind(np.log(ENC), np.log(PLAIN), equal_var=False).pvalue)


def test_few_trials_get_the_paired_t_interval_on_log_ratios() -> None:
    plain, enc = PLAIN[:3], [11.6, 10.9, 11.9]
    m = parse_rows(rows("p", "none", plain) + rows("e", "sqlcipher:aes-256-cbc", enc))
    (o,) = compute_overheads(m)
    d = np.log(enc) - np.log(plain)
    ref = stats.ttest_1samp(d, 0.0)
    ci = ref.confidence_interval(0.95)
    assert (o.ci_method, o.p_method, o.paired) == ("t-log-paired", "t-log-paired", True)
    assert o.overhead_pct == pytest.approx(np.expm1(d.mean()) * 100)  # geometric mean ratio − 1
    assert o.overhead_pct == pytest.approx((stats.gmean(enc) / stats.gmean(plain) - 1) * 100)
    assert (o.ci_low_pct, o.ci_high_pct) == pytest.approx((np.expm1(ci.low) * 100, np.expm1(ci.high) * 100))
    assert o.p_value == pytest.approx(ref.pvalue)
    assert o.median_plain == pytest.approx(np.median(plain))  # medians stay medians
    assert o.ci_low_pct < o.overhead_pct < o.ci_high_pct


def test_unpaired_few_trials_get_welch_on_logs() -> None:
    plain, enc = [10.2, 10.5, 9.9], [11.1, 11.6]
    m = parse_rows(rows("p", "none", plain) + rows("e", "x", enc, start_block=2))
    (o,) = compute_overheads(m)
    ref = stats.ttest_ind(np.log(enc), np.log(plain), equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert (o.ci_method, o.p_method, o.paired) == ("welch-log", "welch-log", False)
    assert o.overhead_pct == pytest.approx((stats.gmean(enc) / stats.gmean(plain) - 1) * 100)
    assert (o.ci_low_pct, o.ci_high_pct) == pytest.approx((np.expm1(ci.low) * 100, np.expm1(ci.high) * 100))
    assert o.p_value == pytest.approx(ref.pvalue)


def test_t_interval_and_its_p_value_agree() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        plain = np.exp(rng.normal(0, 0.05, 3))
        enc = plain * np.exp(rng.normal(0.03, 0.05, 3))
        r = log_t(plain, enc, paired=True)
        assert (r.p_value < 0.05) == (r.ci[0] > 0 or r.ci[1] < 0)


def test_non_positive_values_fall_back_to_the_bootstrap_and_raw_welch() -> None:
    plain, enc = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    iv = overhead_interval(plain, enc, paired=True, n_resamples=500)
    assert (iv.ci_method, iv.p_method) == ("bootstrap-percentile-paired", "welch")
    assert iv.estimate == pytest.approx(1.0)  # ratio of medians − 1
    assert iv.p_value == pytest.approx(welch_p(plain, enc))
    assert log_t(plain, enc, paired=True) is None


def test_constant_ratio_gives_a_point_interval_and_no_p() -> None:
    plain = np.array([1.0, 2.0, 4.0])
    iv = overhead_interval(plain, plain * 1.1, paired=True)
    assert iv.ci_method == "t-log-paired" and iv.p_value is None and iv.p_method == ""
    assert iv.ci == pytest.approx((0.1, 0.1)) and iv.estimate == pytest.approx(0.1)


def test_method_setting_overrides_the_n_threshold() -> None:
    m = parse_rows(rows("p", "none", PLAIN) + rows("e", "x", ENC))
    (forced_t,) = analyze(m, settings=StatsSettings(ci_method="t-log", n_resamples=200)).overheads
    assert forced_t.ci_method == "t-log-paired"
    small = parse_rows(rows("p", "none", PLAIN[:3]) + rows("e", "x", ENC[:3]))
    (boot,) = analyze(small, settings=StatsSettings(ci_method="bca", n_resamples=200)).overheads
    assert boot.ci_method == "bootstrap-bca-paired"
    assert boot.overhead_pct == pytest.approx((np.median(ENC[:3]) / np.median(PLAIN[:3]) - 1) * 100)


def test_single_value_gives_no_ci_and_no_p() -> None:
    c = compare_samples(Sample(np.array([1.0]), np.array([1])), Sample(np.array([1.2]), np.array([1])))
    assert c.pct == pytest.approx(20.0)
    assert c.ci_low_pct is None and c.p_value is None and (c.ci_method, c.p_method) == ("", "")
    assert outcome_word(c.ci_low_pct, c.ci_high_pct) == "no interval"


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    a, b = np.array(PLAIN), np.array(ENC)
    assert bootstrap_ratio_ci(a, b, seed=3) == bootstrap_ratio_ci(a, b, seed=3)
    assert bootstrap_ratio_ci(a, b, seed=3) != bootstrap_ratio_ci(a, b, seed=4)


@pytest.mark.parametrize(("method", "paired"), [("percentile", True), ("percentile", False),
                                                ("BCa", True), ("BCa", False)])
def test_bootstrap_ci_agrees_with_scipy(method: str, paired: bool) -> None:
    a, b = np.array(PLAIN), np.array(ENC)

    def ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.median(y, axis=axis) / np.median(x, axis=axis) - 1

    ref = stats.bootstrap((a, b), ratio, paired=paired, vectorized=True, n_resamples=20_000,
                          method=method, rng=np.random.default_rng(1)).confidence_interval
    ours = bootstrap_ratio_ci(a, b, paired=paired, n_resamples=20_000, seed=2,
                              method="bca" if method == "BCa" else "percentile")
    # Monte Carlo error of two independent 20k-resample runs on a ~10% ratio
    assert ours[0] == pytest.approx(ref.low, abs=0.004)
    assert ours[1] == pytest.approx(ref.high, abs=0.004)


def test_median_ci_agrees_with_scipy() -> None:
    v = np.array(PLAIN)
    ref = stats.bootstrap((v,), np.median, n_resamples=20_000, method="percentile",
                          rng=np.random.default_rng(1)).confidence_interval
    lo, hi = bootstrap_median_ci(v, n_resamples=20_000, seed=5)
    assert lo == pytest.approx(ref.low, abs=0.05) and hi == pytest.approx(ref.high, abs=0.05)


def test_mde_formula_and_trials_needed() -> None:
    n, cv = 3, 5.0
    t = stats.t.ppf(0.975, 2 * n - 2) + stats.t.ppf(0.8, 2 * n - 2)
    assert mde_pct(cv, n) == pytest.approx(t * math.sqrt(2) * cv / math.sqrt(n))
    assert mde_pct(cv, 1) is None
    need = trials_needed(2.0, cv)
    assert mde_pct(cv, need) <= 2.0 < mde_pct(cv, need - 1)
    # cross-check with the exact power of a two-sample t-test (noncentral t)
    d = 2.0 / cv
    df = 2 * need - 2
    nc = d * math.sqrt(need / 2)
    power = 1 - stats.nct.cdf(stats.t.ppf(0.975, df), df, nc)
    assert 0.78 <= power <= 0.85
    assert trials_needed(0.0, cv) is None and trials_needed(5.0, None) is None


def test_anova_tukey_kruskal_eta_match_scipy() -> None:
    g1, g2, g3 = [10.0, 10.4, 9.8, 10.1], [10.9, 11.2, 10.7, 11.0], [10.3, 10.1, 10.6, 10.2]
    m = parse_rows(rows("a", "none", g1) + rows("b", "tde:aes-128-cbc", g2)
                   + rows("c", "tde:aes-256-cbc", g3))
    (res,) = anova_by_step(m)
    f = stats.f_oneway(g1, g2, g3)
    kw = stats.kruskal(g1, g2, g3)
    assert res.configs == ("a", "b", "c")
    assert res.f_stat == pytest.approx(f.statistic) and res.p_anova == pytest.approx(f.pvalue)
    assert res.p_kruskal == pytest.approx(kw.pvalue)
    allv = np.concatenate([g1, g2, g3])
    ss_b = sum(len(g) * (np.mean(g) - allv.mean()) ** 2 for g in (g1, g2, g3))
    assert res.eta_squared == pytest.approx(ss_b / ((allv - allv.mean()) ** 2).sum())
    tk = stats.tukey_hsd(g1, g2, g3)
    ab = next(t for t in res.tukey if (t.config_a, t.config_b) == ("a", "b"))
    assert ab.p_value == pytest.approx(tk.pvalue[0, 1])
    assert ab.mean_diff == pytest.approx(np.mean(g2) - np.mean(g1))
    assert ab.ci_low < ab.mean_diff < ab.ci_high
    assert anova_by_step(parse_rows(rows("a", "none", g1) + rows("b", "x", g2))) == []



def test_key_lengths_get_their_own_test_without_the_plain_config() -> None:
    """Plain + three key lengths: the test over all four, then the same over the three encrypted ones (the
    MySQL/MariaDB study's question: do AES-128/192/256 differ?). Three configs with one plain: no second test."""
    plain, k128, k192, k256 = [10.0, 10.2, 9.9], [11.0, 11.1, 10.8], [11.0, 10.9, 11.2], [10.9, 11.1, 11.0]
    m = parse_rows(rows("p", "none", plain) + rows("a", "tde:aes-128-cbc", k128)
                   + rows("b", "tde:aes-192-cbc", k192) + rows("c", "tde:aes-256-cbc", k256))
    everything, keys = anova_by_step(m)
    assert everything.scope == ALL_CONFIGS and everything.configs == ("p", "a", "b", "c")
    assert keys.scope == ENCRYPTED_ONLY and keys.configs == ("a", "b", "c")
    assert everything.p_anova < 0.001, "plain differs from the encrypted configs"
    assert keys.p_anova == pytest.approx(stats.f_oneway(k128, k192, k256).pvalue) and keys.p_anova > 0.5
    assert {(t.config_a, t.config_b) for t in keys.tukey} == {("a", "b"), ("a", "c"), ("b", "c")}
    three = parse_rows(rows("p", "none", plain) + rows("a", "tde:aes-128-cbc", k128)
                       + rows("c", "tde:aes-256-cbc", k256))
    assert [r.scope for r in anova_by_step(three)] == [ALL_CONFIGS]

def test_skew_detection_and_eta_edge_cases() -> None:
    skewed, reason = skewness_check([np.array([1.0, 1.0, 1.1, 1.0, 1.05, 1.0, 3.0])])
    assert skewed and reason
    assert skewness_check([np.array([1.0, 1.1, 1.2, 1.3, 1.4])]) == (False, "")
    assert eta_squared([np.array([1.0, 1.0]), np.array([1.0, 1.0])]) is None


def test_caveats_speak_plainly() -> None:
    noisy = [10.0, 11.5, 9.0]
    m = parse_rows(rows("p", "none", noisy) + rows("e", "sqlcipher:aes-256-cbc", [10.1, 11.4, 9.2])
                   + rows("p", "none", [1.0, 1.1], step="q01")
                   + rows("p", "none", [float("nan")], step="q01", start_block=3, status="failed"))
    a = analyze(m)
    kinds = {c.kind for c in a.caveats}
    assert {"noise", "small_n", "failures", "no_effect"} <= kinds
    msg = next(c.message for c in a.caveats if c.kind == "no_effect")
    assert "no difference resolved" in msg and "n = 3 trials)" in msg and "blocks in all would narrow it to ±2 points" in msg
    assert "overhead" not in msg  # an estimate whose interval spans zero is not called an overhead
    assert any("CV" in c.message and "above 5%" in c.message for c in a.caveats)
    folded = condense(all_caveats(a.summaries, a.overheads), lambda k: k.step == "total",
                      fold_above=0)
    assert any(c.key is None and "series" in c.message for c in folded)


def test_small_n_note_states_the_measured_coverage_of_the_method_used() -> None:
    m = parse_rows(rows("p", "none", PLAIN[:3]) + rows("e", "x", ENC[:3]))
    (note,) = [c for c in analyze(m).caveats if c.kind == "small_n_ci"]
    t3 = COVERAGE["t-log-paired"][3]
    assert f"{t3.low * 100:.1f}–{t3.high * 100:.1f}%" in note.message and COMMAND in note.message
    assert "t-interval on the paired log ratios" in note.message and "too narrow" not in note.message
    boot = analyze(m, settings=StatsSettings(ci_method="percentile", n_resamples=200)).caveats
    (old,) = [c for c in boot if c.kind == "small_n_ci"]
    b3 = COVERAGE["bootstrap-percentile-paired"][3]
    assert f"{b3.low * 100:.1f}–{b3.high * 100:.1f}%" in old.message and "too narrow" in old.message
    assert coverage_phrase("t-log-paired", 4).startswith("not simulated at n = 4 (n = 3: ")
