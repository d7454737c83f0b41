"""What a second new user (user12) found on the leaderboard: a model that answered nothing
counted as "0 missing" and sharing a rank, one run scored twice ranked as two models, values
the board could not check shown unmarked."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    render_leaderboard_html,
    render_leaderboard_markdown,
    render_leaderboard_text,
)
from tests.report.test_board_more_keys import with_older_tables


def without_rescoring(table: Any) -> Any:
    """An images table as written before the board scored its boxes and captions again."""
    return table.drop(columns=["predicted_scores", "caption_prediction"], errors="ignore")


FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]


def evaluate(release: Path, predictions: Path, out: Path, *extra: str) -> dict[str, Any]:
    arguments = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    assert main([*arguments, "--out", str(out), *FAST, *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def failed_run(floor_run: Path, folder: Path) -> tuple[Path, dict[str, int]]:
    """The floor run's items, every model call failed (the lines `nova run` writes then);
    with the number of items per task."""
    lines = []
    per_task: dict[str, int] = {}
    for line in floor_run.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        key = "filename" if "filename" in record else "case_id"
        lines.append(
            json.dumps(
                {
                    key: record[key],
                    "task": record["task"],
                    "model": "broken",
                    "error": "ZeroDivisionError: division by zero",
                }  # fmt: skip
            )
        )
        per_task[record["task"]] = per_task.get(record["task"], 0) + 1
    out = folder / "broken.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out, per_task


def test_a_model_that_answered_nothing_is_counted_as_its_report_counts_and_not_ranked(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    broken, per_task = failed_run(sample_floor_run, tmp_path)
    floor = evaluate(sample_release, sample_floor_run, tmp_path / "floor.json", "--items",
                     str(tmp_path / "floor-items"))  # fmt: skip
    failed = evaluate(sample_release, broken, tmp_path / "broken.json", "--items",
                      str(tmp_path / "broken-items"))  # fmt: skip
    n = per_task["diagnosis"]
    # The report's own words: every call failed, so every item is missing.
    assert failed["tasks"]["diagnosis"]["coverage"]["missing"] == n
    board = build_leaderboard(
        [floor, failed],
        [tmp_path / "floor.json", tmp_path / "broken.json"],
        shown=["floor.json", "broken.json"],
        n_resamples=20,
    )
    (coverage,) = [line for line in board["warnings"] if "answered only part" in line]
    assert (
        f"diagnosis 0/{n} answered, {n} missing (scored as no prediction): {n} model errors, "
        "0 without a line"
    ) in coverage
    # Scores of no prediction share no rank with a model that answered: shown, unranked.
    models = {model["path"]: model for model in board["models"]}
    for task in ("localization", "captioning", "diagnosis"):
        entry = models["broken.json"]["tasks"][task]
        assert entry["rank"] is None and entry["unranked"].startswith("answered nothing")
        assert f"warning: broken.json: {task} answered nothing (0/" in "\n".join(board["warnings"])
    text = render_leaderboard_text(board)
    overview = text.split("\nOverview\n", 1)[1].split("\nlocalization\n", 1)[0]
    (row,) = [line for line in overview.splitlines() if line.startswith("broken ")]
    assert row.count("not ranked") == 3


def test_one_run_scored_twice_alike_is_refused_naming_both(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    first = evaluate(sample_release, sample_floor_run, tmp_path / "e1.json", "--items",
                     str(tmp_path / "i1"))  # fmt: skip
    second = evaluate(sample_release, sample_floor_run, tmp_path / "e2.json", "--items",
                      str(tmp_path / "i2"))  # fmt: skip
    # The report records what identifies the answers: the digest of the file's bytes.
    digest = hashlib.sha256(sample_floor_run.read_bytes()).hexdigest()
    assert first["predictions"]["sha256"] == [digest] == second["predictions"]["sha256"]
    paths = [tmp_path / "e1.json", tmp_path / "e2.json"]
    with pytest.raises(NovaInputError) as refused:
        build_leaderboard([first, second], paths, shown=["e1.json", "e2.json"], n_resamples=20)
    assert refused.value.message.startswith(
        "e1.json and e2.json score the same predictions (SHA-256) (one run) with the same scoring "
        "settings"
    )
    # Reports written before the digest: the same run manifests say it is one run.
    old = [deepcopy(first), deepcopy(second)]
    for report in old:
        del report["predictions"]["sha256"]
    with pytest.raises(NovaInputError, match="score the same run manifests"):
        build_leaderboard(old, paths, shown=["e1.json", "e2.json"], n_resamples=20)
    # In the CLI: one line, exit 2.
    arguments = ["leaderboard", str(paths[0]), str(paths[1])]
    assert main(arguments) == 2


def test_one_run_scored_under_two_readings_stays_on_the_board(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    sample = evaluate(sample_release, sample_floor_run, tmp_path / "sample.json", "--items",
                      str(tmp_path / "i1"))  # fmt: skip
    micro = evaluate(sample_release, sample_floor_run, tmp_path / "micro.json", "--items",
                     str(tmp_path / "i2"), "--keyword-averaging", "micro")  # fmt: skip
    board = build_leaderboard(
        [sample, micro],
        [tmp_path / "sample.json", tmp_path / "micro.json"],
        shown=["sample.json", "micro.json"],
        n_resamples=20,
    )
    assert [model["path"] for model in board["models"]] == ["sample.json", "micro.json"]
    assert any(d["setting"] == "keyword_averaging" for d in board["setting_differences"])


def test_every_value_taken_as_stated_is_marked_in_every_output_and_the_csv_says_which(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    evaluate(sample_release, sample_floor_run, tmp_path / "floor.json", "--items",
             str(tmp_path / "items"))  # fmt: skip
    # user12's edits of FP30, BLEU-4 and COCO-AP@30: the board now scores them again from the
    # tables' boxes and captions (board13b), so here the tables are an older novabench's,
    # without the scores and the predicted captions: nothing can refuse the edits, so each
    # must be shown as taken as stated.

    def edits(report: dict) -> None:
        report["tasks"]["localization"]["metrics"]["FP30"] = 0.1
        report["tasks"]["captioning"]["metrics"]["BLEU-4"] = 0.5
        report["tasks"]["localization"]["metrics"]["COCO-AP@30"] = 0.9

    report = with_older_tables(tmp_path / "floor.json", "older", without_rescoring, edits)
    board = build_leaderboard([report], [tmp_path / "floor.json"], shown=["x.json"])
    warnings = [line for line in board["warnings"] if "taken as stated" in line]
    assert any("x.json: localization" in line and "FP30" in line for line in warnings)
    assert any("x.json: captioning" in line and "BLEU-4" in line for line in warnings)
    assert not any("taken as stated" in note for note in board["notes"])  # said once, first
    text = render_leaderboard_text(board)
    markdown = render_leaderboard_markdown(board)
    page = render_leaderboard_html(board)
    for shown in ("10.0 †", "50.0 †", "90.0 †"):
        assert shown in text and shown in markdown and shown in page
    # mAP@30 and ROUGE-L are recomputed from the tables: not marked.
    mean = 100 * report["tasks"]["localization"]["metrics"]["mAP@30"]
    assert f"{mean:.1f} †" not in text and f"{mean:.1f}" in text
    (row,) = [
        row
        for row in csv.DictReader(io.StringIO(leaderboard_csv(board)))
        if row["verified"] and not row["model"].startswith("human")
    ]
    assert row["verified"].startswith("partly: ")
    stated = row["verified"].removeprefix("partly: ").split(", ")
    assert {"localization FP30", "localization COCO-AP@30", "captioning BLEU-4"} <= set(stated)
    assert not {"localization mAP@30", "captioning ROUGE-L"} & set(stated)
