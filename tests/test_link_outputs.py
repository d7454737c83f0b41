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


# user17: `nova run --out LINK` appended the answers through the link while the manifest
# link was replaced by a regular file (the target's manifest left stale); a dangling link
# sent the answers to its target and the manifest beside the link.
RUN_WORDS = "nova run appends its answers through a link but writes the run manifest beside"


def _run_floor(sample_release: Path, out: Path) -> list[str]:
    return ["run", "--data", str(sample_release), "--baseline", "floor", "--task", "diagnosis",
            "--out", str(out), "--no-progress"]  # fmt: skip


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1, error
    return error[0]


def test_nova_run_refuses_a_linked_out_and_leaves_the_run_it_points_to_as_it_was(
    sample_release: Path, sample_floor_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target, link = _linked_copy(sample_floor_run, tmp_path)
    manifest_link = RunManifest.path_for(link)
    os.symlink(RunManifest.path_for(target), manifest_link)
    answers, manifest = target.read_bytes(), RunManifest.path_for(target).read_bytes()
    capsys.readouterr()
    assert main(_run_floor(sample_release, link)) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"nova run: error: {link}, field '--out': {LINK_WORDS}{target})")
    assert RUN_WORDS in line
    assert link.is_symlink() and manifest_link.is_symlink()
    assert target.read_bytes() == answers
    assert RunManifest.path_for(target).read_bytes() == manifest


def test_nova_run_refuses_a_dangling_link_and_writes_nothing(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "latest.jsonl"
    target = tmp_path / "runs" / "new.jsonl"
    os.symlink(target, link)
    capsys.readouterr()
    assert main(_run_floor(sample_release, link)) == 2
    assert f"{link}, field '--out': {LINK_WORDS}{target})" in _one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.jsonl"]


def test_nova_run_refuses_a_manifest_that_is_a_link(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.jsonl"
    elsewhere = tmp_path / "elsewhere.manifest.json"
    os.symlink(elsewhere, RunManifest.path_for(out))
    capsys.readouterr()
    assert main(_run_floor(sample_release, out)) == 2
    line = _one_error_line(capsys)
    assert f"field '--out (its manifest)': {LINK_WORDS}{elsewhere})" in line
    assert not out.exists() and not elsewhere.exists()


def test_evaluate_model_refuses_a_linked_run_file_before_asking_the_model(
    sample_release: Path, tmp_path: Path
) -> None:
    from novabench.errors import NovaInputError
    from novabench.evaluator import evaluate_model

    asked: list[object] = []

    def model(image: object, prompt: str) -> str:
        asked.append(prompt)
        return "no target"

    link = tmp_path / "run.jsonl"
    os.symlink(tmp_path / "runs" / "model.jsonl", link)
    with pytest.raises(NovaInputError) as refused:
        evaluate_model(model, sample_release, tasks=["localization"], run_file=link,
                       n_resamples=0, progress=False)  # fmt: skip
    message = str(refused.value)
    assert f"{link}, field 'run_file': {LINK_WORDS}" in message and RUN_WORDS in message
    assert asked == [] and not (tmp_path / "runs").exists()
