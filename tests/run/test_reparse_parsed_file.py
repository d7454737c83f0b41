"""A file an older ``nova parse`` wrote from non-finite box answers (user31).

Its ``parse_status``/``boxes_dropped`` are not what the raw answers read as today, so it is
refused, by ``nova evaluate`` and ``nova parse`` alike: the refusal counts every line that
differs and names the one command out, ``nova parse PARSED.jsonl --reparse --out NEW``,
which writes a new file holding today's reading and says which lines it read again. The
scores do not move: such boxes were never scored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.run.manifest import RunManifest, file_record

FAST = ["--bootstrap", "0", "--no-breakdowns", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]
# What novabench before trust28 wrote for these answers (read with its tree, /work/main at
# e0a58a5's parent): unparseable with boxes_dropped 0, or ok with the NaN box not counted.
OLD_READING = {
    "lesion: [nan, 10, 50, 50]": {"parse_status": "unparseable", "boxes_dropped": 0},
    "The lesion is at [NaN, 100, 150, 150].": {"parse_status": "unparseable", "boxes_dropped": 0},
    "[nan, 1, 2, 3] and [100, 100, 150, 150]": {"parse_status": "ok", "boxes_dropped": 0},
}


@pytest.fixture
def files(sample_release: Path, tmp_path: Path) -> dict[str, Path]:
    """The raw answers, today's parse of them, and the same file as the older parse wrote
    it (its manifest recording the edited bytes, as that parse's own would)."""
    images = [image.filename for image in read_release(sample_release).images]
    answers = [*OLD_READING, *OLD_READING, *["[100, 100, 150, 150]"] * (len(images) - 6)]
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        "".join(
            json.dumps({"filename": name, "task": "localization", "raw_boxes": answer}) + "\n"
            for name, answer in zip(images, answers)
        ),
        encoding="utf-8",
    )
    today = tmp_path / "today.jsonl"
    common = ["--data", str(sample_release), "--box-convention", "xyxy_pixel", "-q"]
    assert main(["parse", str(raw), "--out", str(today), *common]) == 0
    old = tmp_path / "old.jsonl"
    lines = [json.loads(line) for line in today.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.update(OLD_READING.get(line["raw_boxes"], {}))
    old.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    manifest = RunManifest.read(today)
    assert manifest is not None
    manifest.file = file_record(old)
    manifest.write(old)
    return {"raw": raw, "today": today, "old": old}


def scores(sample_release: Path, path: Path, out: Path) -> dict[str, Any]:
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(path)]
    assert main([*arguments, "--out", str(out), *FAST]) == 0
    metrics = json.loads(out.read_text(encoding="utf-8"))["tasks"]["localization"]["metrics"]
    return dict(metrics)


