"""The `nova` command imports only what the command in hand needs.

`datasets`, `evaluate`, `torch` and `transformers` each take seconds to import; a command
that does not use them must not pay for them. Each case runs the command in a fresh
interpreter and lists which of those modules ended up in ``sys.modules`` (no timing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"
HEAVY = ("datasets", "evaluate", "torch", "transformers")


# Lighter, but a command that reads no Parquet, shows no bar and touches no Hub model
# does not need them either (about 0.2 s together).
UNNEEDED = ("pyarrow", "huggingface_hub", "tqdm", "PIL")


def heavy_modules_after(*argv: str, watched: tuple[str, ...] = HEAVY) -> list[str]:
    """Run ``nova *argv`` in a fresh interpreter; which ``watched`` modules it imported."""
    script = (
        "import json, sys\n"
        "from novabench.cli import main\n"
        "try:\n"
        f"    code = main({list(argv)!r})\n"
        "except SystemExit as stop:\n"
        "    code = stop.code\n"
        f"print(json.dumps([m for m in {list(watched)!r} if m in sys.modules]))\n"
        "sys.exit(code or 0)\n"
    )
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SOURCE), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    finished = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    return json.loads(finished.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def localization_run(tmp_path_factory) -> tuple[Path, Path]:
    from novabench.data.release import read_release
    from novabench.data.sample import write_sample_release

    root = tmp_path_factory.mktemp("imports")
    release = write_sample_release(root / "nova", n_cases=2, seed=0, progress=False)
    images = read_release(release).images
    lines = [
        json.dumps({"filename": image.filename, "task": "localization", "boxes": [[1, 1, 5, 5]]})
        for image in images
    ]
    predictions = root / "predictions.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    return release, predictions


@pytest.mark.parametrize("argv", [("--help",), ("evaluate", "--help"), ("export", "--help")])
def test_help_imports_no_heavy_library(argv) -> None:
    assert heavy_modules_after(*argv) == []


def test_info_imports_no_heavy_library(localization_run) -> None:
    release, _ = localization_run
    assert heavy_modules_after("info", str(release)) == []


def test_scoring_localization_imports_no_heavy_library(localization_run, tmp_path) -> None:
    release, predictions = localization_run
    report = tmp_path / "report.json"
    argv = ("evaluate", "--data", str(release), "--predictions", str(predictions))
    # pandas: a copying pyarrow to_numpy imports it (0.2-0.3 s), pyarrow.compute: flatten
    watched = HEAVY + ("pandas", "pyarrow.compute")
    options = ("--out", str(report), "--bootstrap", "20")
    assert heavy_modules_after(*argv, *options, watched=watched) == []
    # The command did score: the report is there, with intervals.
    scored = json.loads(report.read_text())["tasks"]["localization"]
    assert scored["confidence_intervals"]["mAP@50"][0] <= scored["metrics"]["mAP@50"]


def test_scoring_a_csv_release_imports_no_parquet_bar_or_hub_library(tmp_path) -> None:
    """Every task but BERTScore, on a legacy (CSV) release, bars hidden (not a terminal)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from release_factory import write_legacy_release

    from novabench.data.release import read_release

    release = write_legacy_release(tmp_path / "nova", image_size=(64, 64))
    images = read_release(release).images
    lines = []
    for image in images:
        lines.append({"filename": image.filename, "boxes": [[1, 1, 5, 5]], "scores": [0.5]})
        lines.append({"filename": image.filename, "caption": "Axial FLAIR image of a glioma."})
    for case_id in sorted({image.case_id for image in images}):
        lines.append({"case_id": case_id, "diagnoses": ["Glioblastoma", "Abscess"]})
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = tmp_path / "report.json"
    argv = ("evaluate", "--data", str(release), "--predictions", str(predictions))
    options = ("--out", str(report), "--bootstrap", "20", "--exclude", "BERTScore-F1")
    watched = HEAVY + UNNEEDED + ("novabench.run.parsers",)  # the answers are parsed already
    assert heavy_modules_after(*argv, *options, watched=watched) == []
    scored = json.loads(report.read_text())["tasks"]  # it did score every task
    assert sorted(scored) == ["captioning", "diagnosis", "localization"]
