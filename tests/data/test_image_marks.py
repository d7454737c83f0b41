"""The synthetic sample never passes as real NOVA, even once its provenance record is lost.

User21 rewrote a sample's parquet with pandas (``read_parquet(...).to_parquet(...)``): the
schema metadata holding ``novabench.provenance`` was gone, and ``nova evaluate`` printed no
notice and called its mAP@30 comparable with the paper. Every PNG novabench makes now
carries a mark (its ``Software`` text chunk) that such rewrites keep.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image

from novabench.cli import main
from novabench.data.layouts.legacy import PROVENANCE_FILE
from novabench.data.provenance import provenance_notice_line
from novabench.data.release import read_release

RECOVERED = {"origin": "nova sample", "cases": 4, "seed": 3, "recovered_from": "image marks"}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("marks") / "nova"
    assert main(["sample", str(folder), "--cases", "4", "--seed", "3", "--quiet"]) == 0
    return folder


@pytest.fixture(scope="module")
def rewritten(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's copy: the parquet read and written again by pandas, metadata lost."""
    import pandas as pd

    copy = Path(shutil.copytree(sample, tmp_path_factory.mktemp("pd") / "full_pd"))
    path = copy / "data" / "nova-v1.parquet"
    pd.read_parquet(path).to_parquet(path, index=False)
    return copy


def test_every_sample_png_names_what_made_it(sample: Path) -> None:
    for path in sorted((sample / "images").iterdir()):
        with Image.open(path) as image:  # PIL reads the text chunk on its own
            assert image.text["Software"] == (
                "novabench: nova sample --cases 4 --seed 3 (synthetic images, not NOVA data)"
            ), path.name


def test_the_rewrite_drops_the_record_but_the_sample_is_still_read_as_the_sample(
    rewritten: Path,
) -> None:
    assert b"novabench.provenance" not in (
        pq.read_schema(rewritten / "data" / "nova-v1.parquet").metadata or {}
    )
    release = read_release(rewritten)
    assert release.provenance == RECOVERED
    (note,) = [w for w in release.warnings if "no novabench provenance record" in w]
    n_images = len(list((rewritten / "images").iterdir()))
    assert note.startswith("data/nova-v1.parquet: ")
    assert f"all {n_images} images carry the mark of `nova sample`" in note


def test_evaluate_on_the_rewritten_sample_says_it_is_not_the_real_data(
    rewritten: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "floor.jsonl"
    args = ["run", "--data", str(rewritten), "--task", "localization", "--baseline", "floor"]
    assert main([*args, "--out", str(run), "--no-progress"]) == 0
    capsys.readouterr()
    out = tmp_path / "report.json"
    args = ["evaluate", "--data", str(rewritten), "--predictions", str(run), "--bootstrap", "0"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    first = printed[0]
    assert first.startswith("notice: NOT THE REAL DATA: ")
    (row,) = [line for line in printed if line.split()[:2] == ["localization", "mAP@30"]]
    assert row.endswith("no: not NOVA")  # user21 saw "yes": comparable with the paper
    assert "`nova sample --cases 4 --seed 3`" in first
    assert "recovered from the marks in its images" in first
    assert json.loads(out.read_text())["data"]["provenance"] == RECOVERED


def test_a_legacy_sample_without_its_sidecar_is_still_the_sample(tmp_path: Path) -> None:
    folder = tmp_path / "legacy"
    args = ["sample", str(folder), "--cases", "2", "--layout", "legacy", "--quiet"]
    assert main(args) == 0
    (folder / PROVENANCE_FILE).unlink()
    release = read_release(folder)
    assert release.provenance == {
        "origin": "nova sample",
        "cases": 2,
        "seed": 0,
        "recovered_from": "image marks",
    }


def test_an_export_of_the_rewritten_sample_carries_the_recovered_origin(
    rewritten: Path, tmp_path: Path
) -> None:
    out = tmp_path / "export"
    assert main(["export", str(rewritten), str(out), "--quiet"]) == 0
    assert read_release(out).provenance == RECOVERED
    assert "Synthetic sample made by novabench" in (out / "README.md").read_text()


def _unmarked(path: Path) -> None:
    """The same pixels saved again without any text chunk (another tool's PNG)."""
    with Image.open(path) as image:
        pixels = image.copy()
    buffer = io.BytesIO()
    pixels.save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())


def test_a_release_only_partly_marked_is_not_the_official_release(
    rewritten: Path, tmp_path: Path
) -> None:
    mixed = Path(shutil.copytree(rewritten, tmp_path / "mixed"))
    names = sorted(p.name for p in (mixed / "images").iterdir())
    for name in names[1:]:
        _unmarked(mixed / "images" / name)
    release = read_release(mixed)
    assert release.provenance == {
        "origin": "images partly made by novabench",
        "marked_images": 1,
        "images": len(names),
    }
    assert any(
        f"1 of the {len(names)} images carries novabench's mark" in w for w in release.warnings
    )
    line = provenance_notice_line(release.provenance)
    assert line.startswith(f"notice: NOT THE NOVA RELEASE: 1 of its {len(names)} images carries ")
    # two marked images: the plural (user23 read "1 of its 132 images carry")
    two = {**release.provenance, "marked_images": 2}
    assert f"2 of its {len(names)} images carry the mark" in provenance_notice_line(two)


def test_unmarked_images_read_as_the_official_release(rewritten: Path, tmp_path: Path) -> None:
    plain = Path(shutil.copytree(rewritten, tmp_path / "plain"))
    for path in (plain / "images").iterdir():
        _unmarked(path)
    release = read_release(plain)
    assert release.provenance is None
    assert not any("provenance" in w for w in release.warnings)


def _mark_moved(path: Path, how: str) -> None:
    """The same pixels and mark, the mark in a zTXt or iTXt chunk (as exiftool or an
    optimiser may leave it), or gone (PIL's plain re-save)."""
    from PIL import PngImagePlugin

    with Image.open(path) as image:
        text = image.text["Software"]
        pixels = image.copy()
    info = PngImagePlugin.PngInfo()
    if how == "zTXt":
        info.add_text("Software", text, zip=True)
    else:
        info.add_itxt("Software", text, zip=how == "iTXt-compressed")
    buffer = io.BytesIO()
    pixels.save(buffer, format="PNG", pnginfo=info)
    assert how[:4].encode() in buffer.getvalue() and b"tEXt" not in buffer.getvalue()
    path.write_bytes(buffer.getvalue())


@pytest.mark.parametrize("how", ["zTXt", "iTXt", "iTXt-compressed"])
def test_a_sample_whose_marks_moved_to_another_text_chunk_is_still_the_sample(
    rewritten: Path, tmp_path: Path, how: str
) -> None:
    """user23: after exiftool moved the marks, the rewritten sample read as the official
    release (`mAP@30 47.6 yes`)."""
    moved = Path(shutil.copytree(rewritten, tmp_path / how))
    for path in (moved / "images").iterdir():
        _mark_moved(path, how)
    assert read_release(moved).provenance == RECOVERED
