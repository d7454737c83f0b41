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
from tests.release_factory import with_v1_provenance, write_legacy_release

NOTICE = "NOT THE REAL DATA"
UNREADABLE = {"origin": "unreadable novabench provenance"}


@pytest.fixture(scope="module")
def legacy_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh small legacy sample written by `nova sample`, as the new user made it (two
    cases: what it records does not depend on how many, and six cost 0.3 CPU s more)."""
    folder = tmp_path_factory.mktemp("legacy") / "nova-legacy"
    assert main(["sample", str(folder), "--cases", "2", "--layout", "legacy", "--quiet"]) == 0
    return folder


def test_nova_sample_in_the_legacy_layout_records_its_provenance(legacy_sample: Path) -> None:
    release = read_release(legacy_sample)
    assert release.layout == "legacy"
    assert release.provenance == {"origin": "nova sample", "cases": 2, "seed": 0}
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
    assert "`nova sample --cases 2 --seed 0`" in printed.splitlines()[0]
    report = json.loads(out.read_text())
    assert report["data"]["provenance"] == {"origin": "nova sample", "cases": 2, "seed": 0}
    assert NOTICE in Path(str(out) + ".md").read_text()


def test_the_sidecar_is_not_part_of_the_fingerprint(legacy_sample: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(legacy_sample, tmp_path / "copy")
    (copy / PROVENANCE_FILE).unlink()
    without = read_release(copy)
    # no record: what the images' marks say (the official legacy release's carry none)
    assert without.provenance == {
        "origin": "nova sample",
        "cases": 2,
        "seed": 0,
        "recovered_from": "image marks",
    }
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
            '{"origin": "nova sample", "cases": 2, "seed": 0, "token": "hf_abc"}',
            {"origin": "nova sample", "cases": 2, "seed": 0},
            "fields novabench does not write were dropped: ['token']",
        ),
        # Present but unreadable: still data novabench made, never the official release.
        ('{"origin": "<b>made by me</b>"}', UNREADABLE, "not an origin novabench writes"),
        ('{"origin": "nova sample"', UNREADABLE, "unreadable novabench provenance"),
        ("", UNREADABLE, "unreadable novabench provenance"),
        ("[1, 2]", UNREADABLE, "not a JSON object"),
        ('"nova sample"', UNREADABLE, "not a JSON object"),
        (
            '{"origin": "nova sample", "pad": "' + "x" * 5000 + '"}',
            UNREADABLE,
            "more than 4096 bytes",
        ),
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
    assert "`nova sample --cases 2 --seed 0`" in card
    assert read_release(out).provenance == {"origin": "nova sample", "cases": 2, "seed": 0}


@pytest.mark.parametrize("kind", ["directory", "dangling symlink"])
def test_a_sidecar_that_is_no_file_still_marks_the_data_as_novabenchs(
    legacy_sample: Path, tmp_path: Path, kind: str
) -> None:
    copy = shutil.copytree(legacy_sample, tmp_path / "copy")
    (copy / PROVENANCE_FILE).unlink()
    if kind == "directory":
        (copy / PROVENANCE_FILE).mkdir()
    else:
        (copy / PROVENANCE_FILE).symlink_to(tmp_path / "gone.json")
    release = read_release(copy)
    assert release.provenance == UNREADABLE
    assert [w for w in release.warnings if "not the NOVA release" in w], release.warnings


def test_a_damaged_sidecar_puts_the_notice_first_in_every_report(
    legacy_sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The new user's case: an empty sidecar left the report silent, beside the published figures."""
    copy = shutil.copytree(legacy_sample, tmp_path / "copy")
    (copy / PROVENANCE_FILE).write_text("", encoding="utf-8")
    run = tmp_path / "floor.jsonl"
    args = ["run", "--data", str(copy), "--task", "diagnosis", "--baseline", "floor"]
    assert main([*args, "--out", str(run), "--no-progress"]) == 0
    out = tmp_path / "report.json"
    args = ["evaluate", "--data", str(copy), "--predictions", str(run), "--out", str(out)]
    outputs = ["--markdown", str(tmp_path / "r.md"), "--html", str(tmp_path / "r.html")]
    capsys.readouterr()
    assert main([*args, *outputs, "--bootstrap", "0"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("notice: NOT THE NOVA RELEASE: ")
    assert "novabench provenance record" in first and "could not be read" in first
    assert "published figures are on the real NOVA release and are not comparable" in first
    assert json.loads(out.read_text())["data"]["provenance"] == UNREADABLE
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8").splitlines()
    assert any("NOT THE NOVA RELEASE" in line for line in markdown[:4]), markdown[:4]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    box = page[page.index('id="warnings"') :]
    assert box.index("NOT THE NOVA RELEASE") < box.index("</ul>")


def test_a_v1_parquet_with_invalid_novabench_metadata_is_marked_too(
    sample_release: Path, tmp_path: Path
) -> None:
    release = read_release(with_v1_provenance(sample_release, tmp_path / "copy", b"[1, 2]"))
    assert release.provenance == UNREADABLE
    assert [w for w in release.warnings if "not a JSON object" in w], release.warnings
