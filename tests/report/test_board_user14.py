"""What a reviewer (user14) found on the leaderboard after board13: the same run read under
another box convention refused with a false reason, intervals of other confidence levels in
one column without a mark, a BinaryF1 marked for a setting it does not depend on, plain
ranks on values nothing checked, and unchecked, unmarked human-reference rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.report.leaderboard import build_leaderboard, render_leaderboard_text

FAST = ["--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]


def evaluate(release: Path, predictions: Path, out: Path, *extra: str) -> dict[str, Any]:
    arguments = ["evaluate", "--data", str(release), "--predictions", str(predictions), "-q"]
    assert main([*arguments, "--out", str(out), *FAST, *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


# 3. The same run read under two box conventions: two readings, both on the board.


def test_one_run_read_under_two_box_conventions_stays_on_the_board_marked(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    only = ["--task", "localization", "--bootstrap", "0"]
    default = evaluate(sample_release, sample_floor_run, tmp_path / "a.json", *only)
    other = evaluate(
        sample_release,
        sample_floor_run,
        tmp_path / "b.json",
        *only,
        "--box-convention",
        "xyxy_norm1000",
    )
    assert default["predictions"]["sha256"] == other["predictions"]["sha256"]
    # The floor answers [ymin, xmin, ymax, xmax] as the protocol asks: read as xyxy they miss.
    values = [r["tasks"]["localization"]["metrics"]["mAP@30"] for r in (default, other)]
    assert values[0] > values[1]
    board = build_leaderboard(
        [default, other], [tmp_path / "a.json", tmp_path / "b.json"], shown=["a.json", "b.json"]
    )
    assert [model["path"] for model in board["models"]] == ["a.json", "b.json"]
    [warning] = [line for line in board["warnings"] if "readings of one run" in line]
    assert warning == (
        "warning: a.json and b.json score the same predictions (SHA-256): two readings of one "
        "run, not two models (their settings differ: localization box_convention "
        f"({default['predictions']['box_convention']} / xyxy_norm1000))"
    )
    assert warning in render_leaderboard_text(board)


# 2. Intervals of another confidence level say it; the CSV gives each row's level.


@pytest.fixture(scope="module")
def two_runs(
    sample_release: Path, sample_floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The floor run at the default 95% and, with its first localisation line left out
    (other answers, another SHA-256), at 50%; both with per-item tables."""
    folder = tmp_path_factory.mktemp("levels")
    lines = sample_floor_run.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if '"localization"' in line)
    other = folder / "other.jsonl"
    other.write_text("\n".join(lines[:first] + lines[first + 1 :]) + "\n", encoding="utf-8")
    only = ["--task", "localization", "--bootstrap", "200"]
    runs = {"a95": (sample_floor_run, []), "b50": (other, ["--confidence", "0.5"])}
    paths = {}
    for name, (predictions, extra) in runs.items():
        out = folder / f"{name}.json"
        evaluate(sample_release, predictions, out, *only, *extra, "--items", str(folder / name))
        paths[name] = out
    return paths


def board_of(paths: list[Path], **options: Any) -> dict[str, Any]:
    reports = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    return build_leaderboard(reports, paths, n_resamples=20, **options)


def test_a_ci_of_another_level_than_the_headers_says_its_level(
    two_runs: dict[str, Path],
) -> None:
    from novabench.report.leaderboard import render_leaderboard_html, render_leaderboard_markdown

    board = board_of([two_runs["a95"], two_runs["b50"]])
    text = render_leaderboard_text(board)
    assert "values in percent with 95% bootstrap CIs." in text
    assert "values in percent with 95% bootstrap CIs." in render_leaderboard_markdown(board)
    assert "values in percent with 95% bootstrap CIs." in render_leaderboard_html(board)
    table = text.split("\nlocalization\n", 1)[1].split("\nPublished", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith(("baseline", "other", "human"))]
    assert len(rows) == 5  # two models, three raters' rows
    [fifty] = [line for line in rows if "(50% CI)" in line]
    b50 = json.loads(two_runs["b50"].read_text(encoding="utf-8"))["tasks"]["localization"]
    low, high = b50["confidence_intervals"]["mAP@30"]
    assert f"[{100 * low:.1f}, {100 * high:.1f}] (50% CI)" in fifty
    # Every interval of that row says it; no other row carries a level.
    assert fifty.count("(50% CI)") == fifty.count("[")
    assert sum("% CI)" in line for line in rows) == 1


