"""A folder written by `nova export` is a release: read_release and every `--data` command take it.

The export embeds the PNGs in Parquet shards (``data/images/test-*.parquet``) and stores boxes
as float32; reading it must give the records of the release it came from, so that running,
parsing and scoring on a Hub download gives the numbers of the original release.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from novabench.cli import main
from novabench.data.export import coco_document, export_release
from novabench.data.release import ImageRecord, NovaRelease, read_release
from novabench.errors import NovaInputError
from tests.release_factory import default_rows, write_v1_release

SHARD = "data/images/test-00000-of-00002.parquet"  # odd_export has two image shards
IMAGE_SIZE = (64, 48)  # not square, so width/height mix-ups show
# Keys that export renames (extra_columns): the original names must come back.
ODD_EXTRA_KEYS = {
    "link (Eurorad)": "https://example.org/{case_id}",
    "caption": "meta `caption` | {case_id}",
}


@pytest.fixture(scope="module")
def sample_export(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample-export") / "nova-export"
    export_release(sample_release, out, progress=False)
    return out


@pytest.fixture(scope="module")
def odd_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 cases, 6 non-square images, float64 boxes, extra meta keys that export renames."""
    rows = default_rows(n_cases=3, image_size=IMAGE_SIZE)
    for row in rows:
        row["meta"].update(
            {key: value.format(case_id=row["case_id"]) for key, value in ODD_EXTRA_KEYS.items()}
        )
    return write_v1_release(
        tmp_path_factory.mktemp("odd") / "nova", rows, image_size=IMAGE_SIZE, shuffle_seed=1
    )


