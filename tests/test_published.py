"""Published zero-shot figures: the data is consistent, and intervals are a report's kind."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from novabench import registry
from novabench.published import (
    PublishedResult,
    hit_count,
    published_interval,
    published_results,
    published_sources,
)


def test_every_figure_names_a_known_source_task_and_metric() -> None:
    sources = published_sources()
    results = published_results()
    assert results and {result.source for result in results} == set(sources)
    for result in results:
        assert result.metric in registry.TASKS[result.task].headline_keys, result
        assert 0.0 <= result.value <= 100.0


def test_every_figure_with_an_image_count_fixes_its_hit_count() -> None:
    counted = [result for result in published_results() if result.n is not None]
    assert len(counted) >= 10
    for result in counted:
        k = result.hits
        assert k is not None, result
        rate = 100.0 * k / result.n
        if result.decimals is None:
            assert rate == pytest.approx(result.value, abs=1e-9)
        else:
            assert round(rate, result.decimals) == pytest.approx(result.value)


def test_the_papers_figures_have_no_count_and_so_no_interval() -> None:
    paper = [result for result in published_results() if result.source == "nova-paper"]
    assert paper and all(result.n is None for result in paper)
    assert all(published_interval(result) is None for result in paper)


@pytest.mark.parametrize("n", [50, 906])
def test_hit_count_inverts_every_rate_it_is_given(n: int) -> None:
    # How many counts round to each one-decimal rate, counted once (not searched per k: n**2).
    rounded = [round(100.0 * j / n, 1) for j in range(n + 1)]
    fits = Counter(rounded)
    for k in range(n + 1):
        assert hit_count(100.0 * k / n, n) == k
        one_decimal = rounded[k]
        assert hit_count(one_decimal, n, 1) == (k if fits[one_decimal] == 1 else None)


def test_hit_count_refuses_what_no_count_gives() -> None:
    assert hit_count(33.4, 906) is None  # one decimal read as full precision
    assert hit_count(50.0, 3, 1) is None
    assert hit_count(12.0, None) is None and hit_count(12.0, 0) is None


def test_the_interval_is_a_bootstrap_over_images_of_the_fixed_hits() -> None:
    """Against a bootstrap written here from numpy alone: the same draws, the same percentiles."""
    for result in published_results("localization"):
        interval = published_interval(result, n_resamples=500, seed=7)
        if result.n is None:
            assert interval is None
            continue
        k, n = result.hits, result.n
        assert k is not None and interval is not None
        hits = np.zeros(n)
        hits[:k] = 1.0
        draws = np.random.default_rng(7).integers(0, n, size=(500, n))
        rates = hits[draws].mean(axis=1)
        expected = np.percentile(rates, [2.5, 97.5])
        assert interval == pytest.approx(tuple(100.0 * expected), abs=1e-9)


def test_the_interval_agrees_with_the_one_the_source_printed() -> None:
    # WALDO's file for Qwen2.5-VL-72B prints a 95% bootstrap CI of [33.33, 39.40] (its own
    # seed and draws): ours for the same hit count must land within a point of it.
    (qwen,) = [
        result
        for result in published_results("localization", "mAP@30")
        if result.model == "Qwen2.5-VL-72B" and result.source == "waldo-zero-shot"
    ]
    low, high = published_interval(qwen) or (math.nan, math.nan)
    assert abs(low - 33.33) < 1.0 and abs(high - 39.40) < 1.0


def test_an_interval_needs_a_hit_rate() -> None:
    top1 = PublishedResult("m", "nova-paper", "diagnosis", "top1", 20.0, n=100, decimals=1)
    assert published_interval(top1) is None


def _report_holding(**metrics_by_task: dict[str, float]) -> dict[str, object]:
    return {
        "bootstrap": {"n_resamples": 0},
        "tasks": {task: {"metrics": metrics} for task, metrics in metrics_by_task.items()},
    }


def test_a_figure_whose_settings_the_paper_kept_says_so_in_every_rendering() -> None:
    """The paper's BLEU-4 comes without its settings (corpus or sentence BLEU...): beside a
    report's BLEU-4 the figure says so; a figure whose metric is defined (mAP@30) does not."""
    from novabench.published import published_beside, published_rows
    from novabench.report.html import _published_cell
    from novabench.report.render import published_line

    report = _report_holding(captioning={"BLEU-4": 0.089}, localization={"mAP@30": 0.5})
    labels = {row[1] for row in published_rows(report)}
    caveat = "settings not published: corpus or sentence BLEU, tokenizer and smoothing"
    assert f"BLEU-4 ({caveat})" in labels
    assert "mAP@30" in labels  # as it is: no caveat
    assert f"captioning BLEU-4 ({caveat}) (paper) Gemini 2.0 Flash 1.83" in published_line(report)
    cell = _published_cell(published_beside(report), "captioning", "BLEU-4")
    assert cell.endswith(f'<br><span class="stand-in">{caveat}</span>')
    assert "settings not published" not in _published_cell(
        published_beside(report), "localization", "mAP@30"
    )


