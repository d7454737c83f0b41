"""Per-item tables, breakdowns, the human reference and --answered-only.

The report's aggregates are recomputed from the tables with plain pandas (means, shares),
never with the metric code; hand-made releases give the rater IoUs by hand.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.lexicon.taxonomy import PATHOLOGY_CATEGORIES, CategoryMap
from novabench.report import render_markdown, render_table
from novabench.report.breakdowns import break_down, gold_box_size, parse_acquisition
from novabench.report.items import CASE_COLUMNS, IMAGE_COLUMNS, build_item_tables, item_tables
from novabench.report.scoring import ScoringOptions, score_predictions
from tests.bootstrap_reference import percentile_bootstrap_ratio
from tests.release_factory import default_rows, write_v1_release

# BERTScore needs a model; everything else with a per-item value is kept.
CAPTIONS = {"exclude": ["BERTScore-F1"]}


@pytest.fixture(scope="module")
def floor_predictions(sample_floor_run: Path) -> Path:
    """The floor baselines' answers on the sample release (one run per session)."""
    return sample_floor_run


@pytest.fixture(scope="module")
def scored(sample_release: Path, floor_predictions: Path):  # type: ignore[no-untyped-def]
    return score_predictions(
        sample_release, floor_predictions, n_resamples=200, seed=4, caption_options=CAPTIONS
    )


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def test_report_aggregates_are_recomputable_from_the_tables(scored) -> None:  # type: ignore[no-untyped-def]
    tables = item_tables(scored)
    images, cases = tables.images, tables.cases
    release = scored.release
    assert list(images.columns[: len(IMAGE_COLUMNS) - 4]) == list(IMAGE_COLUMNS[:-4])
    # The hit columns carry the report's keys: the lexicon matcher's reading here.
    expected_cases = [
        {"top1": "top1-lexicon", "top5": "top5-lexicon"}.get(c, c) for c in CASE_COLUMNS
    ]
    assert set(IMAGE_COLUMNS) <= set(images.columns) and list(cases.columns) == expected_cases
    assert "top1" not in cases.columns and "ClinicalF1" not in images.columns
    assert images["filename"].tolist() == [image.filename for image in release.images]
    assert cases["case_id"].tolist() == [case.case_id for case in release.cases()]

    localization = scored.report["tasks"]["localization"]["metrics"]
    with_gold = images[images["n_gold_boxes"] > 0]
    assert 0 < len(with_gold) < len(images)  # images without gold exist, so mAP != hit rate
    assert close(localization["mAP@30"], images["hit_30"].astype(bool).mean())
    assert close(localization["mAP@50"], images["hit_50"].astype(bool).mean())
    assert close(localization["hit@30"], with_gold["hit_30"].astype(bool).mean())
    assert close(localization["hit@50"], with_gold["hit_50"].astype(bool).mean())
    # mAP@50:95 from the best IoUs: the share of images with gold reaching each threshold.
    best = images["best_iou"].to_numpy(dtype=float)
    gold = images["n_gold_boxes"].to_numpy() > 0
    shares = [np.mean(gold & (best >= t)) for t in np.linspace(0.5, 0.95, 10)]
    assert close(localization["mAP@50:95"], float(np.mean(shares)))
    no_box = with_gold["predicted_boxes_xyxy"].map(lambda boxes: not boxes)
    assert close(localization["FNR"], no_box.mean())
    assert (images.loc[~gold, "best_iou"] == 0.0).all()
    assert images["localization_status"].isin(["ok", "ok_out_of_image", "no_target", "empty"]).all()

    captioning = scored.report["tasks"]["captioning"]["metrics"]
    meteor_key = {"wordnet": "METEOR", "exact+stem": "METEOR-exact+stem"}[
        captioning["METEOR_variant"]
    ]
    for key in ("ROUGE-L", meteor_key):
        assert close(captioning[key], images[key].astype(float).mean())
    for key in ("ClinicalF1-lexicon", "ModalityF1-lexicon", "SequencePlaneF1"):  # sample averaging
        column = images[key].dropna().astype(float)
        assert close(captioning[key], column.mean() if len(column) else math.nan) or (
            math.isnan(captioning[key]) and column.empty
        )
    labelled = images[images["binary_label_reference"].notna()]
    reference = labelled["binary_label_reference"] == "abnormal"
    predicted = labelled["binary_label_prediction"] == "abnormal"
    true_positives = int((reference & predicted).sum())
    f1 = 2 * true_positives / (int(reference.sum()) + int(predicted.sum()))
    assert close(captioning["BinaryF1-lexicon"], f1)
    assert "BLEU-4" not in images.columns  # a corpus score: no per-item value
    assert images["keywords_reference"].map(lambda k: isinstance(k, list)).all()

    diagnosis = scored.report["tasks"]["diagnosis"]["metrics"]
    scored_cases = cases[cases["has_reference"].astype(bool)]
    assert len(scored_cases) == diagnosis["n_cases"] < len(cases)  # a placeholder is not scored
    assert cases.loc[~cases["has_reference"].astype(bool), "top1-lexicon"].isna().all()
    assert close(diagnosis["top1-lexicon"], scored_cases["top1-lexicon"].astype(bool).mean())
    assert close(diagnosis["top5-lexicon"], scored_cases["top5-lexicon"].astype(bool).mean())
    hits = scored_cases[scored_cases["top5-lexicon"].astype(bool)]
    assert (hits["match_rule"] == "matcher").all() and hits["matched_slot"].between(1, 5).all()
    assert (scored_cases["top1-lexicon"] == (scored_cases["matched_slot"] == 1).fillna(False)).all()
    assert set(cases["category"]) <= set(PATHOLOGY_CATEGORIES)


