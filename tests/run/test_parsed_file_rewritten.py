"""A parsed file written again by another tool, or moved without its manifest (user20).

`nova evaluate` reads each parsed line's raw answer again and refuses a disagreement. Two
honest files were refused: (1) boxes rounded to 10 significant digits (pandas' ``to_json``)
differ from the reading by ~1e-14 px; (2) a file parsed with ``--box-convention
xyxy_pixel`` and copied without its manifest is read again with the default, and the
message called it "edited, or parsed by another version", while ``--box-convention`` was
refused for a file of parsed answers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.report.scoring import score_predictions
from novabench.run.manifest import RunManifest, file_record

FAST = ["--task", "localization", "--bootstrap", "0", "--no-breakdowns"]


def parsed_floor(sample_release: Path, floor: Path, out: Path, *convention: str) -> Path:
    arguments = ["parse", str(floor), "--data", str(sample_release), "--out", str(out), "-q"]
    assert main([*arguments, *convention]) == 0
    return out


def rewrite(path: Path, change: Any) -> list[dict[str, Any]]:
    """Every line through ``change``; the manifest, if any, records the new bytes."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines = [change(line) for line in lines]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    manifest = RunManifest.read(path)
    if manifest is not None:
        manifest.file = file_record(path)
        manifest.write(path)
    return lines


def to_ten_digits(line: dict[str, Any]) -> dict[str, Any]:
    """What a writer keeping 10 significant digits makes of a line's boxes."""
    if line.get("boxes"):
        line["boxes"] = [[float(f"{v:.10g}") for v in box] for box in line["boxes"]]
    return line


def scores(sample_release: Path, path: Path) -> dict[str, float]:
    scored = score_predictions(
        sample_release, path, n_resamples=0, breakdowns=False, tasks=["localization"]
    )
    return dict(scored.report["tasks"]["localization"]["metrics"])


def test_boxes_rounded_to_ten_digits_score_as_the_file_nova_parse_wrote(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path
) -> None:
    parsed = parsed_floor(sample_release, sample_floor_run, tmp_path / "parsed.jsonl")
    written = scores(sample_release, parsed)
    before = [json.loads(line) for line in parsed.read_text(encoding="utf-8").splitlines()]
    after = rewrite(parsed, to_ten_digits)
    # The rounding changed some boxes (23.039999999999992 -> 23.04), by far less than 1e-6 px.
    moved = [
        abs(a - b)
        for old, new in zip(before, after)
        for old_box, new_box in zip(old.get("boxes") or [], new.get("boxes") or [])
        for a, b in zip(old_box, new_box)
        if a != b
    ]
    assert moved and max(moved) < 1e-9
    assert scores(sample_release, parsed) == written  # the raw answers' reading is scored


def test_a_box_moved_by_a_thousandth_of_a_pixel_is_still_refused(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parsed = parsed_floor(sample_release, sample_floor_run, tmp_path / "parsed.jsonl")
    lines = [json.loads(line) for line in parsed.read_text(encoding="utf-8").splitlines()]
    index = next(i for i, line in enumerate(lines) if line.get("boxes"))

    nudged = lines[index]["filename"]

    def nudge(line: dict[str, Any]) -> dict[str, Any]:
        if line.get("filename") == nudged and line["task"] == "localization":
            line["boxes"][0][2] += 0.001  # a width edited by a thousandth of a pixel
        return line

    rewrite(parsed, nudge)
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(parsed)]
    capsys.readouterr()
    assert main([*arguments, "--out", str(tmp_path / "r.json"), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"line {index + 1} " in err and "field 'boxes'" in err
    assert "(edited, or parsed by another version)" in err  # its manifest says how it was read


def test_a_parsed_file_without_its_manifest_names_the_convention_that_reads_it(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The floor answers labelled lines "label: [a, b, c, d]", here read as x1, y1, x2, y2 px.
    parsed = parsed_floor(
        sample_release,
        sample_floor_run,
        tmp_path / "parsed_px.jsonl",
        "--box-convention",
        "xyxy_pixel",
    )
    alone = tmp_path / "alone"
    alone.mkdir()
    moved = Path(shutil.copy(parsed, alone / parsed.name))
    assert RunManifest.read(moved) is None
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(moved)]
    out = tmp_path / "r.json"
    capsys.readouterr()
    assert main([*arguments, "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "field 'boxes'" in err
    assert "no run manifest beside the file records the box convention" in err
    assert "read again with auto" in err and "(--box-convention)" in err
    # qwen reads x1, y1, x2, y2 pixels as xyxy_pixel does (the model saw the original size).
    assert "; qwen and xyxy_pixel read raw_boxes as stored;" in err
    assert "another version" not in err and not out.exists()
    # The convention named scores it, as the file with its manifest scores.
    assert main([*arguments, "--out", str(out), *FAST, "--box-convention", "xyxy_pixel"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    boxed = [
        line for line in moved.read_text(encoding="utf-8").splitlines() if '"raw_boxes"' in line
    ]
    assert report["predictions"]["box_answers"]["checked_here"] == len(boxed)
    assert report["tasks"]["localization"]["metrics"] == scores(sample_release, parsed)
    # One under which the raw answers read otherwise is still refused.
    assert main([*arguments, "--out", str(out), *FAST, "--box-convention", "protocol"]) == 2
