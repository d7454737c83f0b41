"""`nova run` opens with the notice every report gives when the data is not the NOVA release."""

from __future__ import annotations

from pathlib import Path

import pytest

from novabench.cli import main
from tests.release_factory import with_v1_provenance, write_v1_release


def _run(data: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The stderr lines of a floor run of the diagnosis task on ``data``."""
    capsys.readouterr()
    args = ["run", "--data", str(data), "--task", "diagnosis", "--baseline", "floor"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    return capsys.readouterr().err.splitlines()


def test_a_run_on_the_sample_says_first_what_the_report_will_say_first(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "floor.jsonl"
    errors = _run(sample_release, run, capsys)

    assert len(errors) == 1 and errors[0].startswith("notice: NOT THE REAL DATA: Synthetic sample")
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(run)]
    assert main([*args, "--out", str(tmp_path / "r.json"), "--bootstrap", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == errors[0]  # one text, one function


@pytest.mark.parametrize(
    ("raw", "heading", "words"),
    [
        (b'{"origin": "nova ingest"}', "NOT THE NOVA RELEASE", "Built with `nova ingest`"),
        (b"not json", "NOT THE NOVA RELEASE", "could not be read"),  # a damaged record
    ],
)
def test_a_run_on_ingested_or_unreadable_data_says_it_is_not_the_release(
    sample_release: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    raw: bytes,
    heading: str,
    words: str,
) -> None:
    data = with_v1_provenance(sample_release, tmp_path / "data", raw)
    errors = _run(data, tmp_path / "floor.jsonl", capsys)

    notices = [line for line in errors if line.startswith("notice: ")]
    assert len(notices) == 1 and notices[0].startswith(f"notice: {heading}: ")
    assert words in notices[0]


def test_a_run_on_a_release_without_provenance_gives_no_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No novabench provenance in its parquet, as the official NOVA release reads.
    official = write_v1_release(tmp_path / "official", n_cases=2, image_size=(64, 64))

    assert _run(official, tmp_path / "floor.jsonl", capsys) == []


def test_a_refused_run_on_the_sample_is_still_one_line(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The notice comes once the run is checked: a refusal says only why."""
    capsys.readouterr()
    args = ["run", "--data", str(sample_release), "--task", "diagnosis", "--baseline", "nope"]
    assert main([*args, "--out", str(tmp_path / "floor.jsonl"), "--no-progress"]) == 2
    [error] = capsys.readouterr().err.splitlines()
    assert error.startswith("nova run: error: ") and "nope" in error
