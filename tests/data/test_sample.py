"""The synthetic sample release: determinism, exact layout, coherent boxes and captions."""

from __future__ import annotations

import collections
import csv
import dataclasses
import hashlib
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from novabench.cli import main
from novabench.data.sample import (
    IMAGES_PER_CASE,
    PLACEHOLDER_DIAGNOSIS,
    images_per_case,
    write_sample_release,
)
from novabench.records import NOVA_RELEASE_SIZE

BOX = pa.struct(
    [
        ("x", pa.float64()),
        ("y", pa.float64()),
        ("width", pa.float64()),
        ("height", pa.float64()),
        ("source", pa.string()),
    ]
)
META_KEYS = [
    "title",
    "publication_date",
    "clinical_history",
    "final_diagnosis",
    "differential_diagnosis",
    "link",
]


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _rows(root: Path) -> list[dict]:
    return pq.read_table(root / "data" / "nova-v1.parquet").to_pylist()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    # Two cases (several images each) show it as three did, at two thirds of the cost.
    first = _hashes(write_sample_release(tmp_path / "a", n_cases=2, seed=5, progress=False))
    again = _hashes(write_sample_release(tmp_path / "b", n_cases=2, seed=5, progress=False))
    other = _hashes(write_sample_release(tmp_path / "c", n_cases=2, seed=6, progress=False))
    assert first == again
    assert "data/nova-v1.parquet" in first and len(first) > 3
    assert first["data/nova-v1.parquet"] != other["data/nova-v1.parquet"]
    assert set(first.values()) != set(other.values())


def test_v1_schema_is_exactly_the_documented_one(sample_release: Path) -> None:
    assert sorted(p.name for p in sample_release.iterdir()) == [
        ".novabench-output.json",
        "data",
        "images",
    ]
    schema = pq.read_schema(sample_release / "data" / "nova-v1.parquet")
    expected = pa.schema(
        [
            ("filename", pa.string()),
            ("case_id", pa.string()),
            ("scan_id", pa.string()),
            ("caption_text", pa.string()),
            ("image_path", pa.string()),
            ("split", pa.string()),
            ("meta", pa.struct([(key, pa.string()) for key in META_KEYS])),
            ("bboxes", pa.list_(BOX)),
        ]
    )
    assert schema.remove_metadata().equals(expected), schema
    rows = _rows(sample_release)
    filenames = [row["filename"] for row in rows]
    assert filenames != sorted(filenames)  # like the official parquet, not sorted by filename
    for row in rows:
        assert re.fullmatch(r"case\d{4}_\d{3}\.png", row["filename"])
        assert row["filename"] == f"{row['case_id']}_{row['scan_id']}.png"
        assert row["image_path"] == f"images/{row['filename']}" and row["split"] == "test"
        assert re.fullmatch(r"\d\d\.\d\d\.20\d\d", row["meta"]["publication_date"])
        assert row["meta"]["link"].endswith(row["case_id"])
        assert len(row["meta"]["differential_diagnosis"].split("; ")) == 4
    assert sorted(p.name for p in (sample_release / "images").iterdir()) == sorted(filenames)


def test_legacy_tables_hold_the_same_content(
    sample_release: Path, sample_release_legacy: Path
) -> None:
    root = sample_release_legacy
    assert sorted(p.name for p in root.iterdir()) == [
        ".novabench-output.json",
        "bboxes_gold.csv",
        "bboxes_raters.csv",
        "captions.csv",
        "case_metadata.csv",
        "novabench_provenance.json",  # what made it (CSV carries no metadata)
        "test",
    ]

    def read(name: str) -> list[dict[str, str]]:
        with (root / name).open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))

    headers = {}
    for name in ("captions.csv", "case_metadata.csv", "bboxes_gold.csv", "bboxes_raters.csv"):
        with (root / name).open(encoding="utf-8", newline="") as handle:
            headers[name] = next(csv.reader(handle))
    assert headers == {
        "captions.csv": ["filename", "case_id", "scan_id", "caption"],
        "case_metadata.csv": ["case_id", *META_KEYS],
        "bboxes_gold.csv": ["filename", "x", "y", "width", "height"],
        "bboxes_raters.csv": ["filename", "rater", "x", "y", "width", "height"],
    }
    rows = {row["filename"]: row for row in _rows(sample_release)}
    captions = read("captions.csv")
    assert {r["filename"]: r["caption"] for r in captions} == {
        f: r["caption_text"] for f, r in rows.items()
    }
    gold = collections.Counter(r["filename"] for r in read("bboxes_gold.csv"))
    assert gold == collections.Counter(
        f for f, r in rows.items() for b in r["bboxes"] or [] if b["source"] == "gold"
    )
    for name in rows:  # same pixels in both layouts
        assert (root / "test" / name).read_bytes() == (
            sample_release / "images" / name
        ).read_bytes()


def test_pngs_are_480_grayscale(sample_release: Path) -> None:
    for path in sorted((sample_release / "images").iterdir()):
        with Image.open(path) as image:
            assert (image.size, image.mode, image.format) == ((480, 480), "L", "PNG")


