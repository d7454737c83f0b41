"""Reading a v1 release fast gives what reading it box by box gives, errors included.

The v1 reader hands its boxes over as columns (``BoxColumns``) when the parquet types
allow it, and ``build_records`` checks them all at once with numpy after the images are
read. These tests hold that path to the box-by-box one: the same records, and for a bad
box the same error, and the same first error when a box and a PNG are both wrong.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import pyarrow as pa
import pytest

from novabench.data.layouts import v1 as v1_layout
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from tests.release_factory import default_rows, write_v1_release

SMALL = (64, 64)


def _read_box_by_box(folder: Path, monkeypatch: pytest.MonkeyPatch):
    """The release read with the columns refused: every box goes the box-by-box way."""
    with monkeypatch.context() as patch:
        patch.setattr(v1_layout, "_box_columns", lambda column: None)
        return read_release(folder)


def _error(folder: Path) -> str:
    with pytest.raises(NovaInputError) as caught:
        read_release(folder)
    return str(caught.value)


def _error_box_by_box(folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    with pytest.raises(NovaInputError) as caught:
        _read_box_by_box(folder, monkeypatch)
    return str(caught.value)


def test_float_boxes_come_as_columns_and_give_the_same_records(tmp_path, monkeypatch) -> None:
    folder = write_v1_release(tmp_path / "nova", image_size=SMALL, shuffle_seed=3)
    raws, _ = v1_layout.read(folder, [])
    assert all(raw.box_columns is raws[0].box_columns is not None for raw in raws)
    assert all(raw.boxes == [] for raw in raws)
    fast, slow = read_release(folder), _read_box_by_box(folder, monkeypatch)
    assert [dataclasses.asdict(image) for image in fast.images] == [
        dataclasses.asdict(image) for image in slow.images
    ]
    assert fast.fingerprint() == slow.fingerprint()
    # Each record owns its lists: editing one image's boxes leaves the others alone.
    assert fast.images[0].boxes is not fast.images[1].boxes


def test_integer_and_float32_columns_give_the_values_of_the_box_by_box_path(
    tmp_path, monkeypatch
) -> None:
    rows = default_rows(image_size=SMALL)
    for row in rows:
        for box in row["bboxes"] or []:
            box["x"], box["y"] = int(box["x"]), int(box["y"])
    box_type = pa.struct(
        [("x", pa.int32()), ("y", pa.int64()), ("width", pa.float32()), ("height", pa.float64())]
        + [("source", pa.string())]
    )
    meta_type = pa.struct([(key, pa.string()) for key in rows[0]["meta"]])
    schema = pa.schema(
        [(name, pa.string()) for name in ("filename", "case_id", "scan_id", "caption_text")]
        + [("image_path", pa.string()), ("split", pa.string()), ("meta", meta_type)]
        + [("bboxes", pa.list_(box_type))]
    )
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL, schema=schema)
    assert v1_layout.read(folder, [])[0][0].box_columns is not None
    fast, slow = read_release(folder), _read_box_by_box(folder, monkeypatch)
    assert [image.boxes for image in fast.images] == [image.boxes for image in slow.images]
    assert [image.rater_boxes for image in fast.images] == [
        image.rater_boxes for image in slow.images
    ]
    first = fast.images[0].boxes[0]
    assert all(type(value) is float for value in first)
    assert first[0] == float(int(first[0]))


def test_interleaved_sources_are_grouped_as_the_box_by_box_path_groups_them(
    tmp_path, monkeypatch
) -> None:
    """Gold first, then the raters sorted by name (capitals before small letters), each in
    the file's order; an image with rater boxes only and one without boxes among them."""
    rows = default_rows(image_size=SMALL)

    def box(x: float, source: str) -> dict[str, object]:
        return {"x": x, "y": 2.0, "width": 5.0, "height": 6.0, "source": source}

    rows[0]["bboxes"] = [
        box(1, "rater2"),
        box(2, "gold"),
        box(3, "Zed"),
        box(4, "rater2"),
        box(5, "gold"),
        box(6, "rater10"),
        box(4, "rater2"),  # listed twice: kept, and warned about
    ]
    rows[1]["bboxes"] = [box(7, "rater1"), box(8, "rater1")]
    rows[2]["bboxes"] = None
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL, shuffle_seed=2)
    assert v1_layout.read(folder, [])[0][0].box_columns is not None
    fast, slow = read_release(folder), _read_box_by_box(folder, monkeypatch)
    by_name = {image.filename: image for image in fast.images}
    first = by_name[rows[0]["filename"]]
    assert [box[0] for box in first.boxes] == [2.0, 5.0]
    assert [
        (entry["rater"], [box[0] for box in entry["boxes"]]) for entry in first.rater_boxes
    ] == [
        ("Zed", [3.0]),
        ("rater10", [6.0]),
        ("rater2", [1.0, 4.0, 4.0]),
    ]
    assert by_name[rows[1]["filename"]].boxes == []
    assert (by_name[rows[2]["filename"]].boxes, by_name[rows[2]["filename"]].rater_boxes) == (
        [],
        [],
    )
    assert [dataclasses.asdict(image) for image in fast.images] == [
        dataclasses.asdict(image) for image in slow.images
    ]
    # The box listed twice, and the raters past the two the human reference scores.
    assert fast.warnings == slow.warnings and len(fast.warnings) == 2
    assert "listed more than once" in fast.warnings[0] and "not scored" in fast.warnings[1]
    assert fast.fingerprint() == slow.fingerprint()
    # Each record owns its lists.
    assert len({id(image.boxes) for image in fast.images}) == len(fast.images)


