"""What a reader must see first: synthetic data, unusable answers, compare's warnings."""

from __future__ import annotations

import copy
import html
import json
import re
from pathlib import Path

import pytest

from novabench.report import evaluate_predictions, render_markdown, render_table
from novabench.report.html import render_comparison_html, render_html
from novabench.report.render import (
    render_comparison,
    render_comparison_markdown,
    report_first_lines,
)

FAST_CAPTIONS = {"exclude": ["BERTScore-F1", "METEOR"]}


@pytest.fixture(scope="module")
def floor_run(sample_floor_run: Path) -> Path:
    """The floor baselines' answers on the sample release (one run per session)."""
    return sample_floor_run


@pytest.fixture(scope="module")
def report(sample_release: Path, floor_run: Path) -> dict:
    return evaluate_predictions(
        sample_release, floor_run, n_resamples=0, seed=0, caption_options=FAST_CAPTIONS
    )


def _first_text_line(markdown: str) -> str:
    """The first line under the Markdown title."""
    return [line for line in markdown.splitlines()[1:] if line.strip()][0]


def test_a_report_on_the_synthetic_sample_says_so_first(report: dict) -> None:
    assert report["data"]["provenance"]["origin"] == "nova sample"
    table = render_table(report)
    assert table.splitlines()[0].startswith("notice: NOT THE REAL DATA: Synthetic sample")
    assert "not comparable" in table.splitlines()[0]
    assert _first_text_line(render_markdown(report)).startswith("**notice: NOT THE REAL DATA")
    page = render_html(report)
    read_first = page.split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert read_first.split("<li>", 2)[1].startswith("notice: NOT THE REAL DATA")


def test_a_release_without_provenance_has_no_notice(report: dict) -> None:
    official = {**report, "data": {**report["data"], "provenance": None}}
    assert "NOT THE REAL DATA" not in render_table(official)
    assert "NOT THE REAL DATA" not in render_markdown(official)
    assert "NOT THE REAL DATA" not in render_html(official)


def test_a_report_on_ingested_data_says_so_first(report: dict) -> None:
    """Data built with nova ingest is the user's own volumes: the published figures are not its."""
    ingested = {**report, "data": {**report["data"], "provenance": {"origin": "nova ingest"}}}
    first = render_table(ingested).splitlines()[0]
    assert first.startswith("notice: NOT THE NOVA RELEASE: Built with `nova ingest`")
    assert "published figures are on the real NOVA release and are not comparable" in first
    assert _first_text_line(render_markdown(ingested)).startswith("**notice: NOT THE NOVA RELEASE")
    read_first = render_html(ingested).split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert read_first.split("<li>", 2)[1].startswith("notice: NOT THE NOVA RELEASE")


def test_an_answered_only_report_gives_its_counts_second_in_every_output(report: dict) -> None:
    """The HTML page said "Answered items only." in its lead, after every warning, no counts."""
    scoped = copy.deepcopy(report)
    scoped["answered_only"] = True
    for task in scoped["tasks"].values():  # half of each task's items had a line
        task["coverage"]["scored"] = task["coverage"]["items"] // 2
    counts = ", ".join(
        f"{task} {section['coverage']['scored']} of {section['coverage']['items']}"
        for task, section in scoped["tasks"].items()
    )
    assert render_table(scoped).splitlines()[1].startswith("answered items only: ")
    first = report_first_lines(scoped)
    assert first[1].startswith("answered items only: ")
    for part in counts.split(", "):
        assert part in first[1]
    markdown = render_markdown(scoped)
    assert markdown.splitlines()[4] == f"**{first[1]}**"
    read_first = render_html(scoped).split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert read_first.split("<li>")[2] == f"{html.escape(first[1], quote=False)}</li>"
    assert "Answered items only." not in render_html(scoped)


def _empty_captions(sample_release: Path, tmp_path: Path) -> Path:
    from novabench.data.release import read_release

    release = read_release(sample_release)
    lines = [
        {"filename": image.filename, "task": "captioning", "raw_caption": ""}
        for image in release.images
    ]
    path = tmp_path / "empty.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_all_empty_answers_are_flagged_first_in_terminal_and_markdown(
    sample_release: Path, tmp_path: Path
) -> None:
    report = evaluate_predictions(
        sample_release,
        _empty_captions(sample_release, tmp_path),
        n_resamples=0,
        caption_options=FAST_CAPTIONS,
    )
    n_images = report["data"]["n_images"]
    expected = f"captioning: {n_images} of {n_images} items (100%) have no usable answer"
    # Right after the synthetic-data notice, before the table.
    assert render_table(report).splitlines()[1].startswith(expected)
    markdown_lines = [line for line in render_markdown(report).splitlines()[1:] if line.strip()]
    assert markdown_lines[1].startswith(f"**{expected}")


