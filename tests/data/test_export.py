"""Parquet / COCO export: what load_dataset and pycocotools read back equals the release.

Expected values are read straight from the release files (the v1 parquet with pyarrow and
the PNG bytes from disk), not through ``read_release``, so the export is checked against
the source rather than against itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from novabench._files import mark_output_folder
from novabench.cli import main
from novabench.data import export as export_module
from novabench.data.export import coco_document, export_coco, export_release
from novabench.data.release import read_release
from novabench.data.schema import case_features, image_features
from novabench.errors import NovaInputError
from tests.release_factory import (
    default_rows,
    with_v1_provenance,
    write_legacy_release,
    write_v1_release,
)

N_CASES = 4  # cases of 1, 2, 3, 1 images: 7 images, one without boxes, one placeholder
IMAGE_SIZE = (96, 80)  # not square, so width/height mix-ups show


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_v1_release(
        tmp_path_factory.mktemp("release") / "nova",
        n_cases=N_CASES,
        image_size=IMAGE_SIZE,
        shuffle_seed=3,
    )


@pytest.fixture(scope="module")
def exported(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "nova-export"
    export_release(release_dir, out, progress=False)
    return out


@pytest.fixture(scope="module")
def sample_export(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic sample exported with the defaults, once per module (read-only)."""
    out = tmp_path_factory.mktemp("sample-export") / "nova-export"
    export_release(sample_release, out, progress=False)
    return out


@pytest.fixture()
def cache_dir(tmp_path: Path) -> str:
    return str(tmp_path / "hf-cache")


