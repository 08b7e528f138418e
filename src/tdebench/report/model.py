"""What a report shows, computed once from the run directory (``summarize``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tdebench.api.measurement import ONE_OFF_TESTS
from tdebench.api.presentation import COMMON_WAIT, Presentation
from tdebench.api.regime import split_label
from tdebench.report.encrypt_view import SwitchRow, switch_rows, verdict_lines
from tdebench.report.counters_view import CounterIndex
from tdebench.report.fmt import fmt_p, fmt_value, fmt_value_ci
from tdebench.results.rundir import LoadedRun, load_run
from tdebench.results.labels import LabelStatus, label_status, manifest_label_status
from tdebench.report.regime_view import regime_sentences
from tdebench.report.shown import run_presentation
from tdebench.stats.analysis import Analysis, StatsSettings, analyze, settings_for_run
from tdebench.stats.anova import ALL_CONFIGS, ENCRYPTED_ONLY, AnovaResult
from tdebench.stats.caveats import Caveat, condense, resolution_hint
from tdebench.stats.describe import Summary
from tdebench.api.keys import split_keys
from tdebench.stats.load import SeriesKey, is_plain
from tdebench.stats.metrics import query_number, step_label, vu_count
from tdebench.stats.noise import spike_warning, summarize_noise
from tdebench.stats.overhead import Overhead
from tdebench.stats.seqinterval import paired_blocks
from tdebench.stats.wording import direction, n_text, phrase_for, verdict_word

#: the steps whose warnings are shown one by one, with the workload's headlines and official figures
HEADLINE_STEPS = frozenset({"total"})


@dataclass(frozen=True)
class VerificationRow:
    """What verification.json says about one config (tolerant of missing keys)."""

    config: str
    checked: bool
    encrypted_on_disk: bool | None = None
    marker_hits: int | None = None
    files_scanned: int | None = None
    answers_equal: bool | None = None
    status: dict[str, Any] = field(default_factory=dict)
    verdict: str = "not checked"
    good: bool | None = None  # True: as expected, False: a problem, None: unknown


@dataclass
class ConfigRow:
    """One line of an engine's summary table."""

    label: str
    encryption: str
    is_plain: bool
    engine_version: str
    settings: dict[str, Any]
    headline: Summary | None
    overhead: Overhead | None
    verdict: str  # the verdict's word for the headline overhead (stats.wording.verdict_word), "" without one
    figures: dict[str, Summary | None]  # the workload's official figures beside the headline, by title
    storage_bytes: int | None
    storage_pct: float | None
    verification: VerificationRow
    label_status: LabelStatus = field(default_factory=lambda: LabelStatus("not checked"))
    storage_scope: str = ""  # "catalog": the server's catalog sizes (external targets), not files
    is_baseline: bool = False  # the plain twin the others are compared with (a second plain twin is compared)
    cpu_overhead: Overhead | None = None  # the headline's overhead in server CPU time, when measured
    #: the headline's overhead in its time at a common wait per page read (pages read from the disk), when recorded
    wait_overhead: Overhead | None = None

    @property
    def shown_encryption(self) -> str:
        """The encryption label as every view shows it: with its status unless the evidence confirms it."""
        return self.label_status.decorate(self.encryption or self.label)

    @property
    def shown_label(self) -> str:
        """The config label with its label status when that is not confirmed (chart legends, column heads)."""
        return self.label_status.decorate(self.label)


@dataclass
class QueryRow:
    """One TPC-H query: summaries and overheads per config."""

    step: str
    summaries: dict[str, Summary]
    overheads: dict[str, Overhead]


@dataclass
class EngineSummary:
    """Everything about one engine: summary table, per-query table, verdicts, ANOVA."""

    engine: str
    plain: str | None
    configs: list[str]
    headline: SeriesKey | None  # with config ""
    rows: list[ConfigRow]
    queries: list[QueryRow]
    verdicts: list[str]
    anova: AnovaResult | None
    anova_encrypted: AnovaResult | None = None  # the same test over the encrypted configs only (key lengths)
    # the same step and metric of the run's other tests (TPC-H's throughput test beside the power test)
    anova_other_tests: list[AnovaResult] = field(default_factory=list)
    #: the memory regime of its figures in a DBA's words, one sentence per regime (:mod:`tdebench.report.regime_view`)
    regimes: list[str] = field(default_factory=list)
    #: a --precision run's outcome per compared config and watched figure (:func:`precision_outcomes`)
    precision: list[str] = field(default_factory=list)

    @property
    def n_unit(self) -> str:
        """What the summary table's n counts (its headline's values): ``rounds`` or ``trials``."""
        return next((r.headline.n_unit for r in self.rows if r.headline is not None), "trials")

    def anovas(self) -> list[AnovaResult]:
        """Every ANOVA the report shows: the headline's (all configs, encrypted only), then the other tests'."""
        return [r for r in (self.anova, self.anova_encrypted) if r is not None] + self.anova_other_tests