def _box_tuple(box: dict) -> tuple[float, float, float, float]:
    return box["x"], box["y"], box["width"], box["height"]


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    width = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    height = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = width * height
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def test_boxes_inside_and_raters_close_to_gold(sample_release: Path) -> None:
    ious, missed = [], 0
    for row in _rows(sample_release):
        boxes = row["bboxes"] or []
        for box in boxes:
            x, y, w, h = _box_tuple(box)
            assert w > 0 and h > 0 and x >= 0 and y >= 0 and x + w <= 480 and y + h <= 480
            assert box["source"] in ("gold", "rater1", "rater2")
        gold = [_box_tuple(b) for b in boxes if b["source"] == "gold"]
        for rater in ("rater1", "rater2"):
            theirs = [_box_tuple(b) for b in boxes if b["source"] == rater]
            if gold and not theirs:
                missed += 1
            for box in theirs:
                ious.append(max(_iou(box, g) for g in gold))
    # Raters disagree a little with gold, never wildly: the median box overlaps well.
    assert ious and 0.5 < float(np.median(ious)) < 1.0
    assert min(ious) > 0.2
    assert missed < len(ious)


def test_lesion_pixels_match_caption_side_and_signal(sample_release: Path) -> None:
    checked = 0
    for row in _rows(sample_release):
        gold = [_box_tuple(b) for b in row["bboxes"] or [] if b["source"] == "gold"]
        caption = row["caption_text"]
        if not gold or "bilateral" in caption or "ring-enhancing" in caption:
            continue
        pixels = np.asarray(Image.open(sample_release / row["image_path"]), dtype=np.float64)
        brain = pixels[pixels > 0]
        x, y, w, h = max(gold, key=lambda b: b[2] * b[3])
        core = pixels[
            int(y + h * 0.35) : int(y + h * 0.65) + 1, int(x + w * 0.35) : int(x + w * 0.65) + 1
        ]
        # Radiological convention: the patient's left is on the image right (axial, coronal).
        if not caption.startswith("Sagittal"):
            if " left " in caption:
                assert x + w / 2 > 240, caption
            if " right " in caption:
                assert x + w / 2 < 240, caption
        if "hyperintense" in caption or "homogeneously enhancing" in caption:
            assert np.median(core) >= np.percentile(brain, 90), caption
            checked += 1
        elif "hypointense" in caption:
            assert np.median(core) <= np.percentile(brain, 35), caption
            checked += 1
    assert checked >= 10


def test_null_boxes_placeholder_and_case_counts(sample_release: Path) -> None:
    rows = _rows(sample_release)
    null_rows = [row for row in rows if row["bboxes"] is None]
    assert null_rows
    assert all("no focal abnormality" in row["caption_text"] for row in null_rows)
    diagnoses = {row["case_id"]: row["meta"]["final_diagnosis"] for row in rows}
    assert list(diagnoses.values()).count(PLACEHOLDER_DIAGNOSIS) == 1
    counts = collections.Counter(row["case_id"] for row in rows)
    assert sorted(counts) == [f"case{i:04d}" for i in range(1, 9)]
    assert sorted(counts.values()) == sorted(images_per_case(8, seed=0))


def test_images_per_case_follows_the_real_distribution() -> None:
    # 70*1 + 62*2 + 54*3 + 30*4 + 23*5 + 16*6 + 11*7 + 7*8 + 3*9 + 2*10 + 2*11 + 1*17 = 906.
    exact = images_per_case(281, seed=3)
    assert collections.Counter(exact) == collections.Counter(IMAGES_PER_CASE) and sum(exact) == 906
    # The size reports compare with ("not the NOVA release" otherwise) is this distribution's.
    assert NOVA_RELEASE_SIZE == (sum(exact), len(exact)) == (906, 281)
    assert exact != images_per_case(281, seed=4)  # same multiset, other order
    drawn = collections.Counter(images_per_case(40, seed=1))
    assert all(drawn[k] <= IMAGES_PER_CASE[k] for k in drawn)  # drawn without replacement
    assert collections.Counter(images_per_case(300, seed=0)[:281]) == collections.Counter(
        IMAGES_PER_CASE
    )


def test_reader_gives_identical_records_for_both_layouts(
    sample_release: Path, sample_release_legacy: Path
) -> None:
    from novabench.data.release import is_placeholder_diagnosis, read_release

    v1, legacy = read_release(sample_release), read_release(sample_release_legacy)
    assert (v1.layout, legacy.layout) == ("v1", "legacy")
    assert v1.extra_meta_keys == legacy.extra_meta_keys
    assert len(v1.images) == len(legacy.images) > 8

    def comparable(record: object) -> dict:
        fields = dataclasses.asdict(record)
        fields["image_path"] = Path(fields["image_path"]).name
        return fields

    assert [comparable(r) for r in v1.images] == [comparable(r) for r in legacy.images]
    assert sum(is_placeholder_diagnosis(case.final_diagnosis) for case in v1.cases()) == 1


def test_cli_sample_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nova"
    assert (
        main(["sample", str(out), "--cases", "2", "--seed", "1", "--layout", "legacy", "--quiet"])
        == 0
    )
    assert re.search(r"2 cases, \d+ images, \d+ gold boxes", capsys.readouterr().out)
    assert (out / "captions.csv").is_file()
    assert main(["sample", str(out), "--cases", "2", "--quiet"]) == 2  # exists
    assert "exists" in capsys.readouterr().err
    assert main(["sample", str(out), "--cases", "2", "--overwrite", "--quiet"]) == 0
    assert (out / "data" / "nova-v1.parquet").is_file() and not (out / "captions.csv").exists()
    assert main(["sample", str(tmp_path / "x"), "--cases", "0", "--quiet"]) == 2
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_281_cases_reproduce_906_images(tmp_path: Path) -> None:
    out = write_sample_release(tmp_path / "full", n_cases=281, seed=0, progress=False)
    rows = _rows(out)
    assert len(rows) == 906 and len({row["case_id"] for row in rows}) == 281
    counts = collections.Counter(collections.Counter(row["case_id"] for row in rows).values())
    assert counts == collections.Counter(IMAGES_PER_CASE)
