"""The leaderboard checks COCO-AP, ACC50, TP30, FP30, FNR and BLEU-4 by scoring the tables again.

No ratio of per-item sums gives these keys (COCO-AP ranks every box of the set, TP30 and
FP30 count one-to-one matches, BLEU-4 sums n-gram statistics over the corpus), but the
images table holds what the scorer was given: each image's predicted boxes, their scores
and the gold boxes (``[x1, y1, x2, y2]`` pixels), and both captions. Scored again by the
metric core in that form, over the scored images in the evaluation's order, value and
bootstrap interval come out as ``nova evaluate`` wrote them; an edit of either is refused.

Expected values come from the metric core fed the original ``[x, y, w, h]`` inputs, or from
the report ``nova evaluate`` wrote.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from novabench.cli import main
from novabench.metrics.bleu import corpus_bleu
from novabench.metrics.localization import prepare_localization
from novabench.report.items import bleu_from_tables, localization_from_tables
from novabench.report.leaderboard import build_leaderboard, render_leaderboard_text
from tests.report.board_edits import edited_copy, refusal

RESCORED = ("ACC50", "TP30", "FP30", "FNR", "COCO-AP@30", "COCO-AP@50", "COCO-AP@50:95")
# Not the defaults: the board must redraw with the report's own settings.
SETTINGS = ["--bootstrap", "200", "--confidence", "0.9", "--seed", "5"]


def as_table_boxes(boxes: np.ndarray) -> list[list[float]]:
    """``[x, y, w, h]`` boxes as the images table writes them (``items._xyxy``)."""
    return [[float(x), float(y), float(x) + float(w), float(y) + float(h)] for x, y, w, h in boxes]


def test_rescoring_the_table_boxes_gives_the_metric_cores_keys_on_every_resample() -> None:
    # Fractional pixels (rescaled 0..1000 answers), scores with ties, images without gold,
    # unanswered images and more boxes than gold: every rule of the ranking takes part.
    rng = np.random.default_rng(11)
    predictions, references, rows = [], [], []
    for image in range(80):
        gold = rng.uniform(0, 300, (int(rng.integers(0, 3)), 4)) + [0, 0, 5, 5]
        answered = image % 9 != 4
        given = rng.uniform(0, 300, (int(rng.integers(0, 4)) if answered else 0, 4)) + [0, 0, 5, 5]
        if len(gold) and len(given):
            given[0] = gold[0] + rng.uniform(-6, 6, 4)  # near a gold box: some matches
        scores = np.round(rng.uniform(0, 1, len(given)), 1) if image % 2 else None
        prediction: dict[str, Any] = {"boxes": given.tolist()}
        if scores is not None:
            prediction["scores"] = scores.tolist()
        predictions.append(prediction)
        references.append({"boxes": gold.tolist() if len(gold) else None})
        rows.append(
            {
                "localization_status": "given" if answered else "missing",
                "gold_boxes": as_table_boxes(gold) if len(gold) else None,
                "predicted_boxes": as_table_boxes(given) if answered else None,
                "predicted_scores": None if scores is None or not answered else scores.tolist(),
            }
        )
    # An image of the table that localisation did not score (--answered-only) is left out.
    rows.insert(7, {**rows[7], "localization_status": None})
    original = prepare_localization(predictions, references)
    rebuilt = localization_from_tables({"images": pd.DataFrame(rows)}, RESCORED)
    assert rebuilt.n_items == original.n_items == 80
    expected, got = original.aggregate(), rebuilt.aggregate()
    assert 0 < expected["COCO-AP@30"] < 1 and 0 < expected["FP30"] < 1
    assert {key: got[key] for key in RESCORED} == {key: expected[key] for key in RESCORED}
    draws = np.sort(rng.integers(0, 80, (30, 80)), axis=1)
    expected_draws, got_draws = (
        original.aggregate_resamples(draws),
        rebuilt.aggregate_resamples(draws),
    )
    for key in RESCORED:
        np.testing.assert_array_equal(got_draws[key], expected_draws[key])


def test_without_a_coco_key_wanted_the_rebuilt_evaluation_skips_coco_ap() -> None:
    images = pd.DataFrame(
        {
            "localization_status": ["given"],
            "gold_boxes": [[[0.0, 0.0, 10.0, 10.0]]],
            "predicted_boxes": [[[0.0, 0.0, 10.0, 10.0]]],
            "predicted_scores": [None],
        }
    )
    assert "COCO-AP@30" not in localization_from_tables({"images": images}, ["FP30"]).aggregate()
    assert localization_from_tables({"images": images.drop(columns=["gold_boxes"])}, []) is None


def test_bleu_from_the_caption_columns_is_the_corpus_bleu_of_the_scored_captions() -> None:
    references = [
        "Axial FLAIR image shows a hyperintense lesion in the left frontal lobe.",
        "Sagittal T1 image with a midline cystic mass.",
        "Coronal T2 image shows bilateral thalamic signal change.",
        "Axial DWI shows restricted diffusion in the right parietal cortex.",
    ]
    predictions = [
        "Axial FLAIR shows a hyperintense lesion in the left frontal lobe.",
        None,  # not answered: scored as an empty caption
        "Coronal T2 image shows thalamic signal change.",
        "Axial DWI image, restricted diffusion right parietal.",
    ]
    images = pd.DataFrame(
        {
            "captioning_status": ["given", "missing", None, "given"],
            "caption_reference": references,
            "caption_prediction": predictions,
        }
    )
    evaluation = bleu_from_tables({"images": images}, ["BLEU-4"])
    # The third image was not scored (--answered-only); the second scored as "".
    expected = corpus_bleu([predictions[0], "", predictions[3]], [references[i] for i in (0, 1, 3)])
    assert 0 < expected < 1
    assert evaluation.aggregate() == {"BLEU-4": expected}


# On the board: genuine reports pass with every key verified; edits are refused.


@pytest.fixture(scope="module")
def report_path(
    sample_release: Path, sample_floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("rescored") / "floor.json"
    args = ["evaluate", "--data", str(sample_release), "--predictions", str(sample_floor_run)]
    args += ["--out", str(out), "--items", str(out.parent / "floor-items"), "-q"]
    args += ["--task", "localization", "--task", "captioning", "--exclude", "BERTScore-F1"]
    assert main([*args, *SETTINGS]) == 0
    return out


def test_a_genuine_report_has_every_key_verified(report_path: Path) -> None:
    report = json.loads(report_path.read_text(encoding="utf-8"))
    board = build_leaderboard([report], [report_path], n_resamples=20)
    tasks = board["models"][0]["tasks"]
    assert tasks["localization"]["taken_as_stated"] == []
    assert tasks["captioning"]["taken_as_stated"] == []
    assert board["models"][0]["tasks"]["localization"]["verified"] is True
    assert not [line for line in board["warnings"] if "taken as stated" in line]
    # The models' rows: nothing marked (the raters' COCO-AP... are, taken as stated).
    text = render_leaderboard_text(board)
    assert not [line for line in text.splitlines() if line.startswith("baseline") and "†" in line]


@pytest.mark.parametrize(
    ("task", "key"), [("localization", key) for key in RESCORED] + [("captioning", "BLEU-4")]
)
def test_an_edited_value_is_refused_naming_report_key_and_both_values(
    report_path: Path, capsys: pytest.CaptureFixture[str], task: str, key: str
) -> None:
    genuine = json.loads(report_path.read_text(encoding="utf-8"))["tasks"][task]["metrics"][key]
    stated = 0.01 if genuine > 0.02 else 0.5

    def edited(report: dict) -> None:
        report["tasks"][task]["metrics"][key] = stated
        report["tasks"][task]["confidence_intervals"].pop(key)  # the value alone

    path = edited_copy(report_path, f"value-{key}.json", edited)
    line = refusal(path, capsys)
    prefix = (
        f"nova leaderboard: error: {path}, field 'tasks.{task}.metrics.{key}': the report "
        f"states {key} = {stated!r} but its per-item tables give "
    )
    assert line.startswith(prefix), line
    assert line.endswith(": the report was edited or is not the one that wrote them")
    assert float(line[len(prefix) :].split(":")[0]) == genuine


@pytest.mark.parametrize("key", ["FP30", "COCO-AP@30", "BLEU-4"])
def test_an_edited_ci_is_refused_naming_report_key_and_both_intervals(
    report_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    task = "captioning" if key == "BLEU-4" else "localization"
    genuine = json.loads(report_path.read_text(encoding="utf-8"))["tasks"][task]
    low, high = genuine["confidence_intervals"][key]
    assert low < high
    stated = [low + (high - low) / 8, high - (high - low) / 8]

    def narrowed(report: dict) -> None:
        report["tasks"][task]["confidence_intervals"][key] = stated

    path = edited_copy(report_path, f"ci-{key}.json", narrowed)
    found = re.fullmatch(
        rf"nova leaderboard: error: {re.escape(str(path))}, field "
        rf"'tasks\.{task}\.confidence_intervals\.{re.escape(key)}': the report states "
        rf"{re.escape(key)} CI = \[{re.escape(repr(stated[0]))}, {re.escape(repr(stated[1]))}\] "
        r"but its per-item tables give \[(\S+), (\S+)\] with its bootstrap settings "
        r"\(n_resamples=200, confidence=0\.9, seed=5, unit=case\): the report was edited or is "
        r"not the one "
        r"that wrote them",
        refusal(path, capsys),
    )
    assert found is not None
    assert [float(end) for end in found.groups()] == [low, high]


def test_tables_without_the_boxes_or_captions_leave_those_keys_as_stated_and_marked(
    report_path: Path,
) -> None:
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    report = json.loads(report_path.read_text(encoding="utf-8"))
    folder = report_path.parent / "older"
    folder.mkdir()
    for table in ("images", "cases"):
        written = pq.read_table(report_path.parent / report["items"][table])
        frame = written.to_pandas().drop(
            columns=["predicted_scores", "caption_prediction"], errors="ignore"
        )
        arrow = pa.Table.from_pandas(frame, preserve_index=False)
        owner = {b"novabench.items": written.schema.metadata[b"novabench.items"]}
        path = folder / f"{table}.parquet"
        pq.write_table(arrow.replace_schema_metadata({**arrow.schema.metadata, **owner}), path)
        report["items"][table] = f"older/{table}.parquet"
        report["items"]["sha256"][f"{table}.parquet"] = hashlib.sha256(
            path.read_bytes()
        ).hexdigest()
    board = build_leaderboard([report], [report_path], n_resamples=20)
    tasks = board["models"][0]["tasks"]
    assert tasks["localization"]["taken_as_stated"] == list(RESCORED)
    assert tasks["captioning"]["taken_as_stated"] == ["BLEU-4"]
    value = 100 * report["tasks"]["captioning"]["metrics"]["BLEU-4"]
    assert re.search(rf"{value:.1f} \[[0-9.]+, [0-9.]+\] †", render_leaderboard_text(board))