@dataclass
class RunSummary:
    """The computed structures behind a report; reusable by the CLI."""

    files: LoadedRun
    analysis: Analysis
    engines: list[EngineSummary]
    warnings: list[Caveat]
    #: how the run's workload is shown (its declaration, from the manifest or the installed workload)
    presentation: Presentation = field(default_factory=lambda: Presentation("run"))
    #: every warning, nothing folded (``warnings`` folds those of series beside the headline per kind)
    all_warnings: list[Caveat] = field(default_factory=list)

    @property
    def run_dir(self) -> Path:
        """The run directory."""
        return self.files.run_dir

    @property
    def manifest(self) -> dict[str, Any]:
        """manifest.json ({} when absent)."""
        return self.files.manifest

    def switches(self) -> list[SwitchRow]:
        """The switching table's rows, when the workload has a switching section (the encrypt workload)."""
        section = self.presentation.section("switching")
        if section is None:
            return []
        return switch_rows(self.analysis.measurements, [c for es in self.engines for c in es.configs], section.test)


def verification_row(files: LoadedRun, label: str, plain: bool) -> VerificationRow:
    """Read one config's verification entry and turn it into a verdict."""
    entry = files.verification_for(label)
    if entry is None:
        return VerificationRow(label, checked=False)
    enc = entry.get("encrypted_on_disk")
    enc = enc if isinstance(enc, bool) else None
    status = entry.get("status") if isinstance(entry.get("status"), dict) else {}
    if enc is None:
        if entry.get("deferred"):  # the workload scans itself (encrypt: after each switch)
            verdict = "scanned after each switch (Switching)"
        else:
            verdict = str(entry.get("note")) if entry.get("at_rest") == "not possible" else "not checked"
        good = None
    elif plain:
        verdict, good = ("no (plain twin, as expected)", True) if not enc else ("yes (unexpected)", None)
    else:
        verdict, good = ("yes", True) if enc else ("NO: plaintext found on disk", False)
    answers = entry.get("answers_equal")
    if answers is False:
        good = False
    return VerificationRow(
        label, True, enc, _int(entry.get("marker_hits")), _int(entry.get("files_scanned")),
        answers if isinstance(answers, bool) else None, status, verdict, good)


def _int(x: object) -> int | None:
    return int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def pick_headline(keys: list[SeriesKey], declared: tuple[str, str, str] | None = None) -> SeriesKey | None:
    """The series a verdict is about: the workload's own headline (``declared``: test, step, metric, from its
    presentation or the manifest), else any total time of a measured test, else the highest throughput at the
    most virtual users, else any total."""
    def first(pred: Any) -> SeriesKey | None:
        found = [k for k in keys if pred(k)]
        return found[0]._replace(config="") if found else None

    if declared:
        own = first(lambda k: (k.test, k.step, k.metric) == declared)
        if own is not None:
            return own

    vus = sorted((k for k in keys if k.metric in ("tpm", "tps") and vu_count(k.step) is not None),
                 key=lambda k: (vu_count(k.step) or 0, k.metric == "tpm"))
    return (first(lambda k: k.step == "total" and k.metric == "elapsed" and k.test not in ONE_OFF_TESTS)
            or (vus[-1]._replace(config="") if vus else None)
            or first(lambda k: k.step == "total"))


def _display_name(config: str, encryption: str, encryptions: list[str]) -> str:
    """The spec, unless two configs share it or the label names a key source (``+openbao``): then the label."""
    unique = encryption and encryptions.count(encryption) == 1 and not split_keys(split_label(config)[0])[1]
    return encryption if unique else config


def config_label_status(files: LoadedRun, label: str, plain: bool) -> LabelStatus:
    """The label status recorded for a config (manifest, else verification.json, else derived)."""
    return (manifest_label_status(files.manifest_config(label))
            or label_status(files.verification_for(label), plain))