@pytest.fixture(scope="module")
def odd_export(odd_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("odd-export") / "nova-export"
    export_release(odd_release, out, rows_per_shard=4, progress=False)  # two image shards
    return out


def _fields(image: ImageRecord) -> dict[str, Any]:
    """Every field but where the PNG lives (a file, or bytes embedded in the export)."""
    return {
        f.name: getattr(image, f.name)
        for f in dataclasses.fields(image)
        if f.name not in ("image_path", "image_bytes")
    }


def assert_same_records(got: NovaRelease, want: NovaRelease) -> None:
    """The same records, boxes to the bit (an export stores them as float64)."""
    assert [image.filename for image in got.images] == [image.filename for image in want.images]
    assert got.extra_meta_keys == want.extra_meta_keys
    assert got.warnings == want.warnings
    for mine, theirs in zip(got.images, want.images):
        assert mine.read_bytes() == theirs.read_bytes(), mine.filename
        assert _fields(mine) == _fields(theirs), mine.filename
    got_summary, want_summary = got.summary(), want.summary()
    for key in ("root", "layout"):
        got_summary.pop(key), want_summary.pop(key)
    assert got_summary == want_summary


# --------------------------------------------------------------------------- (1) records


def test_an_export_reads_as_the_release_it_came_from(
    sample_release: Path, sample_export: Path
) -> None:
    release, exported = read_release(sample_release), read_release(sample_export)
    assert exported.layout == "export" and exported.root == sample_export.resolve()
    assert exported.n_images == release.n_images > 0
    assert all(image.image_path is None and image.image_bytes for image in exported.images)
    # The boxes come back exactly, so even the content fingerprint (records and image
    # bytes) is the release's.
    assert_same_records(exported, release)
    assert exported.fingerprint() == release.fingerprint()


def test_renamed_extra_keys_and_float64_boxes(odd_release: Path, odd_export: Path) -> None:
    release, exported = read_release(odd_release), read_release(odd_export)
    assert len(list((odd_export / "data" / "images").glob("*.parquet"))) == 2
    assert release.extra_meta_keys == ("differential_diagnosis", *ODD_EXTRA_KEYS)
    # e.g. 7.699999999999999, which a float32 column read back as 7.7 (user26).
    assert_same_records(exported, release)
    assert exported.fingerprint() == release.fingerprint()
    assert exported.images[0].extra["link (Eurorad)"] == "https://example.org/case0001"
    assert (exported.images[0].width, exported.images[0].height) == IMAGE_SIZE


def test_extra_keys_fall_back_to_the_column_names_without_the_card(
    odd_export: Path, tmp_path: Path
) -> None:
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(odd_export, copy)
    card = (copy / "README.md").read_text(encoding="utf-8")
    (copy / "README.md").write_text(
        card.split("\n---\n", 1)[0] + "\n---\n# NOVA\n", encoding="utf-8"
    )
    exported = read_release(copy)
    assert exported.extra_meta_keys == ("differential_diagnosis", "link_Eurorad", "meta_caption")
    assert exported.images[0].extra["link_Eurorad"] == "https://example.org/case0001"


# --------------------------------------------------------------------------- (2)-(3) commands


def _report_numbers(path: Path) -> dict[str, Any]:
    report = json.loads(path.read_text(encoding="utf-8"))
    return {
        "tasks": report["tasks"],
        "counts": {k: v for k, v in report["data"].items() if k.startswith("n_")},
    }


def _imperfect_predictions(release: NovaRelease) -> list[dict[str, Any]]:
    """Shifted, missing and swapped answers, so that every metric is somewhere between 0 and 1."""
    images, cases = release.images, release.cases()
    lines: list[dict[str, Any]] = []
    for index, image in enumerate(images):
        if index % 5 == 4:
            continue  # missing
        boxes = [[x + 3 * (index % 3), y - 2, w * 1.1, h] for x, y, w, h in image.boxes]
        caption = images[(index + index % 2) % len(images)].caption
        lines.append({"filename": image.filename, "boxes": boxes, "caption": caption})
    for index, case in enumerate(cases):
        lines.append(
            {
                "case_id": case.case_id,
                "diagnoses": [cases[(index + index % 2) % len(cases)].final_diagnosis],
            }
        )
    return lines


def test_evaluate_on_the_export_gives_the_numbers_of_the_release(
    sample_release: Path, sample_export: Path, tmp_path: Path
) -> None:
    predictions = tmp_path / "pred.jsonl"
    lines = _imperfect_predictions(read_release(sample_release))
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    reports = {}
    for name, data in (("release", sample_release), ("export", sample_export)):
        out = tmp_path / f"{name}.json"
        code = main(
            [
                "evaluate",
                "--data",
                str(data),
                "--predictions",
                str(predictions),
                "--out",
                str(out),
                "--bootstrap",
                "50",
                "--exclude",
                "BERTScore-F1",
            ]
        )
        assert code == 0
        reports[name] = _report_numbers(out)
    assert json.loads(Path(tmp_path / "export.json").read_text())["data"]["layout"] == "export"
    metrics = reports["export"]["tasks"]["localization"]["metrics"]
    assert (
        0 < metrics["mAP@30"] < 1
        and reports["export"]["tasks"]["diagnosis"]["metrics"]["top1-lexicon"] < 1
    )
    assert reports["export"] == reports["release"]


# Slow: five commands end to end (1.3-1.9 s); each reads the export through read_release, whose
# records and fingerprint equal the release's in the first test above, and `nova evaluate` on it
# gives the release's numbers in the fast suite.
@pytest.mark.slow
def test_run_parse_compare_merge_and_info_take_an_export(
    sample_export: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    raw = tmp_path / "export.raw.jsonl"
    argv = ["run", "--data", str(sample_export), "--task", "all", "--baseline", "floor"]
    assert main([*argv, "--out", str(raw), "--no-progress"]) == 0
    answers = {}
    # The release's side is the session's floor run: the same command on sample_release.
    for name, run in (("release", sample_floor_run), ("export", raw)):
        answers[name] = [
            {k: v for k, v in json.loads(line).items() if k != "latency_s"}
            for line in run.read_text().splitlines()
        ]
    assert len(answers["export"]) == 25 + 25 + 8  # the sample: 25 images, 8 cases
    assert answers["export"] == answers["release"]  # the detector saw the same pixels

    merged, predictions = tmp_path / "merged.raw.jsonl", tmp_path / "pred.jsonl"
    assert (
        main(
            [
                "merge",
                str(tmp_path / "export.raw.jsonl"),
                "--data",
                str(sample_export),
                "--out",
                str(merged),
            ]
        )
        == 0
    )
    assert (
        main(["parse", str(merged), "--data", str(sample_export), "--out", str(predictions)]) == 0
    )
    comparison = tmp_path / "comparison.json"
    assert (
        main(
            [
                "compare",
                "--data",
                str(sample_export),
                "--a",
                str(predictions),
                "--b",
                str(predictions),
                "--out",
                str(comparison),
                "--task",
                "diagnosis",
                "--bootstrap",
                "20",
            ]
        )
        == 0
    )
    assert "diagnosis" in json.loads(comparison.read_text(encoding="utf-8"))["tasks"]
    capsys.readouterr()
    assert main(["info", str(sample_export), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["layout"] == "export" and summary["n_images"] == 25 and summary["n_cases"] == 8
    assert summary["extra_meta_keys"] == ["differential_diagnosis", "link"]


# --------------------------------------------------------------------------- (4) export again


def test_an_export_exports_again_as_parquet_and_coco(
    odd_release: Path, odd_export: Path, tmp_path: Path
) -> None:
    release, exported = read_release(odd_release), read_release(odd_export)
    again = tmp_path / "again"
    assert main(["export", str(odd_export), str(again), "--quiet"]) == 0
    assert_same_records(read_release(again), exported)
    assert read_release(again).fingerprint() == exported.fingerprint()

    coco = tmp_path / "coco"
    summary = export_release(odd_export, coco, fmt="coco", include_raters=True, progress=False)
    assert summary.n_images == release.n_images
    for image in release.images:
        assert (coco / "images" / image.filename).read_bytes() == image.read_bytes()
    gold = json.loads((coco / "annotations" / "gold.json").read_text(encoding="utf-8"))
    expected = coco_document(release, source="gold")
    assert gold["images"] == expected["images"]
    got_boxes = [annotation["bbox"] for annotation in gold["annotations"]]
    assert got_boxes == [annotation["bbox"] for annotation in expected["annotations"]]
    raters = json.loads((coco / "annotations" / "raters.json").read_text(encoding="utf-8"))
    assert {a["rater"] for a in raters["annotations"]} == {"rater1", "rater2"}


# --------------------------------------------------------------------------- (5) bad input


def _broken_copy(odd_export: Path, tmp_path: Path, change: Any) -> Path:
    """A copy of the export whose first image shard is ``change(table)``."""
    import shutil

    copy = tmp_path / "broken"
    shutil.copytree(odd_export, copy)
    table = pq.read_table(copy / SHARD)
    pq.write_table(change(table), copy / SHARD)
    return copy


def _replace_cell(table: pa.Table, column: str, row: int, value: Any) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    index = table.column_names.index(column)
    return table.set_column(
        index, table.schema.field(index), pa.array(values, type=table.schema.field(column).type)
    )


def _row_of(table: pa.Table, row: int) -> str:
    return f"row {row} ({table.column('filename')[row].as_py()})"


def test_a_shard_missing_a_required_column_is_named(odd_export: Path, tmp_path: Path) -> None:
    broken = _broken_copy(odd_export, tmp_path, lambda table: table.drop_columns(["caption"]))
    with pytest.raises(NovaInputError, match="required column 'caption' is missing") as caught:
        read_release(broken)
    assert (caught.value.source, caught.value.field) == (SHARD, "caption")


def test_a_corrupt_png_in_the_bytes_is_named(odd_export: Path, tmp_path: Path) -> None:
    table = pq.read_table(odd_export / SHARD)
    image = table.column("image")[2].as_py()
    corrupt = {"bytes": image["bytes"][:40] + b"\x00" * 60, "path": image["path"]}
    broken = _broken_copy(odd_export, tmp_path, lambda t: _replace_cell(t, "image", 2, corrupt))
    with pytest.raises(NovaInputError, match="unreadable or corrupt PNG") as caught:
        read_release(broken)
    assert (caught.value.source, caught.value.record, caught.value.field) == (
        SHARD,
        _row_of(table, 2),
        "image.bytes",
    )
    jpeg = io.BytesIO()
    Image.new("L", IMAGE_SIZE).save(jpeg, format="JPEG")
    broken = _broken_copy(
        odd_export,
        tmp_path / "jpeg",
        lambda t: _replace_cell(t, "image", 1, {"bytes": jpeg.getvalue(), "path": "x.png"}),
    )
    with pytest.raises(NovaInputError, match="is a JPEG image, not a PNG") as caught:
        read_release(broken)
    assert caught.value.record == _row_of(table, 1)


@pytest.mark.parametrize(
    "column, value", [("width", IMAGE_SIZE[0] + 1), ("height", IMAGE_SIZE[0]), ("width", None)]
)
def test_width_or_height_unlike_the_png_is_named(
    odd_export: Path, tmp_path: Path, column: str, value: Any
) -> None:
    table = pq.read_table(odd_export / SHARD)
    broken = _broken_copy(odd_export, tmp_path, lambda t: _replace_cell(t, column, 3, value))
    with pytest.raises(
        NovaInputError, match=f"{column} is {value!r} but the embedded PNG is 64x48"
    ) as caught:
        read_release(broken)
    assert (caught.value.source, caught.value.record, caught.value.field) == (
        SHARD,
        _row_of(table, 3),
        column,
    )


def test_missing_bytes_and_bad_boxes_are_named(odd_export: Path, tmp_path: Path) -> None:
    table = pq.read_table(odd_export / SHARD)
    broken = _broken_copy(
        odd_export,
        tmp_path,
        lambda t: _replace_cell(t, "image", 0, {"bytes": None, "path": "a.png"}),
    )
    with pytest.raises(NovaInputError, match="PNG bytes are missing") as caught:
        read_release(broken)
    assert (caught.value.record, caught.value.field) == (_row_of(table, 0), "image.bytes")

    boxes_row = next(i for i, boxes in enumerate(table.column("boxes").to_pylist()) if boxes)
    broken = _broken_copy(
        odd_export,
        tmp_path / "b",
        lambda t: _replace_cell(t, "boxes", boxes_row, [[1.0, 2.0, 3.0]]),
    )
    with pytest.raises(
        NovaInputError, match=r"a box must be a list \[x, y, width, height\]"
    ) as caught:
        read_release(broken)
    assert (caught.value.record, caught.value.field) == (_row_of(table, boxes_row), "boxes[0]")

    broken = _broken_copy(
        odd_export,
        tmp_path / "c",
        lambda t: _replace_cell(t, "boxes", boxes_row, [[1.0, 2.0, -3.0, 4.0]]),
    )
    with pytest.raises(NovaInputError, match="width must be positive") as caught:
        read_release(broken)
    assert caught.value.field == "boxes[0].width"

    raters = table.column("rater_boxes").to_pylist()[boxes_row]
    raters[0]["boxes"][0][0] = 500.0  # far right of the 64-pixel-wide image
    broken = _broken_copy(
        odd_export, tmp_path / "d", lambda t: _replace_cell(t, "rater_boxes", boxes_row, raters)
    )
    with pytest.raises(NovaInputError, match="lies outside the 64x48 image") as caught:
        read_release(broken)
    assert caught.value.field == "rater_boxes[0].boxes[0]"


def test_identity_checks_apply_to_exports(odd_export: Path, tmp_path: Path) -> None:
    table = pq.read_table(odd_export / SHARD)
    broken = _broken_copy(
        odd_export, tmp_path, lambda t: _replace_cell(t, "case_id", 1, "case0009")
    )
    with pytest.raises(
        NovaInputError, match="case_id 'case0009' does not match the filename"
    ) as caught:
        read_release(broken)
    assert (caught.value.source, caught.value.record, caught.value.field) == (
        SHARD,
        _row_of(table, 1),
        "case_id",
    )


def test_an_export_without_image_shards_is_refused(odd_export: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "cases-only"
    shutil.copytree(odd_export, copy)
    shutil.rmtree(copy / "data" / "images")
    with pytest.raises(NovaInputError, match="no image shards"):
        read_release(copy)


def test_an_export_missing_an_image_shard_is_refused_not_scored_smaller(
    odd_export: Path, tmp_path: Path
) -> None:
    """A partial download: 1 of 2 image shards. It read as a 4-image release, warnings 0."""
    import shutil

    copy = tmp_path / "partial"
    shutil.copytree(odd_export, copy)
    (copy / "data" / "images" / "test-00001-of-00002.parquet").unlink()
    with pytest.raises(NovaInputError, match="test-00001-of-00002.parquet is missing") as caught:
        read_release(copy)
    assert caught.value.source == str(copy / "data" / "images")


def test_an_export_without_its_cases_shards_is_refused(odd_export: Path, tmp_path: Path) -> None:
    """user15: with data/cases emptied the export read as complete (warnings 0)."""
    import shutil

    copy = tmp_path / "no-cases"
    shutil.copytree(odd_export, copy)
    for shard in (copy / "data" / "cases").glob("*.parquet"):
        shard.unlink()
    with pytest.raises(
        NovaInputError, match="the card records 3 cases, but data/cases holds no shard"
    ):
        read_release(copy)


def _edit_case_rows(export: Path, copy: Path, edit: Any) -> None:
    """Copy ``export`` to ``copy`` with its cases shard's rows passed through ``edit``."""
    import shutil

    shutil.copytree(export, copy)
    (shard,) = (copy / "data" / "cases").glob("*.parquet")
    table = pq.read_table(shard)
    rows = edit(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)


@pytest.mark.parametrize(
    ("edit", "field", "said"),
    [
        (
            lambda rows: [{**rows[0], "final_diagnosis": "EDITED DIAGNOSIS"}, *rows[1:]],
            "final_diagnosis",
            "'EDITED DIAGNOSIS' where the case's image rows give",
        ),
        (
            lambda rows: [{**rows[0], "captions": ["EDITED", *rows[0]["captions"][1:]]}, *rows[1:]],
            "captions",
            "['EDITED'",
        ),
        (
            lambda rows: [
                {**rows[0], "boxes": [[[1.0, 2.0, 3.0, 4.0]]] + rows[0]["boxes"][1:]},
                *rows[1:],
            ],
            "boxes",
            "[[[1.0, 2.0, 3.0, 4.0]]",
        ),
    ],
    ids=["diagnosis", "caption", "box"],
)
def test_a_case_row_that_says_other_than_its_image_rows_is_refused(
    odd_export: Path, tmp_path: Path, edit: Any, field: str, said: str
) -> None:
    """user19: a case's diagnosis edited in the cases shard passed (warnings 0, the same
    fingerprint), so load_nova(..., "cases") read another ground truth than scoring."""
    copy = tmp_path / "edited"
    _edit_case_rows(odd_export, copy, edit)
    with pytest.raises(
        NovaInputError, match="the cases configuration would read another"
    ) as caught:
        read_release(copy)
    assert caught.value.field == field and caught.value.record == "case case0001"
    assert said in caught.value.message
    assert caught.value.source == "data/cases/test-00000-of-00001.parquet"


def test_a_case_without_its_row_or_a_row_twice_is_refused(odd_export: Path, tmp_path: Path) -> None:
    _edit_case_rows(odd_export, tmp_path / "dropped", lambda rows: rows[1:])
    with pytest.raises(NovaInputError, match=r"1 case\(s\) of the image rows have no case row"):
        read_release(tmp_path / "dropped")
    _edit_case_rows(odd_export, tmp_path / "twice", lambda rows: [*rows, rows[0]])
    with pytest.raises(NovaInputError, match="a case row without image rows .or listed twice"):
        read_release(tmp_path / "twice")


def test_a_cases_shard_with_a_column_of_its_own_is_refused(
    odd_export: Path, tmp_path: Path
) -> None:
    """user20: a column added to the cases shard passed nova info ("warnings 0") while
    load_nova(..., "cases") failed with a raw DatasetGenerationError."""
    import shutil

    copy = tmp_path / "extra-column"
    shutil.copytree(odd_export, copy)
    (shard,) = (copy / "data" / "cases").glob("*.parquet")
    table = pq.read_table(shard)
    corrected = pa.array(
        [f"{value} (corrected)" for value in table.column("final_diagnosis").to_pylist()]
    )
    pq.write_table(table.append_column("final_diagnosis_corrected", corrected), shard)
    with pytest.raises(
        NovaInputError, match="a column the case's image rows do not give"
    ) as caught:
        read_release(copy)
    assert caught.value.field == "final_diagnosis_corrected"


def test_an_unedited_exports_case_rows_are_its_image_rows_own(odd_export: Path) -> None:
    """The check passes on what nova export writes (float32 boxes, renamed extra columns)."""
    assert read_release(odd_export).n_cases == 3


def test_an_export_holding_fewer_images_than_its_card_records_is_refused(
    odd_export: Path, tmp_path: Path
) -> None:
    """The shard set renamed to look whole: the card's count and the cases shard still tell."""
    import shutil

    copy = tmp_path / "renamed"
    shutil.copytree(odd_export, copy)
    images = copy / "data" / "images"
    (images / "test-00001-of-00002.parquet").unlink()
    (images / "test-00000-of-00002.parquet").rename(images / "test-00000-of-00001.parquet")
    with pytest.raises(NovaInputError, match="the card records 6 images, the image shards hold 4"):
        read_release(copy)
    # With the card's count edited to match, the cases shard names the images it lists
    # that have no row (case0003 is split over the two shards: half of it was left).
    card = (copy / "README.md").read_text(encoding="utf-8")
    assert card.count("num_examples: 6") == 1
    (copy / "README.md").write_text(card.replace("num_examples: 6", "num_examples: 4"))
    kept = pq.read_table(images / "test-00000-of-00001.parquet", columns=["filename"])
    with pytest.raises(
        NovaInputError, match=r"2 image\(s\) its cases list have no image row"
    ) as caught:
        read_release(copy)
    absent = {image.filename for image in read_release(odd_export).images} - set(
        kept.column("filename").to_pylist()
    )
    assert len(absent) == 2 and all(name in str(caught.value) for name in absent)


@pytest.mark.parametrize("fixture", ["sample_release", "sample_export"])
def test_each_parquet_file_is_opened_once_and_its_provenance_read_from_it(
    fixture: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet.core as parquet_core

    folder: Path = request.getfixturevalue(fixture)
    opened: list[str] = []

    class CountedParquetFile(pq.ParquetFile):
        def __init__(self, source: Any, *args: Any, **kwargs: Any) -> None:
            # read_schema opens the file itself and hands over the open file
            path_given = isinstance(source, (str, Path))
            opened.append(Path(source).relative_to(folder).as_posix() if path_given else "?")
            super().__init__(source, *args, **kwargs)

    # read_schema and every reader construct pyarrow's ParquetFile by one of these names
    monkeypatch.setattr(pq, "ParquetFile", CountedParquetFile)
    monkeypatch.setattr(parquet_core, "ParquetFile", CountedParquetFile)
    release = read_release(folder)
    parquet_files = sorted(
        path.relative_to(folder).as_posix() for path in folder.rglob("data/**/*.parquet")
    )
    image_files = [name for name in parquet_files if "cases" not in name]  # cases: not read
    assert sorted(opened) == image_files
    assert release.provenance is not None and release.provenance["origin"] == "nova sample"
