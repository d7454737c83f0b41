"""The leaderboard verifies mAP@50:95, BinaryF1 and the sample-averaged keyword F1s too.

Their values and CIs were taken as stated (marked †) though the per-item tables hold what
they are made of: every image's best IoU (``mAP@50:95`` is the hit rate over all images
averaged over IoU 0.50, 0.55, ..., 0.95), every caption's two binary labels (``BinaryF1``
is the F1 of the abnormal label, a ratio of sums over captions) and every caption's keyword
F1 (``ClinicalF1`` / ``ModalityF1`` under ``keyword_averaging="sample"`` are their mean over
the captions with a keyword of the family). Micro averaging (an F1 of counts summed over
captions) is not given by the per-caption F1s: those values stay as stated, marked.

Expected values are hand-computed in comments or come from the metric core that scores
the report (``metrics/localization.py``, ``metrics/captioning.py``).
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
from novabench.metrics.captioning import binary_f1, keyword_f1
from novabench.metrics.localization import COCO_IOU_THRESHOLDS, prepare_localization
from novabench.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    render_leaderboard_text,
)
from novabench.tasks import ItemTablesMismatch, behaviour
from novabench.tasks.localization import range_thresholds
from tests.report.board_edits import edited_copy, refusal

# Not the defaults: the board must redraw with the report's own settings.
SETTINGS = ["--bootstrap", "200", "--confidence", "0.9", "--seed", "5"]
LABELS = {1: "abnormal", 0: "normal", -1: None}  # as the images table writes them


def ratio(terms: tuple[Any, Any], rows: Any = None) -> float:
    """``sum(numerators) / sum(weights)`` over ``rows`` (every item when None)."""
    numerators, weights = (np.asarray(part, dtype=float) for part in terms)
    chosen = np.arange(len(numerators)) if rows is None else np.asarray(rows)
    counted = weights[chosen].sum()
    return float(numerators[chosen].sum() / counted) if counted else float("nan")


# 1. What the tables give is what the metric core computed.


def test_the_range_thresholds_are_the_metric_cores_to_the_bit() -> None:
    # 0.9 is 0.8999999999999999 in both: a best IoU of 0.9 hits it in both.
    assert range_thresholds().tobytes() == COCO_IOU_THRESHOLDS.tobytes()


def test_map_50_95_from_best_ious_on_the_thresholds_is_the_reports() -> None:
    gold = {"boxes": [[0.0, 0.0, 100.0, 100.0]]}
    # IoU 55/100, 90/100 and 30/100 (a box of the gold's height, narrower), and no gold box.
    predictions = [{"boxes": [[0.0, 0.0, width, 100.0]]} for width in (55.0, 90.0, 30.0)]
    evaluation = prepare_localization(
        [*predictions, {"boxes": []}], [gold, gold, gold, {"boxes": []}]
    )
    best = [value or 0.0 for value in evaluation.per_image_best_iou]  # as items.py writes it
    assert best == [0.55, 0.9, 0.3, 0.0]
    images = pd.DataFrame({"filename": list("abcd"), "best_iou": pd.array(best, "Float64")})
    terms = behaviour("localization").item_mean_terms({"images": images}, "mAP@50:95", {})
    # 0.55 reaches 0.50 and 0.55 (2 of 10), 0.9 reaches 0.50..0.9 (9), 0.3 and no gold none:
    # (2 + 9) / (10 * 4) = 0.275.
    assert ratio(terms) == pytest.approx(0.275, abs=1e-15)
    assert evaluation.aggregate(coco_ap=False)["mAP@50:95"] == pytest.approx(0.275, abs=1e-15)


def test_map_50_95_terms_follow_every_resample_of_random_boxes() -> None:
    rng = np.random.default_rng(3)
    predictions, references = [], []
    for _ in range(60):
        n_gold, n_predicted = rng.integers(0, 3), rng.integers(0, 4)
        references.append({"boxes": (rng.uniform(5, 40, (n_gold, 4))).tolist()})
        predictions.append({"boxes": (rng.uniform(5, 40, (n_predicted, 4))).tolist()})
    evaluation = prepare_localization(predictions, references)
    images = pd.DataFrame({"best_iou": [value or 0.0 for value in evaluation.per_image_best_iou]})
    terms = behaviour("localization").item_mean_terms({"images": images}, "mAP@50:95", {})
    draws = np.sort(rng.integers(0, 60, (25, 60)), axis=1)
    expected = evaluation.aggregate_resamples(draws, coco_ap=False)["mAP@50:95"]
    got = [ratio(terms, row) for row in draws]
    assert 0 < expected.mean() < 1
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def label_table(references: Any, predictions: Any, **columns: Any) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "captioning_status": ["given"] * len(references),
            "binary_label_reference": [LABELS[int(label)] for label in references],
            "binary_label_prediction": [LABELS[int(label)] for label in predictions],
            **columns,
        }
    )


def test_binary_f1_from_the_label_columns_is_the_metric_cores_on_every_resample() -> None:
    rng = np.random.default_rng(8)
    references, predictions = rng.integers(-1, 2, 80), rng.integers(-1, 2, 80)
    images = label_table(references, predictions)
    terms = behaviour("captioning").item_mean_terms({"images": images}, "BinaryF1-lexicon", {})
    assert ratio(terms) == binary_f1(references, predictions)
    for row in np.sort(rng.integers(0, 80, (25, 80)), axis=1):
        assert ratio(terms, row) == binary_f1(references[row], predictions[row])


def test_binary_f1_counts_a_caption_without_reference_label_as_nothing() -> None:
    # References undecidable, normal, abnormal; predictions abnormal, abnormal, normal:
    # kept pairs 2 and 3; TP 0, FP 1, FN 1: 2*0 / (0 + 1 + 1) = 0.
    images = label_table([-1, 0, 1], [1, 1, 0])
    terms = behaviour("captioning").item_mean_terms({"images": images}, "BinaryF1-lexicon", {})
    assert [part.tolist() for part in terms] == [[0.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
    assert ratio(terms) == 0.0


def test_keyword_f1_terms_are_the_metric_cores_under_either_averaging() -> None:
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 3, (70, 3))
    counts[::7] = 0  # captions without a keyword of the family: left out of the mean
    denominators = 2 * counts[:, 0] + counts[:, 1] + counts[:, 2]
    per_caption = [None if d == 0 else 2 * tp / d for tp, d in zip(counts[:, 0], denominators)]
    images = pd.DataFrame(
        {
            "captioning_status": ["given"] * 70,
            "ClinicalF1-lexicon": pd.array(per_caption, "Float64"),
        }
    )
    captioning = behaviour("captioning")
    sample, micro = {"keyword_averaging": "sample"}, {"keyword_averaging": "micro"}
    terms = captioning.item_mean_terms({"images": images}, "ClinicalF1-lexicon", sample)
    draws = np.sort(rng.integers(0, 70, (20, 70)), axis=1)
    assert ratio(terms) == pytest.approx(keyword_f1(counts, "sample"), abs=1e-14)
    for row in draws:
        assert ratio(terms, row) == pytest.approx(keyword_f1(counts[row], "sample"), abs=1e-14)
    # Micro averaging is 2 sum(TP) / sum(2TP + FP + FN): the per-caption F1s do not give it,
    # nor anything for a report recording no averaging (written before it was recorded).
    assert captioning.item_mean_terms({"images": images}, "ClinicalF1-lexicon", micro) is None
    assert captioning.item_mean_terms({"images": images}, "ClinicalF1-lexicon", {}) is None
    # The count columns do: integer sums, so the same float as the metric core's, exactly.
    columns = ("ClinicalF1-lexicon TP", "ClinicalF1-lexicon FP", "ClinicalF1-lexicon FN")
    counted = images.assign(
        **{name: pd.array(counts[:, i], "Int64") for i, name in enumerate(columns)}
    )
    terms = captioning.item_mean_terms({"images": counted}, "ClinicalF1-lexicon", micro)
    assert ratio(terms) == keyword_f1(counts, "micro")
    for row in draws:
        assert ratio(terms, row) == keyword_f1(counts[row], "micro")


def test_a_keyword_key_of_the_other_reading_is_a_mismatch_and_old_tables_give_none() -> None:
    images = label_table([1, 1], [1, 0], **{"ClinicalF1-lexicon": [1.0, 0.5]})
    captioning = behaviour("captioning")
    with pytest.raises(ItemTablesMismatch, match="holds ClinicalF1-lexicon, not BinaryF1$"):
        captioning.item_mean_terms({"images": images}, "BinaryF1", {})
    with pytest.raises(ItemTablesMismatch, match="holds ClinicalF1-lexicon, not ClinicalF1$"):
        captioning.item_mean_terms(
            {"images": images}, "ClinicalF1", {"keyword_averaging": "sample"}
        )
    judged = label_table([1, 1], [1, 0], ClinicalF1=[1.0, 0.5])
    # 2 TP=1 over 2 abnormal references + 1 abnormal prediction: 2/3.
    assert ratio(captioning.item_mean_terms({"images": judged}, "BinaryF1", {})) == 2 / 3
    # Tables without the label columns or the status: nothing to recompute (as stated).
    for missing in ("binary_label_prediction", "captioning_status"):
        older = images.drop(columns=[missing])
        assert captioning.item_mean_terms({"images": older}, "BinaryF1-lexicon", {}) is None


# 2. On the board: genuine reports pass with these keys verified; edits are refused.


def evaluate(release: Path, predictions: Path, out: Path, *options: str) -> Path:
    args = ["evaluate", "--data", str(release), "--predictions", str(predictions), "-q"]
    items = ["--items", str(out.with_suffix("")) + "-items"]
    assert main([*args, "--out", str(out), "--exclude", "BERTScore-F1", *items, *options]) == 0
    return out


@pytest.fixture(scope="module")
def reports(
    sample_release: Path, sample_floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """The floor run's localisation and captioning scored with tables, under sample and
    under micro keyword averaging."""
    folder = tmp_path_factory.mktemp("more-keys")
    tasks = ["--task", "localization", "--task", "captioning", *SETTINGS]
    return {
        "sample": evaluate(sample_release, sample_floor_run, folder / "sample.json", *tasks),
        "micro": evaluate(
            sample_release,
            sample_floor_run,
            folder / "micro.json",
            *tasks,
            "--keyword-averaging",
            "micro",
        ),
    }


NEWLY_CHECKED = [
    ("localization", "mAP@50:95"),
    ("captioning", "ClinicalF1-lexicon"),
    ("captioning", "ModalityF1-lexicon"),
    ("captioning", "BinaryF1-lexicon"),
]
# ModalityF1-lexicon is 0 with CI [0, 0] on the sample (no sequence in the template caption):
# its value can be edited, its CI cannot be narrowed.
EDITS = [("sample", task, key) for task, key in NEWLY_CHECKED] + [
    ("micro", "captioning", "ClinicalF1-lexicon"),
    ("micro", "captioning", "ModalityF1-lexicon"),
]
CI_EDITS = [edit for edit in EDITS if edit[2] != "ModalityF1-lexicon"]


def test_a_genuine_report_has_these_keys_verified(reports: dict[str, Path]) -> None:
    source = reports["sample"]
    genuine = json.loads(source.read_text(encoding="utf-8"))
    board = build_leaderboard([genuine], [source], n_resamples=20)
    tasks = board["models"][0]["tasks"]
    for task, key in NEWLY_CHECKED:
        assert key in tasks[task]["metrics"] and key not in tasks[task]["taken_as_stated"]
        # shown as nova evaluate wrote it
        assert tasks[task]["ci"][key] == genuine["tasks"][task]["confidence_intervals"][key]
    # BLEU-4, COCO-AP, ACC50, TP30, FP30, FNR: scored again from the tables (board13b).
    assert tasks["captioning"]["taken_as_stated"] == []
    assert tasks["localization"]["taken_as_stated"] == []
    [row] = [
        line for line in leaderboard_csv(board).splitlines()[1:] if line.startswith("baseline")
    ]
    assert ",yes," in row and "partly" not in row


@pytest.mark.parametrize(("report", "task", "key"), EDITS)
def test_an_edited_value_is_refused_naming_report_key_and_both_values(
    reports: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    report: str,
    task: str,
    key: str,
) -> None:
    source = reports[report]
    genuine = json.loads(source.read_text(encoding="utf-8"))["tasks"][task]["metrics"][key]
    stated = 0.99 if genuine < 0.9 else 0.5

    def edited(report: dict) -> None:
        report["tasks"][task]["metrics"][key] = stated
        report["tasks"][task]["confidence_intervals"].pop(key)  # no CI: the value alone

    path = edited_copy(source, f"value-{report}-{key}.json", edited)
    line = refusal(path, capsys)
    prefix = (
        f"nova leaderboard: error: {path}, field 'tasks.{task}.metrics.{key}': the report "
        f"states {key} = {stated!r} but its per-item tables give "
    )
    assert line.startswith(prefix)
    assert line.endswith(": the report was edited or is not the one that wrote them")
    given = float(line[len(prefix) :].split(":")[0])
    assert given == pytest.approx(genuine, abs=1e-12)


@pytest.mark.parametrize(("report", "task", "key"), CI_EDITS)
def test_an_edited_ci_is_refused_naming_report_key_and_both_intervals(
    reports: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    report: str,
    task: str,
    key: str,
) -> None:
    source = reports[report]
    genuine = json.loads(source.read_text(encoding="utf-8"))["tasks"][task]
    low, high = genuine["confidence_intervals"][key]
    assert low < genuine["metrics"][key] < high
    stated = [low + (high - low) / 8, high - (high - low) / 8]  # still around the value

    def narrowed(report: dict) -> None:
        report["tasks"][task]["confidence_intervals"][key] = stated

    path = edited_copy(source, f"ci-{report}-{key}.json", narrowed)
    line = refusal(path, capsys)
    found = re.fullmatch(
        rf"nova leaderboard: error: {re.escape(str(path))}, field "
        rf"'tasks\.{task}\.confidence_intervals\.{re.escape(key)}': the report states "
        rf"{re.escape(key)} CI = \[{re.escape(repr(stated[0]))}, {re.escape(repr(stated[1]))}\] "
        r"but its per-item tables give \[(\S+), (\S+)\] with its bootstrap settings "
        r"\(n_resamples=200, confidence=0\.9, seed=5, unit=case\): the report was edited or is "
        r"not the one "
        r"that wrote them",
        line,
    )
    assert found is not None, line
    assert [float(end) for end in found.groups()] == pytest.approx([low, high], abs=1e-12)


def test_micro_averaged_keyword_f1s_are_checked_from_the_count_columns(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = reports["micro"]
    genuine = json.loads(source.read_text(encoding="utf-8"))
    assert genuine["tasks"]["captioning"]["metrics"]["keyword_averaging"] == "micro"
    board = build_leaderboard([genuine], [source], n_resamples=20)
    assert board["models"][0]["tasks"]["captioning"]["taken_as_stated"] == []

    def edited(report: dict) -> None:
        report["tasks"]["captioning"]["metrics"]["BinaryF1-lexicon"] = 0.5

    path = edited_copy(source, "micro-binary.json", edited)
    assert "states BinaryF1-lexicon = 0.5 but its per-item tables give" in refusal(path, capsys)


def test_the_count_columns_are_the_pairs_keyword_counts_behind_each_f1(
    reports: dict[str, Path],
) -> None:
    report = json.loads(reports["sample"].read_text(encoding="utf-8"))
    images = pd.read_parquet(reports["sample"].parent / report["items"]["images"])
    for key in ("ClinicalF1-lexicon", "ModalityF1-lexicon", "SequencePlaneF1"):
        tp, fp, fn = (images[f"{key} {part}"] for part in ("TP", "FP", "FN"))
        assert all(str(column.dtype) == "Int64" for column in (tp, fp, fn))
        denominators = 2 * tp + fp + fn
        # Per caption F1 = 2TP / (2TP + FP + FN), null where neither caption has a keyword.
        assert (images[key].isna() == (denominators == 0)).all()
        kept = denominators > 0
        f1 = (2 * tp[kept] / denominators[kept]).astype(float)
        np.testing.assert_array_equal(f1.to_numpy(), images.loc[kept, key].astype(float))
    assert images["ClinicalF1-lexicon TP"].sum() > 0  # the sample's captions share keywords


def with_older_tables(source: Path, name: str, change: Any, edit: Any = None) -> dict:
    """``source``'s report with its tables rewritten by ``change`` (a DataFrame -> DataFrame)
    in a folder of their own, pinned again, as an older novabench wrote them."""
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    report = json.loads(source.read_text(encoding="utf-8"))
    if edit is not None:
        edit(report)
    folder = source.parent / name
    folder.mkdir()
    for table in ("images", "cases"):
        written = pq.read_table(source.parent / report["items"][table])
        arrow = pa.Table.from_pandas(change(written.to_pandas()), preserve_index=False)
        owner = {b"novabench.items": written.schema.metadata[b"novabench.items"]}
        path = folder / f"{table}.parquet"
        pq.write_table(arrow.replace_schema_metadata({**arrow.schema.metadata, **owner}), path)
        report["items"][table] = f"{name}/{table}.parquet"
        report["items"]["sha256"][f"{table}.parquet"] = hashlib.sha256(
            path.read_bytes()
        ).hexdigest()
    return report


def without_counts(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=[c for c in table.columns if c.endswith((" TP", " FP", " FN"))])


def test_tables_without_count_columns_leave_micro_f1s_as_stated_and_marked(
    reports: dict[str, Path],
) -> None:
    source = reports["micro"]
    report = with_older_tables(source, "no-counts", without_counts)
    board = build_leaderboard([report], [source.parent / "older.json"], shown=["older.json"])
    captioning = board["models"][0]["tasks"]["captioning"]
    assert captioning["taken_as_stated"] == ["ClinicalF1-lexicon", "ModalityF1-lexicon"]
    [warning] = [line for line in board["warnings"] if "older.json: captioning" in line]
    assert "captioning ClinicalF1-lexicon, ModalityF1-lexicon: values" in warning
    shown = 100 * report["tasks"]["captioning"]["metrics"]["ClinicalF1-lexicon"]
    assert re.search(rf"{shown:.1f} \[[0-9.]+, [0-9.]+\] †", render_leaderboard_text(board))
    # Sample averaging needs only the per-caption F1s: still checked without the counts.
    sample = with_older_tables(reports["sample"], "no-counts-sample", without_counts)
    board = build_leaderboard([sample], [reports["sample"].parent / "s.json"], shown=["s.json"])
    assert board["models"][0]["tasks"]["captioning"]["taken_as_stated"] == []


def test_a_lexicon_report_relabelled_as_the_keyword_judges_is_refused(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # BinaryF1 is the paper's key (the LLM keyword judge's labels); the tables hold the
    # lexicon's labels, beside its ClinicalF1-lexicon and ModalityF1-lexicon columns.
    def relabelled(report: dict) -> None:
        section = report["tasks"]["captioning"]
        for part in ("metrics", "confidence_intervals"):
            section[part]["BinaryF1"] = section[part].pop("BinaryF1-lexicon")

    path = edited_copy(reports["sample"], "judged-binary.json", relabelled)
    assert refusal(path, capsys) == (
        f"nova leaderboard: error: {path}, field 'tasks.captioning.metrics.BinaryF1': the "
        "report states BinaryF1 but its per-item tables do not hold it (the images table holds "
        "ClinicalF1-lexicon, ModalityF1-lexicon, not BinaryF1)"
    )


def test_keys_an_old_report_named_otherwise_are_marked_under_the_names_shown(
    reports: dict[str, Path],
) -> None:
    # A report written before the keyword keys named their reading (its tables too) holds
    # ClinicalF1 / ModalityF1 / BinaryF1 for the lexicon's values; the board shows them as
    # ClinicalF1-lexicon... Under micro averaging, tables without counts, the F1s are taken
    # as stated: they must be marked under the names shown, not the old names none shows.
    old_names = {f"{key}-lexicon": key for key in ("ClinicalF1", "ModalityF1", "BinaryF1")}

    def old_keys(report: dict) -> None:
        section = report["tasks"]["captioning"]
        for part in ("metrics", "confidence_intervals"):
            section[part] = {old_names.get(k, k): value for k, value in section[part].items()}
        del section["metrics"]["keyword_source"]

    def old_columns(table: pd.DataFrame) -> pd.DataFrame:
        return without_counts(table).rename(columns=old_names)

    report = with_older_tables(reports["micro"], "old-items", old_columns, old_keys)
    board = build_leaderboard([report], [reports["micro"].parent / "old.json"], shown=["old.json"])
    captioning = board["models"][0]["tasks"]["captioning"]
    assert "ClinicalF1-lexicon" in captioning["metrics"]
    assert "ClinicalF1" not in captioning["metrics"]
    assert captioning["taken_as_stated"] == ["ClinicalF1-lexicon", "ModalityF1-lexicon"]
    [warning] = [line for line in board["warnings"] if "old.json: captioning" in line]
    assert "captioning ClinicalF1-lexicon, ModalityF1-lexicon: values" in warning


def test_bertscore_f1_is_the_mean_of_its_per_caption_column() -> None:
    images = pd.DataFrame({"BERTScore-F1": pd.array([0.62, None, 0.48], "Float64")})
    terms = behaviour("captioning").item_mean_terms({"images": images}, "BERTScore-F1", {})
    assert [part.tolist() for part in terms] == [[0.62, 0.48], [1.0, 1.0]]


def test_a_bertscore_value_and_ci_are_checked_against_the_per_caption_column(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # The fixture's reports exclude BERTScore (no model load): give the tables a per-caption
    # BERTScore-F1 column, and the report the value and CI the metric core's own evaluation
    # and bootstrap give on it with the report's settings.
    from novabench.metrics.captioning import CaptioningEvaluation
    from novabench.metrics.stats import bootstrap_confidence_intervals

    source = reports["sample"]
    images = pd.read_parquet(source.parent / "sample-items" / "images.parquet")
    n_captions = len(images)
    f1 = np.random.default_rng(11).uniform(0.35, 0.75, n_captions)
    evaluation = CaptioningEvaluation(
        n_items=n_captions, metrics=("BERTScore-F1",), keyword_averaging="sample", bertscore_f1=f1
    )
    value = evaluation.aggregate()["BERTScore-F1"]
    # The report resamples whole cases (bootstrap.unit "case"): its CI draws the captions' cases.
    low, high = bootstrap_confidence_intervals(
        evaluation, n_resamples=200, confidence=0.9, seed=5, clusters=list(images["case_id"])
    )["BERTScore-F1"]

    def stated(report: dict) -> None:
        report["tasks"]["captioning"]["metrics"]["BERTScore-F1"] = value
        report["tasks"]["captioning"]["confidence_intervals"]["BERTScore-F1"] = [low, high]

    def with_bertscore(table: pd.DataFrame) -> pd.DataFrame:
        return table.assign(**{"BERTScore-F1": f1}) if "filename" in table.columns else table

    report = with_older_tables(source, "bertscore-items", with_bertscore, stated)
    path = source.parent / "bertscore.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    board = build_leaderboard([report], [path], n_resamples=20)
    assert board["models"][0]["tasks"]["captioning"]["taken_as_stated"] == []
    for name, edit in (("value", [value + 0.02, None]), ("ci", [value, [low, high + 0.01]])):

        def edited(report: dict, edit: list = edit) -> None:
            report["tasks"]["captioning"]["metrics"]["BERTScore-F1"] = edit[0]
            if edit[1] is not None:
                report["tasks"]["captioning"]["confidence_intervals"]["BERTScore-F1"] = edit[1]

        line = refusal(edited_copy(path, f"bertscore-{name}.json", edited), capsys)
        part = "metrics" if name == "value" else "confidence_intervals"
        assert (
            f"field 'tasks.captioning.{part}.BERTScore-F1': the report states BERTScore-F1" in line
        )