def verdict_sentence(name: str, o: Overhead | None, a: Analysis, cpu: Overhead | None = None,
                     wait: Overhead | None = None) -> str:
    """One plain sentence about one compared config's headline overhead (and its server CPU time and its time at a
    common wait per page read beside it), worded by :func:`tdebench.stats.wording.phrase_for`: the same figures as
    every table and the terminal."""
    if o is None:
        return f"{name}: no overhead figure (no plain twin or no successful trials to compare)."
    against_plain = is_plain(a.measurements.encryption.get(o.plain_config, "none"))
    base = "plain" if against_plain and not is_plain(o.encryption) else o.plain_config  # else: A/A, or file keys
    phrase = phrase_for(o, a.summaries)
    if direction(o.ci_low_pct, o.ci_high_pct) != "none":
        phrase = phrase.replace(" (", f" than {base} (", 1)
    elif o.ci_low_pct is not None and o.ci_high_pct is not None:
        phrase += f" against {base}"
    elif base != "plain":  # no interval to word it by: say what it is against all the same
        name += f" against {base}"
    p = f", {fmt_p(o.p_value)}" if o.p_value is not None else ""
    hint = resolution_hint(o, a.measurements) if o.ci_spans_zero and o.ci_low_pct is not None else ""
    text = f"{name}: {phrase}{p}{hint}."
    for beside in (cpu, wait):
        if beside is not None:
            phrase = phrase_for(beside, a.summaries)
            text += f" {phrase[:1].upper()}{phrase[1:]}."
    return text


def plain_only_sentence(row: ConfigRow, headline: SeriesKey | None) -> str:
    """What a run with only a plain config measured (there is nothing to compare)."""
    h = row.headline
    what = (f"{headline_name(headline)} median {fmt_value(h.median, h.unit)}"
            + (f" (95% CI {fmt_value_ci(h.median_ci_low, h.median_ci_high, h.unit)})"
               if h.median_ci_low is not None else "")
            + f" over {n_text(h.n, h.n_unit)}" + (f", CV {h.cv_pct:.1f}%" if h.cv_pct is not None else "")) \
        if h is not None else "no successful trial"
    return (f"{row.shown_encryption} ({row.label}) alone was measured: {what}. There is no other config to compare "
            "it with; add an encrypted spec (or none,none for an A/A test) to --encryption for an overhead.")


def headline_name(key: SeriesKey | None) -> str:
    """``power total`` and the like (the report's texts say the same)."""
    if key is None:
        return "the headline"
    if key.metric in ("tpm", "tps"):
        return f"{'TPM' if key.metric == 'tpm' else 'TPS'} at {key.step}"
    return f"{key.test} {step_label(key.step)}"


def _config_row(files: LoadedRun, a: Analysis, label: str, headline: SeriesKey | None,
                plain_storage: int | None, figures: dict[str, str]) -> ConfigRow:
    mc = files.manifest_config(label)
    enc = a.measurements.encryption.get(label, str(mc.get("encryption", "")))
    plain = is_plain(enc)
    key = headline._replace(config=label) if headline else None
    ovh = a.overhead(key) if key else None
    cpu = a.overhead(key._replace(metric="server_cpu")) if key and key.metric == "elapsed" else None
    wait = a.overhead(key._replace(metric=COMMON_WAIT)) if key and key.metric == "elapsed" else None
    storage = _int(mc.get("storage_bytes"))
    pct = (storage / plain_storage - 1) * 100 if storage and plain_storage and not plain else None
    return ConfigRow(
        label=label, encryption=enc, is_plain=plain, engine_version=str(mc.get("engine_version", "")),
        settings=mc.get("settings") if isinstance(mc.get("settings"), dict) else {},
        headline=a.summaries.get(key) if key else None, overhead=ovh,
        verdict=verdict_word(ovh) if ovh else "",
        figures={title: _step_summary(a, label, step) for step, title in figures.items()},
        storage_bytes=storage, storage_pct=pct, verification=verification_row(files, label, plain),
        label_status=config_label_status(files, label, plain),
        storage_scope=str((mc.get("storage") or {}).get("scope", "")) if isinstance(mc.get("storage"), dict) else "",
        is_baseline=label not in a.baselines and plain, cpu_overhead=cpu, wait_overhead=wait)


def _step_summary(a: Analysis, config: str, step: str) -> Summary | None:
    for key, s in a.summaries.items():
        if key.config == config and key.step == step and s.n > 0:
            return s
    return None


