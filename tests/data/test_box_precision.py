"""Boxes keep the release's float64 values to the bit: in ``load_nova`` rows (prepared and
streamed), in a ``nova export`` and through the evaluate module, which must then score
``load_nova`` rows as ``nova evaluate`` scores the release, at an IoU tie too (user26).

Expected box values are read straight from the release's parquet with pyarrow, not through
``read_release``; the scores of the module are compared with the report ``nova evaluate``
writes for the same predictions.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from novabench.cli import main
from novabench.data.hf import NovaReleaseWarning, load_nova
from novabench.data.release import read_release
from tests.lazy_import import LazyModule
from tests.release_factory import default_rows, write_v1_release

evaluate = LazyModule("evaluate")

MODULE = str(Path(__file__).resolve().parents[2] / "metrics" / "nova_metric")
SMALL = (64, 64)
BOX_KEYS = ("x", "y", "width", "height")


def _fine_rows() -> list[dict[str, Any]]:
    """The factory's rows with coordinates of more significant digits than float32 holds
    (its shortest decimal is another number), so only float64 storage gives them back."""
    rows = default_rows(n_cases=3, image_size=SMALL)
    for number, row in enumerate(rows):
        for box in row["bboxes"] or []:
            for key in BOX_KEYS:
                box[key] = box[key] + 1e-9 * (number + 1) + 1.2345e-7
    return rows


@pytest.fixture(scope="module")
def fine_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_v1_release(tmp_path_factory.mktemp("fine"), _fine_rows(), image_size=SMALL)


def _release_boxes(release: Path) -> dict[str, dict[str, list[list[float]]]]:
    """``{filename: {source: [[x, y, w, h], ...]}}`` as the v1 parquet holds them (float64)."""
    table = pq.read_table(release / "data" / "nova-v1.parquet", columns=["filename", "bboxes"])
    boxes: dict[str, dict[str, list[list[float]]]] = {}
    for row in table.to_pylist():
        by_source = boxes.setdefault(row["filename"], {})
        for box in row["bboxes"] or []:
            by_source.setdefault(box["source"], []).append([box[key] for key in BOX_KEYS])
    return boxes


def _not_float32(values: list[list[float]]) -> bool:
    return any(float(np.float32(value)) != value for box in values for value in box)


def _row_boxes(row: dict[str, Any]) -> dict[str, list[list[float]]]:
    by_source = {"gold": row["boxes"]} if row["boxes"] else {}
    by_source.update({entry["rater"]: entry["boxes"] for entry in row["rater_boxes"]})
    return by_source


def test_the_fixture_has_boxes_float32_cannot_hold(fine_release: Path) -> None:
    expected = _release_boxes(fine_release)
    assert all(_not_float32(boxes) for by in expected.values() for boxes in by.values())
    # Nor its shortest decimal: an export read back through float32 could not restore them.
    value = expected["case0001_001.png"]["gold"][0][0]
    assert float(str(np.float32(value))) != value


@pytest.mark.parametrize("streaming", [False, True])
def test_load_nova_rows_hold_the_release_boxes_to_the_bit(
    tmp_path: Path, fine_release: Path, streaming: bool
) -> None:
    expected = _release_boxes(fine_release)
    images = load_nova(fine_release, streaming=streaming, cache_dir=str(tmp_path / "cache"))
    assert images.features["boxes"].feature.feature.dtype == "float64"
    got = {row["filename"]: _row_boxes(row) for row in images}
    assert got == expected


def test_cases_rows_hold_the_release_boxes_to_the_bit(tmp_path: Path, fine_release: Path) -> None:
    expected = _release_boxes(fine_release)
    cases = load_nova(fine_release, "cases", cache_dir=str(tmp_path / "cache"))
    got = {
        filename: boxes
        for row in cases
        for filename, boxes in zip(row["filenames"], row["boxes"])
        if boxes
    }
    assert got == {name: by["gold"] for name, by in expected.items() if "gold" in by}


def _half_height_predictions(expected: dict[str, dict[str, list[list[float]]]]) -> list[dict]:
    """Each image's first gold box with half its height: IoU exactly 0.5 in float64."""
    predictions = []
    for filename in sorted(expected):
        gold = expected[filename].get("gold")
        boxes = [[*gold[0][:3], gold[0][3] * 0.5]] if gold else []
        predictions.append({"filename": filename, "boxes": boxes})
    return predictions