def test_tables_round_trip_through_parquet_and_csv(scored, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tables = item_tables(scored)
    paths = tables.write(tmp_path / "items")
    images = pd.read_parquet(paths["images"])
    assert images["filename"].tolist() == tables.images["filename"].tolist()
    first = tables.images.iloc[0]
    assert [list(box) for box in images.iloc[0]["gold_boxes_xyxy"]] == first["gold_boxes_xyxy"]
    cases = pd.read_parquet(paths["cases"])
    assert cases["top1-lexicon"].tolist() == tables.cases["top1-lexicon"].tolist()
    text = pd.read_csv(paths["images_csv"])
    assert json.loads(text.loc[0, "gold_boxes_xyxy"]) == first["gold_boxes_xyxy"]
    # Boxes are [x1, y1, x2, y2]: the release's [x, y, w, h] converted.
    x, y, w, h = scored.release.images[0].boxes[0]
    assert first["gold_boxes_xyxy"][0] == pytest.approx([x, y, x + w, y + h])


def test_a_full_disk_while_writing_a_table_names_that_table_and_keeps_the_earlier_ones(
    scored,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno
    import os

    from novabench.errors import NovaOutputError

    tables = item_tables(scored)
    folder = tmp_path / "items"
    tables.write(folder)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}

    def no_space(self: pd.DataFrame, path: object, **options: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pd.DataFrame, "to_csv", no_space)
    with pytest.raises(NovaOutputError) as caught:
        tables.write(folder)
    assert str(caught.value) == f"cannot write {folder / 'images.csv'}: no space left on the device"
    # images.parquet was rewritten with the same content before images.csv failed
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


def test_breakdowns_cover_every_item_and_match_the_tables(scored) -> None:  # type: ignore[no-untyped-def]
    report = scored.report
    images = item_tables(scored).images
    localization = report["breakdowns"]["localization"]
    assert list(localization) == [
        "pathology_category",
        "sequence",
        "plane",
        "n_gold_boxes",
        "gold_box_size",
        "images_per_case",
    ]
    assert list(report["breakdowns"]["captioning"]) == [
        "pathology_category",
        "sequence",
        "plane",
        "images_per_case",
    ]
    assert list(report["breakdowns"]["diagnosis"]) == ["pathology_category", "images_per_case"]
    for task, unit_count in (
        ("localization", len(images)),
        ("diagnosis", report["tasks"]["diagnosis"]["metrics"]["n_cases"]),
    ):
        for dimension, rows in report["breakdowns"][task].items():
            assert sum(row["n"] for row in rows) == unit_count, (task, dimension)
            for row in rows:
                assert row["too_small"] == (row["n"] < 10)
    # Every category cell is the mean of its images' hits, with the project's bootstrap.
    for row in localization["pathology_category"]:
        group = images[images["category"] == row["group"]]
        hits = group["hit_30"].astype(bool).astype(float).tolist()
        assert close(row["mAP@30"], float(np.mean(hits)))
        if len(set(hits)) > 1:
            cases = group["case_id"].tolist()  # the group's images of each drawn case
            expected = percentile_bootstrap_ratio(hits, n_resamples=200, seed=4, cases=cases)
            assert row["mAP@30_ci"] == pytest.approx(list(expected), abs=1e-12)
    sizes = {row["group"]: row["n"] for row in localization["gold_box_size"]}
    assert sizes == images["gold_box_size"].value_counts().to_dict()
    sequences = {row["group"] for row in localization["sequence"]}
    assert sequences <= {"FLAIR", "T1", "T1 with contrast", "T2", "DWI/ADC", "multiple", "unstated"}
    assert len(sequences) >= 3  # the sample names several sequences
    markdown = render_markdown(report)
    assert "### localization by pathology category" in markdown and "(too small)" in markdown


def test_localization_groups_prepared_alone_equal_the_whole_evaluation_restricted(
    scored,  # type: ignore[no-untyped-def]
) -> None:
    # The report prepares each localisation group on its own images (faster); restricting
    # the whole evaluation to the group must give the same values and intervals.
    evaluation = scored.evaluations["localization"]
    groups = [facts.groups["gold_box_size"] for facts in scored.images]
    keys = list(scored.report["breakdowns"]["localization"]["gold_box_size"][0])[3:]
    restricted = break_down(
        evaluation,
        groups,
        keys=[k for k in keys if not k.endswith("_ci")],
        order=("small", "medium", "large", "none"),
        n_resamples=200,
        seed=4,
        clusters=[image.case_id for image in scored.release.images],
    )
    assert len(restricted) >= 2
    for expected, row in zip(
        restricted, scored.report["breakdowns"]["localization"]["gold_box_size"]
    ):
        assert row.keys() == expected.keys()
        for key, value in expected.items():
            if isinstance(value, float):
                assert row[key] == pytest.approx(value, abs=1e-12), key
            elif isinstance(value, list):
                assert row[key] == pytest.approx(value, abs=1e-12), key
            else:
                assert row[key] == value, key


def test_small_groups_are_flagged_not_hidden(sample_release: Path, floor_predictions: Path) -> None:
    report = score_predictions(
        sample_release,
        floor_predictions,
        tasks=["diagnosis"],
        n_resamples=0,
        min_group_size=1000,
    ).report
    rows = report["breakdowns"]["diagnosis"]["pathology_category"]
    assert rows and all(row["too_small"] and row["top1-lexicon_ci"] is None for row in rows)
    assert report["breakdown_settings"]["min_group_size"] == 1000
    with pytest.raises(NovaInputError, match="min_group_size"):
        score_predictions(sample_release, floor_predictions, min_group_size=0)


def rater_rows() -> list[dict]:
    """Two images with gold and rater boxes whose IoUs are known by hand."""
    rows = default_rows(n_cases=2)[:2]  # case0001_001, case0002_001
    gold_a, gold_b = [100, 100, 100, 100], [10, 10, 20, 20]

    def box(values: list[float], source: str) -> dict:
        return dict(zip(("x", "y", "width", "height"), map(float, values)), source=source)

    rows[0]["bboxes"] = [
        box(gold_a, "gold"),
        box([100, 100, 100, 50], "rater1"),  # IoU 5000/10000 = 0.5 with gold
        box([150, 100, 100, 100], "rater2"),  # IoU 5000/15000 = 1/3 with gold
    ]  # rater1 vs rater2: overlap 50 x 50 = 2500, union 5000 + 10000 - 2500 -> 0.2
    rows[1]["bboxes"] = [box(gold_b, "gold"), box(gold_b, "rater2")]  # rater1 drew nothing
    return rows


def test_human_reference_scores_the_raters_like_a_model(tmp_path: Path) -> None:
    release = write_v1_release(tmp_path / "nova", rater_rows())
    images = read_release(release).images
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(json.dumps({"filename": i.filename, "boxes": []}) + "\n" for i in images)
    )
    scored = score_predictions(release, predictions, n_resamples=0)
    section = scored.report["human_reference"]["localization"]
    assert section["available"] and section["raters"] == {"rater_1": "rater1", "rater_2": "rater2"}
    # Best IoUs by hand: rater1 (0.5, 0: no box), rater2 (1/3, 1.0), rater1 vs rater2 (0.2, 0).
    one, two, both = (
        section[k] for k in ("rater_1_vs_gold", "rater_2_vs_gold", "rater_1_vs_rater_2")
    )
    assert (one["mAP@30"], one["mAP@50"], one["FNR"]) == (0.5, 0.5, 0.5)
    assert (two["mAP@30"], two["mAP@50"]) == (1.0, 0.5)
    assert (both["mAP@30"], both["mAP@50"]) == (0.0, 0.0)
    assert one["n_images_with_rater_boxes"] == 1
    table = item_tables(scored).images
    assert table["rater_1_best_iou"].tolist() == pytest.approx([0.5, 0.0])
    assert table["rater_2_best_iou"].tolist() == pytest.approx([1 / 3, 1.0])
    assert table["rater_1_boxes_xyxy"].tolist()[1] == []
    markdown = render_markdown(scored.report)
    assert "## Human reference (localization)" in markdown
    assert "| mAP@30 | 0.0 | 50.0 | 100.0 | 0.0 |" in markdown
    assert (
        "localization: human reference, mAP@30: rater 1 vs gold 50.0, rater 2 vs gold 100.0, "
        "rater 1 vs rater 2 0.0" in render_table(scored.report)
    )