@pytest.mark.parametrize(
    "change",
    [
        {"x": math.nan},
        {"width": math.inf},
        {"height": 0.0},
        {"width": -1.0},
        {"x": 1e6},  # beyond the border
        {"x": -100.0, "y": -100.0},  # outside, before the image
        {"x": 70.0},  # past the 10 % tolerance of a 64 px image
    ],
    ids=["nan", "inf", "zero height", "negative width", "far right", "before", "tolerance"],
)
def test_a_bad_box_raises_the_error_of_the_box_by_box_path(
    tmp_path, monkeypatch, change: dict[str, float]
) -> None:
    rows = default_rows(image_size=SMALL)
    bad = rows[3]  # case0002_002.png has no boxes; take a later image's rater box
    bad["bboxes"][2].update(change)
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL, shuffle_seed=1)
    message = _error(folder)
    assert message == _error_box_by_box(folder, monkeypatch)
    assert bad["filename"] in message and "bboxes[2]" in message


def test_a_box_error_of_an_earlier_image_comes_before_a_corrupt_later_png(tmp_path) -> None:
    """Box by box, each image's boxes were checked before the next image was read: the
    first problem in filename order is still the one named."""
    rows = default_rows(image_size=SMALL)
    rows[0]["bboxes"][1]["width"] = -3.0  # case0001_001.png
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL)
    later = folder / "images" / rows[-1]["filename"]
    later.write_bytes(later.read_bytes()[:-20])
    message = _error(folder)
    assert "case0001_001.png" in message and "bboxes[1].width" in message
    rows[0]["bboxes"][1]["width"] = 10.0
    fixed = write_v1_release(tmp_path / "fixed", rows, image_size=SMALL)
    (fixed / "images" / rows[-1]["filename"]).write_bytes(later.read_bytes())
    assert f"unreadable or corrupt PNG images/{rows[-1]['filename']}" in _error(fixed)


