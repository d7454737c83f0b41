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