def _release_truth(
    release_dir: Path,
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Expected image and case rows, from the raw v1 parquet and PNG files."""
    table = pq.read_table(release_dir / "data" / "nova-v1.parquet").to_pylist()
    images: dict[str, dict[str, Any]] = {}
    for row in table:
        gold = [
            [b["x"], b["y"], b["width"], b["height"]]
            for b in row["bboxes"] or []
            if b["source"] == "gold"
        ]
        raters: dict[str, list[list[float]]] = defaultdict(list)
        for b in row["bboxes"] or []:
            if b["source"] != "gold":
                raters[b["source"]].append([b["x"], b["y"], b["width"], b["height"]])
        images[row["filename"]] = {
            "filename": row["filename"],
            "case_id": row["case_id"],
            "scan_id": row["scan_id"],
            "caption": row["caption_text"],
            "width": IMAGE_SIZE[0],
            "height": IMAGE_SIZE[1],
            **{
                key: row["meta"][key]
                for key in ("title", "publication_date", "clinical_history", "final_diagnosis")
            },
            "differential_diagnosis": row["meta"]["differential_diagnosis"],
            "boxes": gold,
            "rater_boxes": [{"rater": name, "boxes": raters[name]} for name in sorted(raters)],
            "png": (release_dir / row["image_path"]).read_bytes(),
        }
    cases: dict[str, dict[str, Any]] = {}
    for filename in sorted(
        images, key=lambda name: (images[name]["case_id"], images[name]["scan_id"])
    ):
        image = images[filename]
        case = cases.setdefault(
            image["case_id"],
            {
                "case_id": image["case_id"],
                **{
                    k: image[k]
                    for k in ("title", "publication_date", "clinical_history", "final_diagnosis")
                },
                "differential_diagnosis": image["differential_diagnosis"],
                "filenames": [],
                "captions": [],
                "boxes": [],
            },
        )
        case["filenames"].append(filename)
        case["captions"].append(image["caption"])
        case["boxes"].append(image["boxes"])
    return images, cases


def _as_float32(boxes: Any) -> np.ndarray:
    return np.asarray(boxes, dtype=np.float32)


def _assert_image_rows(rows: list[dict[str, Any]], release_dir: Path) -> None:
    truth, _ = _release_truth(release_dir)
    assert [row["filename"] for row in rows] == sorted(truth)
    for row in rows:
        expected = truth[row["filename"]]
        for key in (
            "case_id",
            "scan_id",
            "caption",
            "title",
            "publication_date",
            "clinical_history",
            "final_diagnosis",
            "differential_diagnosis",
            "width",
            "height",
        ):
            assert row[key] == expected[key], (row["filename"], key)
        assert len(row["boxes"]) == len(expected["boxes"])
        if expected["boxes"]:
            np.testing.assert_array_equal(_as_float32(row["boxes"]), _as_float32(expected["boxes"]))
        assert [entry["rater"] for entry in row["rater_boxes"]] == [
            e["rater"] for e in expected["rater_boxes"]
        ]
        for got, want in zip(row["rater_boxes"], expected["rater_boxes"]):
            np.testing.assert_array_equal(_as_float32(got["boxes"]), _as_float32(want["boxes"]))
        assert row["image"]["bytes"] == expected["png"], row["filename"]
        assert row["image"]["path"] == row["filename"]  # no absolute path leaks into the export


def _undecoded(dataset: Any) -> Any:
    return dataset.cast_column("image", datasets.Image(decode=False))


def _leftovers(folder: Path) -> list[str]:
    """Staging or retired folders an export could leave next to OUT."""
    return sorted(
        path.name
        for path in folder.iterdir()
        if ".partial-" in path.name or ".replaced-" in path.name
    )


# --------------------------------------------------------------------------- parquet round trip


def test_images_config_round_trips_exactly(
    exported: Path, release_dir: Path, cache_dir: str
) -> None:
    dataset = datasets.load_dataset(str(exported), "images", split="test", cache_dir=cache_dir)
    assert dataset.features == image_features(["differential_diagnosis"])
    _assert_image_rows(list(_undecoded(dataset)), release_dir)


def test_images_decode_to_the_release_pixels(
    exported: Path, release_dir: Path, cache_dir: str
) -> None:
    from PIL import Image

    dataset = datasets.load_dataset(str(exported), "images", split="test", cache_dir=cache_dir)
    row = dataset[0]
    with Image.open(release_dir / "images" / row["filename"]) as original:
        np.testing.assert_array_equal(np.asarray(row["image"]), np.asarray(original))
    assert row["image"].size == IMAGE_SIZE


def test_cases_config_round_trips_exactly(
    exported: Path, release_dir: Path, cache_dir: str
) -> None:
    _, truth = _release_truth(release_dir)
    dataset = datasets.load_dataset(str(exported), "cases", split="test", cache_dir=cache_dir)
    assert dataset.features == case_features(["differential_diagnosis"])
    rows = list(dataset)
    assert [row["case_id"] for row in rows] == sorted(truth)
    for row in rows:
        expected = truth[row["case_id"]]
        for key in (
            "title",
            "publication_date",
            "clinical_history",
            "final_diagnosis",
            "differential_diagnosis",
            "filenames",
            "captions",
        ):
            assert row[key] == expected[key], (row["case_id"], key)
        assert len(row["boxes"]) == len(expected["boxes"])
        for got, want in zip(row["boxes"], expected["boxes"]):
            np.testing.assert_array_equal(
                _as_float32(got).reshape(-1, 4), _as_float32(want).reshape(-1, 4)
            )


def test_default_config_is_images(exported: Path, cache_dir: str) -> None:
    dataset = datasets.load_dataset(str(exported), split="test", cache_dir=cache_dir)
    assert "image" in dataset.column_names and dataset.num_rows == 7


# Slow: datasets' streaming reader over the export (0.9 CPU s, 2.3 s wall). The fast suite reads
# the same rows back with load_dataset in the two round-trip tests above, and streams a release
# through nova_dataset.py in tests/data/test_hf.py::test_streaming_yields_the_same_rows.
@pytest.mark.slow
def test_streaming_gives_the_same_rows(exported: Path, release_dir: Path) -> None:
    stream = datasets.load_dataset(str(exported), "images", split="test", streaming=True)
    rows = list(stream.cast_column("image", datasets.Image(decode=False)))
    _assert_image_rows(rows, release_dir)
    cases = list(datasets.load_dataset(str(exported), "cases", split="test", streaming=True))
    assert [case["case_id"] for case in cases] == [f"case{i:04d}" for i in range(1, N_CASES + 1)]


def test_parquet_files_carry_the_features_and_store_pngs_uncompressed(exported: Path) -> None:
    shard = exported / "data" / "images" / "test-00000-of-00001.parquet"
    parquet = pq.ParquetFile(shard)
    features = datasets.Features.from_arrow_schema(parquet.schema_arrow)
    assert features == image_features(["differential_diagnosis"])
    columns = {
        parquet.metadata.row_group(0).column(i).path_in_schema: parquet.metadata.row_group(
            0
        ).column(i)
        for i in range(parquet.metadata.num_columns)
    }
    assert columns["image.bytes"].compression == "UNCOMPRESSED"
    assert columns["caption"].compression == "SNAPPY"
    assert sorted(
        p.relative_to(exported).as_posix() for p in exported.rglob("*") if p.is_file()
    ) == [
        ".novabench-output.json",
        "README.md",
        "data/cases/test-00000-of-00001.parquet",
        "data/images/test-00000-of-00001.parquet",
    ]


def test_tiny_shards_split_the_images_and_keep_every_row(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "sharded"
    summary = export_release(release_dir, out, max_shard_bytes=1, progress=False)
    shards = sorted((out / "data" / "images").glob("*.parquet"))
    assert [p.name for p in shards] == [f"test-{i:05d}-of-00007.parquet" for i in range(7)]
    assert summary.sizes["images"].num_examples == 7
    assert summary.sizes["images"].download_size == sum(p.stat().st_size for p in shards)
    dataset = datasets.load_dataset(
        str(out), "images", split="test", cache_dir=str(tmp_path / "cache")
    )
    _assert_image_rows(list(_undecoded(dataset)), release_dir)


def test_rows_per_shard_bounds_rows(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "by-rows"
    export_release(release_dir, out, rows_per_shard=3, progress=False)
    counts = [
        pq.ParquetFile(p).metadata.num_rows
        for p in sorted((out / "data" / "images").glob("*.parquet"))
    ]
    assert counts == [3, 3, 1]


def test_shard_size_bound_holds(tmp_path: Path) -> None:
    release = write_v1_release(tmp_path / "release", n_cases=6, image_size=(128, 128))
    png_sizes = sorted(p.stat().st_size for p in (release / "images").glob("*.png"))
    limit = 3 * png_sizes[-1]  # room for at least 3 images per shard, never more than the limit
    export_release(release, tmp_path / "out", max_shard_bytes=limit, progress=False)
    shards = sorted((tmp_path / "out" / "data" / "images").glob("*.parquet"))
    assert len(shards) > 1
    for shard in shards:
        table = pq.read_table(shard, columns=["image"])
        assert sum(len(cell["bytes"]) for cell in table.column("image").to_pylist()) <= limit


def test_legacy_and_v1_layouts_export_the_same_tables(release_dir: Path, tmp_path: Path) -> None:
    legacy = write_legacy_release(tmp_path / "legacy", n_cases=N_CASES, image_size=IMAGE_SIZE)
    export_release(legacy, tmp_path / "from-legacy", progress=False)
    export_release(release_dir, tmp_path / "from-v1", progress=False)
    for config in ("images", "cases"):
        name = f"data/{config}/test-00000-of-00001.parquet"
        from_legacy = pq.read_table(tmp_path / "from-legacy" / name)
        from_v1 = pq.read_table(tmp_path / "from-v1" / name)
        assert from_legacy.equals(from_v1), config


def test_export_card_reports_the_exported_sizes(exported: Path) -> None:
    header = yaml.safe_load((exported / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    infos = {info["config_name"]: info for info in header["dataset_info"]}
    assert infos["images"]["splits"] == [
        {"name": "test", "num_bytes": infos["images"]["dataset_size"], "num_examples": 7}
    ]
    assert infos["cases"]["splits"][0]["num_examples"] == N_CASES
    for config in ("images", "cases"):
        files = list((exported / "data" / config).glob("*.parquet"))
        assert infos[config]["download_size"] == sum(p.stat().st_size for p in files)
        # Arrow size of the rows; a table read back may carry extra validity bitmaps.
        arrow_bytes = sum(pq.read_table(p).nbytes for p in files)
        assert infos[config]["dataset_size"] == pytest.approx(arrow_bytes, rel=0.01)


def test_summary_and_cli_line(
    release_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli-out"
    assert (
        main(
            [
                "export",
                str(release_dir),
                str(out),
                "--quiet",
                "--max-shard-mb",
                "0.0001",
                "--pretty-name",
                "NOVA sample",
                "--card-notice",
                "Synthetic sample.\nNot the NOVA release.",
            ]
        )
        == 0
    )
    line = capsys.readouterr().out.strip()
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "pretty_name: NOVA sample" in card
    assert (
        "# Dataset Card for NOVA sample\n\n> Synthetic sample.\n> Not the NOVA release.\n\nNOVA sample is"
        in card
    )
    assert line.startswith(
        "exported 7 images, 4 cases, 6 gold boxes (1 placeholder diagnoses) as parquet"
    )
    assert len(list((out / "data" / "images").glob("*.parquet"))) == 7


# --------------------------------------------------------------------------- coco


def _load_coco(path: Path) -> Any:
    from pycocotools.coco import COCO

    with contextlib.redirect_stdout(io.StringIO()):
        return COCO(str(path))


def test_coco_gold_file_loads_in_pycocotools_with_exact_boxes(
    release_dir: Path, tmp_path: Path
) -> None:
    truth, _ = _release_truth(release_dir)
    path = export_coco(release_dir, tmp_path / "coco" / "gold.json")
    coco = _load_coco(path)
    images = coco.loadImgs(sorted(coco.getImgIds()))
    assert [img["id"] for img in images] == list(range(1, 8))
    assert [img["file_name"] for img in images] == sorted(truth)
    assert all((img["width"], img["height"]) == IMAGE_SIZE for img in images)
    assert [img["case_id"] for img in images] == [truth[name]["case_id"] for name in sorted(truth)]
    annotations = coco.loadAnns(sorted(coco.getAnnIds()))
    assert [ann["id"] for ann in annotations] == list(range(1, 7))
    for image in images:
        got = [ann["bbox"] for ann in coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))]
        assert got == truth[image["file_name"]]["boxes"]  # float64 in JSON: exact
    for ann in annotations:
        assert ann["area"] == ann["bbox"][2] * ann["bbox"][3]
        assert ann["iscrowd"] == 0 and ann["category_id"] == 1
    assert coco.loadCats(coco.getCatIds()) == [
        {"id": 1, "name": "abnormality", "supercategory": "finding"}
    ]
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["licenses"][0]["name"] == "cc-by-nc-sa-4.0" and document["info"][
        "url"
    ].endswith("2505.14064")


def test_coco_gold_boxes_evaluate_to_a_perfect_score(release_dir: Path, tmp_path: Path) -> None:
    from pycocotools.cocoeval import COCOeval

    coco = _load_coco(export_coco(release_dir, tmp_path / "gold.json"))
    detections = [{**ann, "score": 1.0} for ann in coco.loadAnns(coco.getAnnIds())]
    with contextlib.redirect_stdout(io.StringIO()):
        evaluation = COCOeval(coco, coco.loadRes(detections), "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    assert evaluation.stats[0] == pytest.approx(1.0)  # AP@[.5:.95] of the truth against itself


def test_coco_rater_file_names_each_rater(release_dir: Path, tmp_path: Path) -> None:
    truth, _ = _release_truth(release_dir)
    coco = _load_coco(export_coco(release_dir, tmp_path / "raters.json", source="raters"))
    by_rater: dict[str, list[list[float]]] = defaultdict(list)
    filenames = {img["id"]: img["file_name"] for img in coco.loadImgs(coco.getImgIds())}
    for ann in coco.loadAnns(sorted(coco.getAnnIds())):
        by_rater[ann["rater"]].append((filenames[ann["image_id"]], ann["bbox"]))
    expected: dict[str, list[Any]] = defaultdict(list)
    for name in sorted(truth):
        for entry in truth[name]["rater_boxes"]:
            expected[entry["rater"]].extend((name, box) for box in entry["boxes"])
    assert dict(by_rater) == dict(expected)


def test_coco_folder_export_copies_images_and_writes_both_files(
    release_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "coco-folder"
    assert (
        main(["export", str(release_dir), str(out), "--format", "coco", "--include-raters", "-q"])
        == 0
    )
    assert sorted(p.name for p in (out / "annotations").iterdir()) == ["gold.json", "raters.json"]
    for image in (release_dir / "images").iterdir():
        assert (out / "images" / image.name).read_bytes() == image.read_bytes()
    coco = _load_coco(out / "annotations" / "gold.json")
    assert all(
        (out / "images" / img["file_name"]).is_file() for img in coco.loadImgs(coco.getImgIds())
    )


def test_coco_rejects_unknown_source_and_existing_file(release_dir: Path, tmp_path: Path) -> None:
    release = read_release(release_dir)
    with pytest.raises(NovaInputError, match="gold"):
        coco_document(release, source="everyone")  # type: ignore[arg-type]
    target = tmp_path / "exists.json"
    target.write_text("keep me", encoding="utf-8")
    # Not ours: said at once, without suggesting an overwrite that would be refused.
    with pytest.raises(NovaInputError, match="not a COCO file novabench exported: choose") as error:
        export_coco(release_dir, target)
    assert "overwrite" not in str(error.value)
    with pytest.raises(NovaInputError, match="not a COCO file novabench exported"):
        export_coco(release_dir, target, overwrite=True)
    assert target.read_text(encoding="utf-8") == "keep me"
    target.unlink()
    export_coco(release_dir, target)
    with pytest.raises(NovaInputError, match="already exists; pass overwrite=True"):
        export_coco(release_dir, target)  # our own file: overwrite is the way
    export_coco(release_dir, target, overwrite=True)  # our own file may be replaced
    assert json.loads(target.read_text(encoding="utf-8"))["categories"][0]["id"] == 1


# --------------------------------------------------------------------------- atomicity and bad input


def test_broken_release_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = default_rows(n_cases=2, image_size=(32, 32))
    rows[1]["bboxes"][0]["width"] = -5.0
    release = write_v1_release(tmp_path / "broken", rows)
    out = tmp_path / "exports" / "nova"
    assert main(["export", str(release), str(out), "-q"]) == 2
    message = capsys.readouterr().err
    assert "nova-v1.parquet" in message and rows[1]["filename"] in message
    assert not out.parent.exists()  # the release is read before anything is created


def test_existing_out_is_an_error_and_stays_untouched(
    release_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "mine.txt").write_text("precious", encoding="utf-8")
    assert main(["export", str(release_dir), str(out), "-q"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


def test_overwrite_replaces_the_folder(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "again"
    export_release(release_dir, out, progress=False)
    (out / "stale.txt").write_text("old", encoding="utf-8")
    export_release(release_dir, out, overwrite=True, progress=False)
    assert not (out / "stale.txt").exists() and (out / "README.md").is_file()
    assert _leftovers(tmp_path) == []


def test_overwrite_refuses_a_folder_export_did_not_write(release_dir: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work", encoding="utf-8")
    with pytest.raises(NovaInputError, match="was not written by `nova export`"):
        export_release(release_dir, mine, overwrite=True, progress=False)
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    sampled = tmp_path / "sampled"
    shutil.copytree(release_dir, sampled)
    mark_output_folder(sampled, "sample")  # a release `nova sample` wrote is not an export
    with pytest.raises(NovaInputError, match="written by `nova sample`"):
        export_release(release_dir, sampled, overwrite=True, progress=False)
    assert _leftovers(tmp_path) == []


def test_failure_midway_leaves_nothing_and_keeps_an_old_export(
    release_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    export_release(release_dir, out, progress=False)
    (out / "previous.txt").write_text("previous export", encoding="utf-8")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))

    def explode(*args: Any, **kwargs: Any) -> str:
        raise NovaInputError("card template is broken", source="template")

    monkeypatch.setattr(
        export_module, "render_dataset_card", explode
    )  # after every shard is written
    with pytest.raises(NovaInputError, match="card template"):
        export_release(release_dir, out, overwrite=True, progress=False)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    fresh = tmp_path / "fresh"
    with pytest.raises(NovaInputError):
        export_release(release_dir, fresh, progress=False)
    assert not fresh.exists()
    assert _leftovers(tmp_path) == []


def test_image_vanishing_midway_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release_dir = write_v1_release(tmp_path / "release", n_cases=3, image_size=(32, 32))
    release = read_release(release_dir)
    monkeypatch.setattr(export_module, "read_release", lambda path: release)
    (release_dir / "images" / "case0003_002.png").unlink()  # after validation, before export
    out = tmp_path / "out"
    with pytest.raises(NovaInputError, match="case0003_002.png") as error:
        export_release(release_dir, out, progress=False)
    assert error.value.field == "image"
    assert not out.exists() and _leftovers(tmp_path) == []


def test_outputs_get_the_umask_permissions_not_private_temp_ones(
    release_dir: Path, tmp_path: Path
) -> None:
    import os

    previous = os.umask(0o022)
    try:
        export_release(release_dir, tmp_path / "shared", progress=False)
        gold = export_coco(release_dir, tmp_path / "gold.json")
    finally:
        os.umask(previous)
    assert (tmp_path / "shared").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "shared" / "README.md").stat().st_mode & 0o777 == 0o644
    assert gold.stat().st_mode & 0o777 == 0o644


def test_out_must_not_replace_the_release(release_dir: Path) -> None:
    n_images = len(list((release_dir / "images").iterdir()))
    with pytest.raises(NovaInputError, match="is an input of this command"):
        export_release(release_dir, release_dir, overwrite=True, progress=False)
    with pytest.raises(NovaInputError, match="contains the release"):
        export_release(release_dir, release_dir.parent, overwrite=True, progress=False)
    for inside in ("images", "data", "new"):
        with pytest.raises(NovaInputError, match="sits inside the release"):
            export_release(release_dir, release_dir / inside, overwrite=True, progress=False)
    assert (release_dir / "data" / "nova-v1.parquet").is_file()
    assert len(list((release_dir / "images").iterdir())) == n_images


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fmt": "csv"}, "format"),
        ({"max_shard_bytes": 0}, "positive"),
        ({"rows_per_shard": 0}, "positive"),
        ({"fmt": "coco", "push_to": "me/nova"}, "only the parquet"),
    ],
)
def test_bad_arguments(
    release_dir: Path, tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(NovaInputError, match=message):
        export_release(release_dir, tmp_path / "out", progress=False, **kwargs)
    assert not (tmp_path / "out").exists()


def test_cli_rejects_non_positive_shard_size(release_dir: Path, tmp_path: Path) -> None:
    assert (
        main(["export", str(release_dir), str(tmp_path / "o"), "--max-shard-mb", "-1", "-q"]) == 2
    )
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------- push


def test_push_offline_is_a_clear_error_before_any_work(
    release_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    out = tmp_path / "pushed"
    assert main(["export", str(release_dir), str(out), "--push", "me/nova", "-q"]) == 2
    message = capsys.readouterr().err
    assert "offline" in message and "HF_HUB_OFFLINE" in message and "me/nova" in message
    assert not out.exists()


def test_push_network_failure_keeps_the_local_export(
    release_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx
    from huggingface_hub import HfApi

    calls: list[tuple[str, dict[str, Any]]] = []

    def unreachable(self: Any, repo_id: str, **kwargs: Any) -> None:
        calls.append((repo_id, kwargs))
        raise httpx.ConnectError("no route to host")

    monkeypatch.setattr(export_module, "_hub_offline", lambda: False)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setattr(HfApi, "create_repo", unreachable)
    out = tmp_path / "pushed"
    with pytest.raises(NovaInputError, match="local export .* is complete") as error:
        export_release(release_dir, out, push_to="me/nova", private=True, progress=False)
    assert error.value.source == "me/nova"
    assert calls == [("me/nova", {"repo_type": "dataset", "private": True, "exist_ok": True})]
    assert (out / "README.md").is_file()


def test_push_uploads_the_folder_as_a_dataset(
    release_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import HfApi

    uploads: list[dict[str, Any]] = []

    def fake_upload(self: Any, **kwargs: Any) -> str:
        uploads.append(kwargs)
        return "https://huggingface.co/datasets/me/nova/commit/abc"

    monkeypatch.setattr(export_module, "_hub_offline", lambda: False)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setattr(HfApi, "create_repo", lambda self, repo_id, **kwargs: None)
    monkeypatch.setattr(HfApi, "upload_folder", fake_upload)
    out = tmp_path / "pushed"
    summary = export_release(release_dir, out, push_to="me/nova", progress=False)
    assert summary.repo_url == "https://huggingface.co/datasets/me/nova/commit/abc"
    assert len(uploads) == 1
    assert uploads[0]["folder_path"] == out and uploads[0]["repo_type"] == "dataset"
    assert 'load_dataset("me/nova", "images"' in (out / "README.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the synthetic sample


@pytest.mark.parametrize("config", ["images", "cases"])
def test_sample_export_equals_the_builder_on_the_release(
    sample_release: Path, sample_export: Path, tmp_path: Path, config: str
) -> None:
    """The export read by load_dataset gives the rows NovaBuilder makes from the release itself."""
    from novabench.data.hf import load_nova

    exported = datasets.load_dataset(
        str(sample_export), config, split="test", cache_dir=str(tmp_path / "c1")
    )
    built = load_nova(sample_release, config, cache_dir=str(tmp_path / "c2"))
    assert exported.features == built.features
    if config == "images":
        exported, built = _undecoded(exported), _undecoded(built)
    assert exported.num_rows == built.num_rows > 0
    assert exported.to_list() == built.to_list()


# --------------------------------------------------------------------------- provenance and card notice


def _notice_of(card_path: Path) -> list[str]:
    """The quoted lines right under the card's title."""
    body = card_path.read_text(encoding="utf-8").split("\n# Dataset Card for ", 1)[1].splitlines()
    return [line for line in body[1:4] if line.startswith("> ")]


def test_sample_and_ingest_output_carry_their_provenance_into_the_card(
    sample_release: Path, sample_export: Path, tmp_path: Path
) -> None:
    from tests.conftest import SAMPLE_CASES, SAMPLE_SEED

    release = read_release(sample_release)
    assert release.provenance == {
        "origin": "nova sample",
        "cases": SAMPLE_CASES,
        "seed": SAMPLE_SEED,
    }
    out = sample_export
    [notice] = _notice_of(out / "README.md")
    assert (
        f"`nova sample --cases {SAMPLE_CASES} --seed {SAMPLE_SEED}`" in notice
        and "not the NOVA release" in notice
    )
    # A re-export of the export keeps it (the shards carry it beside datasets' metadata) ...
    again = tmp_path / "again"
    export_release(out, again, progress=False)
    assert read_release(out).provenance == release.provenance
    assert _notice_of(again / "README.md") == [notice]
    assert datasets.load_dataset(str(again), "images", split="test").num_rows == release.n_images
    # ... an explicit notice replaces it and "" removes it.
    export_release(sample_release, tmp_path / "own", card_notice="Internal copy.", progress=False)
    assert _notice_of(tmp_path / "own" / "README.md") == ["> Internal copy."]
    export_release(sample_release, tmp_path / "none", card_notice="", progress=False)
    assert _notice_of(tmp_path / "none" / "README.md") == []


def test_a_release_novabench_did_not_make_gets_no_notice(release_dir: Path, tmp_path: Path) -> None:
    assert read_release(release_dir).provenance is None  # written like the official files
    export_release(release_dir, tmp_path / "out", progress=False)
    assert _notice_of(tmp_path / "out" / "README.md") == []


def test_card_usage_snippets_load_a_path_that_works(
    release_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "my-export"
    export_release(release_dir, out, progress=False)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert 'load_dataset("./my-export", "images", split="test")' in card
    monkeypatch.chdir(tmp_path)  # the snippet is relative to the folder's parent
    assert (
        datasets.load_dataset("./my-export", "images", split="test").num_rows
        == read_release(release_dir).n_images
    )
    assert (
        main(
            [
                "export",
                str(release_dir),
                str(tmp_path / "o2"),
                "--quiet",
                "--card-hub-id",
                "lab/nova",
            ]
        )
        == 0
    )
    assert (
        'load_dataset("lab/nova", "cases", split="test")'
        in (tmp_path / "o2" / "README.md").read_text()
    )


def test_foreign_provenance_never_reaches_shards_or_card(release_dir: Path, tmp_path: Path) -> None:
    source = shutil.copytree(release_dir, tmp_path / "source")
    path = source / "data" / "nova-v1.parquet"
    table = pq.read_table(path)
    foreign = {
        "origin": "nova sample",
        "cases": "<img src=x onerror=alert(1)>",  # not a count: dropped
        "seed": 3,
        "local_path": "/home/someone/secret",
        "hub_token": "hf_" + "x" * 30,
    }
    metadata = {
        **(table.schema.metadata or {}),
        b"novabench.provenance": json.dumps(foreign).encode(),
    }
    pq.write_table(table.replace_schema_metadata(metadata), path)
    release = read_release(source)
    assert release.provenance == {"origin": "nova sample", "seed": 3}
    assert any("dropped" in warning and "hub_token" in warning for warning in release.warnings)
    out = tmp_path / "out"
    export_release(source, out, progress=False)
    for shard in (out / "data").rglob("*.parquet"):
        stored = pq.read_schema(shard).metadata[b"novabench.provenance"].decode()
        assert json.loads(stored) == {"origin": "nova sample", "seed": 3}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "hf_" not in card and "<img" not in card and "/home/someone" not in card
    # An origin novabench never writes: none of it is kept, but novabench's key is there,
    # so the data still reads as novabench's (never as the official release).
    foreign["origin"] = "**made by me**"
    metadata[b"novabench.provenance"] = json.dumps(foreign).encode()
    pq.write_table(table.replace_schema_metadata(metadata), path)
    assert read_release(source).provenance == {"origin": "unreadable novabench provenance"}


# --------------------------------------------------------------------------- coco of our own data


@pytest.mark.parametrize("layout", ["v1", "legacy"])
def test_the_coco_export_of_the_synthetic_sample_says_what_it_is(
    layout: str,
    sample_release: Path,
    sample_release_legacy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = sample_release if layout == "v1" else sample_release_legacy
    out = tmp_path / "coco"
    assert main(["export", str(source), str(out), "--format", "coco", "--quiet"]) == 0
    assert (out / "annotations" / "gold.json").is_file()
    for path in sorted((out / "annotations").glob("*.json")):  # gold, and raters when written
        info = json.loads(path.read_text(encoding="utf-8"))["info"]
        assert info["description"].startswith("NOT THE REAL DATA: Synthetic sample made by")
        assert "NOVA brain MRI benchmark" not in info["description"]
        assert "arxiv" not in info["url"]
        assert info["provenance"]["origin"] == "nova sample"


def test_the_coco_info_of_ingested_and_unreadable_provenance_data_is_marked(
    release_dir: Path, tmp_path: Path
) -> None:
    ingested = with_v1_provenance(release_dir, tmp_path / "ingested", b'{"origin": "nova ingest"}')
    info = coco_document(read_release(ingested))["info"]
    assert info["description"].startswith("NOT THE NOVA RELEASE: Built with `nova ingest`")
    assert info["provenance"] == {"origin": "nova ingest"} and info["url"] == ""
    damaged = with_v1_provenance(release_dir, tmp_path / "damaged", b"[1, 2]")
    info = coco_document(read_release(damaged))["info"]
    assert info["description"].startswith("NOT THE NOVA RELEASE: The data carries a novabench")
    # The official layout, without novabench's key, keeps the benchmark's own description.
    official = coco_document(read_release(release_dir))["info"]
    assert official["description"] == "NOVA brain MRI benchmark, gold boxes (evaluation only)"
    assert "arxiv.org" in official["url"] and "provenance" not in official