def test_a_release_without_rater_boxes_says_so(tmp_path: Path) -> None:
    rows = default_rows(n_cases=2)
    for row in rows:
        row["bboxes"] = [b for b in row["bboxes"] or [] if b["source"] == "gold"] or None
    release = write_v1_release(tmp_path / "nova", rows)
    predictions = tmp_path / "p.jsonl"
    images = read_release(release).images
    predictions.write_text(
        "".join(json.dumps({"filename": i.filename, "boxes": i.boxes}) + "\n" for i in images)
    )
    scored = score_predictions(release, predictions, n_resamples=0)
    section = scored.report["human_reference"]["localization"]
    assert section["available"] is False and "no rater boxes" in section["reason"]
    assert "No human reference: the release has no rater boxes" in render_markdown(scored.report)
    assert "localization: no human reference (the release" in render_table(scored.report)
    table = item_tables(scored).images
    assert table["rater_1_boxes_xyxy"].isna().all() and table["rater_2_best_iou"].isna().all()


def test_answered_only_scores_the_answered_items_and_says_so(
    sample_release: Path, tmp_path: Path
) -> None:
    release = read_release(sample_release)
    answered = release.images[:7]
    half = release.images[7:]
    # Perfect boxes on the answered images: every answered image with gold is a hit.
    predictions = tmp_path / "partial.jsonl"
    lines = [{"filename": i.filename, "boxes": i.boxes} for i in answered]
    lines += [
        {"case_id": release.cases()[0].case_id, "diagnoses": [release.cases()[0].final_diagnosis]}
    ]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))

    partial = score_predictions(sample_release, predictions, n_resamples=0, answered_only=True)
    report = partial.report
    metrics = report["tasks"]["localization"]["metrics"]
    with_gold = sum(bool(i.boxes) for i in answered)
    assert report["answered_only"] is True
    assert report["tasks"]["localization"]["coverage"]["scored"] == len(answered)
    assert metrics["n_images"] == len(answered)
    assert metrics["mAP@30"] == pytest.approx(with_gold / len(answered))
    assert (
        metrics["hit@30"] == 1.0 and report["tasks"]["diagnosis"]["metrics"]["top1-lexicon"] == 1.0
    )
    assert len(item_tables(partial).images) == len(answered)
    assert len(item_tables(partial).cases) == 1
    first_line = "answered items only: localization 7 of"
    table = render_table(report).splitlines()
    assert table[0].startswith("notice: NOT THE REAL DATA")  # the synthetic sample
    assert next(i for i, t in enumerate(table) if t.startswith(first_line)) < next(
        i for i, t in enumerate(table) if t.startswith("task ")
    )
    markdown = render_markdown(report).splitlines()
    assert markdown[0].startswith("# NOVA evaluation report: ")
    assert markdown[0].endswith("(answered items only)")
    assert markdown[4].startswith(f"**{first_line}")  # after the synthetic notice
    # Without the option the unanswered images are misses, as before.
    full = score_predictions(sample_release, predictions, n_resamples=0).report
    assert full["answered_only"] is False and "answered items only" not in render_table(full)
    total_gold = with_gold + sum(bool(i.boxes) for i in half)
    assert full["tasks"]["localization"]["metrics"]["hit@30"] == pytest.approx(
        with_gold / total_gold
    )
    # A failed model call is an answer of the run: scored, as a miss.
    failed = release.images[7]
    error_line = {"filename": failed.filename, "task": "localization", "error": "timeout"}
    with predictions.open("a") as handle:
        handle.write(json.dumps(error_line) + "\n")
    with_error = score_predictions(sample_release, predictions, n_resamples=0, answered_only=True)
    error_metrics = with_error.report["tasks"]["localization"]["metrics"]
    assert error_metrics["n_images"] == len(answered) + 1
    assert error_metrics["mAP@30"] == pytest.approx(with_gold / (len(answered) + 1))
    assert item_tables(with_error).images["localization_status"].tolist()[-1] == "error"
    # A task chosen but never answered leaves nothing to score.
    with pytest.raises(NovaInputError, match="no line answers captioning"):
        score_predictions(
            sample_release, predictions, tasks=["captioning"], answered_only=True, n_resamples=0
        )


