"""Reports meant to be shared name local files relative to the report or by name.

Before, `nova evaluate` and `nova compare` wrote the release's and the prediction files'
absolute paths ("Data: /home/...") and the BERTScore model's install folder into the JSON,
Markdown and HTML; now the full paths only with `--full-paths`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.run.predictions import RunManifest

FAST = ["--exclude", "BERTScore-F1", "--exclude", "METEOR", "--bootstrap", "20"]


@pytest.fixture
def layout(sample_release: Path, tmp_path: Path) -> dict[str, Path]:
    """A lab's layout: runs beside the reports' folder; the release far from both."""
    release = read_release(sample_release)
    runs = tmp_path / "project" / "runs"
    runs.mkdir(parents=True)
    predictions = {}
    for name, keep in (("gold", True), ("empty", False)):
        path = runs / f"{name}.jsonl"
        lines = [{"filename": i.filename, "boxes": i.boxes if keep else []} for i in release.images]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        RunManifest(model=name).write(path)
        predictions[name] = path
    return {**predictions, "reports": tmp_path / "project" / "reports", "release": sample_release}


def outputs(folder: Path, stem: str) -> list[str]:
    return [
        "--out",
        str(folder / f"{stem}.json"),
        "--markdown",
        str(folder / f"{stem}.md"),
        "--html",
        str(folder / f"{stem}.html"),
    ]


def test_reports_and_comparisons_name_no_local_folder(layout: dict[str, Path]) -> None:
    reports, release = layout["reports"], layout["release"]
    common = ["--data", str(release), "--task", "localization", *FAST]
    assert (
        main(["evaluate", "--predictions", str(layout["gold"]), *common, *outputs(reports, "gold")])
        == 0
    )
    assert (
        main(
            [
                "compare",
                "--a",
                str(layout["gold"]),
                "--b",
                str(layout["empty"]),
                *common,
                *outputs(reports, "cmp"),
            ]
        )
        == 0
    )
    report = json.loads((reports / "gold.json").read_text())
    assert report["data"]["path"] == release.name  # two levels away: by name only
    assert report["predictions"]["paths"] == ["../runs/gold.jsonl"]  # beside: relative
    comparison = json.loads((reports / "cmp.json").read_text())
    assert comparison["a"]["predictions"]["paths"] == ["../runs/gold.jsonl"]
    assert comparison["b"]["data"]["path"] == release.name
    root = str(layout["reports"].parents[1])  # the temporary folder holding everything
    for name in ("gold.json", "gold.md", "gold.html", "cmp.json", "cmp.md", "cmp.html"):
        text = (reports / name).read_text()
        assert root not in text and str(release) not in text, name


def test_full_paths_keeps_the_absolute_paths(layout: dict[str, Path]) -> None:
    reports, release = layout["reports"], layout["release"]
    args = ["evaluate", "--data", str(release), "--predictions", str(layout["gold"])]
    out = reports / "full.json"
    assert main([*args, "--task", "localization", *FAST, "--out", str(out), "--full-paths"]) == 0
    report = json.loads(out.read_text())
    assert report["data"]["path"] == str(release)
    assert report["predictions"]["paths"] == [str(layout["gold"])]


def test_run_manifests_in_the_report_name_no_local_folder(
    layout: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    reports, release, runs = layout["reports"], layout["release"], layout["gold"].parent
    parsed = runs / "parsed.jsonl"  # nova parse records the raw file as given: absolute here
    assert main(["parse", str(layout["gold"]), "--data", str(release), "--out", str(parsed)]) == 0
    assert RunManifest.read(parsed).parsed["from"] == str(layout["gold"])
    out = reports / "parsed.json"
    args = ["evaluate", "--data", str(release), "--predictions", str(parsed), "--out", str(out)]
    assert main([*args, "--task", "localization", *FAST]) == 0
    report = json.loads(out.read_text())
    assert report["predictions"]["manifests"][0]["parsed"]["from"] == "../runs/gold.jsonl"
    assert str(runs) not in out.read_text()