def test_the_refusal_counts_the_lines_and_names_the_way_out(
    sample_release: Path, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = files["old"]
    data = ["--data", str(sample_release)]
    refusals = []
    for command in (
        ["evaluate", *data, "--predictions", str(old), "--out", str(tmp_path / "r.json"), *FAST],
        ["parse", str(old), *data, "--out", str(tmp_path / "again.jsonl"), "-q"],
    ):
        capsys.readouterr()
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        refusals.append(err)
    for err in refusals:
        # Still the first line, named with its field ...
        assert f"{old}, line 1 (" in err and "field 'parse_status'" in err
        # ... and all 6 counted: 4 statuses moved, 6 dropped-box counts (by hand, above).
        assert "6 lines differ from what their raw answer reads as today" in err
        assert f"(parse_status 4, boxes_dropped 6; {old}: lines 1, 2, 3, 4, 5, 6)" in err
        assert f"`nova parse {old} --reparse --data RELEASE --out NEW.jsonl`" in err
        assert "or run nova parse on the raw file again" in err
    assert not (tmp_path / "again.jsonl").exists() and not (tmp_path / "r.json").exists()


def test_reparse_writes_a_new_file_with_todays_reading_and_no_score_moves(
    sample_release: Path, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = files["old"], tmp_path / "new.jsonl"
    data = ["--data", str(sample_release)]
    # Never in place: the file the user kept stays as it is.
    assert main(["parse", str(old), *data, "--out", str(old), "--reparse", "-q"]) == 2
    before = old.read_bytes()
    capsys.readouterr()
    assert main(["parse", str(old), *data, "--out", str(new), "--reparse", "-q"]) == 0
    printed = capsys.readouterr().out
    assert old.read_bytes() == before
    assert (
        f"read again: 6 lines of {old} held another reading of their raw answer "
        f"(parse_status 4, boxes_dropped 6; lines 1, 2, 3, 4, 5, 6): {new} holds what the raw "
        "answers read as today under box convention xyxy_pixel (--reparse)"
    ) in printed  # the convention its earlier parse recorded, not one chosen now
    manifest = RunManifest.read(new)
    assert manifest is not None and manifest.parsed is not None
    assert manifest.parsed["reparsed_lines"] == [1, 2, 3, 4, 5, 6]
    assert manifest.parsed["box_convention"] == "xyxy_pixel"  # the convention it recorded
    written = [json.loads(line) for line in new.read_text(encoding="utf-8").splitlines()]
    today = [json.loads(line) for line in files["today"].read_text(encoding="utf-8").splitlines()]
    assert written == today  # line for line what nova parse writes from the raw file today
    assert [line["parse_status"] for line in written[:6]] == ["invalid_boxes"] * 2 + ["ok"] + [
        "invalid_boxes"
    ] * 2 + ["ok"]
    assert scores(sample_release, new, tmp_path / "new.json") == scores(
        sample_release, files["today"], tmp_path / "today.json"
    )
    # A file that agrees with its raw answers is written as it was, and nothing is said.
    again = tmp_path / "again.jsonl"
    capsys.readouterr()
    assert main(["parse", str(new), *data, "--out", str(again), "--reparse", "-q"]) == 0
    assert "read again: " not in capsys.readouterr().out
    assert "reparsed_lines" not in (RunManifest.read(again).parsed or {})  # type: ignore[union-attr]


def test_reparse_under_a_chosen_convention_says_it_was_chosen(
    sample_release: Path, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Another convention than the recorded one may read other boxes: the user chose it, and
    # the line says so, so the moved reading is never taken for the recorded one's.
    new = tmp_path / "chosen.jsonl"
    data = ["--data", str(sample_release), "--box-convention", "protocol"]
    capsys.readouterr()
    assert main(["parse", str(files["old"]), *data, "--out", str(new), "--reparse", "-q"]) == 0
    printed = capsys.readouterr().out
    assert "as today under box convention protocol (chosen with --box-convention)" in printed
    manifest = RunManifest.read(new)
    assert manifest is not None and manifest.parsed is not None
    assert manifest.parsed["box_convention"] == "protocol"


def test_the_way_out_of_a_file_without_its_manifest_reads_as_the_kept_parse(
    sample_release: Path, files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # user32: the lines copied without their manifest are read again with auto, so the
    # suggested --reparse must carry the convention that reads them as kept (here the
    # xyxy_pixel the fixture parsed with), or running it as printed moves the score.
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes(files["old"].read_bytes())  # the lines alone, no manifest beside them
    capsys.readouterr()
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(bare)]
    assert main([*arguments, "--out", str(tmp_path / "r.json"), *FAST]) == 2
    err = capsys.readouterr().err
    suggested = err.split("write a new file with `", 1)[1].split("`", 1)[0]
    assert " --reparse --box-convention " in suggested
    new = tmp_path / "new.jsonl"
    command = suggested.replace("RELEASE", str(sample_release)).replace("NEW.jsonl", str(new))
    assert main([*command.split()[1:], "-q"]) == 0  # as printed, but for the two placeholders
    assert scores(sample_release, new, tmp_path / "new.json") == scores(
        sample_release, files["today"], tmp_path / "today.json"
    )
