"""Ingest: hand-made NIfTI volumes with lesions whose boxes are computed by hand."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nibabel as nib
import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from novabench.cli import main
from novabench.data.ingest import IngestCase, IngestSeries, ingest_volumes, read_manifest
from novabench.data.release import read_release
from novabench.errors import NovaInputError

SHAPE = (20, 40, 10)  # x (left->right), y (posterior->anterior), z (inferior->superior)
CUBE = (slice(4, 8), slice(10, 14), slice(3, 7))  # x 4..7, y 10..13, z 3..6


def _volume(
    zooms: tuple[float, float, float] = (1.0, 1.0, 1.0),
) -> tuple[nib.Nifti1Image, nib.Nifti1Image]:
    """A grey box of tissue with a bright cubic lesion, and the lesion mask, in RAS."""
    data = np.zeros(SHAPE, dtype=np.float32)
    data[1:19, 1:39, 1:9] = 100.0
    data[CUBE] = 200.0
    mask = np.zeros(SHAPE, dtype=np.uint8)
    mask[CUBE] = 1
    affine = np.diag([*zooms, 1.0])
    return nib.Nifti1Image(data, affine), nib.Nifti1Image(mask, affine)


def _case(series: list[IngestSeries], case_id: str = "case0001", **meta: str) -> IngestCase:
    fields = {
        "title": "Cube",
        "clinical_history": "A synthetic test.",
        "final_diagnosis": "Cubic lesion",
    }
    fields.update(meta)
    return IngestCase(case_id, series, **fields)


def _rows(root: Path) -> dict[str, dict]:
    return {
        row["filename"]: row for row in pq.read_table(root / "data" / "nova-v1.parquet").to_pylist()
    }


def _gold(row: dict) -> list[list[float]]:
    return [
        [b["x"], b["y"], b["width"], b["height"]]
        for b in row["bboxes"] or []
        if b["source"] == "gold"
    ]


def test_axial_box_of_a_cube_matches_hand_computation(tmp_path: Path) -> None:
    volume, mask = _volume()
    series = IngestSeries(volume, plane="axial", caption="Axial T1.", mask=mask)
    out = ingest_volumes([_case([series])], tmp_path / "rel", slices_per_lesion=2, progress=False)
    rows = _rows(out)
    # Axial display: rows = y reversed (40 voxels), cols = x reversed (20 voxels), 1 mm each.
    # 480 / 40 mm = 12 px/mm -> 240 x 480 image, padded by (480 - 240) / 2 = 120 px on the left.
    # x 4..7 -> columns 19-7..19-4 = 12..15 -> x = 120 + 12*12 = 264, width = 4*12 = 48.
    # y 10..13 -> rows 39-13..39-10 = 26..29 -> y = 26*12 = 312, height = 4*12 = 48.
    assert sorted(rows) == ["case0001_001.png", "case0001_002.png"]
    for row in rows.values():
        assert _gold(row) == [[264.0, 312.0, 48.0, 48.0]]
    # The two slices are the largest-area one (z=3, first of four equal) and the farthest (z=6):
    # both hold the lesion; the PNG is white inside the box (one voxel = 12 px in from its edge,
    # clear of bicubic smoothing) and black in the padding.
    pixels = np.asarray(Image.open(out / "images" / "case0001_001.png"))
    assert pixels.shape == (480, 480)
    assert pixels[312 + 12 : 312 + 36, 264 + 12 : 264 + 36].min() == 255
    assert pixels[:, :120].max() == 0 and pixels[:, 360:].max() == 0
    # The parquet says who made it (schema metadata; official readers ignore the key).
    assert read_release(out).provenance == {"origin": "nova ingest"}


def test_coronal_anisotropic_voxels_keep_aspect(tmp_path: Path) -> None:
    volume, mask = _volume(zooms=(1.0, 1.0, 3.0))
    series = IngestSeries(volume, plane="coronal", caption="Coronal T2.", mask=mask)
    out = ingest_volumes([_case([series])], tmp_path / "rel", progress=False)
    # Coronal display: rows = z reversed (10 voxels x 3 mm = 30 mm), cols = x reversed (20 mm).
    # 480 / 30 mm = 16 px/mm -> 320 x 480, pad_x = 80; 16 px per column, 48 px per row.
    # x 4..7 -> cols 12..15 -> x = 80 + 12*16 = 272, w = 64; z 3..6 -> rows 9-6..9-3 = 3..6 -> y = 144, h = 192.
    (row,) = _rows(out).values()
    assert _gold(row) == [[272.0, 144.0, 64.0, 192.0]]


def test_sagittal_shows_anterior_on_the_left(tmp_path: Path) -> None:
    volume, mask = _volume()
    series = IngestSeries(volume, plane="sagittal", caption="Sagittal T1.", mask=mask)
    out = ingest_volumes([_case([series])], tmp_path / "rel", progress=False)
    # Sagittal: rows = z reversed (10 mm), cols = y reversed (40 mm): 12 px/mm, 480 x 120, pad_y = 180.
    # y 10..13 -> cols 39-13..39-10 = 26..29 -> x = 312, w = 48; z 3..6 -> rows 3..6 -> y = 180 + 36 = 216, h = 48.
    (row,) = _rows(out).values()
    assert _gold(row) == [[312.0, 216.0, 48.0, 48.0]]


def test_non_ras_volume_is_reoriented_first(tmp_path: Path) -> None:
    volume, mask = _volume()
    # The same head stored left-to-right flipped (LAS): the canonical view must not change.
    flip = np.diag([-1.0, 1.0, 1.0, 1.0])
    flip[0, 3] = SHAPE[0] - 1
    las_volume = nib.Nifti1Image(np.asarray(volume.dataobj)[::-1].copy(), flip)
    las_mask = nib.Nifti1Image(np.asarray(mask.dataobj)[::-1].copy(), flip)
    series = IngestSeries(las_volume, plane="axial", caption="Axial T1.", mask=las_mask)
    out = ingest_volumes([_case([series])], tmp_path / "rel", progress=False)
    (row,) = _rows(out).values()
    assert _gold(row) == [[264.0, 312.0, 48.0, 48.0]]


def test_two_lesions_raters_and_null_boxes(tmp_path: Path) -> None:
    volume, mask = _volume()
    data = np.asarray(mask.dataobj).copy()
    data[12:16, 10:14, 3:7] = 1  # a second cube, same y and z, x 12..15
    two = nib.Nifti1Image(data, mask.affine)
    rater = np.zeros(SHAPE, dtype=np.uint8)
    rater[12:17, 10:14, 3:7] = 1  # the rater marks only the second cube, one voxel wider
    series = [
        IngestSeries(
            volume,
            plane="axial",
            caption="Axial T1.",
            mask=two,
            n_slices=1,
            rater_masks={"rater1": nib.Nifti1Image(rater, mask.affine)},
        ),
        IngestSeries(
            volume, plane="axial", caption="Axial T1, no lesion here.", mask=two, slice_indices=[8]
        ),
        IngestSeries(volume, plane="axial", caption="Axial T1 without a mask."),
    ]
    out = ingest_volumes([_case(series)], tmp_path / "rel", progress=False)
    rows = _rows(out)
    first = rows["case0001_001.png"]
    # Second cube: x 12..15 -> cols 19-15..19-12 = 4..7 -> x = 120 + 4*12 = 168.
    assert _gold(first) == [[168.0, 312.0, 48.0, 48.0], [264.0, 312.0, 48.0, 48.0]]
    # Rater: x 12..16 -> cols 3..7 -> x = 120 + 36 = 156, w = 60.
    assert [
        [b["x"], b["y"], b["width"], b["height"]]
        for b in first["bboxes"]
        if b["source"] == "rater1"
    ] == [[156.0, 312.0, 60.0, 48.0]]
    assert rows["case0001_002.png"]["bboxes"] is None  # z = 8 holds no lesion voxel
    assert rows["case0001_003.png"]["bboxes"] is None  # no mask at all
    assert rows["case0001_003.png"]["caption_text"] == "Axial T1 without a mask."


def test_legacy_layout_tables(tmp_path: Path) -> None:
    volume, mask = _volume()
    series = IngestSeries(volume, plane="axial", caption='Axial T1, "quoted", ünïcode.', mask=mask)
    case = _case([series], publication_date="24.09.2018", extras={"link": "https://example.org/x"})
    out = ingest_volumes([case], tmp_path / "rel", layout="legacy", progress=False)
    assert sorted(p.name for p in out.iterdir()) == [
        ".novabench-output.json",
        "bboxes_gold.csv",
        "bboxes_raters.csv",
        "captions.csv",
        "case_metadata.csv",
        "novabench_provenance.json",  # what made it (CSV carries no metadata)
        "test",
    ]
    assert (out / "test" / "case0001_001.png").is_file()
    assert json.loads((out / "novabench_provenance.json").read_text()) == {"origin": "nova ingest"}
    assert read_release(out).provenance == {"origin": "nova ingest"}

    def read(name: str) -> list[list[str]]:
        with (out / name).open(encoding="utf-8", newline="") as handle:
            return list(csv.reader(handle))

    assert read("captions.csv") == [
        ["filename", "case_id", "scan_id", "caption"],
        ["case0001_001.png", "case0001", "001", 'Axial T1, "quoted", ünïcode.'],
    ]
    assert read("case_metadata.csv") == [
        ["case_id", "title", "publication_date", "clinical_history", "final_diagnosis", "link"],
        [
            "case0001",
            "Cube",
            "24.09.2018",
            "A synthetic test.",
            "Cubic lesion",
            "https://example.org/x",
        ],
    ]
    assert read("bboxes_gold.csv") == [
        ["filename", "x", "y", "width", "height"],
        ["case0001_001.png", "264.0", "312.0", "48.0", "48.0"],
    ]
    assert read("bboxes_raters.csv") == [["filename", "rater", "x", "y", "width", "height"]]


def _leaves_nothing(parent: Path) -> bool:
    return not any(parent.iterdir())


def test_missing_volume_raises_and_writes_nothing(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    series = IngestSeries(tmp_path / "absent.nii.gz", caption="Axial FLAIR.")
    with pytest.raises(NovaInputError, match="not found") as error:
        ingest_volumes([_case([series])], parent / "out", progress=False)
    assert error.value.field == "series[0].volume" and "case0001" in error.value.record
    assert _leaves_nothing(parent)


def test_unreadable_volume_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nii.gz"
    bad.write_bytes(b"not a nifti file")
    with pytest.raises(NovaInputError, match="cannot read"):
        ingest_volumes([_case([IngestSeries(bad, caption="x")])], tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_non_volume_image_file_raises(tmp_path: Path) -> None:
    # nibabel reads a GIFTI surface fine, but it has no voxel grid (it used to fail with AttributeError).
    surface = tmp_path / "surface.gii"
    nib.save(
        nib.gifti.GiftiImage(darrays=[nib.gifti.GiftiDataArray(np.zeros(5, np.float32))]), surface
    )
    with pytest.raises(NovaInputError, match="GiftiImage, not a volume") as error:
        ingest_volumes(
            [_case([IngestSeries(surface, caption="x")])], tmp_path / "out", progress=False
        )
    assert error.value.field == "series[0].volume"
    assert not (tmp_path / "out").exists()


def test_mask_shape_mismatch_raises_after_partial_work(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    volume, mask = _volume()
    good = IngestSeries(volume, caption="Axial T1.", mask=mask)
    wrong = IngestSeries(
        volume,
        caption="Axial T1.",
        mask=nib.Nifti1Image(np.zeros((20, 40, 9), np.uint8), np.eye(4)),
    )
    # The first case's PNG is already written when the second fails: nothing may remain.
    with pytest.raises(NovaInputError, match="differs from the volume shape") as error:
        ingest_volumes(
            [_case([good]), _case([wrong], case_id="case0002")], parent / "out", progress=False
        )
    assert error.value.field == "series[0].mask"
    assert _leaves_nothing(parent)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"final_diagnosis": "  "}, "empty text"),
        ({"case_id": "case_1"}, "case id must be"),
        ({"plane": "oblique"}, "plane must be one of"),
        ({"n_slices": 5}, "touch only 4 slices"),
        ({"slice_indices": [10]}, "slice indices must be"),
    ],
)
def test_bad_case_fields(tmp_path: Path, change: dict, message: str) -> None:
    volume, mask = _volume()
    series_fields = {
        k: change.pop(k) for k in ("plane", "n_slices", "slice_indices") if k in change
    }
    series = IngestSeries(volume, caption="Axial T1.", mask=mask, **series_fields)
    case_id = change.pop("case_id", "case0001")
    with pytest.raises(NovaInputError, match=message):
        ingest_volumes(
            [_case([series], case_id=case_id, **change)], tmp_path / "out", progress=False
        )
    assert not (tmp_path / "out").exists()


def test_existing_output_needs_overwrite(tmp_path: Path) -> None:
    volume, mask = _volume()
    case = _case([IngestSeries(volume, caption="Axial T1.", mask=mask)])
    out = tmp_path / "rel"
    out.mkdir()
    (out / "old.txt").write_text("keep me unless overwriting")
    with pytest.raises(NovaInputError, match="exists"):
        ingest_volumes([case], out, progress=False)
    with pytest.raises(NovaInputError, match="was not written by `nova ingest`"):
        ingest_volumes([case], out, overwrite=True, progress=False)  # a folder of the user's
    assert [p.name for p in out.iterdir()] == ["old.txt"]
    (out / "old.txt").unlink()
    ingest_volumes([case], out, progress=False, overwrite=True)  # empty: nothing to lose
    (out / "old.txt").write_text("added to our own release")
    ingest_volumes([case], out, overwrite=True, progress=False)
    assert not (out / "old.txt").exists() and (out / "data" / "nova-v1.parquet").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel"]  # no staging or trash left


def _write_manifest_inputs(folder: Path) -> None:
    volume, mask = _volume()
    nib.save(volume, folder / "t1.nii.gz")
    nib.save(mask, folder / "mask.nii.gz")


def test_manifest_json_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_manifest_inputs(tmp_path)
    manifest = tmp_path / "cases.json"
    case = {
        "title": "Cube",
        "clinical_history": "History.",
        "final_diagnosis": "Cube disease",
        "publication_date": "01.02.2020",
        "extras": {"differential_diagnosis": "A; B"},
        "series": [
            {
                "volume": "t1.nii.gz",
                "mask": "mask.nii.gz",
                "plane": "axial",
                "sequence": "T1-weighted",
            }
        ],
    }
    manifest.write_text(json.dumps({"cases": [case, {**case, "title": "Cube 2"}]}))
    cases = read_manifest(manifest)
    assert [c.case_id for c in cases] == ["case0001", "case0002"]
    assert cases[0].series[0].volume == str(tmp_path / "t1.nii.gz")  # relative to the manifest

    assert main(["ingest", str(manifest), str(tmp_path / "out"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "2 cases, 2 images, 2 gold boxes, 0 images without gold box" in printed
    row = _rows(tmp_path / "out")["case0002_001.png"]
    assert row["caption_text"] == "Axial T1-weighted."
    assert row["meta"]["title"] == "Cube 2" and row["meta"]["differential_diagnosis"] == "A; B"
    assert main(["ingest", str(manifest), str(tmp_path / "out"), "--quiet"]) == 2  # exists


def test_manifest_jsonl_and_errors(tmp_path: Path) -> None:
    _write_manifest_inputs(tmp_path)
    good = {
        "case_id": "case0007",
        "title": "T",
        "clinical_history": "H",
        "final_diagnosis": "D",
        "series": [{"volume": "t1.nii.gz", "caption": "Axial T1."}],
    }
    manifest = tmp_path / "cases.jsonl"
    manifest.write_text(
        json.dumps(good) + "\n\n" + json.dumps({**good, "case_id": "case0008"}) + "\n"
    )
    assert [c.case_id for c in read_manifest(manifest)] == ["case0007", "case0008"]

    manifest.write_text(json.dumps({**good, "title": ""}) + "\n")
    with pytest.raises(NovaInputError, match="empty text") as error:
        read_manifest(manifest)
    assert error.value.field == "title"
    manifest.write_text(json.dumps({**good, "series": []}) + "\n")
    with pytest.raises(NovaInputError, match="non-empty list"):
        read_manifest(manifest)
    manifest.write_text(
        json.dumps({**good, "series": [{"volume": "t1.nii.gz", "colour": "red"}]}) + "\n"
    )
    with pytest.raises(NovaInputError, match="unknown keys"):
        read_manifest(manifest)
    manifest.write_text("{not json")
    with pytest.raises(NovaInputError, match="invalid JSON"):
        read_manifest(manifest)
    manifest.write_text("")
    with pytest.raises(NovaInputError, match="no cases"):
        read_manifest(manifest)
    assert main(["ingest", str(tmp_path / "absent.json"), str(tmp_path / "out"), "--quiet"]) == 2
    assert not (tmp_path / "out").exists()


def _nan_background_volume(path: Path) -> Path:
    """The test volume with NaN outside the tissue, a tissue ramp and one infinite voxel, saved."""
    volume, _ = _volume()
    data = np.asarray(volume.dataobj).copy()
    tissue = data == 100.0
    data[tissue] = np.broadcast_to(np.linspace(50.0, 150.0, SHAPE[1])[None, :, None], SHAPE)[tissue]
    data[data == 0.0] = np.nan
    data[2, 30, 8] = np.inf  # away from the lesion's slices
    nib.save(nib.Nifti1Image(data, volume.affine), path)
    return path


def test_nan_and_inf_voxels_are_masked_out_of_the_window(tmp_path: Path) -> None:
    from novabench.data.slicing import intensity_window

    path = _nan_background_volume(tmp_path / "t1.nii.gz")
    _, mask = _volume()
    series = IngestSeries(path, plane="axial", caption="Axial T1.", mask=mask, slice_indices=[4])
    out = ingest_volumes([_case([series])], tmp_path / "rel", progress=False)
    pixels = np.asarray(Image.open(out / "images" / "case0001_001.png"))
    # Same geometry as the cube test: the lesion box is [264, 312, 48, 48], the image 240 px wide.
    assert pixels[312 + 12 : 312 + 36, 264 + 12 : 264 + 36].min() == 255  # lesion at the window top
    tissue = pixels[24:300, 132:348]  # tissue rows above the lesion, inside the NaN border
    assert 0 < tissue.min() and tissue.max() < 255 and tissue.std() > 10  # the ramp, not black
    assert pixels[:, :120].max() == 0  # padding stays black
    # The window is the percentiles of the finite foreground, computed here independently.
    data = np.asarray(nib.load(path).dataobj)
    finite = data[np.isfinite(data)]
    expected = np.percentile(finite[finite > finite.min()], (0.5, 99.5))
    assert intensity_window(data, (0.5, 99.5)) == tuple(float(v) for v in expected)


def test_slice_without_finite_voxels_is_refused_naming_file_slice_and_case(tmp_path: Path) -> None:
    volume, mask = _volume()
    data = np.asarray(volume.dataobj).copy()
    data[:, :, 0] = np.nan
    path = tmp_path / "t1.nii.gz"
    nib.save(nib.Nifti1Image(data, volume.affine), path)
    parent = tmp_path / "parent"
    parent.mkdir()
    series = IngestSeries(path, plane="axial", caption="Axial T1.", slice_indices=[5, 0])
    with pytest.raises(NovaInputError, match="no finite voxel") as error:
        ingest_volumes([_case([series], case_id="case0007")], parent / "out", progress=False)
    assert "slice 0 (axial)" in error.value.message and str(path) in error.value.message
    assert "case0007" in error.value.record and error.value.field == "series[0].volume"
    assert _leaves_nothing(parent)


def test_gold_box_over_no_data_is_refused(tmp_path: Path) -> None:
    volume, mask = _volume()
    data = np.asarray(volume.dataobj).copy()
    data[CUBE] = np.nan  # the lesion mask lies on voxels without data
    image = nib.Nifti1Image(data, volume.affine)
    series = IngestSeries(image, plane="axial", caption="Axial T1.", mask=mask)
    with pytest.raises(NovaInputError, match="over no data") as error:
        ingest_volumes([_case([series])], tmp_path / "out", progress=False)
    assert "[264.0, 312.0, 48.0, 48.0]" in error.value.message
    assert "slice 3 (axial)" in error.value.message
    assert "case0001" in error.value.record and error.value.field == "series[0].mask"


def test_a_lone_surrogate_in_a_manifest_text_is_refused_before_any_volume_is_read(
    tmp_path: Path,
) -> None:
    # "\ud800" is valid JSON but no Unicode text: the release's Parquet could not hold it.
    manifest = tmp_path / "cases.json"
    manifest.write_text(
        '[{"title": "Cube \\ud800", "clinical_history": "Headache.", "final_diagnosis": "D",'
        ' "series": [{"volume": "missing.nii.gz", "caption": "Axial T1."}]}]'
    )
    with pytest.raises(NovaInputError, match="lone surrogate U\\+D800") as error:
        read_manifest(manifest)
    assert (error.value.record, error.value.field) == ("case 'case0001'", "title")


def test_ingest_names_a_bad_image_size_with_its_bound(tmp_path: Path) -> None:
    volume, mask = _volume()
    case = _case([IngestSeries(volume, caption="Axial T1.", mask=mask)])
    for size in (4, True, 64.0):
        with pytest.raises(NovaInputError, match="must be an integer >= 8") as error:
            ingest_volumes([case], tmp_path / "out", image_size=size, progress=False)
        assert error.value.field == "image_size"
    assert not (tmp_path / "out").exists()


# The manifest reader must work where numpy cannot be imported (a fresh interpreter with
# numpy blocked), as checking a manifest reads no image.
_READ_MANIFEST_WITHOUT_NUMPY = """
import sys

class NoNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("numpy is blocked in this test")

sys.meta_path.insert(0, NoNumpy())
from novabench.data.case_manifest import read_manifest

cases = read_manifest(sys.argv[1])
print(cases[0].case_id, cases[0].series[0].n_slices, "numpy" in sys.modules)
"""


def test_the_manifest_reader_needs_no_numpy_and_keeps_its_old_import_path(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import novabench.data.case_manifest as case_manifest

    assert read_manifest is case_manifest.read_manifest  # novabench.data.ingest re-exports it
    manifest = tmp_path / "cases.json"
    manifest.write_text(
        json.dumps(
            [
                {
                    "case_id": "case0042",
                    "title": "Susac syndrome",
                    "clinical_history": "Headache and hearing loss.",
                    "final_diagnosis": "Susac syndrome",
                    "series": [
                        {"volume": "flair.nii.gz", "caption": "Sagittal FLAIR.", "n_slices": 2}
                    ],
                }
            ]
        )
    )
    source = Path(case_manifest.__file__).resolve().parents[2]
    finished = subprocess.run(
        [sys.executable, "-c", _READ_MANIFEST_WITHOUT_NUMPY, str(manifest)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(source)},
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.split() == ["case0042", "2", "False"]


@pytest.mark.parametrize("name", ["gold", "Gold", "GOLD"])
def test_a_rater_named_gold_in_any_case_is_refused(tmp_path: Path, name: str) -> None:
    # user19: a source "Gold" in the written release would be neither gold nor plainly a rater.
    volume, mask = _volume()
    series = IngestSeries(volume, caption="Axial T1.", mask=mask, rater_masks={name: mask})
    with pytest.raises(NovaInputError, match="not 'gold' in any case"):
        ingest_volumes([_case([series])], tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()