def test_category_map_overrides_the_taxonomy(
    sample_release: Path, floor_predictions: Path, tmp_path: Path
) -> None:
    first = read_release(sample_release).cases()[0].case_id
    tables = build_item_tables(
        sample_release,
        floor_predictions,
        ScoringOptions(n_resamples=0, caption_options=CAPTIONS),
        category_map=CategoryMap(by_case={first: "traumatic"}),
    )
    assert tables.cases.loc[0, ["category", "category_rule"]].tolist() == ["traumatic", "map-case"]
    assert (tables.images.loc[tables.images["case_id"] == first, "category"] == "traumatic").all()
    # A mapping file's path works as well, in the options as in the CLI.
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"case_id": {first: "degenerative"}}))
    report = score_predictions(
        sample_release, floor_predictions, tasks=["diagnosis"], n_resamples=0, category_map=path
    ).report
    groups = [row["group"] for row in report["breakdowns"]["diagnosis"]["pathology_category"]]
    assert "degenerative" in groups and report["breakdown_settings"]["category_map"] == str(path)


@pytest.mark.parametrize(
    ("caption", "sequence", "plane"),
    [
        ("Axial FLAIR image: hyperintensity.", "FLAIR", "axial"),
        ("Axial T2-FLAIR", "FLAIR", "axial"),
        ("Coronal T2-weighted image", "T2", "coronal"),
        ("Sagittal T1WI", "T1", "sagittal"),
        ("Axial T1 C+ shows ring enhancement", "T1 with contrast", "axial"),
        ("Post-gadolinium T1-weighted image", "T1 with contrast", None),
        ("Contrast-enhanced image, transverse plane", "T1 with contrast", "axial"),
        ("Axial DWI (b1000) with low ADC", "DWI/ADC", "axial"),
        ("Axial T2* GRE: blooming", "SWI/GRE", "axial"),
        ("SWI minimum intensity projection", "SWI/GRE", None),
        ("Axial T2 and FLAIR images", "FLAIR", "axial"),  # T2 next to FLAIR is T2-FLAIR
        ("Axial T2 and DWI", "multiple", "axial"),
        ("Coronal and sagittal T1", "T1", "multiple"),
        ("Lesion at T10 level", None, None),  # a vertebra, not a sequence
        ("A lesion of the left thalamus.", None, None),
        ("", None, None),
    ],
)
def test_sequence_and_plane_from_captions(
    caption: str, sequence: str | None, plane: str | None
) -> None:
    assert parse_acquisition(caption) == (sequence, plane)


