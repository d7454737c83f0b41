"""The leaderboard checks a report's CIs against its per-item tables, as it checks the values.

``nova evaluate`` draws each CI from the items it scored with the report's bootstrap
settings; the pinned tables hold those items in that order, so the board draws the same
interval again. A CI edited narrower, wider or shifted (still containing its value) used to
be shown as if computed; now it is refused in one line naming the report, the key and both
intervals. The genuine intervals in these tests are the ones ``nova evaluate`` wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.report.leaderboard import build_leaderboard
from tests.report.board_edits import edited_copy, manifest_of_cut_run, refusal
from tests.report.test_board_more_keys import with_older_tables
from tests.report.test_board_user12 import without_rescoring

# Not the defaults: the board must redraw with the report's own settings.
SETTINGS = ["--bootstrap", "200", "--confidence", "0.9", "--seed", "5"]
DRAWN_WITH = "n_resamples=200, confidence=0.9, seed=5, unit=case"


def evaluate(release: Path, predictions: Path, out: Path, *options: str) -> Path:
    args = ["evaluate", "--data", str(release), "--predictions", str(predictions), "-q"]
    items = ["--items", str(out.with_suffix("")) + "-items"]
    assert main([*args, "--out", str(out), "--exclude", "BERTScore-F1", *items, *options]) == 0
    return out


@pytest.fixture(scope="module")
def reports(
    sample_release: Path, sample_floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The floor run scored on every task with tables: in full, answered-only on a cut run
    (some images and cases unanswered, left out), with 20 resamples and with none."""
    folder = tmp_path_factory.mktemp("intervals")
    lines = sample_floor_run.read_text(encoding="utf-8").splitlines()
    cut = folder / "cut.jsonl"
    kept = [line for position, line in enumerate(lines) if position % 4]  # 3 lines in 4
    cut.write_text("\n".join(kept) + "\n", encoding="utf-8")
    manifest_of_cut_run(sample_floor_run, cut)
    return {
        "full": evaluate(sample_release, sample_floor_run, folder / "full.json", *SETTINGS),
        "answered": evaluate(
            sample_release, cut, folder / "answered.json", *SETTINGS, "--answered-only"
        ),
        "few": evaluate(sample_release, sample_floor_run, folder / "few.json", "--bootstrap", "20"),
        "none": evaluate(
            sample_release, sample_floor_run, folder / "none.json", "--bootstrap", "0"
        ),
    }


def expected_refusal(path: Path, task: str, key: str, stated: list, drawn: list, how: str) -> str:
    return (
        f"nova leaderboard: error: {path}, field 'tasks.{task}.confidence_intervals.{key}': "
        f"the report states {key} CI = [{stated[0]!r}, {stated[1]!r}] but its per-item tables "
        f"give [{drawn[0]!r}, {drawn[1]!r}] with its bootstrap settings ({how}): the report "
        "was edited or is not the one that wrote them"
    )


# Every key each task's tables recompute: mean keys over every scored item, and hit@30/50,
# drawn over every scored image but counting those with a gold box (the sample has an
# image without one, where a bootstrap of the gold images alone gives another interval).
CHECKED = [
    ("localization", "mAP@30"),
    ("localization", "mAP@50"),
    ("localization", "hit@30"),
    ("localization", "hit@50"),
    ("captioning", "ROUGE-L"),
    ("captioning", "METEOR-exact+stem"),
    ("diagnosis", "top1-lexicon"),
    ("diagnosis", "top5-lexicon"),
]


def _narrowed(low: float, high: float) -> list[float]:
    return [low + (high - low) / 8, high - (high - low) / 8]


def _widened(low: float, high: float) -> list[float]:
    return [max(0.0, low - 0.02), min(1.0, high + 0.02)]


def _shifted(low: float, high: float) -> list[float]:
    step = (high - low) / 10 * (1 if high < 1 else -1)
    return [low + step, high + step]


#: The key per task whose widened and shifted intervals the fast suite checks too.
FAST_WIDENED_AND_SHIFTED = {
    "localization": "mAP@30",
    "captioning": "ROUGE-L",
    "diagnosis": "top1-lexicon",
}


def _in_fast_suite(edit: Any, task: str, key: str, report: str) -> bool:
    """Narrowed: every key in both reports. Widened and shifted (the same check on another
    interval) on one key per task of the full report; the rest only under ``make test-slow``."""
    if edit is _narrowed:
        return True
    return report == "full" and FAST_WIDENED_AND_SHIFTED[task] == key


def _edit_cases() -> list[Any]:
    """Every edit of every checked key in both reports (see ``_in_fast_suite``)."""
    return [
        pytest.param(
            edit,
            task,
            key,
            report,
            marks=[] if _in_fast_suite(edit, task, key, report) else [pytest.mark.slow],
            id=f"{edit.__name__}-{task}-{key}-{report}",
        )
        for edit in (_narrowed, _widened, _shifted)
        for task, key in CHECKED
        for report in ("full", "answered")
    ]


