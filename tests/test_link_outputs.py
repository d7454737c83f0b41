"""An output path that is a symbolic link is refused for what it is (fixb14).

`nova parse --out LINK` said "exists already; ... pass --force", and with --force "is not a
predictions file novabench wrote (no run manifest beside it ...)", although the link pointed
at one, manifest and all: neither was the reason. Outputs are written whole and renamed into
place, which would replace the link itself and leave the file it points to as it was, so a
link is refused, saying so and where it points.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.run.manifest import RunManifest

LINK_WORDS = "is a symbolic link (to "


def _linked_copy(run: Path, folder: Path) -> tuple[Path, Path]:
    """A predictions file novabench wrote (with its manifest) and a link to it."""
    target = folder / "runs" / "parsed.jsonl"
    target.parent.mkdir()
    shutil.copyfile(run, target)
    shutil.copyfile(RunManifest.path_for(run), RunManifest.path_for(target))
    link = folder / "latest.jsonl"
    os.symlink(target, link)
    return target, link


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_nova_parse_refuses_a_linked_out_saying_it_is_a_link(
    sample_release: Path,
    sample_floor_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    force: list[str],
) -> None:
    target, link = _linked_copy(sample_floor_run, tmp_path)
    before = target.read_bytes()
    capsys.readouterr()
    arguments = ["parse", str(sample_floor_run), "--data", str(sample_release), "--out", str(link)]
    assert main([*arguments, *force]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1
    assert error[0].startswith(f"nova parse: error: {link}, field '--out': {LINK_WORDS}{target})")
    assert "renamed into place, which would replace the link" in error[0]
    assert link.is_symlink() and target.read_bytes() == before


def test_nova_evaluate_refuses_a_linked_report_out(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "latest.json"
    os.symlink(tmp_path / "reports" / "not-yet.json", link)  # a link to nothing yet, too
    capsys.readouterr()
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(sample_floor_run),
                 "--out", str(link), "--bootstrap", "0", "--task", "localization"]  # fmt: skip
    assert main(arguments) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and f"{link}, field '--out': {LINK_WORDS}" in error[0]
    assert link.is_symlink() and not (tmp_path / "reports").exists()
