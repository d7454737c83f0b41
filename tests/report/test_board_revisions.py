"""The leaderboard on builds and scoring revisions it cannot vouch for (user15).

A report without ``toolkit.source_sha256`` beside one with it was ranked with no build
warning, though an unknown build may be another one; and a board re-scored the item tables
of reports of another scoring revision under its own rules without a word, calling any
difference an edit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench._version import SCORING_REVISION, toolkit_record
from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.report.leaderboard import build_leaderboard
from tests.report.board_edits import diagnosis_only_report, edited_copy


def test_a_report_of_an_unknown_build_beside_a_known_one_is_warned_about() -> None:
    now = toolkit_record()
    unknown = {key: value for key, value in now.items() if key != "source_sha256"}
    board = build_leaderboard(
        [diagnosis_only_report("a", 0.2, now), diagnosis_only_report("b", 0.6, unknown)], ["a", "b"]
    )
    [line] = [line for line in board["warnings"] if "builds of novabench" in line]
    assert line.startswith("warning: the reports were scored by builds of novabench")
    assert "b records no `toolkit.source_sha256` (an unknown build) beside 1 that records" in line
    assert "a records" not in line
    assert [m["tasks"]["diagnosis"]["rank"] for m in board["models"]] == [2, 1]  # still ranked
    # Both without the hash: nothing tells two builds apart, nothing claimed.
    board = build_leaderboard(
        [diagnosis_only_report("a", 0.2, unknown), diagnosis_only_report("b", 0.6, unknown)],
        ["a", "b"],
    )
    assert not any("builds of novabench" in line for line in board["warnings"])


@pytest.fixture(scope="module")
def scored(
    sample_release: Path, sample_floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The floor run's localisation scored with per-item tables (what a board re-scores)."""
    folder = tmp_path_factory.mktemp("revisions")
    out = folder / "localization.json"
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(sample_floor_run)]
    args += ["--out", str(out), "--task", "localization", "--bootstrap", "20", "-q"]
    assert main([*args, "--items", str(folder / "items")]) == 0
    return out


def _of_revision(revision: int) -> Any:
    def edit(report: dict[str, Any]) -> None:
        report["toolkit"]["scoring_revision"] = revision

    return edit


def _board(path: Path) -> dict[str, Any]:
    return build_leaderboard([json.loads(path.read_text(encoding="utf-8"))], [path])


def test_a_board_says_when_every_report_is_of_another_scoring_revision(scored: Path) -> None:
    older = edited_copy(scored, "older.json", _of_revision(SCORING_REVISION - 1))
    expected = (
        f"note: every report was scored under scoring revision {SCORING_REVISION - 1}; this "
        f"novabench (revision {SCORING_REVISION}) re-scores their item tables under its own rules"
    )
    assert any(line.startswith(expected) for line in _board(older)["warnings"])
    assert not any("every report was scored under" in line for line in _board(scored)["warnings"])


def _raised_map30(report: dict[str, Any]) -> None:
    metrics = report["tasks"]["localization"]["metrics"]
    metrics["mAP@30"] = min(1.0, metrics["mAP@30"] + 0.1)


def test_a_value_re_scored_otherwise_under_newer_rules_is_not_called_an_edit(
    scored: Path,
) -> None:
    def older_and_raised(report: dict[str, Any]) -> None:
        _of_revision(SCORING_REVISION - 1)(report)
        _raised_map30(report)

    older = edited_copy(scored, "older-raised.json", older_and_raised)
    with pytest.raises(NovaInputError) as refused:
        _board(older)
    message = str(refused.value)
    assert "the report states mAP@30 = " in message and "edited" not in message
    assert f"scored under other scoring rules (revision {SCORING_REVISION - 1}; this " in message
    assert f"novabench: revision {SCORING_REVISION})" in message
    # The same value at this revision: the rules are the same, so it was edited.
    same_rules = edited_copy(scored, "raised.json", _raised_map30)
    with pytest.raises(NovaInputError, match="the report was edited or is not the one"):
        _board(same_rules)


@pytest.mark.parametrize(
    ("revision", "shown"),
    [("40", 'got "40"'), (40.0, "got 40.0"), (True, "got true"), (0, "got 0"), ([40], "got list")],
)
def test_a_scoring_revision_novabench_cannot_have_written_is_refused_as_malformed(
    revision: Any, shown: str
) -> None:
    # user17: "40" beside 40 was refused as two revisions, "x (revision 40), y (revision 40)".
    now = toolkit_record()
    edited = {**now, "scoring_revision": revision}
    for reports, names in [
        (
            [diagnosis_only_report("a", 0.2, now), diagnosis_only_report("b", 0.6, edited)],
            ["a.json", "b.json"],
        ),
        (
            [diagnosis_only_report("b", 0.6, edited)],
            ["b.json"],
        ),  # alone too: it would be called another
    ]:
        with pytest.raises(NovaInputError) as refused:
            build_leaderboard(reports, names)
        error = refused.value
        assert (error.source, error.field) == ("b.json", "toolkit.scoring_revision")
        assert f"must be a whole number of at least 1 (as nova evaluate writes it), {shown}" in (
            error.message
        )
        assert "different scoring rules" not in error.message


def test_a_toolkit_record_that_is_not_an_object_is_refused_naming_it() -> None:
    with pytest.raises(NovaInputError) as refused:
        build_leaderboard([diagnosis_only_report("b", 0.6, "novabench 0.1.0")], ["b.json"])  # type: ignore[arg-type]
    assert (refused.value.source, refused.value.field) == ("b.json", "toolkit")
    assert "must be an object (as nova evaluate writes it), got str" in refused.value.message


def test_nova_leaderboard_refuses_a_text_revision_in_one_line(
    scored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def as_text(report: dict[str, Any]) -> None:
        report["toolkit"]["scoring_revision"] = str(report["toolkit"]["scoring_revision"])

    text = edited_copy(scored, "text-revision.json", as_text)
    out = text.parent / "board.json"
    capsys.readouterr()
    assert main(["leaderboard", str(text), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and not out.exists()
    assert f"{text.name}, field 'toolkit.scoring_revision': must be a whole number" in error[0]
    assert f'got "{SCORING_REVISION}"' in error[0]