@pytest.mark.parametrize(("edit", "task", "key", "report"), _edit_cases())
def test_an_edited_ci_of_a_checked_key_is_refused_and_the_genuine_one_shown(
    reports: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    report: str,
    task: str,
    key: str,
    edit: Any,
) -> None:
    source = reports[report]
    genuine = json.loads(source.read_text(encoding="utf-8"))
    drawn = genuine["tasks"][task]["confidence_intervals"][key]
    value = genuine["tasks"][task]["metrics"][key]
    board = build_leaderboard([genuine], [source], n_resamples=20)
    assert board["models"][0]["tasks"][task]["ci"][key] == drawn  # shown as nova evaluate wrote it
    stated = edit(*drawn)
    assert stated != drawn and stated[0] <= value <= stated[1]  # the old check let it pass

    def restated(report: dict) -> None:
        report["tasks"][task]["confidence_intervals"][key] = stated

    edited = edited_copy(source, f"{report}-{key}-{edit.__name__}.json", restated)
    assert refusal(edited, capsys) == expected_refusal(edited, task, key, stated, drawn, DRAWN_WITH)


def test_cis_of_few_resamples_are_checked_too_as_they_are_drawn_exactly(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # 20 resamples: an interval that may miss its own mean, so the old check showed any
    # interval; the draws are as deterministic as with 1,000, so the board redraws it.
    source = reports["few"]
    genuine = json.loads(source.read_text(encoding="utf-8"))
    assert build_leaderboard([genuine], [source], n_resamples=20)["models"]
    drawn = genuine["tasks"]["localization"]["confidence_intervals"]["mAP@50"]
    stated = [drawn[0], min(1.0, drawn[1] + 0.04)]

    def widened(report: dict) -> None:
        report["tasks"]["localization"]["confidence_intervals"]["mAP@50"] = stated

    edited = edited_copy(source, "few-widened.json", widened)
    how = "n_resamples=20, confidence=0.95, seed=0, unit=case"
    assert refusal(edited, capsys) == expected_refusal(
        edited, "localization", "mAP@50", stated, drawn, how
    )


def test_a_ci_stated_by_a_report_of_no_resamples_is_refused(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # --bootstrap 0 writes no interval: the genuine report is shown without any; an interval
    # under it (copied from another report) was drawn by nothing the report records.
    source = reports["none"]
    genuine = json.loads(source.read_text(encoding="utf-8"))
    board = build_leaderboard([genuine], [source], n_resamples=20)
    assert all(not shown["ci"] for shown in board["models"][0]["tasks"].values())
    borrowed = json.loads(reports["full"].read_text(encoding="utf-8"))
    interval = borrowed["tasks"]["diagnosis"]["confidence_intervals"]["top1-lexicon"]

    def given(report: dict) -> None:
        report["tasks"]["diagnosis"]["confidence_intervals"]["top1-lexicon"] = interval

    edited = edited_copy(source, "none-with-ci.json", given)
    assert refusal(edited, capsys) == (
        f"nova leaderboard: error: {edited}, field "
        "'tasks.diagnosis.confidence_intervals.top1-lexicon': the report states this CI but "
        "records bootstrap.n_resamples = 0 (nova evaluate then writes no CI): nothing to redraw "
        "it from its per-item tables; the report was edited or is not the one that wrote them"
    )


def test_a_report_with_tables_but_no_bootstrap_settings_is_refused(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # Every novabench that writes per-item tables records the bootstrap settings: without
    # them the CIs cannot be redrawn, and guessing the defaults would show an interval
    # nothing checked as if it were. Without tables nothing is checked (and it is warned).
    source = reports["full"]
    edited = edited_copy(source, "no-settings.json", lambda report: report.pop("bootstrap"))
    assert refusal(edited, capsys) == (
        f"nova leaderboard: error: {edited}, field "
        "'tasks.localization.confidence_intervals.mAP@30': the report states this CI but "
        "records no bootstrap settings (bootstrap: n_resamples, confidence, seed): nothing to "
        "redraw it from its per-item tables; the report was edited or is not the one that "
        "wrote them"
    )


def test_the_notes_say_which_values_and_cis_were_taken_as_stated(
    reports: dict[str, Path],
) -> None:
    source = reports["full"]
    without_tables = json.loads(source.read_text(encoding="utf-8"))
    without_tables.pop("items")
    without_tables["predictions"]["sha256"] = ["0" * 64]  # another run's answers
    without_tables["tasks"]["localization"]["metrics"]["mAP@30"] = 0.0  # not a copy
    without_tables["tasks"]["localization"]["confidence_intervals"]["mAP@30"] = [0.0, 0.0]
    # Tables without the scores and predicted captions (an older novabench's): COCO-AP,
    # ACC50... and BLEU-4 cannot be scored again from them (board13b).
    older = with_older_tables(source, "older", without_rescoring)
    board = build_leaderboard([older, without_tables], [source, "no-tables.json"], n_resamples=20)
    prefix = f"warning: {source}: local"
    [localization] = [line for line in board["warnings"] if line.startswith(prefix)]
    listed = localization.split(": ")[2].removeprefix("localization ").split(", ")
    assert "COCO-AP@30" in listed and not {"mAP@30", "mAP@50", "hit@30", "hit@50"} & set(listed)
    assert "values and CIs taken as stated" in localization
    assert "other keys' values and CIs are checked against them" in localization
    [warning] = [line for line in board["warnings"] if "no-tables.json" in line]
    assert "its values and CIs are taken as stated, unverified" in warning


def test_reports_verify_with_their_recorded_unit_and_old_ones_as_images(
    reports: dict[str, Path],
    sample_release: Path,
    sample_floor_run: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import novabench.report.human_reference as human_reference
    import novabench.report.scoring as scoring

    source = reports["full"]
    genuine = json.loads(source.read_text(encoding="utf-8"))
    assert genuine["bootstrap"]["unit"] == "case"
    board = build_leaderboard([genuine], [source], n_resamples=20)
    assert board["bootstrap"]["unit"] == "case"
    # Every key verified, the re-scored ones (COCO-AP, ACC50, ..., BLEU-4) included.
    assert "COCO-AP@30" in genuine["tasks"]["localization"]["confidence_intervals"]
    assert all(not task["taken_as_stated"] for task in board["models"][0]["tasks"].values())
    # The same intervals claimed as drawn by image (a report without a unit) are refused:
    # the images of a case were drawn together.
    as_images = edited_copy(source, "full-as-images.json", lambda r: r["bootstrap"].pop("unit"))
    line = refusal(as_images, capsys)
    assert "seed=5, unit=image): the report was edited" in line
    # A report written before cases were resampled: image intervals and no unit, as the
    # scorer wrote when it knew no case (the model's and the raters' intervals); it verifies
    # as images, the raters' rows included.
    compare_raters = human_reference._compare
    with monkeypatch.context() as patched:
        patched.setattr(scoring, "_item_cases", lambda *args: None)
        patched.setattr(
            human_reference,
            "_compare",
            lambda *args, **options: compare_raters(*args, **{**options, "cases": None}),
        )
        old = evaluate(sample_release, sample_floor_run, source.parent / "old.json", *SETTINGS)
    old_report = json.loads(old.read_text(encoding="utf-8"))
    old_report["bootstrap"].pop("unit")
    old.write_text(json.dumps(old_report), encoding="utf-8")
    ci_old = old_report["tasks"]["localization"]["confidence_intervals"]["mAP@30"]
    ci_new = genuine["tasks"]["localization"]["confidence_intervals"]["mAP@30"]
    assert ci_old != ci_new  # other draws: single images
    old_board = build_leaderboard([old_report], [old], n_resamples=20)
    assert old_board["models"][0]["tasks"]["localization"]["ci"]["mAP@30"] == ci_old
    assert all(not task["taken_as_stated"] for task in old_board["models"][0]["tasks"].values())
    # Claimed as drawn by case, it is refused.
    as_cases = edited_copy(old, "old-as-cases.json", lambda r: r["bootstrap"].update(unit="case"))
    assert "seed=5, unit=case): the report was edited" in refusal(as_cases, capsys)


def test_a_unit_no_bootstrap_draws_is_refused(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    edited = edited_copy(
        reports["full"], "full-by-scan.json", lambda r: r["bootstrap"].update(unit="scan")
    )
    assert refusal(edited, capsys) == (
        f"nova leaderboard: error: {edited}, field 'bootstrap.unit': the report records "
        "bootstrap.unit = 'scan', which no bootstrap draws (one of case, image)"
    )


def test_reports_of_different_units_are_noted_as_different_bootstrap_settings(
    reports: dict[str, Path],
) -> None:
    from novabench.report.leaderboard import _bootstrap_note

    genuine = json.loads(reports["full"].read_text(encoding="utf-8"))
    old = {**genuine, "bootstrap": {k: v for k, v in genuine["bootstrap"].items() if k != "unit"}}
    note = _bootstrap_note([genuine, old], ["new.json", "old.json"])
    assert "new.json (confidence=0.9, n_resamples=200, seed=5, unit=case)" in note
    assert "old.json (confidence=0.9, n_resamples=200, seed=5, unit=image)" in note
    assert _bootstrap_note([old, old], ["a.json", "b.json"]) == ""
