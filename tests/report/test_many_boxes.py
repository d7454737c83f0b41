"""A blind grid of boxes: the protocol's mAP@30 does not penalise extra boxes, so a report
whose answers hold many boxes per image says so first, in every output, and points to
COCO-AP@30; the numbers themselves do not change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release

NOTICE = "images answered with many distinct boxes"


def _grid(width: float, height: float, per_side: int = 10) -> list[list[float]]:
    """``per_side`` x ``per_side`` boxes tiling the image, chosen without looking at it."""
    w, h = width / per_side, height / per_side
    return [[i * w, j * h, w, h] for i in range(per_side) for j in range(per_side)]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _grid_run(release_folder: Path, folder: Path) -> tuple[Path, int]:
    """A run answering every image of the release with a 10 x 10 grid, and its image count."""
    images = read_release(release_folder).images
    rows = [{"filename": im.filename, "boxes": _grid(im.width, im.height)} for im in images]
    return _write(folder / "grid.jsonl", rows), len(images)


def _evaluate(sample: Path, predictions: Path, folder: Path, capsys) -> tuple[list[str], ...]:
    out, markdown, html = folder / "r.json", folder / "r.md", folder / "r.html"
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate", "--data", str(sample), "--predictions", str(predictions),
                "--task", "localization", "--bootstrap", "0", "--out", str(out),
                "--markdown", str(markdown), "--html", str(html),
            ]
        )
        == 0
    )  # fmt: skip
    printed = capsys.readouterr().out.splitlines()
    report = json.loads(out.read_text(encoding="utf-8"))
    markdown_lines = markdown.read_text(encoding="utf-8").splitlines()
    page = html.read_text(encoding="utf-8")
    return printed, report["notices"], markdown_lines, [page], [json.dumps(report)]


def test_a_blind_grid_gets_the_notice_first_in_every_output(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid, n = _grid_run(sample_release, tmp_path)
    printed, notices, markdown, (page,), (raw,) = _evaluate(sample_release, grid, tmp_path, capsys)
    expected = f"localization: {n} of {n} {NOTICE}"
    said = [line for line in notices if NOTICE in line]
    assert len(said) == 1 and said[0].startswith(expected) and "COCO-AP@30" in said[0]
    # The terminal says it before the table's first row, the Markdown under its title.
    first_row = next(i for i, line in enumerate(printed) if line.startswith("localization  mAP@30"))
    assert any(line.startswith(expected) for line in printed[:first_row])
    model = next(i for i, line in enumerate(markdown) if line.startswith("Model: "))
    assert any(expected in line for line in markdown[1:model])
    assert page.index(expected) < page.index("mAP@30</")
    report = json.loads(raw)
    assert report["tasks"]["localization"]["coverage"]["images_with_many_boxes"] == n


def test_answers_of_at_most_ten_boxes_get_no_notice(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = read_release(sample_release)
    # At the threshold: 10 boxes per image (not more than 10) is not "many".
    ten = [
        {"filename": im.filename, "boxes": _grid(im.width, im.height)[:10]} for im in release.images
    ]
    _, notices, _, _, (raw,) = _evaluate(
        sample_release, _write(tmp_path / "ten.jsonl", ten), tmp_path, capsys
    )
    assert not [line for line in notices if NOTICE in line]
    report = json.loads(raw)
    assert "images_with_many_boxes" not in report["tasks"]["localization"]["coverage"]


def test_a_comparison_says_which_side_answered_with_a_blind_grid(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nova compare said nothing of a side's blind grid, while nova evaluate says it first."""
    grid, n = _grid_run(sample_release, tmp_path)
    filenames = [json.loads(line)["filename"] for line in grid.read_text().splitlines()]
    none = _write(tmp_path / "none.jsonl", [{"filename": name, "boxes": []} for name in filenames])
    out, markdown = tmp_path / "c.json", tmp_path / "c.md"
    capsys.readouterr()
    command = ["compare", "--data", str(sample_release), "--a", str(none), "--b", str(grid),
               "--task", "localization", "--bootstrap", "20", "--out", str(out),
               "--markdown", str(markdown)]  # fmt: skip
    assert main(command) == 0
    printed = capsys.readouterr().out
    expected = f"B (grid) localization: {n} of {n} {NOTICE}"
    assert expected in printed and expected in markdown.read_text(encoding="utf-8")
    assert f"A (none) localization: {n} of {n} {NOTICE}" not in printed
    coverage = json.loads(out.read_text(encoding="utf-8"))["coverage"]["localization"]
    assert coverage["b"]["images_with_many_boxes"] == n
    assert "images_with_many_boxes" not in coverage["a"]
