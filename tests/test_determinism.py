"""Same inputs, same numbers (issue 20): one run scored twice gives the same report.

End to end through ``nova evaluate``, every task, with the LLM judges: the same run file
scored from two working folders (relative and absolute paths), the second time with the
judge cache copied from the first and the judge server gone, gives reports, Markdown and
per-item tables equal but for timestamps, paths and the tables' run ids. The other
settings that could move a number are refused or given their own keys, and tested where
they live: ``--jobs`` is refused (one process), a METEOR scored with and without WordNet
differs only in its keys (``tests/metrics/test_meteor_variants.py``), a tampered judge cache
is asked again (``tests/metrics/test_judge_cache.py``), and a report reads only the per-item
tables it wrote (``tests/report/test_item_pins.py``).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.metrics.keyword_judge import KEYWORD_GROUPS
from novabench.run.baselines import get_baseline
from novabench.run.runner import run_model
from tests.fake_openai_server import FakeOpenAIServer, request_text


def judge_answer(body: dict[str, Any]) -> str:
    """A judge whose verdicts depend on the request only, as a real one's would (greedy)."""
    text, _ = request_text(body)
    if "REFERENCE: " in text:  # the keyword judge: both captions of a pair
        reference = {group: [] for group in KEYWORD_GROUPS}
        prediction = {group: [] for group in KEYWORD_GROUPS}
        reference["findings"], prediction["findings"] = ["lesion", "oedema"], ["lesion"]
        return json.dumps(
            {
                "reference": {**reference, "label": "abnormal"},
                "prediction": {**prediction, "label": "abnormal" if len(text) % 2 else "normal"},
            }
        )
    # The case judge: slot 1 for every other reference, by the text's length.
    reference = text.rsplit("Reference diagnosis: ", 1)[1].splitlines()[0]
    return json.dumps({"matched_slot": 1 if len(reference) % 2 else None})


def evaluate(cwd: Path, data: str, predictions: str, judge_url: str, cache: Path) -> int:
    arguments = ["evaluate", "--data", data, "--predictions", predictions]
    arguments += ["--out", "report.json", "--markdown", "report.md", "--items", "items"]
    arguments += ["--bootstrap", "200", "--exclude", "BERTScore-F1", "--meteor", "exact+stem"]
    arguments += ["--judge-endpoint", judge_url, "--judge-model", "judge", "--keyword-judge"]
    arguments += ["--judge-cache", str(cache), "--quiet"]
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        return main(arguments)
    finally:
        os.chdir(previous)


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what may differ between two scorings: time, paths, table run ids."""
    report = copy.deepcopy(report)
    kept = {key: value for key, value in report.items() if key not in ("created_at", "items")}
    kept["data"] = {key: value for key, value in report["data"].items() if key != "path"}
    kept["predictions"] = {k: v for k, v in report["predictions"].items() if k != "paths"}
    # Each report names a file as seen from its own folder (render.shareable_path).
    for check in kept["predictions"].get("file_checks", []):
        check.pop("path")
    for task in kept["tasks"].values():
        judge = task.get("judge")
        if judge:  # where the verdicts came from differs (asked, then cached); not what they are
            task["judge"] = {k: v for k, v in judge.items() if k not in ("stats", "cache_folder")}
            task["notes"] = [note for note in task["notes"] if "from the cache" not in note]
    return kept


@pytest.mark.slow
def test_the_same_run_scored_twice_elsewhere_gives_the_same_report(
    sample_release: Path, tmp_path: Path
) -> None:
    run_file = tmp_path / "runs" / "floor.jsonl"
    release = read_release(sample_release)
    run_model(
        release, tasks="all", backend=get_baseline("floor"), out_path=run_file, progress=False
    )
    first_folder, second_folder = tmp_path / "first", tmp_path / "elsewhere" / "second"
    first_folder.mkdir()
    second_folder.mkdir(parents=True)

    with FakeOpenAIServer(answer=judge_answer, keep_alive=True, max_requests=500) as server:
        # Relative paths from one folder...
        code = evaluate(
            first_folder,
            os.path.relpath(sample_release, first_folder),
            os.path.relpath(run_file, first_folder),
            server.base_url,
            tmp_path / "cache",
        )
        assert code == 0 and server.n_requests > 0
        url = server.base_url
    shutil.copytree(tmp_path / "cache", tmp_path / "copied-cache")
    # ...absolute ones from another, with the judge's cache copied and its server gone:
    # every verdict must come from the copy, none may change.
    code = evaluate(
        second_folder, str(sample_release), str(run_file), url, tmp_path / "copied-cache"
    )
    assert code == 0

    first = json.loads((first_folder / "report.json").read_text(encoding="utf-8"))
    second = json.loads((second_folder / "report.json").read_text(encoding="utf-8"))
    assert comparable(first) == comparable(second)
    for task in ("captioning", "diagnosis"):
        stats = second["tasks"][task]["judge"]["stats"]
        assert stats["requests"] == 0 and stats["cache_rejected"] == 0 and stats["failures"] == 0
    assert first["predictions"]["paths"] != second["predictions"]["paths"]  # they did differ
    # A shared report names no local folder, the judge cache included (notes too).
    for folder in (first_folder, second_folder):
        for name in ("report.json", "report.md"):
            assert str(tmp_path) not in (folder / name).read_text(encoding="utf-8")

    for name in ("images", "cases"):
        ours = pd.read_parquet(first_folder / "items" / f"{name}.parquet")
        theirs = pd.read_parquet(second_folder / "items" / f"{name}.parquet")
        pd.testing.assert_frame_equal(ours, theirs)

    def without_paths(markdown: str) -> list[str]:
        # The provenance line names the files; the judge notes say where verdicts came from.
        return [
            line
            for line in markdown.splitlines()
            if not line.startswith("Model: ") and "from the cache" not in line
        ]

    assert without_paths((first_folder / "report.md").read_text(encoding="utf-8")) == (
        without_paths((second_folder / "report.md").read_text(encoding="utf-8"))
    )


def test_no_option_left_can_score_the_same_run_two_ways_silently(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Process count: gone (``--jobs`` is refused, nothing written)."""
    run_file = tmp_path / "floor.jsonl"
    release = read_release(sample_release)
    run_model(
        release, tasks="diagnosis", backend=get_baseline("floor"), out_path=run_file, progress=False
    )
    out = tmp_path / "report.json"
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(run_file)]
    assert main([*arguments, "--out", str(out), "--jobs", "2"]) == 2
    assert "--jobs was removed" in capsys.readouterr().err and not out.exists()
