"""Every command replaces only its own earlier outputs, and those only with --force.

A leaderboard or a comparison never replaces an evaluation report, a file another
report pins, or a file of the user's, whatever --force says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from tests.report.localization_runs import write_scored_runs

FAST = ["--exclude", "BERTScore-F1", "--exclude", "METEOR"]


@pytest.fixture(scope="module")
def scored(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two localisation runs (perfect boxes, no boxes), each with its evaluation report."""
    folder = tmp_path_factory.mktemp("scored")
    models = {"oracle-v1": True, "empty-v2": False}
    options = [*FAST, "--bootstrap", "0"]
    return write_scored_runs(sample_release, folder, models, options, markdown=True)


def _leaderboard(scored: dict[str, Path], *outputs: str) -> int:
    reports = [str(scored["oracle-v1 report"]), str(scored["empty-v2 report"])]
    return main(["leaderboard", "-q", *reports, "--bootstrap", "10", *outputs])


def _compare(release: Path, scored: dict[str, Path], *outputs: str) -> int:
    runs = ["--a", str(scored["oracle-v1"]), "--b", str(scored["empty-v2"])]
    args = ["compare", "--data", str(release), *runs, *FAST, "--bootstrap", "10"]
    return main([*args, *outputs])


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    return error


@pytest.mark.parametrize("option", ["--out", "--markdown"])
def test_a_leaderboard_never_replaces_an_evaluation_report(
    scored: dict[str, Path], tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = scored["oracle-v1 report"] if option == "--out" else scored["oracle-v1"].parent
    if option == "--markdown":
        source = source / "oracle-v1.md"
    victim = tmp_path / source.name
    victim.write_bytes(source.read_bytes())
    capsys.readouterr()
    assert _leaderboard(scored, option, str(victim), "--force") == 2
    error = _one_line_error(capsys)
    assert str(victim) in error and option in error and "`nova evaluate`" in error
    assert "never replaces" in error
    assert victim.read_bytes() == source.read_bytes()


@pytest.mark.parametrize("whose", ["the user's", "a report's pinned table"])
def test_a_leaderboard_csv_never_replaces_another_csv(
    scored: dict[str, Path], tmp_path: Path, whose: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if whose == "the user's":
        victim = tmp_path / "my.csv"
        victim.write_text("model,my score\nqwen,0.5\n", encoding="utf-8")
    else:
        victim = scored["oracle-v1"].parent / "oracle-v1" / "images.csv"  # the report pins it
    before = victim.read_bytes()
    capsys.readouterr()
    assert _leaderboard(scored, "--csv", str(victim), "--force") == 2
    error = _one_line_error(capsys)
    assert str(victim) in error and "--csv" in error and "not a report novabench wrote" in error
    assert victim.read_bytes() == before


def test_a_leaderboard_replaces_its_own_outputs_only_with_force(
    scored: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = {name: tmp_path / f"board.{name}" for name in ("json", "md", "html", "csv")}
    options = ["--out", "--markdown", "--html", "--csv"]
    argv = [part for option, path in zip(options, outputs.values()) for part in (option, str(path))]
    assert _leaderboard(scored, *argv) == 0
    before = {name: path.read_bytes() for name, path in outputs.items()}
    for option, path in zip(options, outputs.values()):
        capsys.readouterr()
        assert _leaderboard(scored, option, str(path)) == 2
        error = _one_line_error(capsys)
        assert str(path) in error and error.endswith("pass --force to replace it")
        assert "a report novabench wrote" not in error  # each says what it holds
    assert {name: path.read_bytes() for name, path in outputs.items()} == before
    capsys.readouterr()
    assert _leaderboard(scored, *argv, "--force") == 0
    assert json.loads(outputs["json"].read_text())["ranking"]


def test_a_comparison_never_replaces_an_evaluation_report(
    sample_release: Path, scored: dict[str, Path], tmp_path: Path, capsys
) -> None:
    victim = tmp_path / "victim.report.json"
    victim.write_bytes(scored["oracle-v1 report"].read_bytes())
    capsys.readouterr()
    assert _compare(sample_release, scored, "--out", str(victim), "--force") == 2
    error = _one_line_error(capsys)
    assert str(victim) in error and "`nova evaluate`" in error
    assert victim.read_bytes() == scored["oracle-v1 report"].read_bytes()


def test_a_comparison_replaces_its_own_outputs_only_with_force(
    sample_release: Path, scored: dict[str, Path], tmp_path: Path, capsys
) -> None:
    out, markdown = tmp_path / "cmp.json", tmp_path / "cmp.md"
    assert _compare(sample_release, scored, "--out", str(out), "--markdown", str(markdown)) == 0
    before = out.read_bytes(), markdown.read_bytes()
    capsys.readouterr()
    assert _compare(sample_release, scored, "--out", str(out)) == 2
    assert _one_line_error(capsys).endswith("pass --force to replace it")
    assert (out.read_bytes(), markdown.read_bytes()) == before
    args = ["--out", str(out), "--markdown", str(markdown), "--force"]
    assert _compare(sample_release, scored, *args) == 0


def test_an_evaluation_never_replaces_a_leaderboard(
    sample_release: Path, scored: dict[str, Path], tmp_path: Path, capsys
) -> None:
    board = tmp_path / "board.json"
    assert _leaderboard(scored, "--out", str(board)) == 0
    before = board.read_bytes()
    capsys.readouterr()
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(scored["empty-v2"])]
    assert main([*args, "--out", str(board), *FAST, "--bootstrap", "0", "--force"]) == 2
    error = _one_line_error(capsys)
    assert "`nova leaderboard`" in error and board.read_bytes() == before