def test_a_stand_in_note_wins_over_the_settings_caveat() -> None:
    """Beside a stand-in the figure is another quantity altogether: that is what it says."""
    from novabench.published import published_rows

    report = _report_holding(diagnosis={"top1-lexicon": 0.3})
    assert [row[1] for row in published_rows(report)] == [
        "top1 (not comparable with this report's top1-lexicon)"
    ]


def test_the_terminal_line_keeps_the_papers_figures_apart_from_re_runs() -> None:
    """user14: the co-authors' mAP@50 re-runs (another prompt) sat on the line of the
    paper's figures with no word of where each came from."""
    from novabench.published import published_results
    from novabench.report.render import published_line

    line = published_line(_report_holding(localization={"mAP@30": 0.5, "mAP@50": 0.4}))
    parts = dict(part.split(") ", 1) for part in line.split(": ", 1)[1].split("; "))
    for result in published_results():
        if result.task == "localization" and result.metric in ("mAP@30", "mAP@50"):
            label = (
                "paper" if result.source == "nova-paper" else "co-authors' re-run, another prompt"
            )
            listed = parts.get(f"localization {result.metric} ({label}", "")
            # each figure under its own source, or left out after the first three ("...")
            assert f"{result.model} " in listed or listed.endswith("..."), (result, line)
    assert "localization mAP@50 (paper)" not in line  # the paper gave no mAP@50 figure here


def test_beside_a_report_of_case_intervals_a_published_rate_has_none_and_says_why() -> None:
    # The figures carry k of n images, not which images hit nor their cases: an interval over
    # images beside a report's interval over cases would look tighter for the same rate.
    from novabench.published import NO_CASE_INTERVAL, published_beside, published_rows

    metrics = {"localization": {"metrics": {"mAP@30": 0.3}}}
    old = {"bootstrap": {"n_resamples": 200, "confidence": 0.95, "seed": 0}, "tasks": metrics}
    new = {"bootstrap": {**old["bootstrap"], "unit": "case"}, "tasks": metrics}
    waldo = [r for r, _ in published_beside(old) if r.source == "waldo-zero-shot"]
    assert waldo and all(
        interval is not None for r, interval in published_beside(old) if r in waldo
    )
    assert all(interval is None for _, interval in published_beside(new))
    cells = {row[2]: row[3] for row in published_rows(new) if "WALDO" in row[5]}
    assert cells["gemma-4-31B"] == f"39.7 ({NO_CASE_INTERVAL})"
    old_cells = {row[2]: row[3] for row in published_rows(old) if "WALDO" in row[5]}
    assert old_cells["gemma-4-31B"].startswith("39.7 [") and NO_CASE_INTERVAL not in str(old_cells)