def test_the_csv_gives_each_rows_ci_level_and_resamples(two_runs: dict[str, Path]) -> None:
    import io

    import pandas as pd

    from novabench.report.leaderboard import leaderboard_csv

    board = board_of([two_runs["a95"], two_runs["b50"]])
    table = pd.read_csv(io.StringIO(leaderboard_csv(board)))
    models = table[~table["model"].str.startswith("human")]
    assert models["ci_level (%)"].tolist() == [95, 50]
    assert models["ci_resamples"].tolist() == [200, 200]
    # The raters' rows come from the first report holding them: its level.
    raters = table[table["model"].str.startswith("human")].set_index("model")
    assert set(raters["ci_level (%)"]) == {95}
    # Their verified cell names the keys taken as stated as a model's row does.
    checked = raters.loc["human: rater 1 vs gold", "verified"]
    assert checked.startswith("partly: localization ACC50, ") and "mAP@30" not in checked
    assert raters.loc["human: rater 1 vs rater 2", "verified"] == "no"


# 4. Marks: BinaryF1 and keyword averaging; ranks of unchecked values; the raters' rows.


def test_binary_f1_is_not_marked_when_only_the_keyword_averaging_differs(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:

    only = ["--task", "captioning", "--bootstrap", "0"]
    sample = evaluate(sample_release, sample_floor_run, tmp_path / "s.json", *only)
    micro = evaluate(
        sample_release, sample_floor_run, tmp_path / "m.json", *only, "--keyword-averaging", "micro"
    )
    binary = "BinaryF1-lexicon"
    # The same labels under either averaging: the same value, so nothing to mark.
    assert (
        sample["tasks"]["captioning"]["metrics"][binary]
        == (micro["tasks"]["captioning"]["metrics"][binary])
    )
    board = build_leaderboard([sample, micro], ["s.json", "m.json"])
    [difference] = [d for d in board["setting_differences"] if d["setting"] == "keyword_averaging"]
    assert "ClinicalF1-lexicon" in difference["metrics"]
    assert binary not in difference["metrics"]
    assert f"{binary} (%, settings differ)" not in render_leaderboard_text(board)


def test_a_rank_set_by_values_taken_as_stated_is_marked(two_runs: dict[str, Path]) -> None:
    reports = []
    for path in (two_runs["a95"], two_runs["b50"]):
        report = json.loads(path.read_text(encoding="utf-8"))
        report.pop("items")  # shared without its tables: nothing checks its values
        reports.append(report)
    # b's stated mAP@30 (and its CI) lowered: ordered on what the reports state.
    section = reports[1]["tasks"]["localization"]
    section["metrics"]["mAP@30"] -= 0.2
    section["confidence_intervals"]["mAP@30"] = [
        end - 0.2 for end in section["confidence_intervals"]["mAP@30"]
    ]
    board = build_leaderboard(reports, ["a.json", "b.json"])
    text = render_leaderboard_text(board)
    overview = text.split("\nOverview\n", 1)[1].split("\nlocalization\n", 1)[0]
    ranks = sorted(line.split()[-2:] for line in overview.splitlines() if "†" in line)
    assert ranks == [["1", "†"], ["2", "†"]]


def test_rater_vs_gold_hit_rates_are_checked_from_the_tables_and_the_rest_marked(
    two_runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    source = two_runs["a95"]
    report = json.loads(source.read_text(encoding="utf-8"))
    board = board_of([source])
    rows = {row["who"]: row for row in board["human_reference"]}
    assert "mAP@30" not in rows["rater 1 vs gold"]["taken_as_stated"]
    assert "COCO-AP@30" in rows["rater 1 vs gold"]["taken_as_stated"]
    assert "mAP@30" in rows["rater 1 vs rater 2"]["taken_as_stated"]
    # What was checked: the share of scored images whose rater-1 best IoU reaches 0.30.
    images = pd.read_parquet(source.parent / report["items"]["images"])
    hits = (images["rater_1_best_iou"].astype(float) >= 0.3).mean()
    stated = report["human_reference"]["localization"]["rater_1_vs_gold"]["mAP@30"]
    assert stated == pytest.approx(hits, abs=1e-12)
    text = render_leaderboard_text(board)
    [rater_1] = [line for line in text.splitlines() if line.startswith("human: rater 1 vs gold")]
    assert f"{100 * stated:.1f} [" in rater_1 and f"{100 * stated:.1f} †" not in rater_1
    # Without tables nothing checks them: every value marked.
    report.pop("items")
    unchecked = build_leaderboard([report], ["a.json"])
    assert all(row["taken_as_stated"] for row in unchecked["human_reference"])
    # An edited rater value is refused, naming the report and the field.
    report = json.loads(source.read_text(encoding="utf-8"))
    report["human_reference"]["localization"]["rater_1_vs_gold"]["mAP@30"] = 0.5
    edited = source.parent / "edited-rater.json"
    edited.write_text(json.dumps(report), encoding="utf-8")
    capsys.readouterr()
    assert main(["leaderboard", str(edited), "--bootstrap", "20", "-q"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(
        f"nova leaderboard: error: {edited}, field "
        "'human_reference.localization.rater_1_vs_gold.mAP@30': the report states mAP@30 = 0.5 "
        "but its per-item tables give "
    )
