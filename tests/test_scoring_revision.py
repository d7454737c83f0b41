"""Which rules and which build scored a report: the scoring revision and the source digest.

The package version did not change with every change that moved a score (CHANGELOG.md lists
dozens under 0.1.0), so a report records the scoring revision, one per such change, and the
SHA-256 of the package's files.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from novabench._version import SCORING_REVISION, source_sha256, toolkit_record
from tests.report.board_edits import diagnosis_only_report

ROOT = Path(__file__).resolve().parents[1]


def _score_moving_entries(changelog: str) -> int:
    """Top-level entries of every section that lists changes that moved a score."""
    sections = re.split(r"^#{2,3} ", changelog, flags=re.MULTILINE)
    moving = [
        section
        for section in sections
        if section.startswith(("Changes that move scores", "Score-moving changes"))
    ]
    assert len(moving) >= 2, "the CHANGELOG's score-moving sections were not found"
    return sum(len(re.findall(r"^- ", section, flags=re.MULTILINE)) for section in moving)


def test_every_change_that_moved_a_score_raised_the_scoring_revision() -> None:
    entries = _score_moving_entries((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert SCORING_REVISION == entries, (
        f"CHANGELOG.md lists {entries} changes that move scores; set SCORING_REVISION in "
        "src/novabench/_version.py to that number"
    )


def test_the_source_digest_names_the_files_and_their_bytes(tmp_path: Path) -> None:
    package = ROOT / "src" / "novabench"
    copy = tmp_path / "novabench"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert source_sha256(copy) == source_sha256(package) == toolkit_record()["source_sha256"]
    compiled = copy / "__pycache__" / "x.cpython-311.pyc"
    compiled.parent.mkdir()
    compiled.write_bytes(b"not source")  # caches are no part of a build
    assert source_sha256.__wrapped__(copy) == source_sha256(package)
    rule = copy / "metrics" / "localization.py"
    rule.write_text(rule.read_text(encoding="utf-8").replace("0.3", "0.31", 1), encoding="utf-8")
    edited = source_sha256.__wrapped__(copy)
    assert edited != source_sha256(package)
    rule.rename(copy / "metrics" / "localisation.py")
    assert source_sha256.__wrapped__(copy) not in (edited, source_sha256(package))


def test_a_report_records_the_revision_and_the_build(sample_release: Path, tmp_path: Path) -> None:
    import json

    from novabench.cli import main

    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"filename": "case0001_001.png", "boxes": []}\n', encoding="utf-8")
    out = tmp_path / "r.json"
    argv = ["evaluate", "-q", "--data", str(sample_release), "--predictions", str(predictions)]
    assert main([*argv, "--out", str(out), "--bootstrap", "0", "--answered-only"]) == 0
    toolkit = json.loads(out.read_text(encoding="utf-8"))["toolkit"]
    assert toolkit["scoring_revision"] == SCORING_REVISION
    assert toolkit["source_sha256"] == source_sha256()


def test_the_leaderboard_refuses_reports_scored_under_different_rules() -> None:
    import pytest

    from novabench.errors import NovaInputError
    from novabench.report.leaderboard import build_leaderboard

    now = toolkit_record()
    before = {**now, "scoring_revision": SCORING_REVISION - 1}
    for other, said in [(before, f"revision {SCORING_REVISION - 1}"), (None, "no revision")]:
        with pytest.raises(NovaInputError, match="scored under different scoring rules") as caught:
            build_leaderboard(
                [diagnosis_only_report("a", 0.2, now), diagnosis_only_report("b", 0.6, other)],
                ["a.json", "b.json"],
            )
        assert (
            f"b.json ({said}" in str(caught.value)
            and caught.value.field == "toolkit.scoring_revision"
        )
    # One revision, two builds: ranked, with a warning first; one build: no such warning.
    patched = {**now, "source_sha256": "0" * 64}
    board = build_leaderboard(
        [diagnosis_only_report("a", 0.2, now), diagnosis_only_report("b", 0.6, patched)], ["a", "b"]
    )
    assert board["warnings"][0].startswith("warning: the reports were scored by 2 builds")
    assert [m["tasks"]["diagnosis"]["rank"] for m in board["models"]] == [2, 1]
    board = build_leaderboard(
        [diagnosis_only_report("a", 0.2, now), diagnosis_only_report("b", 0.6, now)], ["a", "b"]
    )
    assert not any("builds of novabench" in line for line in board["warnings"])
    # Reports that all predate the revision are ranked as before.
    board = build_leaderboard(
        [diagnosis_only_report("a", 0.2, None), diagnosis_only_report("b", 0.6, None)], ["a", "b"]
    )
    assert [m["tasks"]["diagnosis"]["rank"] for m in board["models"]] == [2, 1]
