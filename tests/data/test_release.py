"""Reading the official release layouts: records, joins, validation errors, `nova info`."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from novabench.cli import main
from novabench.data.release import (
    BOX_TOLERANCE,
    detect_layout,
    is_placeholder_diagnosis,
    iter_case_rows,
    iter_image_rows,
    read_release,
)
from novabench.errors import NovaInputError
from tests.release_factory import (
    PLACEHOLDER_DIAGNOSIS,
    default_rows,
    png_bytes,
    write_legacy_release,
    write_v1_release,
)

SMALL = (64, 64)


def _comparable(release):
    """Records without the absolute image path, which differs between folders."""
    return [
        {k: v for k, v in dataclasses.asdict(r).items() if k != "image_path"}
        for r in release.images
    ]


def _rows(**overrides):
    return default_rows(image_size=SMALL, **overrides)


# --------------------------------------------------------------------------- content


def test_both_layouts_give_identical_records(tmp_path):
    v1 = read_release(write_v1_release(tmp_path / "v1", image_size=SMALL, shuffle_seed=3))
    legacy = read_release(write_legacy_release(tmp_path / "legacy", image_size=SMALL))
    assert (v1.layout, legacy.layout) == ("v1", "legacy")
    assert _comparable(v1) == _comparable(legacy)
    assert v1.extra_meta_keys == legacy.extra_meta_keys == ("differential_diagnosis",)
    assert v1.warnings == legacy.warnings == []
    first = {k: v for k, v in v1.summary().items() if k not in {"root", "layout"}}
    second = {k: v for k, v in legacy.summary().items() if k not in {"root", "layout"}}
    assert first == second


def test_counts_of_the_default_release(tmp_path):
    release = read_release(write_v1_release(tmp_path, image_size=SMALL))
    # Factory content: case k has k images (1+2+3 = 6); one image has null bboxes, the others
    # one gold box each (5); the last case carries the placeholder diagnosis.
    assert release.n_images == 6
    assert release.n_cases == 3
    assert release.n_gold_boxes == 5
    assert release.n_images_without_gold == 1
    assert release.n_placeholder_diagnoses == 1
    assert release.images_per_case == {1: 1, 2: 1, 3: 1}
    assert release.raters == ("rater1", "rater2")
    assert [r.filename for r in release.images] == sorted(r["filename"] for r in _rows())


def test_text_is_kept_exactly_through_csv_and_parquet(tmp_path):
    rows = _rows()
    by_name = {row["filename"]: row for row in rows}
    for writer in (write_v1_release, write_legacy_release):
        release = read_release(writer(tmp_path / writer.__name__, rows))
        for record in release.images:
            source = by_name[record.filename]
            assert record.caption == source["caption_text"]
            assert record.clinical_history == source["meta"]["clinical_history"]
            assert (
                record.extra["differential_diagnosis"] == source["meta"]["differential_diagnosis"]
            )
    assert "\n" in rows[0]["caption_text"] and '"' in rows[0]["caption_text"]


def test_rows_are_joined_by_filename_not_by_order(tmp_path):
    rows = _rows(n_cases=4)
    for index, row in enumerate(rows):
        row["caption_text"] = f"caption of {row['filename']}"
        if row["bboxes"]:
            row["bboxes"][0]["x"] = float(index)  # a box unique to this filename
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL, shuffle_seed=11))
    expected_x = {row["filename"]: float(i) for i, row in enumerate(rows) if row["bboxes"]}
    assert len(expected_x) >= 3  # enough boxed images that a join by position would show
    stored = pq.read_table(tmp_path / "data" / "nova-v1.parquet", columns=["filename"]).column(0)
    assert stored.to_pylist() != sorted(stored.to_pylist())  # rows are not in filename order
    for record in release.images:
        assert record.caption == f"caption of {record.filename}"
        if record.filename in expected_x:
            assert record.boxes[0][0] == expected_x[record.filename]


def test_null_bboxes_give_no_boxes(tmp_path):
    release = read_release(write_v1_release(tmp_path, image_size=SMALL))
    record = next(r for r in release.images if r.filename == "case0002_002.png")
    assert record.boxes == [] and record.rater_boxes == []


def test_gold_and_rater_boxes_are_split_by_source(tmp_path):
    rows = _rows()
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL))
    source = rows[0]["bboxes"]
    record = release.images[0]
    assert record.filename == rows[0]["filename"]
    as_list = [[box[k] for k in ("x", "y", "width", "height")] for box in source]
    assert record.boxes == [as_list[0]]
    assert record.rater_boxes == [
        {"rater": "rater1", "boxes": [as_list[1]]},
        {"rater": "rater2", "boxes": [as_list[2]]},
    ]


def test_integer_coordinates_are_read_as_floats(tmp_path):
    rows = _rows()
    for row in rows:
        for box in row["bboxes"] or []:
            for key in ("x", "y", "width", "height"):
                box[key] = int(box[key])
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL))
    parquet_type = pq.read_schema(tmp_path / "data" / "nova-v1.parquet").field("bboxes").type
    assert parquet_type.value_type.field("x").type == pa.int64()
    box = release.images[0].boxes[0]
    assert box == [
        float(int(v)) for v in (rows[0]["bboxes"][0][k] for k in ("x", "y", "width", "height"))
    ]
    assert all(isinstance(v, float) for v in box)


def test_extra_meta_keys_are_preserved_and_named_safely(tmp_path):
    rows = _rows()
    for row in rows:
        row["meta"]["link"] = f"https://example.org/{row['case_id']}"
        row["meta"]["caption"] = "a meta key that collides with a column"
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL))
    assert release.extra_meta_keys == ("differential_diagnosis", "link", "caption")
    assert release.images[0].extra["link"] == "https://example.org/case0001"
    image_row = next(iter_image_rows(release, embed_images=False))
    assert image_row["link"] == "https://example.org/case0001"
    assert image_row["meta_caption"] == "a meta key that collides with a column"
    assert image_row["caption"] == rows[0]["caption_text"]
    case_row = next(iter_case_rows(release))
    assert case_row["meta_caption"] == "a meta key that collides with a column"


def test_differing_case_metadata_keeps_the_first_and_warns(tmp_path):
    rows = _rows()
    second = next(r for r in rows if r["filename"] == "case0002_002.png")
    second["meta"]["title"] = "Another title"
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL, shuffle_seed=5))
    titles = {r.filename: r.title for r in release.images if r.case_id == "case0002"}
    assert titles == {
        "case0002_001.png": "Rare lesion number 2",
        "case0002_002.png": "Rare lesion number 2",
    }
    assert len(release.warnings) == 1
    assert "case0002_002.png" in release.warnings[0] and "title" in release.warnings[0]


def test_cases_are_ordered_with_their_images(tmp_path):
    release = read_release(write_v1_release(tmp_path, image_size=SMALL, shuffle_seed=1))
    cases = release.cases()
    assert [c.case_id for c in cases] == ["case0001", "case0002", "case0003"]
    assert cases[2].filenames == ["case0003_001.png", "case0003_002.png", "case0003_003.png"]
    assert cases[1].boxes[1] == []  # case0002_002.png has null bboxes
    assert cases[2].final_diagnosis == PLACEHOLDER_DIAGNOSIS
    row = list(iter_case_rows(release))[2]
    assert row["filenames"] == cases[2].filenames
    assert row["captions"] == [r.caption for r in release.images if r.case_id == "case0003"]


def test_image_sizes_come_from_the_png_header(tmp_path):
    rows = _rows()
    rows[0]["_image_size"] = (96, 64)
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL))
    by_name = {r.filename: r for r in release.images}
    assert (by_name[rows[0]["filename"]].width, by_name[rows[0]["filename"]].height) == (96, 64)
    assert (by_name["case0003_003.png"].width, by_name["case0003_003.png"].height) == (64, 64)


def test_full_size_release(tmp_path):
    release = read_release(write_v1_release(tmp_path, image_size=(480, 480)))
    assert {(r.width, r.height) for r in release.images} == {(480, 480)}
    with Image.open(release.images[0].image_path) as image:
        assert image.size == (480, 480) and image.mode == "L"


def test_slightly_outside_boxes_are_kept_verbatim(tmp_path):
    rows = _rows()
    # 64 px image, tolerance 10 % = 6.4 px: x = -6 and right edge 60 + 10 = 70 <= 70.4 are allowed.
    rows[0]["bboxes"][0].update(x=-6.0, y=60.0, width=10.0, height=10.0)
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL))
    assert release.images[0].boxes == [[-6.0, 60.0, 10.0, 10.0]]
    assert BOX_TOLERANCE == 0.10


def test_image_rows_embed_bytes_or_give_the_absolute_path(tmp_path):
    release = read_release(write_v1_release(tmp_path, image_size=SMALL))
    embedded = next(iter_image_rows(release, embed_images=True))
    assert embedded["image"] == {
        "path": "case0001_001.png",
        "bytes": (tmp_path / "images" / "case0001_001.png").read_bytes(),
    }
    linked = next(iter_image_rows(release, embed_images=False))
    assert linked["image"] == str((tmp_path / "images" / "case0001_001.png").resolve())
    assert Path(linked["image"]).is_absolute()


def test_fingerprint_depends_on_content_not_location(tmp_path):
    first = read_release(write_v1_release(tmp_path / "a", image_size=SMALL))
    second = read_release(write_v1_release(tmp_path / "b", image_size=SMALL, shuffle_seed=2))
    rows = _rows()
    rows[0]["caption_text"] += " Edited."
    edited = read_release(write_v1_release(tmp_path / "c", rows, image_size=SMALL))
    assert first.fingerprint() == second.fingerprint() != edited.fingerprint()


@pytest.mark.parametrize(
    "text",
    [
        "Final diagnosis not found.",
        "final diagnosis not found",
        "FINAL DIAGNOSIS: NOT FOUND!",
        "Not found",
        "N/A",
        "n.a.",
        "Unknown",
        "Diagnosis not available",
        "  ",
        "",
        None,
        "No final diagnosis",
    ],
)
def test_placeholder_diagnoses_are_recognised(text):
    assert is_placeholder_diagnosis(text)


@pytest.mark.parametrize(
    "text",
    [
        "Glioblastoma",
        "Unknown primary tumour",
        "Not found: a lesion",
        "Neurosarcoidosis (not found elsewhere)",
        "Nasu-Hakola disease",
    ],
)
def test_real_diagnoses_are_not_placeholders(text):
    assert not is_placeholder_diagnosis(text)


# --------------------------------------------------------------------------- layouts


def test_detect_layout(tmp_path):
    assert detect_layout(write_v1_release(tmp_path / "v1", image_size=SMALL)) == "v1"
    assert detect_layout(write_legacy_release(tmp_path / "legacy", image_size=SMALL)) == "legacy"
    export = tmp_path / "export"
    (export / "data").mkdir(parents=True)
    (export / "data" / "test-00000-of-00001.parquet").write_bytes(b"")
    (export / "README.md").write_text("---\nconfigs:\n- config_name: images\n---\n# NOVA\n")
    assert detect_layout(export) == "export"
    # read_release reads exports (tests/data/test_export_as_release.py); this one has no image shards.
    with pytest.raises(
        NovaInputError, match=r"no image shards: expected data/images/test-\*\.parquet"
    ):
        read_release(export)


def test_detect_layout_says_what_it_looked_for(tmp_path):
    with pytest.raises(NovaInputError) as caught:
        detect_layout(tmp_path)
    message = str(caught.value)
    assert "data/nova-v1.parquet" in message and "captions.csv" in message and "configs" in message
    with pytest.raises(NovaInputError, match="no such release folder"):
        detect_layout(tmp_path / "missing")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "nova-v1.parquet").write_bytes(b"")
    with pytest.raises(NovaInputError, match="no images/ folder"):
        detect_layout(tmp_path)


# --------------------------------------------------------------------------- bad input, v1


def _row(rows, filename):
    return next(r for r in rows if r["filename"] == filename)


def _set_box(filename, **values):
    def mutate(rows):
        _row(rows, filename)["bboxes"][0].update(values)

    return mutate


def _set(filename, key, value):
    def mutate(rows):
        _row(rows, filename)[key] = value

    return mutate


def _duplicate(rows):
    clone = copy.deepcopy(_row(rows, "case0001_001.png"))
    rows.append(clone)


def _flipped(data: bytes, offset: int) -> bytes:
    return data[:offset] + bytes([data[offset] ^ 0x10]) + data[offset + 1 :]


_GOOD_PNG = png_bytes(SMALL)
_IDAT_AT = 8 + 25  # signature, then IHDR (13 bytes + 12): the first IDAT follows

# (mutation, filename named in the error, field, words of the message)
V1_BAD_INPUTS = {
    "duplicate filename": (_duplicate, "case0001_001.png", "filename", "duplicate"),
    "bad filename": (
        _set("case0002_001.png", "filename", "scan_2.png"),
        "scan_2.png",
        "filename",
        "caseNNNN_NNN",
    ),
    "case id mismatch": (
        _set("case0002_001.png", "case_id", "case0003"),
        "case0002_001.png",
        "case_id",
        "does not match",
    ),
    "scan id mismatch": (
        _set("case0002_001.png", "scan_id", "002"),
        "case0002_001.png",
        "scan_id",
        "does not match",
    ),
    "relative escape": (
        _set("case0003_002.png", "image_path", "../case0003_002.png"),
        "case0003_002.png",
        "image_path",
        "escapes",
    ),
    "absolute path": (
        _set("case0003_002.png", "image_path", "/etc/hostname"),
        "case0003_002.png",
        "image_path",
        "escapes",
    ),
    "missing image": (
        _set("case0003_002.png", "_image", None),
        "case0003_002.png",
        "image_path",
        "not found",
    ),
    "null image path": (
        _set("case0003_002.png", "image_path", None),
        "case0003_002.png",
        "image_path",
        "non-empty string",
    ),
    "corrupt png": (
        _set("case0003_002.png", "_image", png_bytes(SMALL)[:60]),
        "case0003_002.png",
        "image_path",
        "corrupt",
    ),
    "png with a wrong CRC": (
        _set("case0003_002.png", "_image", _flipped(_GOOD_PNG, len(_GOOD_PNG) - 13)),
        "case0003_002.png",
        "image_path",
        "IDAT chunk at byte 33 has a wrong CRC",
    ),
    "png cut inside IDAT": (
        _set("case0003_002.png", "_image", _GOOD_PNG[: _IDAT_AT + 20]),
        "case0003_002.png",
        "image_path",
        "truncated: the IDAT chunk",
    ),
    "png without IEND": (
        _set("case0003_002.png", "_image", _GOOD_PNG[:-12]),
        "case0003_002.png",
        "image_path",
        "without an IEND chunk",
    ),
    "png of zero bytes": (
        _set("case0003_002.png", "_image", b""),
        "case0003_002.png",
        "image_path",
        "empty (0 bytes)",
    ),
    "not a png": (
        _set("case0003_002.png", "_image", b"GIF89a" + b"\0" * 40),
        "case0003_002.png",
        "image_path",
        "corrupt",
    ),
    "nan x": (
        _set_box("case0003_001.png", x=math.nan),
        "case0003_001.png",
        "bboxes[0].x",
        "finite",
    ),
    "inf height": (
        _set_box("case0003_001.png", height=math.inf),
        "case0003_001.png",
        "bboxes[0].height",
        "finite",
    ),
    "zero width": (
        _set_box("case0003_001.png", width=0.0),
        "case0003_001.png",
        "bboxes[0].width",
        "positive",
    ),
    "negative height": (
        _set_box("case0003_001.png", height=-4.0),
        "case0003_001.png",
        "bboxes[0].height",
        "positive",
    ),
    # 64 px image, 10 % tolerance: a box ending at 75 > 70.4 is too far out.
    "beyond tolerance": (
        _set_box("case0003_001.png", x=55.0, width=20.0),
        "case0003_001.png",
        "bboxes[0]",
        "outside",
    ),
    "no overlap": (
        _set_box("case0003_001.png", x=-5.0, width=4.0),
        "case0003_001.png",
        "bboxes[0]",
        "outside",
    ),
    "null source": (
        _set_box("case0003_001.png", source=None),
        "case0003_001.png",
        "bboxes[0].source",
        "source",
    ),
    "text coordinate": (
        _set_box("case0003_001.png", y="twelve"),
        "case0003_001.png",
        "bboxes[0].y",
        "not a number",
    ),
}


@pytest.mark.parametrize("name", sorted(V1_BAD_INPUTS))
def test_bad_v1_input_names_file_row_and_field(tmp_path, name):
    mutate, filename, field, words = V1_BAD_INPUTS[name]
    rows = _rows()
    mutate(rows)
    write_v1_release(tmp_path, rows, image_size=SMALL)
    with pytest.raises(NovaInputError) as caught:
        read_release(tmp_path)
    error = caught.value
    row_index = max(i for i, r in enumerate(rows) if r["filename"] == filename)
    assert error.source == "data/nova-v1.parquet"
    assert error.record == f"row {row_index} ({filename})"
    assert error.field == field
    assert words in error.message
    assert "nova-v1.parquet" in str(error) and filename in str(error) and f"'{field}'" in str(error)


def test_wrong_image_format_is_named(tmp_path):
    rows = _rows()
    _row(rows, "case0001_001.png")["_image"] = _jpeg_bytes()
    write_v1_release(tmp_path, rows, image_size=SMALL)
    with pytest.raises(NovaInputError, match="JPEG image, not a PNG") as caught:
        read_release(tmp_path)
    assert caught.value.field == "image_path"


def _jpeg_bytes() -> bytes:
    import io

    buffer = io.BytesIO()
    Image.new("L", SMALL).save(buffer, format="JPEG")
    return buffer.getvalue()


@pytest.mark.parametrize("column", ["filename", "caption_text", "meta", "bboxes", "image_path"])
def test_missing_v1_column_is_named(tmp_path, column):
    rows = _rows()
    for row in rows:
        del row[column]
    write_v1_release(
        tmp_path, rows, image_size=SMALL
    ) if column != "image_path" else _write_without_images(tmp_path, rows)
    with pytest.raises(NovaInputError) as caught:
        read_release(tmp_path)
    assert caught.value.source == "data/nova-v1.parquet" and caught.value.field == column


def _write_without_images(root, rows):
    (root / "images").mkdir(parents=True)
    from tests.release_factory import write_v1_parquet

    write_v1_parquet(root / "data" / "nova-v1.parquet", rows)


def test_missing_meta_key_is_named(tmp_path):
    rows = _rows()
    for row in rows:
        del row["meta"]["final_diagnosis"]
    write_v1_release(tmp_path, rows, image_size=SMALL)
    with pytest.raises(NovaInputError) as caught:
        read_release(tmp_path)
    assert caught.value.field == "meta.final_diagnosis"


# --------------------------------------------------------------------------- bad input, legacy


def _rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_legacy_bad_box_names_csv_line_filename_and_field(tmp_path):
    root = write_legacy_release(tmp_path, image_size=SMALL)
    gold = root / "bboxes_gold.csv"
    lines = gold.read_text(encoding="utf-8").splitlines()
    fields = lines[2].split(",")  # line 3 of the file: second gold box
    fields[3] = "-1.0"  # width
    lines[2] = ",".join(fields)
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(NovaInputError) as caught:
        read_release(root)
    error = caught.value
    assert (error.source, error.record, error.field) == (
        "bboxes_gold.csv",
        f"line 3 ({fields[0]})",
        "width",
    )


def test_legacy_box_of_unknown_filename(tmp_path):
    root = write_legacy_release(tmp_path, image_size=SMALL)
    _rewrite(root / "bboxes_raters.csv", "case0001_001.png,rater1", "case0009_001.png,rater1")
    with pytest.raises(NovaInputError) as caught:
        read_release(root)
    assert (caught.value.source, caught.value.record, caught.value.field) == (
        "bboxes_raters.csv",
        "line 2 (case0009_001.png)",
        "filename",
    )


def test_legacy_case_without_metadata(tmp_path):
    root = write_legacy_release(tmp_path, image_size=SMALL)
    _rewrite(root / "case_metadata.csv", "case0001,", "case0099,")
    with pytest.raises(NovaInputError) as caught:
        read_release(root)
    assert (caught.value.source, caught.value.record, caught.value.field) == (
        "captions.csv",
        "line 2 (case0001_001.png)",
        "case_id",
    )


def test_legacy_missing_column_and_file(tmp_path):
    root = write_legacy_release(tmp_path / "a", image_size=SMALL)
    _rewrite(
        root / "captions.csv", "filename,case_id,scan_id,caption", "filename,case_id,scan_id,text"
    )
    with pytest.raises(NovaInputError) as caught:
        read_release(root)
    assert (caught.value.source, caught.value.field) == ("captions.csv", "caption")
    other = write_legacy_release(tmp_path / "b", image_size=SMALL)
    (other / "bboxes_gold.csv").unlink()
    with pytest.raises(NovaInputError, match="missing") as caught:
        read_release(other)
    assert caught.value.source == "bboxes_gold.csv"


def test_legacy_missing_image_and_duplicate_filename(tmp_path):
    root = write_legacy_release(tmp_path / "a", image_size=SMALL)
    (root / "test" / "case0002_001.png").unlink()
    with pytest.raises(NovaInputError, match="not found") as caught:
        read_release(root)
    # captions.csv: header on line 1; every caption holds one newline, so each record takes
    # two lines: case0001_001.png lines 2-3, case0002_001.png starts on line 4.
    assert caught.value.record == "line 4 (case0002_001.png)" and caught.value.field == "image_path"
    rows = _rows()
    rows.append(copy.deepcopy(rows[0]))
    duplicate = write_legacy_release(tmp_path / "b", rows, image_size=SMALL)
    with pytest.raises(NovaInputError, match="duplicate") as caught:
        read_release(duplicate)
    assert caught.value.source == "captions.csv" and caught.value.field == "filename"


# --------------------------------------------------------------------------- nova info


def test_nova_info_prints_counts(tmp_path, capsys):
    root = write_v1_release(tmp_path, image_size=SMALL)
    assert main(["info", str(root)]) == 0
    out = capsys.readouterr().out
    assert "layout v1" in out
    assert "images                    6" in out
    assert "gold boxes                5" in out
    assert "rater1, rater2" in out
    assert main(["info", "--json", str(root)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_cases"] == 3 and summary["n_placeholder_diagnoses"] == 1
    assert summary["images_per_case"] == {"1": 1, "2": 1, "3": 1}


def test_nova_info_says_first_when_novabench_made_the_data(sample_release, tmp_path, capsys):
    # prov21: `nova info` on the synthetic sample printed its counts and no notice, so the
    # one command that describes a release did not say it is not NOVA.
    assert main(["info", "-q", str(sample_release)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("notice: NOT THE REAL DATA: Synthetic sample made by novabench")
    assert main(["info", "-q", "--json", str(sample_release)]) == 0
    assert json.loads(capsys.readouterr().out)["provenance"]["origin"] == "nova sample"
    # A release with no record (as the official one) gets no notice and provenance null.
    official = write_v1_release(tmp_path, image_size=SMALL)
    assert main(["info", "-q", str(official)]) == 0
    assert capsys.readouterr().out.startswith("NOVA release ")
    assert main(["info", "-q", "--json", str(official)]) == 0
    assert json.loads(capsys.readouterr().out)["provenance"] is None


def test_nova_info_on_a_broken_release_exits_2(tmp_path, capsys):
    rows = _rows()
    _row(rows, "case0001_001.png")["bboxes"][0]["width"] = -1.0
    root = write_v1_release(tmp_path, rows, image_size=SMALL)
    assert main(["info", str(root)]) == 2
    err = capsys.readouterr().err
    assert "nova-v1.parquet" in err and "case0001_001.png" in err and "bboxes[0].width" in err


def test_two_rows_sharing_one_image_file(tmp_path):
    rows = _rows()
    _row(rows, "case0003_002.png")["image_path"] = "images/case0003_001.png"
    write_v1_release(tmp_path, rows, image_size=SMALL)
    with pytest.raises(NovaInputError, match="already the image of case0003_001.png") as caught:
        read_release(tmp_path)
    assert caught.value.record.endswith("(case0003_002.png)") and caught.value.field == "image_path"


def _linked_release(tmp_path, link):
    """A small v1 release whose image case0003_002.png is replaced by ``link(image path)``."""
    root = write_v1_release(tmp_path / "rel", _rows(), image_size=SMALL)
    image = root / "images" / "case0003_002.png"
    image.unlink()
    link(image)
    return root


LINKED_IMAGES = {
    "a link out of the release": (
        lambda image: image.symlink_to(image.parents[2] / "outside.png"),
        "escapes the release folder (symlink)",
    ),
    "a link to another row's image": (
        lambda image: image.symlink_to("case0003_001.png"),
        "already the image of case0003_001.png",
    ),
    "a dangling link": (
        lambda image: image.symlink_to("nothing.png"),
        "image file not found",
    ),
    "a loop of links": (
        lambda image: (
            image.symlink_to(image.with_name("b.png")),
            image.with_name("b.png").symlink_to(image),
        ),
        "image file not found",
    ),
    "a folder": (lambda image: image.mkdir(), "is a folder, not a file"),
    "a named pipe": (lambda image: os.mkfifo(image), "is a named pipe (FIFO), not a file"),
}


@pytest.mark.parametrize("name", sorted(LINKED_IMAGES))
def test_image_paths_through_links_are_checked(tmp_path, name):
    link, words = LINKED_IMAGES[name]
    (tmp_path / "outside.png").write_bytes(png_bytes(SMALL))
    root = _linked_release(tmp_path, link)
    with pytest.raises(NovaInputError, match=re.escape(words)) as caught:
        read_release(root)
    assert caught.value.record.endswith("(case0003_002.png)") and caught.value.field == "image_path"


def test_links_inside_the_release_are_followed(tmp_path):
    spare = png_bytes(SMALL, seed=99)
    root = _linked_release(
        tmp_path,
        lambda image: (
            image.parent.parent.joinpath("spare.png").write_bytes(spare),
            image.symlink_to("../spare.png"),
        ),
    )
    release = read_release(root)
    image = next(r for r in release.images if r.filename == "case0003_002.png")
    assert image.read_bytes() == spare
    # the release itself reached through a link, and its images folder a link inside it
    (root / "images").rename(root / "pngs")
    (root / "images").symlink_to("pngs")
    (tmp_path / "via").symlink_to(root)
    again = read_release(tmp_path / "via")
    assert again.root == root.resolve()
    assert again.fingerprint() == release.fingerprint()


def test_an_images_folder_linked_out_of_the_release_is_refused(tmp_path):
    root = write_v1_release(tmp_path / "rel", _rows(), image_size=SMALL)
    (root / "images").rename(tmp_path / "elsewhere")
    (root / "images").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(NovaInputError, match=re.escape("escapes the release folder (symlink)")):
        read_release(root)


def test_legacy_row_with_wrong_number_of_fields(tmp_path):
    root = write_legacy_release(tmp_path, image_size=SMALL)
    with (root / "bboxes_gold.csv").open("a", encoding="utf-8") as handle:
        handle.write("case0001_001.png,1.0,2.0\n")
    # bboxes_gold.csv: header + 5 gold boxes on lines 2-6, the appended record is line 7.
    with pytest.raises(NovaInputError, match="expected 5 fields, got 3") as caught:
        read_release(root)
    assert (caught.value.source, caught.value.record) == ("bboxes_gold.csv", "line 7")


def test_oddities_that_do_not_stop_reading_are_reported(tmp_path):
    rows = _rows()
    rows[0]["split"] = "train"
    rows[1]["caption_text"] = ""
    for row in rows:
        row["modality"] = "MRI"
    release = read_release(write_v1_release(tmp_path, rows, image_size=SMALL))
    assert release.n_images == 6
    assert len(release.warnings) == 3
    joined = "\n".join(release.warnings)
    assert "modality" in joined  # an unknown column is named, not silently dropped
    assert "'train': 1" in joined
    assert f"({rows[1]['filename']}): empty caption" in joined
    assert release.summary()["warnings"] == release.warnings


def test_legacy_without_rater_file_warns(tmp_path):
    root = write_legacy_release(tmp_path, image_size=SMALL)
    (root / "bboxes_raters.csv").unlink()
    release = read_release(root)
    assert release.raters == () and release.n_gold_boxes == 5
    assert release.warnings == ["bboxes_raters.csv is missing: no rater boxes were read"]


def _decompression_bomb_png(side: int = 20_000) -> bytes:
    """A valid few-byte PNG header claiming side x side 1-bit pixels (beyond PIL's safe limit)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


def _bomb_release(root):
    rows = _rows()
    _row(rows, "case0002_001.png")["_image"] = _decompression_bomb_png()
    return write_v1_release(root, rows, image_size=SMALL)


def test_decompression_bomb_is_an_input_error_naming_the_file(tmp_path):
    assert Image.MAX_IMAGE_PIXELS is not None and 20_000**2 > 2 * Image.MAX_IMAGE_PIXELS
    with pytest.raises(NovaInputError, match="decompression bomb") as caught:
        read_release(_bomb_release(tmp_path))
    assert caught.value.field == "image_path"
    assert "case0002_001.png" in caught.value.record


@pytest.mark.parametrize("command", ["info", "export"])
def test_nova_info_and_export_refuse_a_decompression_bomb_in_one_line(tmp_path, capsys, command):
    root = _bomb_release(tmp_path / "release")
    argv = [command, str(root)] + ([str(tmp_path / "out")] if command == "export" else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "case0002_001.png" in lines[0] and "decompression bomb" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", [10**400, "1e999", np.True_])
def test_a_box_coordinate_that_is_no_finite_float_is_named(value) -> None:
    # A CSV cell or parquet value that float() cannot hold, or a numpy boolean: one named error.
    from novabench.data.layouts.rows import RawBox
    from novabench.data.validate import _coordinate

    box = RawBox({"x": value}, None, "bboxes_gold.csv", "line 3", "")
    with pytest.raises(NovaInputError) as caught:
        _coordinate(box, "x")
    assert (caught.value.source, caught.value.record, caught.value.field) == (
        "bboxes_gold.csv",
        "line 3",
        "x",
    )


@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("images/./../images/case0003_002.png", "images/case0003_002.png"),
        ("./images/case0003_002.png", "images/case0003_002.png"),
        ("images//case0003_002.png", "images/case0003_002.png"),
        ("spare/../images/case0003_002.png", "images/case0003_002.png"),
    ],
)
def test_dots_that_stay_inside_the_release_are_undone(tmp_path, written, read_as):
    root = write_v1_release(
        tmp_path / "rel", _rows(), image_size=SMALL
    )  # images/case0003_002.png as usual
    table = pq.read_table(root / "data" / "nova-v1.parquet").to_pylist()
    for row in table:
        if row["filename"] == "case0003_002.png":
            row["image_path"] = written
    pq.write_table(
        pa.Table.from_pylist(table, pq.read_schema(root / "data" / "nova-v1.parquet")),
        root / "data" / "nova-v1.parquet",
    )
    image = {i.filename: i for i in read_release(root).images}["case0003_002.png"]
    assert image.image_path == root.resolve() / read_as


