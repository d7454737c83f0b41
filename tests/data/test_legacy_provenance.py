"""A legacy-layout (CSV) release novabench made says so, as the v1 parquet does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.data.export import export_release
from novabench.data.layouts.legacy import PROVENANCE_FILE
from novabench.data.release import read_release
from tests.release_factory import write_legacy_release

NOTICE = "NOT THE REAL DATA"


@pytest.fixture(scope="module")
def legacy_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh small legacy sample written by `nova sample`, as the new user made it."""
    folder = tmp_path_factory.mktemp("legacy") / "nova-legacy"
    assert main(["sample", str(folder), "--cases", "6", "--layout", "legacy", "--quiet"]) == 0
    return folder


def test_nova_sample_in_the_legacy_layout_records_its_provenance(legacy_sample: Path) -> None:
    release = read_release(legacy_sample)
    assert release.layout == "legacy"
    assert release.provenance == {"origin": "nova sample", "cases": 6, "seed": 0}
    assert release.warnings == []
    assert json.loads((legacy_sample / PROVENANCE_FILE).read_text()) == release.provenance


def test_run_and_evaluate_on_a_legacy_sample_show_the_synthetic_notice(
    legacy_sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "floor.jsonl"
    args = ["run", "--data", str(legacy_sample), "--task", "diagnosis", "--baseline", "floor"]
    assert main([*args, "--out", str(run), "--no-progress"]) == 0
    capsys.readouterr()  # the run's own summary
    out = tmp_path / "report.json"
    args = ["evaluate", "--data", str(legacy_sample), "--predictions", str(run)]
    assert main([*args, "--out", str(out), "--bootstrap", "0", "--markdown", str(out) + ".md"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith(f"notice: {NOTICE}")
    assert "`nova sample --cases 6 --seed 0`" in printed.splitlines()[0]
    report = json.loads(out.read_text())
    assert report["data"]["provenance"] == {"origin": "nova sample", "cases": 6, "seed": 0}
    assert NOTICE in Path(str(out) + ".md").read_text()


def test_the_sidecar_is_not_part_of_the_fingerprint(legacy_sample: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(legacy_sample, tmp_path / "copy")
    (copy / PROVENANCE_FILE).unlink()
    without = read_release(copy)
    assert without.provenance is None  # as the official legacy release reads
    assert without.fingerprint() == read_release(legacy_sample).fingerprint()


def test_an_official_legacy_release_has_no_sidecar_and_no_provenance(tmp_path: Path) -> None:
    root = write_legacy_release(tmp_path / "official", image_size=(64, 64))
    assert not (root / PROVENANCE_FILE).exists()
    release = read_release(root)
    assert release.provenance is None and release.warnings == []


@pytest.mark.parametrize(
    ("content", "kept", "warned"),
    [
        # Fields novabench does not write are dropped, as in the v1 metadata.
        (
            '{"origin": "nova sample", "cases": 6, "seed": 0, "token": "hf_abc"}',
            {"origin": "nova sample", "cases": 6, "seed": 0},
            "fields novabench does not write were dropped: ['token']",
        ),
        ('{"origin": "<b>made by me</b>"}', None, "origin novabench does not write"),
        ('{"origin": "nova sample"', None, "unreadable novabench provenance ignored"),
        ("", None, "unreadable novabench provenance ignored"),
        ('{"origin": "nova sample", "pad": "' + "x" * 5000 + '"}', None, "more than 4096 bytes"),
    ],
)
def test_a_sidecar_is_checked_as_the_v1_metadata_is(
    legacy_sample: Path, tmp_path: Path, content: str, kept: dict | None, warned: str
) -> None:
    copy = shutil.copytree(legacy_sample, tmp_path / "copy")
    (copy / PROVENANCE_FILE).write_text(content, encoding="utf-8")
    release = read_release(copy)
    assert release.provenance == kept
    assert [w for w in release.warnings if warned in w and PROVENANCE_FILE in w], release.warnings


def test_a_legacy_sample_export_carries_the_notice_to_the_card(
    legacy_sample: Path, tmp_path: Path
) -> None:
    out = tmp_path / "export"
    export_release(legacy_sample, out, progress=False)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "`nova sample --cases 6 --seed 0`" in card
    assert read_release(out).provenance == {"origin": "nova sample", "cases": 6, "seed": 0}
