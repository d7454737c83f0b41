"""The JSON of a report and of a comparison carries the notices its other outputs show first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main

# Few resamples, and METEOR left to its offline fallback, so that the report has several
# notices (synthetic sample, too few resamples, stand-ins for the paper's keys) in one order.
SCORING = ["--bootstrap", "20", "--exclude", "BERTScore-F1"]


def _bold_paragraphs(markdown: str) -> list[str]:
    """The bold paragraphs under the Markdown title, before the Model line."""
    lines = markdown.splitlines()
    model = next(i for i, line in enumerate(lines) if line.startswith("Model: "))
    return [line for line in lines[1:model] if line.startswith("**")]


def test_the_report_json_lists_what_the_terminal_and_markdown_show_first(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, markdown = tmp_path / "report.json", tmp_path / "report.md"
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(sample_floor_run)]
    capsys.readouterr()
    assert main([*args, "--out", str(out), "--markdown", str(markdown), *SCORING]) == 0
    printed = capsys.readouterr().out.splitlines()

    notices = json.loads(out.read_text())["notices"]
    assert len(notices) >= 3
    assert notices[0].startswith("notice: NOT THE REAL DATA: ")
    assert any(line.startswith("warning: the intervals rest on 20 resamples") for line in notices)
    assert any("not the paper's top1, top5" in line for line in notices)
    assert printed[: len(notices)] == notices  # the terminal's lines before its table
    assert printed[len(notices)].startswith("task ")
    assert len(_bold_paragraphs(markdown.read_text())) == len(notices)


def test_a_report_on_the_release_itself_has_an_empty_list_not_no_key() -> None:
    from novabench.report.render import with_notices

    report = {"data": {"provenance": None}, "bootstrap": {"n_resamples": 1000}, "tasks": {}}
    assert with_notices(report)["notices"] == []
    stale = {**report, "notices": ["notice: NOT THE REAL DATA: ..."]}  # a report read back
    assert with_notices(stale)["notices"] == []


def test_the_comparison_json_lists_what_the_terminal_shows_first(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "comparison.json"
    runs = ["--a", str(sample_floor_run), "--b", str(sample_floor_run)]
    args = ["compare", "--data", str(sample_release), *runs, "--task", "diagnosis"]
    capsys.readouterr()
    assert main([*args, "--out", str(out), *SCORING]) == 0
    printed = capsys.readouterr().out.splitlines()

    notices = json.loads(out.read_text())["notices"]
    assert notices[0].startswith("notice: NOT THE REAL DATA: ")
    assert notices[-1].startswith("note: the two prediction sets give identical answers")
    shown = printed[printed.index("B: baseline:floor") + 2 :]  # after the models, a blank line
    assert shown[: len(notices) + 1] == [*notices, ""]
    assert shown[len(notices) + 1].startswith("task ")
