"""Every image-level interval of a release-backed report resamples whole cases.

The expected intervals are drawn here in a plain loop over cases from per-image hits: cases
numbered as they first appear among the scored images, one
``rng.integers(0, n_cases, size=n_cases)`` per resample from ``default_rng(seed)``, every
scored image of each drawn case, the share of hits, numpy's percentiles (the rule
``novabench.metrics.stats`` documents).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from novabench.report.scoring import compare_predictions, score_predictions

SEED = 4
RESAMPLES = 300


def case_loop(
    hits: Sequence[float], cases: Sequence[str], *, seed: int = SEED, n: int = RESAMPLES
) -> np.ndarray:
    """Each resample's hit rate, drawing cases."""
    order = list(dict.fromkeys(cases))
    members = {case: [i for i, c in enumerate(cases) if c == case] for case in order}
    values = np.asarray(hits, dtype=float)
    rng = np.random.default_rng(seed)
    rates = []
    for _ in range(n):
        drawn = rng.integers(0, len(order), size=len(order))
        items = [i for d in drawn for i in members[order[d]]]
        rates.append(values[items].sum() / len(items))
    return np.asarray(rates)


def interval(rates: np.ndarray) -> list[float]:
    return [float(v) for v in np.percentile(rates, [2.5, 97.5])]


@pytest.fixture(scope="module")
def scored(sample_release: Path, sample_floor_run: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return score_predictions(
            sample_release,
            sample_floor_run,
            n_resamples=RESAMPLES,
            seed=SEED,
            min_group_size=1,
            caption_options={"exclude": ["BERTScore-F1"]},
        )


def test_the_report_says_it_resampled_cases(scored) -> None:
    assert scored.report["bootstrap"] == {
        "n_resamples": RESAMPLES,
        "confidence": 0.95,
        "seed": SEED,
        "unit": "case",
    }


def test_the_headline_interval_resamples_cases(scored) -> None:
    release = scored.release
    positions = scored.positions["localization"]
    cases = [release.images[p].case_id for p in positions]
    assert len(set(cases)) < len(cases)  # the sample has cases of several images
    hits = scored.evaluations["localization"].per_image_hits()["hit_30"]
    stated = scored.report["tasks"]["localization"]["confidence_intervals"]["mAP@30"]
    assert stated == pytest.approx(interval(case_loop(hits, cases)), abs=1e-12)
    # The image bootstrap of the same hits gives another interval.
    rng = np.random.default_rng(SEED)
    values = np.asarray(hits, float)
    by_image = [values[rng.integers(0, len(values), len(values))].mean() for _ in range(RESAMPLES)]
    assert stated != pytest.approx(interval(np.asarray(by_image)), abs=1e-12)


def test_a_breakdown_cell_resamples_the_cases_of_its_images(scored) -> None:
    release = scored.release
    positions = scored.positions["localization"]
    hits = scored.evaluations["localization"].per_image_hits()["hit_30"]
    rows = scored.report["breakdowns"]["localization"]["n_gold_boxes"]
    checked = 0
    for row in rows:
        chosen = [
            i
            for i, p in enumerate(positions)
            if scored.images[p].groups["n_gold_boxes"] == row["group"]
        ]
        cases = [release.images[positions[i]].case_id for i in chosen]
        if row.get("mAP@30_ci") is None or len(set(cases)) == len(cases):
            continue
        expected = interval(case_loop([hits[i] for i in chosen], cases))
        assert row["mAP@30_ci"] == pytest.approx(expected, abs=1e-12), row["group"]
        checked += 1
    assert checked  # some group holds two images of one case


def test_the_human_reference_resamples_cases(scored) -> None:
    release = scored.release
    positions = scored.positions["localization"]
    cases = [release.images[p].case_id for p in positions]
    best = scored.human.best_iou["rater_1_vs_gold"]
    gold = [bool(release.images[p].boxes) for p in positions]
    hits = [float(b >= 0.3 and g) for b, g in zip(best, gold)]
    section = scored.report["human_reference"]["localization"]["rater_1_vs_gold"]
    expected = interval(case_loop(hits, cases))
    assert section["confidence_intervals"]["mAP@30"] == pytest.approx(expected, abs=1e-12)


def test_compare_draws_the_same_cases_for_both_models(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    from novabench.report.scoring import score_predictions as score

    # B: the floor run with every localisation answer emptied.
    lines = sample_floor_run.read_text(encoding="utf-8").splitlines()
    emptied = []
    for line in lines:
        record = json.loads(line)
        if record.get("task") == "localization":
            record = {k: v for k, v in record.items() if k not in ("raw_boxes", "input_size")}
            record["boxes"] = []
        emptied.append(json.dumps(record))
    other = tmp_path / "empty.jsonl"
    other.write_text("\n".join(emptied) + "\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = compare_predictions(
            sample_release,
            sample_floor_run,
            other,
            tasks=["localization"],
            n_resamples=RESAMPLES,
            seed=SEED,
        )
        a = score(sample_release, sample_floor_run, tasks=["localization"], n_resamples=0)
        b = score(sample_release, other, tasks=["localization"], n_resamples=0)
    assert comparison["bootstrap"]["unit"] == "case"
    release = a.release
    cases = [image.case_id for image in release.images]
    hits_a = np.asarray(a.evaluations["localization"].per_image_hits()["hit_30"], float)
    hits_b = np.asarray(b.evaluations["localization"].per_image_hits()["hit_30"], float)
    differences = case_loop(hits_a - hits_b, cases)
    stated = comparison["tasks"]["localization"]["mAP@30"]["ci"]
    assert list(stated) == pytest.approx(interval(differences), abs=1e-12)


def test_the_leaderboards_tie_test_draws_the_same_cases_for_both_reports() -> None:
    import pandas as pd

    from novabench.report.leaderboard import _separable

    cases = ["case0001"] * 4 + ["case0002"] * 3 + ["case0003"] + ["case0004"] * 2
    best_a = [0.9, 0.8, 0.7, 0.1, 0.0, 0.5, 0.6, 0.9, 0.2, 0.4]
    best_b = [0.1, 0.1, 0.7, 0.1, 0.0, 0.0, 0.6, 0.2, 0.9, 0.1]

    def tables(best: list[float]) -> dict:
        names = [f"{case}_{i:03d}.png" for i, case in enumerate(cases)]
        return {"images": pd.DataFrame({"filename": names, "case_id": cases, "best_iou": best})}

    result = _separable(
        "localization",
        (tables(best_a), "mAP@30"),
        (tables(best_b), "mAP@30"),
        n_resamples=RESAMPLES,
        confidence=0.95,
        seed=SEED,
    )
    differences = np.array([a >= 0.3 for a in best_a], float) - np.array(
        [b >= 0.3 for b in best_b], float
    )
    assert result["ci"] == pytest.approx(interval(case_loop(differences, cases)), abs=1e-12)


def test_the_markdown_and_html_say_what_the_intervals_drew(scored) -> None:
    from novabench.report.html import render_html
    from novabench.report.render import render_markdown

    report = scored.report
    assert f"CI (bootstrap of whole cases, n={RESAMPLES}, seed={SEED})" in render_markdown(report)
    assert "with bootstrap intervals (whole cases drawn)" in render_html(report)
    # A report from before the unit was recorded drew single images.
    old = {**report, "bootstrap": {k: v for k, v in report["bootstrap"].items() if k != "unit"}}
    assert f"CI (bootstrap of single images, n={RESAMPLES}, seed={SEED})" in render_markdown(old)
