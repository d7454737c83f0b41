"""nova evaluate and the report: values known by construction, coverage counts, file rules, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from novabench.cli import main
from novabench.data.release import is_placeholder_diagnosis, read_release
from novabench.errors import NovaInputError
from novabench.report import evaluate_predictions, render_markdown, render_table
from novabench.run.predictions import write_manifest
from tests.bootstrap_reference import percentile_bootstrap_ratio
from tests.release_factory import default_rows, write_v1_release

FAST_CAPTIONS = {"exclude": ["BERTScore-F1", "METEOR"]}


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def perfect_lines(release_dir: Path) -> list[dict]:
    """Predictions equal to the ground truth: gold boxes, reference captions, final diagnoses."""
    release = read_release(release_dir)
    lines = [
        {"filename": i.filename, "boxes": i.boxes, "caption": i.caption} for i in release.images
    ]
    lines += [{"case_id": c.case_id, "diagnoses": [c.final_diagnosis]} for c in release.cases()]
    return lines


def test_perfect_predictions_score_one_everywhere(sample_release: Path, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "perfect.jsonl", perfect_lines(sample_release))
    report = evaluate_predictions(
        sample_release, path, n_resamples=0, caption_options=FAST_CAPTIONS
    )
    localization = report["tasks"]["localization"]["metrics"]
    # Every gold box predicted exactly: IoU 1 everywhere (AP is 1 - 2.2e-16 as in pycocotools).
    for key in ("COCO-AP@30", "COCO-AP@50", "COCO-AP@50:95"):
        assert localization[key] == pytest.approx(1.0, abs=1e-12)
    # The protocol's mAP divides by every image: those without gold can never be hits.
    images = read_release(sample_release).images
    with_gold = sum(bool(image.boxes) for image in images)
    assert 0 < with_gold < len(images)  # the sample has normal images, so this has teeth
    for key in ("mAP@30", "mAP@50", "mAP@50:95"):
        assert localization[key] == with_gold / len(images)
    assert localization["hit@30"] == localization["ACC50"] == localization["TP30"] == 1.0
    assert localization["FP30"] == localization["FNR"] == 0.0
    captioning = report["tasks"]["captioning"]["metrics"]
    assert captioning["BLEU-4"] == pytest.approx(1.0) and captioning["ROUGE-L"] == pytest.approx(
        1.0
    )
    assert "BERTScore-F1" not in captioning and "METEOR" not in captioning
    diagnosis = report["tasks"]["diagnosis"]["metrics"]
    release = read_release(sample_release)
    placeholders = sum(is_placeholder_diagnosis(c.final_diagnosis) for c in release.cases())
    assert placeholders >= 1  # the sample carries one on purpose
    assert (
        diagnosis["top1-lexicon"] == 1.0 and diagnosis["n_cases_without_reference"] == placeholders
    )
    for task in ("localization", "captioning", "diagnosis"):
        assert report["tasks"][task]["coverage"]["missing"] == 0


def test_missing_items_count_as_no_prediction(sample_release: Path, tmp_path: Path) -> None:
    release = read_release(sample_release)
    with_gold = [i for i in release.images if i.boxes]
    kept = with_gold[: len(with_gold) // 2]
    lines = [{"filename": i.filename, "boxes": i.boxes} for i in kept]
    report = evaluate_predictions(
        sample_release, write_lines(tmp_path / "half.jsonl", lines), n_resamples=0
    )
    assert sorted(report["tasks"]) == ["localization"]
    metrics = report["tasks"]["localization"]["metrics"]
    coverage = report["tasks"]["localization"]["coverage"]
    assert coverage["missing"] == len(release.images) - len(kept)
    # Hit rate: answered images with gold over all images with gold; the rest gave nothing (FNR).
    assert metrics["hit@30"] == pytest.approx(len(kept) / len(with_gold))
    assert metrics["FNR"] == pytest.approx(1 - len(kept) / len(with_gold))


def test_bootstrap_intervals_and_rendering(sample_release: Path, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "perfect.jsonl", perfect_lines(sample_release)[:5])
    report = evaluate_predictions(
        sample_release, path, n_resamples=200, seed=3, caption_options=FAST_CAPTIONS
    )
    intervals = report["tasks"]["localization"]["confidence_intervals"]
    # The five answered images (the first five by filename) get their gold boxes exactly;
    # every other image counts as answered with nothing. hit@30 resamples all images.
    images = read_release(sample_release).images
    has_gold = [1.0 if image.boxes else 0.0 for image in images]
    hits = [gold if index < 5 else 0.0 for index, gold in enumerate(has_gold)]
    point = report["tasks"]["localization"]["metrics"]["hit@30"]
    assert point == pytest.approx(sum(hits) / sum(has_gold))
    # Whole cases drawn: every image of a drawn case (images of a case are not independent).
    cases = [image.case_id for image in images]
    expected = percentile_bootstrap_ratio(hits, has_gold, n_resamples=200, seed=3, cases=cases)
    assert tuple(intervals["hit@30"]) == pytest.approx(expected, abs=1e-12)
    # The five images are one case's: a resample that does not draw it scores 0.
    assert 0.0 <= expected[0] < point < expected[1] < 1.0
    table = render_table(report)
    assert "95% CI" in table and "hit@30" in table and "missing" in table
    markdown = render_markdown(report)
    assert (
        markdown.startswith("# NOVA evaluation report") and "| localization | hit@30 |" in markdown
    )


def test_per_task_files_combine_and_duplicates_are_refused(
    sample_release: Path, tmp_path: Path
) -> None:
    lines = perfect_lines(sample_release)
    images = write_lines(tmp_path / "images.jsonl", [line for line in lines if "filename" in line])
    cases = write_lines(tmp_path / "cases.jsonl", [line for line in lines if "case_id" in line])
    report = evaluate_predictions(
        sample_release, [images, cases], n_resamples=0, caption_options=FAST_CAPTIONS
    )
    assert sorted(report["tasks"]) == ["captioning", "diagnosis", "localization"]
    with pytest.raises(NovaInputError, match=r"images\.jsonl.*line 1"):
        evaluate_predictions(
            sample_release, [images, images], n_resamples=0, caption_options=FAST_CAPTIONS
        )


def test_an_answer_in_a_later_file_replaces_a_failed_attempt(
    sample_release: Path, tmp_path: Path
) -> None:
    first_case = read_release(sample_release).cases()[0]
    failed = write_lines(
        tmp_path / "a.jsonl",
        [{"case_id": first_case.case_id, "task": "diagnosis", "error": "timeout"}],
    )
    retried = write_lines(
        tmp_path / "b.jsonl",
        [{"case_id": first_case.case_id, "diagnoses": [first_case.final_diagnosis]}],
    )
    report = evaluate_predictions(sample_release, [failed, retried], n_resamples=0)
    assert report["tasks"]["diagnosis"]["coverage"]["errors"] == 0
    assert report["tasks"]["diagnosis"]["coverage"]["answered"] == 1


def test_box_convention_comes_from_the_run_manifest(sample_release: Path, tmp_path: Path) -> None:
    image = read_release(sample_release).images[0]
    # Pixel xyxy answer [10, 20, 110, 70] -> xywh [10, 20, 100, 50].
    path = write_lines(
        tmp_path / "raw.jsonl", [{"filename": image.filename, "raw_boxes": "[[10, 20, 110, 70]]"}]
    )
    write_manifest(path, {"box_convention": "xyxy_pixel"})
    report = evaluate_predictions(sample_release, path, n_resamples=0)
    assert report["predictions"]["box_convention"] == "xyxy_pixel"
    assert report["tasks"]["localization"]["coverage"]["parse_status"] == {"ok": 1}


def test_bertscore_without_a_model_offline_is_an_error_in_every_face(
    sample_release: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Offline and roberta-large not cached: nova evaluate stops as the functions do."""
    import novabench.metrics.bertscore as bertscore

    monkeypatch.setattr(bertscore, "_cached_config", lambda model: None)
    monkeypatch.setattr(bertscore, "hub_offline", lambda: True)
    image = read_release(sample_release).images[0]
    path = write_lines(
        tmp_path / "c.jsonl", [{"filename": image.filename, "caption": image.caption}]
    )
    with pytest.raises(NovaInputError, match="HF_HUB_OFFLINE is set") as caught:
        evaluate_predictions(sample_release, path, n_resamples=0)
    assert caught.value.source == "bertscore_model"
    out = tmp_path / "report.json"
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(path)]
    assert main([*arguments, "--out", str(out), "--bootstrap", "0"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--exclude BERTScore-F1" in error
    assert not out.exists()
    # Leaving the metric out scores the rest, and says nothing was dropped behind the back.
    report = evaluate_predictions(
        sample_release, path, n_resamples=0, caption_options={"exclude": ["BERTScore-F1"]}
    )
    assert "BERTScore-F1" not in report["tasks"]["captioning"]["metrics"]
    assert "ROUGE-L" in report["tasks"]["captioning"]["metrics"]


def test_bertscore_without_a_model_online_downloads_the_default(
    sample_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Online (HF_HUB_OFFLINE unset) the default model is fetched, as bert_score does."""
    import numpy as np

    import novabench.metrics.bertscore as bertscore

    downloads: list[str] = []
    scorers: list[tuple[str, int]] = []

    class FakeScorer:  # loading roberta-large is what the download is for; not here
        hash = "roberta-large_L17_no-idf_version=fake"

        def f1(self, candidates: list[str], references: list[str], batch_size: int) -> Any:
            return np.array([float(c == r) for c, r in zip(candidates, references)])

    def fake_scorer(model: str, layers: int) -> FakeScorer:
        scorers.append((model, layers))
        return FakeScorer()

    monkeypatch.setattr(bertscore, "_cached_config", lambda model: None)
    monkeypatch.setattr(bertscore, "hub_offline", lambda: False)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", downloads.append)
    monkeypatch.setattr(bertscore, "_bertscorer", fake_scorer)
    images = read_release(sample_release).images
    path = write_lines(
        tmp_path / "c.jsonl",
        [{"filename": image.filename, "caption": image.caption} for image in images],
    )
    report = evaluate_predictions(
        sample_release, path, n_resamples=0, caption_options={"exclude": ["METEOR"]}
    )
    assert downloads == ["roberta-large"]
    assert scorers == [("roberta-large", 17)]
    assert report["tasks"]["captioning"]["metrics"]["BERTScore-F1"] == pytest.approx(1.0)


def test_cli_writes_json_and_markdown(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_lines(tmp_path / "perfect.jsonl", perfect_lines(sample_release))
    out, markdown = tmp_path / "report.json", tmp_path / "report.md"
    code = main(
        [
            "evaluate",
            "--data",
            str(sample_release),
            "--predictions",
            str(path),
            "--out",
            str(out),
            "--markdown",
            str(markdown),
            "--bootstrap",
            "50",
            "--exclude",
            "BERTScore-F1",
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["tasks"]["diagnosis"]["metrics"]["top1-lexicon"] == 1.0
    assert markdown.read_text().startswith("# NOVA evaluation report")
    assert "top1-lexicon" in capsys.readouterr().out


def test_cli_names_the_bad_line(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"case_id": "case0001", "diagnoses": ["x"]}\n{"case_id": \n', encoding="utf-8")
    code = main(
        [
            "evaluate",
            "--data",
            str(sample_release),
            "--predictions",
            str(path),
            "--out",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 2
    assert "line 2" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_compare_a_model_with_itself_gives_no_difference(
    sample_release: Path, tmp_path: Path
) -> None:
    from novabench.report import compare_predictions

    path = write_lines(tmp_path / "perfect.jsonl", perfect_lines(sample_release))
    comparison = compare_predictions(
        sample_release, path, path, n_resamples=100, caption_options=FAST_CAPTIONS
    )
    assert sorted(comparison["tasks"]) == ["captioning", "diagnosis", "localization"]
    checked = []
    for task, rows in comparison["tasks"].items():
        for key, row in rows.items():
            if isinstance(row["difference"], float) and row["difference"] == row["difference"]:
                assert row["difference"] == 0.0, (task, key)
                assert row["p_value"] == 1.0, (task, key)
                checked.append((task, key))
    # Every headline score is defined on perfect predictions, so none may slip past the check.
    assert {
        ("localization", "hit@30"),
        ("captioning", "BLEU-4"),
        ("diagnosis", "top1-lexicon"),
    } <= set(checked)


def test_compare_perfect_against_nothing(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = read_release(sample_release)
    perfect = write_lines(tmp_path / "perfect.jsonl", perfect_lines(sample_release))
    # Model B answers every image with "no target": hit@30 is 1 for A and 0 for B.
    nothing = write_lines(
        tmp_path / "nothing.jsonl", [{"filename": i.filename, "boxes": []} for i in release.images]
    )
    out = tmp_path / "comparison.json"
    code = main(
        [
            "compare",
            "--data",
            str(sample_release),
            "--a",
            str(perfect),
            "--b",
            str(nothing),
            "--out",
            str(out),
            "--bootstrap",
            "200",
        ]
    )
    assert code == 0
    comparison = json.loads(out.read_text())
    assert sorted(comparison["tasks"]) == ["localization"]  # the only task both answer
    row = comparison["tasks"]["localization"]["hit@30"]
    assert (row["a"], row["b"], row["difference"]) == (1.0, 0.0, 1.0)
    # Every resample gives a difference of 1 (A hits, B misses): the interval is [1, 1].
    assert row["ci"] == [1.0, 1.0] and row["p_value"] < 0.01
    assert "hit@30" in capsys.readouterr().out


def test_null_reference_fields_through_nova_evaluate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A release whose first case has a null final diagnosis and a null caption.
    rows = default_rows(n_cases=3, image_size=(64, 64))
    rows[0]["meta"]["final_diagnosis"] = None
    rows[0]["caption_text"] = None
    release_dir = write_v1_release(tmp_path / "release", rows, image_size=(64, 64))
    release = read_release(release_dir)
    lines = [
        {"filename": i.filename, "boxes": i.boxes, "caption": i.caption or ""}
        for i in release.images
    ]
    lines += [
        {"case_id": c.case_id, "diagnoses": [c.final_diagnosis or "anything"]}
        for c in release.cases()
    ]
    predictions = write_lines(tmp_path / "pred.jsonl", lines)
    # Diagnosis: the null diagnosis is missing ground truth, counted like a placeholder.
    report = evaluate_predictions(release_dir, predictions, tasks=["diagnosis"], n_resamples=0)
    metrics = report["tasks"]["diagnosis"]["metrics"]
    placeholders = sum(is_placeholder_diagnosis(c.final_diagnosis) for c in release.cases())
    assert placeholders == 2  # the null one and the factory's placeholder case
    assert metrics["n_cases_without_reference"] == placeholders
    assert metrics["n_cases"] == release.n_cases - placeholders and metrics["top1-lexicon"] == 1.0
    # Captioning: the error names the image, not an index, and nothing is written.
    with pytest.raises(NovaInputError) as info:
        evaluate_predictions(
            release_dir,
            predictions,
            tasks=["captioning"],
            n_resamples=0,
            caption_options=FAST_CAPTIONS,
        )
    assert info.value.record == rows[0]["filename"] and info.value.field == "caption"
    out = tmp_path / "r.json"
    code = main(
        [
            "evaluate",
            "--data",
            str(release_dir),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--exclude",
            "BERTScore-F1",
        ]
    )
    assert code == 2 and rows[0]["filename"] in capsys.readouterr().err and not out.exists()


def test_outputs_never_overwrite_the_inputs(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictions = write_lines(tmp_path / "run.jsonl", perfect_lines(sample_release))
    before = predictions.read_bytes()
    base = ["--data", str(sample_release), "--exclude", "BERTScore-F1", "--bootstrap", "20"]
    assert (
        main(["evaluate", *base, "--predictions", str(predictions), "--out", str(predictions)]) == 2
    )
    assert "--out" in capsys.readouterr().err
    manifest = tmp_path / "run.jsonl.manifest.json"
    assert main(["evaluate", *base, "--predictions", str(predictions), "--out", str(manifest)]) == 2
    assert not manifest.exists()
    # A folder as --markdown is refused before the JSON report is written (nothing half done).
    (tmp_path / "adir").mkdir()
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                *base,
                "--predictions",
                str(predictions),
                "--out",
                str(out),
                "--markdown",
                str(tmp_path / "adir"),
            ]
        )
        == 2
    )
    assert "is a folder" in capsys.readouterr().err and not out.exists()
    assert (
        main(
            [
                "compare",
                *base,
                "--a",
                str(predictions),
                "--b",
                str(predictions),
                "--out",
                str(predictions),
            ]
        )
        == 2
    )
    assert predictions.read_bytes() == before


def test_report_json_is_strict_and_readable_by_the_lab(
    sample_release: Path, tmp_path: Path
) -> None:
    import os
    import stat

    # No predicted box at all: FP30 is undefined (NaN in Python), null in the file.
    lines = [
        {"filename": image.filename, "boxes": []} for image in read_release(sample_release).images
    ]
    predictions = write_lines(tmp_path / "empty.jsonl", lines)
    out = tmp_path / "report.json"
    umask = os.umask(0o022)
    try:
        assert (
            main(
                [
                    "evaluate",
                    "--data",
                    str(sample_release),
                    "--predictions",
                    str(predictions),
                    "--out",
                    str(out),
                    "--bootstrap",
                    "0",
                ]
            )
            == 0
        )
    finally:
        os.umask(umask)

    def refuse(constant: str) -> None:
        raise ValueError(f"non-standard JSON constant {constant}")

    report = json.loads(out.read_text(), parse_constant=refuse)
    assert report["tasks"]["localization"]["metrics"]["FP30"] is None
    assert report["data"]["fingerprint"] == read_release(sample_release).fingerprint()
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_a_run_made_on_other_data_is_refused_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write_v1_release(
        tmp_path / "first", default_rows(n_cases=3, image_size=(64, 64)), image_size=(64, 64)
    )
    rows = default_rows(n_cases=3, image_size=(64, 64))
    rows[0]["caption_text"] = "Edited caption."
    second = write_v1_release(tmp_path / "second", rows, image_size=(64, 64))
    predictions = write_lines(tmp_path / "run.jsonl", perfect_lines(first))
    write_manifest(
        predictions, {"model": "m", "release": {"fingerprint": read_release(first).fingerprint()}}
    )
    assert evaluate_predictions(first, predictions, n_resamples=0, tasks=["diagnosis"])["tasks"]
    with pytest.raises(NovaInputError) as info:
        evaluate_predictions(second, predictions, n_resamples=0, tasks=["diagnosis"])
    assert info.value.field == "release.fingerprint"
    # A Python call is told its argument, the command line (below) its option.
    assert info.value.message.endswith("or pass allow_other_release=True if the change is intended")
    report = evaluate_predictions(
        second, predictions, n_resamples=0, tasks=["diagnosis"], allow_other_release=True
    )
    assert report["tasks"]["diagnosis"]["metrics"]["top1-lexicon"] == 1.0
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(second),
                "--predictions",
                str(predictions),
                "--out",
                str(out),
                "--task",
                "diagnosis",
            ]
        )
        == 2
        and not out.exists()
    )
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("or pass --allow-other-release if the change is intended")
    )
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(second),
                "--predictions",
                str(predictions),
                "--out",
                str(out),
                "--task",
                "diagnosis",
                "--allow-other-release",
            ]
        )
        == 0
    )


def test_compare_shows_coverage_and_needs_resamples(
    sample_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = read_release(sample_release)
    full = write_lines(
        tmp_path / "full.jsonl",
        [{"case_id": c.case_id, "diagnoses": ["glioma"]} for c in release.cases()],
    )
    partial = write_lines(
        tmp_path / "partial.jsonl", [{"case_id": release.cases()[0].case_id, "diagnoses": ["x"]}]
    )
    out = tmp_path / "cmp.json"
    assert (
        main(
            [
                "compare",
                "--data",
                str(sample_release),
                "--a",
                str(full),
                "--b",
                str(partial),
                "--out",
                str(out),
                "--bootstrap",
                "50",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    n_cases = release.n_cases
    assert f"A (full) diagnosis: {n_cases}/{n_cases} answered, 0 missing" in printed
    assert f"B (partial) diagnosis: 1/{n_cases} answered, {n_cases - 1} missing" in printed
    assert json.loads(out.read_text())["coverage"]["diagnosis"]["b"]["missing"] == n_cases - 1
    assert (
        main(
            [
                "compare",
                "--data",
                str(sample_release),
                "--a",
                str(full),
                "--b",
                str(partial),
                "--out",
                str(out),
                "--force",  # the earlier comparison: only the resamples are refused
                "--bootstrap",
                "0",
            ]
        )
        == 2
    )
    assert "--bootstrap" in capsys.readouterr().err


def test_boxes_running_past_the_image_get_a_note(sample_release: Path, tmp_path: Path) -> None:
    release = read_release(sample_release)
    # Gold boxes written as [x1, y1, x2, y2] but read as [x, y, w, h]: most overrun the image.
    lines = [
        {"filename": i.filename, "boxes": [[x, y, x + w, y + h] for x, y, w, h in i.boxes]}
        for i in release.images
    ]
    report = evaluate_predictions(
        sample_release, write_lines(tmp_path / "xyxy.jsonl", lines), n_resamples=0
    )
    [note] = report["tasks"]["localization"]["notes"]
    assert "extend past their image" in note and "[x, y, width, height]" in note
    clean = [{"filename": i.filename, "boxes": i.boxes} for i in release.images]
    report = evaluate_predictions(
        sample_release, write_lines(tmp_path / "ok.jsonl", clean), n_resamples=0
    )
    assert report["tasks"]["localization"]["notes"] == []


def test_scoring_options_object_and_keywords_score_alike(
    sample_release: Path, tmp_path: Path
) -> None:
    from novabench.report import ScoringOptions

    path = write_lines(tmp_path / "perfect.jsonl", perfect_lines(sample_release))
    options = ScoringOptions(tasks=["Localisation", "diagnosis"], n_resamples=20, seed=4)
    assert options.tasks == ("localization", "diagnosis")  # spellings folded by the registry
    by_object = evaluate_predictions(sample_release, path, options)
    by_keywords = evaluate_predictions(
        sample_release, path, tasks=["localization", "diagnosis"], n_resamples=20, seed=4
    )
    for report in (by_object, by_keywords):
        report.pop("created_at")
    assert by_object == by_keywords
    assert by_object["bootstrap"] == {
        "n_resamples": 20,
        "confidence": 0.95,
        "seed": 4,
        "unit": "case",
    }
    # A keyword overrides the object; a keyword that is not an option is refused.
    overridden = evaluate_predictions(
        sample_release, path, options, tasks=["diagnosis"], n_resamples=0
    )
    assert sorted(overridden["tasks"]) == ["diagnosis"]
    with pytest.raises(TypeError, match="n_resample"):
        evaluate_predictions(sample_release, path, options, n_resample=0)
    with pytest.raises(NovaInputError, match="unknown task") as caught:
        ScoringOptions(tasks=["segmentation"])
    assert caught.value.field == "tasks"