@pytest.fixture(scope="module")
def empty_comparison(
    sample_release: Path, floor_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    """The floor's captions (A) against a run whose every caption is empty (B)."""
    from novabench.report.scoring import compare_predictions

    empty = _empty_captions(sample_release, tmp_path_factory.mktemp("empty"))
    return compare_predictions(
        sample_release,
        floor_run,
        empty,
        tasks=["captioning"],
        n_resamples=200,
        seed=0,
        caption_options=FAST_CAPTIONS,
    )


def test_compare_flags_a_side_without_usable_answers_first(empty_comparison: dict) -> None:
    n_images = empty_comparison["a"]["data"]["n_images"]
    expected = f"captioning: {n_images} of {n_images} items (100%) have no usable answer"
    text = render_comparison(empty_comparison).splitlines()
    assert text[0].startswith("notice: NOT THE REAL DATA")
    assert text[1].startswith("B (empty) " + expected)
    assert not any(line.startswith("A (floor)") and "no usable" in line for line in text)
    markdown = [line for line in render_comparison_markdown(empty_comparison).splitlines() if line]
    assert markdown[2].startswith("**B (empty) " + expected)
    page = render_comparison_html(empty_comparison)
    read_first = page.split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert "B (empty) " + expected in read_first


def test_two_sides_without_usable_answers_are_not_called_identical_answers(
    sample_release: Path, tmp_path: Path
) -> None:
    from novabench.report.agreement import IDENTICAL_ANSWERS
    from novabench.report.scoring import compare_predictions

    empty = _empty_captions(sample_release, tmp_path)
    comparison = compare_predictions(
        sample_release, empty, empty, n_resamples=20, caption_options=FAST_CAPTIONS
    )
    text = render_comparison(comparison)
    assert IDENTICAL_ANSWERS not in text
    assert "note: neither prediction set has a usable answer on any scored item" in text


def test_p_value_at_the_bootstrap_floor_is_shown_as_a_bound() -> None:
    # With 1,000 resamples the smallest p is 1/1001 (no resample as extreme): below 0.001.
    row = {"a": 0.6, "b": 0.1, "difference": 0.5, "ci": [0.4, 0.6], "p_value": 1 / 1001}
    above = {**row, "p_value": 2 / 1001}  # one resample as extreme: an estimate, 0.002
    side = {"predictions": {"paths": ["a.jsonl"], "manifests": [{"model": "m"}]}, "data": {}}
    comparison = {
        "a": side,
        "b": side,
        "bootstrap": {"confidence": 0.95, "n_resamples": 1000, "seed": 0},
        "tasks": {"diagnosis": {"top1": row, "top5": above}},
    }
    text = render_comparison(comparison)
    assert "p=<0.001" in text and "p=0.002" in text
    assert "| <0.001 |" in render_comparison_markdown(comparison)
    assert '<td class="num">&lt;0.001</td>' in render_comparison_html(comparison)


def test_error_rates_are_marked_lower_is_better_in_a_comparison() -> None:
    row = {"a": 0.2, "b": 0.4, "difference": -0.2, "ci": [-0.3, -0.1], "p_value": 0.01}
    side = {"predictions": {"paths": ["a.jsonl"], "manifests": [{"model": "m"}]}, "data": {}}
    comparison = {
        "a": side,
        "b": side,
        "bootstrap": {"confidence": 0.95, "n_resamples": 1000, "seed": 0},
        "tasks": {"localization": {"mAP@30": row, "FP30": row, "FNR": row}},
    }
    rows = [line.split()[1:4] for line in render_comparison(comparison).splitlines()[2:]]
    assert rows == [["mAP@30", "20.0", "40.0"], ["FP30", "(lower", "is"], ["FNR", "(lower", "is"]]
    assert "| FNR (lower is better) |" in render_comparison_markdown(comparison)
    assert "<td>FP30 (lower is better)</td>" in render_comparison_html(comparison)


def test_meteor_warning_comes_first_in_a_comparison_and_only_once() -> None:
    note = "METEOR not computed: the nltk WordNet corpus is not installed; METEOR-exact+stem given"
    row = {"a": 0.2, "b": 0.4, "difference": -0.2, "ci": [-0.3, -0.1], "p_value": 0.01}
    side = {"predictions": {"paths": ["a.jsonl"], "manifests": [{"model": "m"}]}, "data": {}}
    comparison = {
        "a": side,
        "b": side,
        "bootstrap": {"confidence": 0.95, "n_resamples": 1000, "seed": 0},
        "tasks": {"captioning": {"BLEU": row}},
        "notes": {"captioning": [note]},
    }
    markdown = render_comparison_markdown(comparison)
    assert [line for line in markdown.splitlines() if line][1] == f"**warning: captioning: {note}**"
    assert markdown.count("METEOR not computed") == 1
    page = render_comparison_html(comparison)
    assert page.count("METEOR not computed") == 1
    assert "METEOR not computed" in page.split('id="warnings"', 1)[1].split("</ul>", 1)[0]


def test_a_wrong_box_convention_is_flagged_first_with_the_prompts_one(
    sample_release: Path, floor_run: Path
) -> None:
    # The floor's boxes are [x, y, w, h] in pixels (its prompt's order is the protocol's):
    # read as [x1, y1, x2, y2] most of them reach past the image.
    report = evaluate_predictions(
        sample_release,
        floor_run,
        tasks=["localization"],
        box_convention="xyxy_pixel",
        n_resamples=0,
    )
    coverage = report["tasks"]["localization"]["coverage"]
    statuses = coverage["parse_status"]
    boxed = statuses.get("ok", 0) + statuses["ok_out_of_image"]
    assert coverage["answers_out_of_image"] > boxed / 2  # the situation the warning is for
    expected = f"localization: {coverage['answers_out_of_image']} of {boxed} answers with boxes"
    convention = "read with --box-convention xyxy_pixel, but the run's prompt asked for protocol"
    table = render_table(report).splitlines()
    assert table[1].startswith(expected) and convention in table[1]
    markdown = [line for line in render_markdown(report).splitlines()[1:] if line.strip()]
    assert markdown[1].startswith(f"**{expected}")
    read_first = render_html(report).split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    assert expected in read_first
    # The note on boxes past the image suggests what fit them once read again (the first
    # line's evidence), never the convention already in use.
    notes = " ".join(report["tasks"]["localization"]["notes"])
    assert "--box-convention xyxy_pixel" not in notes
    assert f"raw answers read again: {coverage['inside_with']['protocol']} of " in notes
    assert "fit with --box-convention protocol" in notes


def test_boxes_read_in_the_prompts_convention_raise_no_outside_warning(report: dict) -> None:
    assert "answers with boxes" not in render_table(report)


def _with_meteor_fallback(report: dict) -> dict:
    """The report as scored where the WordNet corpus is missing (the note scoring writes)."""
    changed = copy.deepcopy(report)
    changed["tasks"]["captioning"]["notes"].append(
        "METEOR not computed: the nltk WordNet corpus is not installed, so METEOR-exact+stem "
        "is given instead; install it with `python -m nltk.downloader wordnet`"
    )
    return changed


def test_every_notice_comes_together_before_the_model_line_in_every_rendering(
    report: dict,
) -> None:
    shown = _with_meteor_fallback(report)
    first = report_first_lines(shown)
    # The sample report has the synthetic notice, METEOR's stand-in and the two proxy warnings.
    assert first[0].startswith("notice: NOT THE REAL DATA")
    assert first[1].startswith("warning: captioning: METEOR not computed")
    assert [line.split(":")[1].strip() for line in first[2:]] == ["captioning", "diagnosis"]
    assert all("are not the paper's" in line for line in first[2:])
    assert render_table(shown).splitlines()[: len(first)] == first

    paragraphs = [line for line in render_markdown(shown).splitlines()[1:] if line.strip()]
    model_at = next(n for n, line in enumerate(paragraphs) if line.startswith("Model: "))
    assert model_at == len(first)  # all of them, and nothing else, before the Model line
    assert all(line.startswith("**") and line.endswith("**") for line in paragraphs[:model_at])
    assert "are not the paper's" not in "\n".join(paragraphs[model_at:])

    page = render_html(shown)
    assert page.index('id="warnings"') < page.index('class="lead"')
    read_first = page.split('id="warnings"', 1)[1].split("</ul>", 1)[0]
    starts = [read_first.index(html.escape(line[:40], quote=False)) for line in first]
    assert starts == sorted(starts)


def test_code_spans_in_bold_notices_render_as_code(report: dict) -> None:
    from markdown_it import MarkdownIt

    markdown = render_markdown(_with_meteor_fallback(report))
    rendered = MarkdownIt("commonmark").render(markdown)
    assert "\\`" not in markdown.split("Model: ", 1)[0]
    sample = report["data"]["provenance"]
    command = f"nova sample --cases {sample['cases']} --seed {sample['seed']}"
    assert f"<code>{command}</code>" in rendered
    assert "<code>python -m nltk.downloader wordnet</code>" in rendered
    assert "`" not in re.sub(r"<code>.*?</code>", "", rendered.split("<table>", 1)[0])


def test_a_comparison_shows_its_notices_before_the_models_in_markdown_and_html(
    sample_release: Path, floor_run: Path
) -> None:
    from novabench.report.scoring import compare_predictions

    comparison = compare_predictions(
        sample_release,
        floor_run,
        floor_run,
        tasks=["diagnosis"],
        n_resamples=20,
        caption_options=FAST_CAPTIONS,
    )
    paragraphs = [line for line in render_comparison_markdown(comparison).splitlines() if line]
    at = next(n for n, line in enumerate(paragraphs) if line.startswith("A: "))
    assert paragraphs[1].startswith("**notice: NOT THE REAL DATA") and at > 1
    assert "`nova sample --cases" in paragraphs[1] and "\\`" not in paragraphs[1]
    page = render_comparison_html(comparison)
    assert page.index('id="warnings"') < page.index('class="lead"')