def test_a_null_coordinate_or_source_takes_the_box_by_box_path(tmp_path) -> None:
    rows = default_rows(image_size=SMALL)
    rows[3]["bboxes"][0]["y"] = None
    folder = write_v1_release(tmp_path / "nova", rows, image_size=SMALL)
    assert v1_layout.read(folder, [])[0][0].box_columns is None
    assert _error(folder) == (
        "data/nova-v1.parquet, row 3 (case0003_001.png), field 'bboxes[0].y': "
        "y is missing or not a number: None"
    )
    rows[3]["bboxes"][0]["y"] = 5.0
    rows[3]["bboxes"][1]["source"] = "  "
    other = write_v1_release(tmp_path / "other", rows, image_size=SMALL)
    assert _error(other) == (
        "data/nova-v1.parquet, row 3 (case0003_001.png), field 'bboxes[1].source': "
        "box source must name 'gold' or a rater, got '  '"
    )


def test_plain_image_files_are_opened_without_a_look_at_their_status_first(
    tmp_path, monkeypatch
) -> None:
    """Each plain image file: one open (no link followed) and one status of the open file;
    lstat and realpath are for links and folders only."""
    folder = write_v1_release(tmp_path / "nova", image_size=SMALL)
    looked: list[str] = []
    original_lstat = os.lstat
    monkeypatch.setattr(
        os, "lstat", lambda path, *a, **k: looked.append(str(path)) or original_lstat(path, *a, **k)
    )
    release = read_release(folder)
    assert [path for path in looked if path.endswith(".png")] == []
    assert release.n_images == len(default_rows())


def _boxes_as_python(lists: pa.Array) -> tuple[list[list[float]], list[str | None], list[int]]:
    """What the columns must hold, from the lists as Python objects: one box at a time."""
    coordinates: list[list[float]] = []
    raters: list[str | None] = []
    starts = [0]
    for boxes in lists.to_pylist():
        for box in boxes or []:
            coordinates.append([float(box[name]) for name in ("x", "y", "width", "height")])
            raters.append(None if box["source"] == "gold" else box["source"])
        starts.append(len(coordinates))
    return coordinates, raters, starts


BOX_TYPE = pa.struct(
    [("x", pa.float64()), ("y", pa.int64()), ("width", pa.float32()), ("height", pa.float64())]
    + [("source", pa.string())]
)


@pytest.mark.parametrize("first, length", [(0, 5), (1, 4), (2, 2), (4, 1), (0, 0)])
def test_columns_of_a_sliced_list_with_null_and_empty_lists_hold_its_boxes(first, length) -> None:
    """The columns come from the lists' offsets and child values, so a slice (a chunk that
    starts inside the child array) and a null list (an image without boxes) must count."""

    def box(x: float, source: str) -> dict[str, object]:
        return {"x": x, "y": int(x) + 1, "width": 3.0, "height": 4.0, "source": source}

    rows = [[box(1, "gold")], None, [], [box(5, "rater1"), box(9, "gold")], [box(13, "gold")]]
    lists = pa.array(rows, type=pa.list_(BOX_TYPE)).slice(first, length)
    columns = v1_layout._box_columns(pa.chunked_array([lists], type=lists.type))
    assert columns is not None
    expected = _boxes_as_python(lists)
    assert columns.coordinates.reshape(-1, 4).tolist() == expected[0]
    assert (columns.raters, columns.starts.tolist()) == expected[1:]


def test_a_null_list_over_stored_boxes_takes_the_box_by_box_path() -> None:
    """Arrow lets a null list span child values; they are not its boxes, and the columns,
    which read the offsets, leave such a column to the box-by-box reader."""
    values = pa.array(
        [{"x": 1.0, "y": 2, "width": 3.0, "height": 4.0, "source": "gold"}] * 2, type=BOX_TYPE
    )
    lists = pa.ListArray.from_arrays(
        pa.array([0, 1, 2], pa.int32()), values, mask=pa.array([True, False])
    )
    assert lists.to_pylist()[0] is None
    assert v1_layout._box_columns(pa.chunked_array([lists])) is None