@pytest.mark.parametrize("fixture", ["fine_release", "sample_release"])
def test_the_module_on_load_nova_rows_scores_as_nova_evaluate_at_an_iou_tie(
    request: pytest.FixtureRequest, tmp_path: Path, fixture: str
) -> None:
    release: Path = request.getfixturevalue(fixture)
    expected = _release_boxes(release)
    assert any(_not_float32(by["gold"]) for by in expected.values() if "gold" in by)
    predictions = _half_height_predictions(expected)
    answers = tmp_path / "half.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"filename": p["filename"], "task": "localization", "boxes": p["boxes"]})
            + "\n"
            for p in predictions
        ),
        encoding="utf-8",
    )
    out = tmp_path / "report.json"
    args = ["evaluate", "--data", str(release), "--predictions", str(answers)]
    args += ["--task", "localization", "--bootstrap", "0", "--out", str(out), "--quiet"]
    assert main(args) == 0
    reported = json.loads(out.read_text(encoding="utf-8"))["tasks"]["localization"]["metrics"]

    images = load_nova(release, cache_dir=str(tmp_path / "cache"))
    by_name = {p["filename"]: p for p in predictions}
    module_predictions = [{"boxes": by_name[name]["boxes"]} for name in images["filename"]]
    result = evaluate.load(MODULE, "localization").compute(
        predictions=module_predictions, references=images
    )
    keys = ["mAP@30", "mAP@50", "mAP@50:95", "ACC50", "hit@50", "COCO-AP@50", "TP30", "FNR"]
    assert {key: result[key] for key in keys} == {key: reported[key] for key in keys}
    # At the tie, float32 gold boxes gave a handful of hits (user26: mAP@50 0.045%): the
    # half-height boxes now reach IoU 0.5 on the images nova evaluate counts.
    assert reported["hit@50"] > 0.3 and result["hit@50"] == reported["hit@50"]


def test_an_export_keeps_the_float64_boxes(tmp_path: Path, fine_release: Path) -> None:
    expected = _release_boxes(fine_release)
    out = tmp_path / "export"
    assert main(["export", str(fine_release), str(out), "--quiet"]) == 0
    shard = sorted((out / "data" / "images").glob("*.parquet"))[0]
    schema = pq.read_schema(shard)
    assert schema.field("boxes").type.value_type.value_type == pa.float64()
    rows = pq.read_table(shard, columns=["filename", "boxes", "rater_boxes"]).to_pylist()
    assert {row["filename"]: _row_boxes(row) for row in rows} == expected
    # Read back as a release, through load_nova and through load_dataset: the same values.
    release = read_release(out)
    assert not [w for w in release.warnings if "float32" in w]
    read_back = {image.filename: _row_boxes(vars(image)) for image in release.images}
    assert read_back == expected
    assert release.fingerprint() == read_release(fine_release).fingerprint()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NovaReleaseWarning)
        loaded = load_nova(out, cache_dir=str(tmp_path / "cache"))
    assert {row["filename"]: _row_boxes(row) for row in loaded} == expected


def _old_export(folder: Path, release: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An export as novabench wrote it before boxes were float64 (float32 box columns)."""
    from datasets import List, Value

    from novabench.data import schema

    with monkeypatch.context() as patch:
        patch.setattr(schema, "BOX", List(Value("float32")))
        assert main(["export", str(release), str(folder), "--quiet"]) == 0
    shard = sorted((folder / "data" / "images").glob("*.parquet"))[0]
    assert pq.read_schema(shard).field("boxes").type.value_type.value_type == pa.float32()
    return folder


def test_an_old_float32_export_is_read_with_one_warning_naming_its_box_columns(
    tmp_path: Path, sample_release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _old_export(tmp_path / "old", sample_release, monkeypatch)
    release = read_release(old)
    told = [w for w in release.warnings if "float32" in w]
    assert len(told) == 1 and "\n" not in told[0]
    assert told[0].startswith("data/images/test-00000-of-00001.parquet: ")
    assert "'boxes'" in told[0] and "'rater_boxes'" in told[0]
    assert "ties" in told[0]
    # Its boxes are still the sample's (4 decimals: the shortest float32 decimals restore them).
    assert release.fingerprint() == read_release(sample_release).fingerprint()

    with pytest.warns(NovaReleaseWarning) as caught:
        load_nova(old, cache_dir=str(tmp_path / "cache"))
    messages = [str(w.message) for w in caught if issubclass(w.category, NovaReleaseWarning)]
    assert len(messages) == 1 and "'boxes'" in messages[0] and "float32" in messages[0]


def test_a_dataset_prepared_with_float32_boxes_is_prepared_again(
    tmp_path: Path, fine_release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prepared cache is keyed on the release's fingerprint, which the box type does not
    change: the builder's version (1.0.0 with float32 boxes) keeps an old cache from being
    served."""
    import dataclasses

    import datasets
    from datasets import List, Value

    from novabench.data import schema
    from novabench.data.hf import NovaBuilder

    class Float32Builder(NovaBuilder):  # as novabench prepared NOVA before
        BUILDER_CONFIGS = [
            dataclasses.replace(config, version=datasets.Version("1.0.0"))
            for config in NovaBuilder.BUILDER_CONFIGS
        ]

    cache = str(tmp_path / "cache")
    with monkeypatch.context() as patch:
        patch.setattr(schema, "BOX", List(Value("float32")))
        old = Float32Builder(config_name="images", data_dir=str(fine_release), cache_dir=cache)
        old.download_and_prepare()
        assert old.as_dataset(split="test").features["boxes"].feature.feature.dtype == "float32"
    images = load_nova(fine_release, cache_dir=cache)
    assert images.features["boxes"].feature.feature.dtype == "float64"
    assert {row["filename"]: _row_boxes(row) for row in images} == _release_boxes(fine_release)