def _query_rows(a: Analysis, configs: list[str], test: str | None) -> list[QueryRow]:
    """The steps of ``test`` one per query (the workload's ``queries`` section; none without it)."""
    if test is None:
        return []
    steps = sorted({k.step for k in a.summaries if k.config in configs and k.test == test
                    and k.metric == "elapsed" and query_number(k.step) is not None},
                   key=lambda s: query_number(s) or 0)
    rows = []
    for step in steps:
        sums = {k.config: s for k, s in a.summaries.items()
                if k.config in configs and k.test == test and k.step == step and k.metric == "elapsed"}
        ovhs = {o.config: o for o in a.overheads if o.config in configs and o.test == test
                and o.step == step and o.metric == "elapsed"}
        rows.append(QueryRow(step, sums, ovhs))
    return rows


def _verdicts(a: Analysis, engine: str, configs: list[str], rows: list[ConfigRow], plain: str | None,
              headline: SeriesKey | None, switching_test: str | None = None) -> list[str]:
    """Each encrypted config against the plain twin; for an encrypt run (no twin: one instance per config switched
    from plaintext) each switch on in the switching table's own words."""
    switching = switch_rows(a.measurements, configs, switching_test) if plain is None and switching_test else []
    if switching:
        return verdict_lines(switching)
    encs = [r.encryption for r in rows]
    verdicts = [verdict_sentence(r.label_status.decorate(_display_name(r.label, r.encryption, encs)), r.overhead, a,
                                 r.cpu_overhead, r.wait_overhead)
                for r in rows if not r.is_baseline]
    if rows and all(r.is_baseline for r in rows):
        verdicts += [plain_only_sentence(r, headline) for r in rows]
    baseline = next((r for r in rows if r.label == plain), None)
    if baseline is not None and baseline.label_status.flagged:
        verdicts.append(f"The baseline {baseline.shown_encryption} ({baseline.label}) is not confirmed plain: "
                        "every overhead above is measured against it.")
    if plain is None:
        verdicts.append(f"{engine} has no plain config (encryption none), so no overhead is computed.")
    return verdicts


def engine_summary(files: LoadedRun, a: Analysis, engine: str, configs: list[str],
                   shown: Presentation | None = None) -> EngineSummary:
    """Build the summary of one engine (``shown``: the run's presentation)."""
    keys = [k for k in a.summaries if k.engine == engine]
    shown = shown or run_presentation(files)
    headline = pick_headline(keys, shown.headlines[0].series if shown.headlines else None)
    plain = next((c for c in configs if is_plain(a.measurements.encryption.get(c, ""))), None)
    plain_storage = _int(files.manifest_config(plain).get("storage_bytes")) if plain else None
    rows = [_config_row(files, a, c, headline, plain_storage, shown.figures) for c in configs]
    switching = shown.section("switching")
    verdicts = _verdicts(a, engine, configs, rows, plain, headline, switching.test if switching else None)
    precision = precision_outcomes(files.manifest, a, [r.overhead for r in rows if not r.is_baseline])
    # the headline's step and metric, in the headline's test and in the run's other tests (TPC-H throughput)
    same_step = [r for r in a.anovas if headline and (r.engine, r.workload, r.step, r.metric)
                 == (headline.engine, headline.workload, headline.step, headline.metric)]
    tests = [r for r in same_step if r.test == headline.test]  # type: ignore[union-attr]
    anova = next((r for r in tests if r.scope == ALL_CONFIGS), None)
    encrypted = next((r for r in tests if r.scope == ENCRYPTED_ONLY), None)
    others = sorted((r for r in same_step if r not in tests), key=lambda r: (r.test, r.scope != ALL_CONFIGS))
    regimes = regime_sentences(files.manifest, CounterIndex(a.measurements), configs, plain,
                               headline.step if headline else None)
    return EngineSummary(engine, plain, configs, headline, rows,
                         _query_rows(a, configs, queries.test if (queries := shown.section("queries")) else None),
                         verdicts, anova, encrypted, others, regimes, precision)


def _config_order(files: LoadedRun) -> list[str]:
    manifest_labels = [str(c.get("label")) for c in files.manifest.get("configs") or []
                       if isinstance(c, dict) and c.get("label")]
    seen = files.measurements.config_order
    return [c for c in manifest_labels if c in seen] + [c for c in seen if c not in manifest_labels]


