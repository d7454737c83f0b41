"""The reader's cheaper ways (issue 21) give what the plain ways give.

Reading a release builds its rows from the ``meta`` struct's fields, joins each image's
``Path`` to its folder's, finds unlisted PNGs by name (each file read split at its last
"/") and pauses the cyclic garbage collector while it reads. Each is held here to what it
stands for: ``to_pylist``, ``root / image_path``, the file a link leads to,
``os.path.split``, and the collector's state as the caller left it.
"""

from __future__ import annotations

import gc
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from novabench.data import validate
from novabench.data.layouts import v1 as v1_layout
from novabench.data.release import read_release
from novabench.errors import NovaInputError


def test_meta_rows_are_what_to_pylist_gives_for_chunks_slices_and_nulls() -> None:
    meta_type = pa.struct([("title", pa.string()), ("final_diagnosis", pa.string())])
    first = pa.array(
        [
            {"title": "Glioma", "final_diagnosis": None},
            {"title": "CADASIL", "final_diagnosis": "CADASIL"},
            {"title": "Ménière", "final_diagnosis": "Final diagnosis not found."},
        ],
        meta_type,
    )
    with_null = pa.array([None, {"title": "Lymphoma", "final_diagnosis": "PCNSL"}], meta_type)
    column = pa.chunked_array([first.slice(1), with_null, first.slice(0, 1)])
    assert v1_layout._meta_values(column) == column.to_pylist()
    assert v1_layout._meta_values(pa.chunked_array([], meta_type)) == []


def test_every_image_path_is_the_release_folder_joined_with_the_row_path(sample_release) -> None:
    rows = pq.read_table(sample_release / "data" / "nova-v1.parquet").to_pylist()
    written = {row["filename"]: row["image_path"] for row in rows}
    root = sample_release.resolve()
    release = read_release(sample_release)
    assert len(release.images) == len(written)
    for image in release.images:
        assert image.image_path == root / written[image.filename]
        assert str(image.image_path) == f"{root}/{written[image.filename]}"


def _copy(sample_release: Path, tmp_path: Path) -> tuple[Path, Path]:
    copy = tmp_path / "nova"
    shutil.copytree(sample_release, copy)
    return copy, copy / "images"


def test_a_link_to_an_image_read_is_not_named_and_a_link_to_another_png_is(
    sample_release, tmp_path
) -> None:
    root, images = _copy(sample_release, tmp_path)
    (images / "alias.png").symlink_to(images / "case0001_001.png")  # the same file: read
    spare = root / "spare"
    spare.mkdir()
    shutil.copyfile(images / "case0001_001.png", spare / "left_over.png")
    (images / "other.png").symlink_to(spare / "left_over.png")  # no row's file
    assert read_release(root).warnings == [
        "images/other.png: a PNG file in the image folder that no row lists; not read, "
        "not scored (renamed or left over?)"
    ]


def test_the_garbage_collector_is_off_while_reading_and_back_on_after(
    sample_release, tmp_path, monkeypatch
) -> None:
    states: list[bool] = []
    build_records = validate.build_records

    def watched(*args, **kwargs):
        states.append(gc.isenabled())
        return build_records(*args, **kwargs)

    monkeypatch.setattr("novabench.data.release.build_records", watched)
    assert gc.isenabled()
    read_release(sample_release)
    assert states == [False] and gc.isenabled()

    root, images = _copy(sample_release, tmp_path)
    (images / "case0001_001.png").unlink()
    with pytest.raises(NovaInputError, match="image file not found"):
        read_release(root)
    assert states == [False, False] and gc.isenabled()  # back on after an error too