@pytest.mark.parametrize(
    ("written", "words"),
    [
        ("images/../../case0003_002.png", "escapes the release folder"),
        ("images/./../..", "escapes the release folder"),
        ("images/..", "is the release folder, not a file"),
        ("images/case0003\x00_002.png", "holds a NUL character"),
    ],
)
def test_dots_that_leave_the_release_and_nul_characters_are_refused(tmp_path, written, words):
    root = write_v1_release(tmp_path / "rel", _rows(), image_size=SMALL)
    table = pq.read_table(root / "data" / "nova-v1.parquet").to_pylist()
    for row in table:
        if row["filename"] == "case0003_002.png":
            row["image_path"] = written
    pq.write_table(
        pa.Table.from_pylist(table, pq.read_schema(root / "data" / "nova-v1.parquet")),
        root / "data" / "nova-v1.parquet",
    )
    with pytest.raises(NovaInputError, match=re.escape(words)) as caught:
        read_release(root)
    assert caught.value.record.endswith("(case0003_002.png)") and caught.value.field == "image_path"


def test_rows_of_another_split_are_kept_and_counted_by_split(tmp_path):
    root = write_v1_release(tmp_path / "rel", _rows(), image_size=SMALL)
    parquet = root / "data" / "nova-v1.parquet"
    table = pq.read_table(parquet).to_pylist()
    assert len(table) >= 4
    for row, split in zip(table, ["train", None, "train"]):
        row["split"] = split
    pq.write_table(pa.Table.from_pylist(table, pq.read_schema(parquet)), parquet)
    release = read_release(root)
    assert release.n_images == len(table)
    assert release.warnings == [
        "data/nova-v1.parquet: rows with a split other than 'test' were kept: {'train': 2, None: 1}"
    ]