def headline_keys(shown: Presentation) -> Callable[[SeriesKey], bool]:
    """Which series' warnings are shown one by one: totals, the workload's headlines and official figures, the
    virtual-user steps; engine counters, what the twins of a duet waited on and the client's CPU time are folded with the rest."""
    steps = HEADLINE_STEPS | {h.step for h in shown.headlines} | set(shown.figures)

    def is_headline_key(key: SeriesKey) -> bool:
        if key.test in (*ONE_OFF_TESTS, "counters", "duet") or key.metric == "client_cpu":
            return False
        return key.step in steps or vu_count(key.step) is not None
    return is_headline_key


def precision_outcomes(manifest: dict[str, Any], a: Analysis, overheads: list[Overhead | None]) -> list[str]:
    """A --precision run's plain sentence per compared config and watched figure: target met or not, the half-width
    reached and what more it would take, from the same paired blocks as the figure's row (what stopped the run:
    manifest); each sentence names its figure when the rule watched several (each with its own target)."""
    rule, series = a.settings.sequential, a.settings.sequential_series
    if rule is None or series is None:
        return []
    entry = manifest.get("precision") if isinstance(manifest.get("precision"), dict) else {}
    stopped_by = entry.get("stopped_by") if isinstance(entry.get("stopped_by"), str) else None
    watched = {(w.get("test"), w.get("step"), w.get("metric")): w for w in entry.get("watched") or []
               if isinstance(w, dict)}
    out = []
    for head in overheads:
        if head is None:
            continue
        for test, step, metric in a.settings.sequential_all:
            o = a.overhead(head.key._replace(test=test, step=step, metric=metric))
            if o is None:
                continue
            plain, values = paired_blocks(a.measurements, o.key, o.plain_config)
            if plain.size == 0 or (plain <= 0).any() or (values <= 0).any():
                continue
            w = watched.get((test, step, metric), {})
            mine = replace(rule, target_pp=float(w.get("target_pp") or rule.target_pp))
            d = mine.check_paired(plain, values)  # per block, also where rounds pair
            name = f" {w.get('name')}" if len(a.settings.sequential_all) > 1 and w.get("name") else ""
            out.append(f"{o.config}{name}: {d.outcome(stopped_by=None if d.met else stopped_by)}")
    return out


def summarize_files(files: LoadedRun, settings: StatsSettings | None = None) -> RunSummary:
    """:func:`summarize` for already loaded files (statistics: ``settings``, else the run's own)."""
    a = analyze(files.measurements, settings=settings or settings_for_run(files.manifest))
    engines: dict[str, list[str]] = {}
    for key in files.measurements.all_keys():
        engines.setdefault(key.engine, [])
    order = _config_order(files)
    swept = {split_label(c)[0] for c in order if split_label(c)[1] is not None}
    order = [c for c in order if c not in swept]  # a memory sweep measures its configs at each ratio only
    for config in order:
        engine = (next((k.engine for k in files.measurements.all_keys() if k.config == config), "")
                  or str(files.manifest_config(config).get("engine", "")))  # e.g. `tdebench verify`: load rows only
        engines.setdefault(engine, []).append(config)
    shown = run_presentation(files)
    summaries = [engine_summary(files, a, e, cs, shown) for e, cs in engines.items() if cs]
    headlines = {es.headline.step_key for es in summaries if es.headline}
    caveats = [c for c in a.caveats  # the verdict already says this for the headline
               if not (c.kind == "no_effect" and c.key and c.key.step_key in headlines)]
    warnings = condense(caveats, headline_keys(shown), cv_limit=a.settings.cv_limit_pct,
                        min_n=a.settings.min_trials)
    labels = [Caveat("label", "warning", None, r.label_status.warning(r.label, r.encryption))
              for es in summaries for r in es.rows if r.label_status.flagged]
    spikes = spike_warning(summarize_noise(files.manifest.get("conditions") or []))
    first = ([Caveat("input", "warning", None, p) for p in files.problems] + labels
             + ([Caveat("noise_spike", "warning", None, spikes)] if spikes else []))
    return RunSummary(files, a, summaries, first + warnings, shown, first + caveats)


def summarize(run_dir: Path, settings: StatsSettings | None = None) -> RunSummary:
    """Load a run directory and compute everything a report shows."""
    return summarize_files(load_run(Path(run_dir)), settings)