def test_a_collector_the_caller_turned_off_stays_off(sample_release) -> None:
    gc.disable()
    try:
        read_release(sample_release)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_child_path_is_the_public_join_where_the_private_maker_gives_another(tmp_path) -> None:
    plain = type(tmp_path)

    class Elsewhere(plain):  # type: ignore[valid-type,misc]
        def _make_child_relpath(self, name: str) -> Path:
            return plain("/elsewhere") / name

    class Without(plain):  # type: ignore[valid-type,misc]
        _make_child_relpath = None

    for parent in (Elsewhere(tmp_path / "images"), Without(tmp_path / "images"), tmp_path):
        make_child = validate._child_maker(parent)
        for name in ("case0001_001.png", "case0001_002.png"):
            made = make_child(name)
            assert made == parent / name and str(made) == str(parent / name)
            assert type(made) is type(parent)


def test_a_meta_struct_holding_a_key_twice_is_refused_naming_it(
    sample_release, tmp_path, capsys
) -> None:
    """pyarrow cannot give such rows as dicts (a ValueError and a traceback before)."""
    from novabench.cli import main

    root, _ = _copy(sample_release, tmp_path)
    parquet = root / "data" / "nova-v1.parquet"
    table = pq.read_table(parquet)
    meta = table.column("meta").combine_chunks()
    names = [meta.type.field(index).name for index in range(meta.type.num_fields)]
    doubled = pa.StructArray.from_arrays(
        [meta.field(index) for index in range(len(names))] + [meta.field(0)],
        names=[*names, names[0]],
    )
    table = table.set_column(table.column_names.index("meta"), "meta", doubled)
    pq.write_table(table, parquet)
    with pytest.raises(NovaInputError) as raised:
        read_release(root)
    assert str(raised.value) == (
        f"data/nova-v1.parquet, field 'meta.{names[0]}': meta key '{names[0]}' is a field of "
        "the meta struct 2 times; each key may be one field"
    )
    assert main(["info", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and f"meta.{names[0]}" in err


def test_records_and_rows_built_by_position_follow_their_classes_field_order() -> None:
    """``build_records`` and the v1 reader pass every field by position (keywords cost
    several times more): each class's fields must stay in that order."""
    import dataclasses

    from novabench.data.layouts.rows import RawImage
    from novabench.records import ImageRecord

    assert tuple(f.name for f in dataclasses.fields(ImageRecord)) == validate._RECORD_FIELDS
    assert tuple(f.name for f in dataclasses.fields(RawImage)) == (
        "source",
        "record",
        "filename",
        "case_id",
        "scan_id",
        "caption",
        "image_path",
        "meta",
        "boxes",
        "embedded",
        "image_bytes",
        "size",
        "box_columns",
        "box_row",
    )


def test_the_files_read_are_split_into_folder_and_name_as_os_path_split_does(
    sample_release, tmp_path, monkeypatch
) -> None:
    """The unlisted-PNG check splits each image's resolved file at its last "/": what
    os.path.split gives for an absolute, normal path, which every one is (a folder reached
    through a link and an image that is a link included)."""
    copy, images = _copy(sample_release, tmp_path)
    (tmp_path / "elsewhere").mkdir()
    moved = sorted(images.iterdir())[0]
    shutil.move(moved, tmp_path / "elsewhere" / "moved.png")
    shutil.move(tmp_path / "elsewhere", copy / "elsewhere")
    moved.symlink_to(copy / "elsewhere" / "moved.png")  # an image that is a link
    linked_root = tmp_path / "linked"
    linked_root.symlink_to(copy)  # the release read through a linked folder
    seen: list[str] = []
    unlisted = validate._unlisted_png_warnings

    def recording(folder, checked):
        seen.extend(image.resolved for image in checked)
        return unlisted(folder, checked)

    monkeypatch.setattr(validate, "_unlisted_png_warnings", recording)
    read_release(linked_root)
    assert len(seen) == len(list(images.glob("*.png")))
    assert f"{copy.resolve()}/elsewhere/moved.png" in seen
    for resolved in seen:
        assert os.path.isabs(resolved) and os.path.normpath(resolved) == resolved
        parent, _, name = resolved.rpartition("/")
        assert (parent or "/", name) == os.path.split(resolved)