@pytest.mark.parametrize("layout", ["v1", "legacy"])
def test_a_gold_box_listed_twice_is_kept_and_reported(tmp_path, layout):
    """The ground truth is the release's, so a repeated gold box stays (every metric sees
    the release as it is), and the reading warnings say which image holds it."""
    if layout == "v1":
        rows = _rows()
        gold = next(box for box in rows[0]["bboxes"] if box["source"] == "gold")
        rows[0]["bboxes"].append(dict(gold))
        root = write_v1_release(tmp_path, rows, image_size=SMALL)
        filename = rows[0]["filename"]
    else:
        root = write_legacy_release(tmp_path, image_size=SMALL)
        lines = (root / "bboxes_gold.csv").read_text().splitlines()
        (root / "bboxes_gold.csv").write_text("\n".join([*lines, lines[1]]) + "\n")
        filename = lines[1].split(",")[0]
    release = read_release(root)
    image = next(image for image in release.images if image.filename == filename)
    assert len(image.boxes) == len({tuple(box) for box in image.boxes}) + 1
    repeated = [warning for warning in release.warnings if "listed more than once" in warning]
    # Both places, in the file that holds them (the legacy layout's box file, not captions.csv).
    if layout == "v1":
        position = len(rows[0]["bboxes"]) - 1
        first = rows[0]["bboxes"].index(gold)
        expected = f"bboxes[{first}] and bboxes[{position}]: a gold box is listed more than once"
        assert repeated[0].startswith("data/nova-v1.parquet, row "), repeated
    else:
        expected = (
            f"bboxes_gold.csv, line 2 ({filename}) and line {len(lines) + 1} ({filename}): "
            "a gold box is listed more than once"
        )
    assert len(repeated) == 1 and expected in repeated[0], repeated