@pytest.mark.parametrize(
    ("boxes", "group"),
    [
        ([], "none"),
        ([[0, 0, 47, 48]], "small"),  # 2256 / 230400 = 0.98 %
        ([[0, 0, 48, 48]], "medium"),  # exactly 1 %
        ([[0, 0, 96, 120]], "medium"),  # exactly 5 %
        ([[0, 0, 97, 120]], "large"),
        ([[0, 0, 10, 10], [0, 0, 100, 120]], "large"),  # the largest box decides
    ],
)
def test_gold_box_size_thresholds(boxes: list[list[float]], group: str) -> None:
    assert gold_box_size(boxes, 480, 480)[0] == group


def test_nova_evaluate_writes_items_and_breakdowns(
    sample_release: Path, floor_predictions: Path, tmp_path: Path
) -> None:
    mapping = tmp_path / "map.csv"
    mapping.write_text("diagnosis,category\nCADASIL,traumatic\n")
    out = tmp_path / "report" / "report.json"
    code = main(
        [
            "evaluate",
            "--data",
            str(sample_release),
            "--predictions",
            str(floor_predictions),
            "--out",
            str(out),
            "--markdown",
            str(tmp_path / "report.md"),
            "--items",
            str(tmp_path / "items"),
            "--answered-only",
            "--category-map",
            str(mapping),
            "--min-group-size",
            "3",
            "--bootstrap",
            "20",
            "--exclude",
            "BERTScore-F1",
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    pins = report["items"]
    assert (pins["images"], pins["cases"]) == ("../items/images.parquet", "../items/cases.parquet")
    assert pins["sha256"] == {  # the report pins the bytes of every file it wrote
        name: hashlib.sha256((tmp_path / "items" / name).read_bytes()).hexdigest()
        for name in ("images.parquet", "images.csv", "cases.parquet", "cases.csv")
    }
    assert (out.parent / report["items"]["images"]).is_file()
    assert report["breakdown_settings"]["min_group_size"] == 3
    assert report["breakdown_settings"]["category_map"] == "../map.csv"  # relative to report
    assert report["answered_only"] is True
    assert "human_reference" in report and report["human_reference"]["localization"]["available"]
    cases = pd.read_parquet(tmp_path / "items" / "cases.parquet")
    cadasil = cases[cases["final_diagnosis"] == "CADASIL"]
    assert (cadasil["category"] == "traumatic").all()
    markdown = (tmp_path / "report.md").read_text()
    title = markdown.splitlines()[0]
    assert title.startswith("# NOVA evaluation report: ") and "(answered items only" in title
    assert "## Breakdowns" in markdown and "## Human reference (localization)" in markdown


def test_nova_evaluate_refuses_a_bad_category_map(
    sample_release: Path,
    floor_predictions: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mapping = tmp_path / "map.csv"
    mapping.write_text("case_id,category\ncase0001,tumours\n")
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(floor_predictions)]
    code = main([*arguments, "--out", str(tmp_path / "r.json"), "--category-map", str(mapping)])
    assert code != 0
    error = capsys.readouterr().err
    assert "line 2" in error and "tumours" in error and not (tmp_path / "r.json").exists()


def test_group_intervals_from_the_fast_path_equal_the_resample_loop() -> None:
    # A group of an evaluation with aggregate_resamples is bootstrapped through it; the rows
    # must equal those of the one-resample-at-a-time path, interval for interval.
    from novabench.metrics.captioning import prepare_captioning
    from novabench.report import breakdowns

    rng = np.random.default_rng(7)
    words = ["axial", "flair", "lesion", "frontal", "t2", "enhancement", "normal", "mass"]
    references = [" ".join(rng.choice(words, size=6)) for _ in range(60)]
    predictions = [" ".join(rng.choice(words, size=5)) for _ in range(60)]
    evaluation = prepare_captioning(
        predictions, references, exclude=["BERTScore-F1", "METEOR", "BLEU-4"]
    )
    groups = [str(label) for label in rng.choice(["a", "b", "c"], size=60)]
    options = {"keys": ["ROUGE-L", "ClinicalF1-lexicon"], "n_resamples": 200, "min_group_size": 1}
    fast = break_down(evaluation, groups, **options)
    slow = break_down(
        evaluation,
        groups,
        prepare_group=lambda positions: breakdowns._Group(evaluation, positions),
        **options,
    )
    # A caption group is the evaluation of its own pairs (subset), resampled through the
    # vectorised path like the whole.
    from novabench.metrics.stats import SupportsResampledAggregate

    group = breakdowns._group(evaluation, np.arange(3))
    assert isinstance(group, SupportsResampledAggregate) and group.n_items == 3
    assert fast == slow and all(row["ROUGE-L_ci"] is not None for row in fast)


def test_a_caption_cell_scores_its_group_once_and_its_interval_is_unchanged(monkeypatch) -> None:
    # The cell's values are the bootstrap's full-set scores: computed once per cell, and the
    # interval is the one the bootstrap gives when it scores the group itself.
    from novabench.metrics.captioning import CaptioningEvaluation, prepare_captioning
    from novabench.metrics.stats import bootstrap_confidence_intervals

    rng = np.random.default_rng(11)
    words = ["axial", "flair", "lesion", "frontal", "t2", "enhancement", "normal", "mass"]
    references = [" ".join(rng.choice(words, size=6)) for _ in range(40)]
    predictions = [" ".join(rng.choice(words, size=5)) for _ in range(40)]
    evaluation = prepare_captioning(predictions, references, exclude=["BERTScore-F1", "METEOR"])
    groups = [str(label) for label in rng.choice(["a", "b"], size=40)]
    cases = [f"c{i // 3}" for i in range(40)]
    expected = {
        group: bootstrap_confidence_intervals(
            evaluation.subset(np.flatnonzero(np.array(groups) == group)),
            n_resamples=120,
            clusters=[cases[i] for i in np.flatnonzero(np.array(groups) == group)],
        )
        for group in ("a", "b")
    }
    calls: list[int] = []
    original = CaptioningEvaluation.aggregate

    def counted(self, indices=None):  # type: ignore[no-untyped-def]
        if indices is None:
            calls.append(self.n_items)
        return original(self, indices)

    monkeypatch.setattr(CaptioningEvaluation, "aggregate", counted)
    rows = break_down(
        evaluation,
        groups,
        keys=["ROUGE-L", "BLEU-4"],
        n_resamples=120,
        min_group_size=1,
        clusters=cases,
    )
    sizes = sorted(row["n"] for row in rows)
    assert sorted(calls) == sizes  # one full-set score per cell, not two
    for row in rows:
        for key in ("ROUGE-L", "BLEU-4"):
            assert tuple(row[f"{key}_ci"]) == expected[row["group"]][key]


@pytest.mark.parametrize("n_resamples", [0, 150])
def test_localisation_groups_prepared_alone_equal_the_restricted_evaluation(n_resamples) -> None:
    # The report prepares each localisation group on its own images (cheaper to resample);
    # its rows, intervals included, must equal those of the whole evaluation restricted.
    import warnings

    from novabench.metrics.localization import LocalizationWarning
    from novabench.metrics.tasks import prepare_task
    from novabench.report.breakdowns import SubsetPreparer
    from novabench.tasks import behaviour

    rng = np.random.default_rng(12)
    predictions, references = [], []
    for _ in range(80):
        gold = rng.integers(0, 40, (int(rng.integers(0, 3)), 4)).astype(float) + [0, 0, 1, 1]
        boxes = rng.integers(0, 40, (int(rng.integers(0, 4)), 4)).astype(float) + [0, 0, 1, 1]
        if len(gold) and len(boxes) and rng.random() < 0.6:
            boxes[0] = gold[0] + rng.integers(0, 2, 4)
        scores = rng.choice([0.2, 0.5, 0.9], len(boxes)).tolist()
        predictions.append({"boxes": boxes.tolist(), "scores": scores})
        references.append({"boxes": gold.tolist()})
    groups = [str(label) for label in rng.choice(["a", "b", "c"], size=80)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        evaluation = prepare_task("localization", predictions, references)
        assert behaviour("localization").groups_prepared_apart  # what the report does
        preparer = SubsetPreparer("localization", predictions, references, {})
        options = {
            "keys": ["mAP@30", "COCO-AP@50", "COCO-AP@50:95", "FP30"],
            "min_group_size": 1,
            "coco_ap_intervals": True,  # the prepared groups exist for COCO AP's resampling
        }
        alone = break_down(
            evaluation, groups, prepare_group=preparer, n_resamples=n_resamples, **options
        )
        restricted = break_down(evaluation, groups, n_resamples=n_resamples, **options)
    assert alone == restricted
    assert all(row["COCO-AP@50"] is not None for row in alone)
    assert all((row["COCO-AP@50_ci"] is not None) == (n_resamples > 0) for row in alone)


def test_no_breakdowns_leaves_every_other_figure_unchanged(
    sample_release: Path,
    floor_predictions: Path,
    scored,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    quick = score_predictions(
        sample_release,
        floor_predictions,
        n_resamples=200,
        seed=4,
        caption_options=CAPTIONS,
        breakdowns=False,
    ).report
    full = scored.report
    assert quick["breakdowns"] == {} and quick["breakdown_settings"]["computed"] is False
    assert full["breakdowns"] and full["breakdown_settings"]["computed"] is True
    assert quick["tasks"] == full["tasks"]
    assert quick["human_reference"] == full["human_reference"]
    out = tmp_path / "report.json"
    code = main(
        [
            "evaluate", "--data", str(sample_release), "--predictions", str(floor_predictions),
            "--out", str(out), "--markdown", str(tmp_path / "report.md"), "--no-breakdowns",
            "--bootstrap", "20", "--exclude", "BERTScore-F1", "--exclude", "METEOR",
        ]
    )  # fmt: skip
    assert code == 0
    assert json.loads(out.read_text())["breakdowns"] == {}
    markdown = (tmp_path / "report.md").read_text()
    assert "## Breakdowns\n\nNot computed (`--no-breakdowns`)." in markdown


COCO_AP = ("COCO-AP@30", "COCO-AP@50", "COCO-AP@50:95")


def _without_coco_intervals(value):  # type: ignore[no-untyped-def]
    """A report part with every COCO AP interval taken out (cells' ``_ci``, interval maps)."""
    if isinstance(value, dict):
        return {
            key: _without_coco_intervals(inner)
            for key, inner in value.items()
            if key not in {f"{name}_ci" for name in COCO_AP}
            and not (key in COCO_AP and isinstance(inner, list))  # an interval, not a value
        }
    if isinstance(value, list):
        return [_without_coco_intervals(inner) for inner in value]
    return value


def test_coco_ap_intervals_only_in_the_headline_by_default(
    sample_release: Path,
    floor_predictions: Path,
    scored,  # type: ignore[no-untyped-def]
) -> None:
    # COCO AP's resampling is most of a breakdown's cost: cells and the human reference keep
    # its values without an interval unless asked; every other number is the same either way.
    everywhere = score_predictions(
        sample_release,
        floor_predictions,
        n_resamples=200,
        seed=4,
        caption_options=CAPTIONS,
        coco_ap_intervals="all",
    ).report
    default = scored.report
    assert default["breakdown_settings"]["coco_ap_intervals"] == "headline"
    assert everywhere["breakdown_settings"]["coco_ap_intervals"] == "all"
    assert default["tasks"] == everywhere["tasks"]
    assert all(default["tasks"]["localization"]["confidence_intervals"][k] for k in COCO_AP)
    cells = [row for rows in default["breakdowns"]["localization"].values() for row in rows]
    cells_all = [row for rows in everywhere["breakdowns"]["localization"].values() for row in rows]
    assert all(row[f"{k}_ci"] is None for row in cells for k in COCO_AP)
    assert any(row["COCO-AP@50_ci"] is not None for row in cells_all)
    for row, row_all in zip(cells, cells_all):
        assert all(row[k] == row_all[k] for k in COCO_AP)  # the values stay
    human = default["human_reference"]["localization"]["rater_1_vs_gold"]
    human_all = everywhere["human_reference"]["localization"]["rater_1_vs_gold"]
    assert not set(COCO_AP) & set(human["confidence_intervals"])
    assert set(COCO_AP) <= set(human_all["confidence_intervals"])
    assert "--coco-ap-intervals all" in default["human_reference"]["localization"]["notes"][-1]
    default_rest = {k: v for k, v in default.items() if k not in ("created_at", "human_reference")}
    everywhere_rest = {
        k: v for k, v in everywhere.items() if k not in ("created_at", "human_reference")
    }
    default_rest["breakdown_settings"].pop("coco_ap_intervals")
    everywhere_rest["breakdown_settings"].pop("coco_ap_intervals")
    assert _without_coco_intervals(default_rest) == _without_coco_intervals(everywhere_rest)
    human_section = dict(default["human_reference"]["localization"])
    human_section["notes"] = human_section["notes"][:-1]
    assert _without_coco_intervals(human_section) == _without_coco_intervals(
        everywhere["human_reference"]["localization"]
    )


def test_localisation_resamples_without_coco_ap_keep_every_other_key() -> None:
    from novabench.metrics.localization import prepare_localization

    gold = [{"boxes": [[10, 10, 20, 20]]}, {"boxes": [[0, 0, 8, 8]]}, {"boxes": []}]
    predictions = [
        {"boxes": [[11, 10, 20, 20], [50, 50, 5, 5]], "scores": [0.9, 0.4]},
        {"boxes": [[30, 30, 8, 8]], "scores": [0.7]},
        {"boxes": [[1, 1, 3, 3]], "scores": [0.2]},
    ]
    evaluation = prepare_localization(predictions, gold)
    # Every image drawn by some row, and (as in a breakdown group) only images 0 and 1.
    for indices in (np.array([[0, 0, 1], [0, 1, 2], [1, 2, 2]]), np.array([[0, 0, 1], [1, 1, 0]])):
        full = evaluation.aggregate_resamples(indices)
        light = evaluation.aggregate_resamples(indices, coco_ap=False)
        assert set(full) - set(light) == set(COCO_AP)
        assert all(np.array_equal(light[k], full[k], equal_nan=True) for k in light)
        for row, drawn in enumerate(indices):
            one = evaluation.aggregate(drawn)
            assert all(light[k][row] == one[k] or math.isnan(one[k]) for k in light)
    # Row 1 of the first set draws each image once: hits at 0.30 on image 0 only (IoU 0.9
    # there), so 1/3; row 1 of the second draws image 1 twice, image 0 once: 1/3 again.
    assert light["mAP@30"][1] == pytest.approx(1 / 3)
    assert evaluation.aggregate_resamples(np.array([[0, 1, 2]]), coco_ap=False)["mAP@30"][
        0
    ] == pytest.approx(1 / 3)


def test_coco_ap_intervals_setting_is_checked() -> None:
    with pytest.raises(NovaInputError, match="coco_ap_intervals"):
        ScoringOptions(coco_ap_intervals="breakdowns")


def test_cli_coco_ap_intervals_option(
    sample_release: Path,
    floor_predictions: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(floor_predictions)]
    arguments += ["--bootstrap", "20", "--exclude", "BERTScore-F1", "--exclude", "METEOR"]
    out = tmp_path / "all.json"
    assert main([*arguments, "--out", str(out), "--coco-ap-intervals", "all", "--quiet"]) == 0
    report = json.loads(out.read_text())
    assert report["breakdown_settings"]["coco_ap_intervals"] == "all"
    cells = [row for rows in report["breakdowns"]["localization"].values() for row in rows]
    assert any(row["COCO-AP@30_ci"] is not None for row in cells)
    capsys.readouterr()
    refused = tmp_path / "refused.json"
    assert main([*arguments, "--out", str(refused), "--coco-ap-intervals", "cells"]) == 2
    error = capsys.readouterr().err.strip()
    assert "--coco-ap-intervals" in error and "cells" in error and "\n" not in error
    assert not refused.exists()


def test_box_columns_say_their_convention_and_score_as_xyxy(scored) -> None:  # type: ignore[no-untyped-def]
    """user30: the tables wrote [x1, y1, x2, y2] under plain names while the module takes
    [x, y, w, h] by default; every box column now says xyxy, in Parquet and CSV alike."""
    from novabench.metrics.tasks import compute_task
    from novabench.report.items import BOX_COLUMNS_RENAMED, with_box_columns_named

    tables = item_tables(scored)
    box_columns = [
        column
        for column in IMAGE_COLUMNS
        if column.endswith(("boxes", "boxes_xyxy")) and not column.startswith("n_")
    ]
    assert box_columns == [
        "gold_boxes_xyxy",
        "rater_1_boxes_xyxy",
        "rater_2_boxes_xyxy",
        "predicted_boxes_xyxy",
    ]
    assert set(BOX_COLUMNS_RENAMED.values()) == set(box_columns)
    images = tables.images
    assert not set(BOX_COLUMNS_RENAMED) & set(images.columns)  # no plain name left
    # Scored again as xyxy, the table's boxes give the report's figures; read as the
    # module's default xywh they would not (a corner read as a size).
    scored_rows = images[images["localization_status"].notna()]
    predictions = [
        {"boxes": list(map(list, b)) if b is not None else []}
        for b in scored_rows["predicted_boxes_xyxy"]
    ]
    references = [{"boxes": list(map(list, b))} for b in scored_rows["gold_boxes_xyxy"]]
    as_xyxy = compute_task(
        "localization", predictions, references, box_format="xyxy", reference_box_format="xyxy"
    )
    report_value = scored.evaluations["localization"].aggregate()["mAP@30"]
    assert as_xyxy["mAP@30"] == report_value
    # A table written before the names said it reads as one written now.
    older = images.rename(columns={new: old for old, new in BOX_COLUMNS_RENAMED.items()})
    assert list(with_box_columns_named(older).columns) == list(images.columns)
