"""A report pins the per-item tables it wrote; readers refuse tables that are not those.

Before, two `nova evaluate --items SAME` runs (or a kill between the tables and the report)
left report A pointing at model B's tables, and `nova leaderboard` then resampled B's items
for A: two different models came out tied.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.report.html import render_html
from novabench.run.predictions import RunManifest

FAST = ["--exclude", "BERTScore-F1", "--exclude", "METEOR", "--bootstrap", "20"]


@pytest.fixture(scope="module")
def runs(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two models that differ: gold boxes for every image, and the same boxes for half."""
    folder = tmp_path_factory.mktemp("runs")
    release = read_release(sample_release)
    paths = {}
    for name, kept in (("perfect", len(release.images)), ("half", len(release.images) // 2)):
        lines = [
            {"filename": image.filename, "boxes": image.boxes if n < kept else []}
            for n, image in enumerate(release.images)
        ]
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        RunManifest(model=name).write(path)
        paths[name] = path
    return paths


def evaluate(release: Path, predictions: Path, out: Path, items: Path, *extra: str) -> int:
    args = ["evaluate", "--data", str(release), "--predictions", str(predictions), *extra]
    return main([*args, "--task", "localization", "--out", str(out), "--items", str(items), *FAST])


def leaderboard(*reports: Path) -> int:
    return main(["leaderboard", *map(str, reports), "--bootstrap", "20"])


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_second_report_cannot_take_over_the_first_reports_items_folder(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items"
    first, second = tmp_path / "perfect.json", tmp_path / "half.json"
    assert evaluate(sample_release, runs["perfect"], first, items) == 0
    tables = {path.name: path.read_bytes() for path in items.iterdir()}
    capsys.readouterr()
    assert evaluate(sample_release, runs["half"], second, items) == 2
    message = one_line(capsys)
    assert str(items) in message and str(first) in message and "--items" in message
    assert not second.exists()
    assert {path.name: path.read_bytes() for path in items.iterdir()} == tables
    # Re-scoring the first report itself into its own folder is allowed (asked for: --force).
    assert evaluate(sample_release, runs["perfect"], first, items, "--force") == 0
    assert leaderboard(first) == 0


def test_tables_replaced_under_a_report_are_refused_by_every_reader(
    sample_release: Path,
    runs: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report_a, report_b = tmp_path / "a.json", tmp_path / "b.json"
    assert evaluate(sample_release, runs["perfect"], report_a, tmp_path / "items_a") == 0
    assert evaluate(sample_release, runs["half"], report_b, tmp_path / "items_b") == 0
    assert leaderboard(report_a, report_b) == 0

    # Re-score report a with the other model and die between putting the tables and the
    # report in place: report a on disk is the old one, its folder holds the new tables.
    real_replace = os.replace

    def killed_at_the_report(
        source: str | os.PathLike[str], target: str | os.PathLike[str]
    ) -> None:
        if Path(target) == report_a:
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", killed_at_the_report)
    assert evaluate(sample_release, runs["half"], report_a, tmp_path / "items_a", "--force") == 130
    monkeypatch.undo()
    capsys.readouterr()
    assert leaderboard(report_a, report_b) == 2
    message = one_line(capsys)
    assert str(report_a) in message and str(tmp_path / "items_a" / "images.parquet") in message
    report = json.loads(report_a.read_text())
    with pytest.raises(NovaInputError, match="is not the one this report wrote"):
        render_html(report, report_path=report_a)


def test_a_report_that_does_not_pin_its_tables_is_refused(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "old.json"
    assert evaluate(sample_release, runs["perfect"], report_path, tmp_path / "items") == 0
    report = json.loads(report_path.read_text())
    report["items"] = {key: report["items"][key] for key in ("images", "cases")}  # as before
    report_path.write_text(json.dumps(report), encoding="utf-8")
    capsys.readouterr()
    assert leaderboard(report_path) == 2
    assert "does not pin its per-item tables" in one_line(capsys)


def test_a_report_shared_without_its_items_folder_says_what_to_share(
    sample_release: Path, runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = tmp_path / "sent"
    sent.mkdir()
    report_path = tmp_path / "model.json"
    assert evaluate(sample_release, runs["perfect"], report_path, tmp_path / "model-items") == 0
    (sent / "model.json").write_bytes(report_path.read_bytes())  # the report alone, e-mailed
    capsys.readouterr()
    assert leaderboard(sent / "model.json") == 2
    message = one_line(capsys)
    assert str(sent / "model-items" / "images.parquet") + " is missing" in message
    assert "with its items folder (the report expects 'model-items/images.parquet'" in message
    assert "nova evaluate --items" in message