def test_a_rater_box_listed_twice_is_kept_and_reported(tmp_path):
    """A rater's box listed twice changes the human reference (each copy counts), so it is
    reported as a gold one is; two raters drawing the same box is no repeat."""
    root = write_legacy_release(tmp_path, image_size=SMALL)
    lines = (root / "bboxes_raters.csv").read_text().splitlines()
    header = lines[0].split(",")
    first = dict(zip(header, lines[1].split(",")))
    other_rater = {**first, "rater": first["rater"] + "-b"}
    (root / "bboxes_raters.csv").write_text(
        "\n".join([*lines, lines[1], ",".join(other_rater[name] for name in header)]) + "\n"
    )
    release = read_release(root)
    repeated = [warning for warning in release.warnings if "listed more than once" in warning]
    assert repeated == [
        f"bboxes_raters.csv, line 2 ({first['filename']}) and line {len(lines) + 1} "
        f"({first['filename']}): a box of rater {first['rater']!r} is listed more than once; "
        "kept as listed (the human reference counts each copy)"
    ]


@pytest.mark.parametrize(
    ("column", "stored_as_text", "expected"),
    [
        # A meta struct flattened to JSON text by a spreadsheet round trip.
        ("meta", '{"title": "Rare disease 1"}', "'meta' must be a struct, got string"),
        # Boxes written as text ("[{...}]"), as a CSV export of the parquet would keep them.
        (
            "bboxes",
            '[{"x": 10, "y": 12, "width": 8, "height": 6, "source": "gold"}]',
            "'bboxes' must be a list of {x, y, width, height, source} structs, got the column "
            "type string (boxes stored as text must be decoded first)",
        ),
    ],
)
def test_a_v1_column_of_the_wrong_kind_is_refused_naming_it(
    tmp_path, column, stored_as_text, expected
):
    root = write_v1_release(tmp_path / "release", image_size=SMALL)
    parquet = root / "data" / "nova-v1.parquet"
    table = pq.read_table(parquet)
    index = table.column_names.index(column)
    text = pa.array([stored_as_text] * table.num_rows, pa.string())
    pq.write_table(table.set_column(index, column, text), parquet)
    with pytest.raises(NovaInputError) as refused:
        read_release(root)
    assert refused.value.field == column
    assert refused.value.source == "data/nova-v1.parquet"
    assert refused.value.message == expected
