"""The HTML report: one self-contained page naming the model, with plots and the gallery.

The browser test opens the written file in headless Chromium (Playwright) and checks that
every picture decodes and that the page asks the network for nothing.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from novabench.data.release import read_release
from novabench.report.html import render_comparison_html, render_html
from tests.report.contract_tables import cases_table, image_row, report_dict, write_items

CHROMIUM = "/usr/bin/chromium"


def sample_items(release_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Contract tables over the sample release's real filenames."""
    release = read_release(release_dir)
    rows = [
        image_row(
            image.filename,
            (index % 10) / 10,
            width=image.width,
            height=image.height,
            caption_prediction=None if index % 4 == 0 else f"caption {index} <b>bold?</b>",
        )
        for index, image in enumerate(release.images)
    ]
    return pd.DataFrame(rows), cases_table([True, False, True])


def external_references(page: str) -> list[str]:
    """Every src/href value that is neither an inline data: URL nor a link within the page."""
    return [
        m for m in re.findall(r'(?:src|href)="([^"]*)"', page) if not m.startswith(("data:", "#"))
    ]


def contents(page: str) -> list[tuple[str, str]]:
    """The table of contents: (fragment, title) of each link."""
    nav = re.search(r'<nav class="toc">(.*?)</nav>', page).group(1)
    return re.findall(r'<a href="#([^"]+)">(.*?)</a>', nav)


def headings(page: str) -> list[tuple[str, str]]:
    """(link target id, heading) of every section: on the section, or inside its <details>."""
    pattern = (
        r'<section(?: id="([^"]+)")?>(?:<details><summary>)?<h2>(.*?)</h2>'
        r'(?: <span class="fold">[^<]*</span></summary><div class="target" id="([^"]+)">)?'
    )
    return [
        (open_id or folded_id, title) for open_id, title, folded_id in re.findall(pattern, page)
    ]


def section(page: str, anchor: str) -> str:
    """The HTML of one section, from its link target to its end."""
    start = page.index(f'id="{anchor}"')
    return page[start : page.index("</section>", start)]


def table_rows(html: str) -> list[list[str]]:
    """The cells of each body row of the first table in ``html``, tags stripped."""
    table = html[html.index("<table>") : html.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    return [[re.sub(r"<[^>]+>", " ", cell).strip() for cell in row] for row in cells if row]


def test_page_names_the_model_and_escapes_text() -> None:
    report = report_dict(model="<script>alert('x')</script>", with_breakdowns=False)
    page = render_html(report)
    assert "<script>" not in page
    escaped = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
    assert f"<title>NOVA report: {escaped}</title>" in page
    assert f"<h1>NOVA evaluation report: {escaped}</h1>" in page
    lead = re.search(r'<p class="lead">(.*?)</p>', page).group(1)
    assert lead.startswith(f"Model <b>{escaped}</b>")


def test_without_items_the_page_shows_headlines_and_says_what_is_missing() -> None:
    page = render_html(report_dict(with_breakdowns=False, human=False))
    assert '<td>localization</td><td>hit@30</td><td class="num">50.0</td>' in page
    assert "--items DIR" in page
    assert 'id="parse-status"' in page and 'alt="hit rate' not in page
    assert "Human reference" not in page and external_references(page) == []


def test_breakdowns_and_human_reference_come_from_the_report() -> None:
    page = render_html(report_dict())
    breakdowns = section(page, "breakdowns")
    assert "<caption>localization by pathology category</caption>" in breakdowns
    assert "<caption>diagnosis by pathology category</caption>" in breakdowns
    human = page[page.index("Human reference") :]
    assert "<td>rater 1 vs gold</td>" in human and "<td>tiny-vlm</td>" in human


def test_a_release_without_raters_says_so() -> None:
    report = report_dict(human=False)
    report["human_reference"] = {"localization": {"available": False, "reason": "no <raters>"}}
    assert "No human reference: no &lt;raters&gt;" in render_html(report)


def test_items_are_read_from_the_report_and_fill_plots_and_gallery(
    sample_release: Path, tmp_path: Path
) -> None:
    images, cases = sample_items(sample_release)
    report = report_dict(items=write_items(tmp_path / "items", images, cases))
    page = render_html(
        report, release=sample_release, report_path=tmp_path / "report.json", gallery_size=2
    )
    assert 'aria-label="Localisation: hit rate against the IoU threshold"' in page
    assert 'aria-label="Localisation: distribution of the best IoU"' in page
    # highest IoU (0.1..0.9 on 2 of 3 images: 2), lowest above 0 (2), missed (IoU 0: 2),
    # random (2)
    assert page.count('class="overlay"') == 8
    assert "caption 1 &lt;b&gt;bold?&lt;/b&gt;" in page or "(no caption)" in page
    assert "--items DIR" not in page and external_references(page) == []


def test_contents_link_every_section_present_and_nothing_else(
    sample_release: Path, tmp_path: Path
) -> None:
    bare = render_html(report_dict(with_breakdowns=False, human=False))
    assert contents(bare) == headings(bare)
    assert [title for _, title in contents(bare)] == [
        "Headline: the paper&#x27;s measures",
        "More measures (2)",
        "Coverage",
        "Published zero-shot results (published, not re-scored)",
        "Parse status",
        "What the keys mean (5)",  # a line per key shown (trust28)
    ]
    images, cases = sample_items(sample_release)
    report = report_dict(items=write_items(tmp_path / "items", images, cases))
    full = render_html(
        report, release=sample_release, report_path=tmp_path / "report.json", gallery_size=1
    )
    assert contents(full) == headings(full)
    assert [title for _, title in contents(full)] == [
        "Headline: the paper&#x27;s measures",
        "More measures (2)",
        "Coverage",
        "Human reference (localisation)",
        "Published zero-shot results (published, not re-scored)",
        "Parse status",
        "What the keys mean (5)",
        "Breakdowns",
        "Localisation",
        "Gallery",
    ]
    anchors = [anchor for anchor, _ in contents(full)]
    assert len(set(anchors)) == len(anchors)
    assert full.index('<nav class="toc">') < full.index("<h2")  # before the first section
    assert external_references(full) == []


def test_human_reference_table_shows_the_confidence_intervals() -> None:
    report = report_dict()
    raters = report["human_reference"]["localization"]
    raters["rater_1_vs_gold"]["confidence_intervals"] = {"hit@30": [0.75, 1.0]}
    page = render_html(report)
    human = section(page, "human-reference")
    human = human[: human.index("</table>")]
    model_row = re.search(r"<tr><td>tiny-vlm</td>(.*?)</tr>", human).group(1)
    rater_row = re.search(r"<tr><td>rater 1 vs gold</td>(.*?)</tr>", human).group(1)
    columns = re.findall(r"<th>(.*?)</th>", human)[1:]
    model_cells = dict(zip(columns, re.findall(r'<td class="num">(.*?)</td>', model_row)))
    rater_cells = dict(zip(columns, re.findall(r'<td class="num">(.*?)</td>', rater_row)))
    # The report's own CI of hit@30 is [0.3, 0.7] (contract_tables: hit_30 -/+ 0.2).
    assert model_cells["hit@30 (%)"] == "50.0 [30.0, 70.0]"
    assert rater_cells["hit@30 (%)"] == "90.0 [75.0, 100.0]"
    assert rater_cells["mAP@30 (%)"] == "90.0"  # no interval recorded: none shown


def test_comparison_page_names_both_models() -> None:
    side = lambda name: {  # noqa: E731
        "predictions": {"paths": [f"{name}.jsonl"], "manifests": [{"model": name}]},
        "data": {"path": "nova"},
    }
    comparison = {
        "a": side("qwen & co"),
        "b": side("llava"),
        "bootstrap": {"confidence": 0.9},
        "tasks": {
            "diagnosis": {
                "top1": {"a": 0.5, "b": 0.25, "difference": 0.25, "ci": [0.0, 0.5], "p_value": 0.04}
            }
        },
        "coverage": {
            "diagnosis": {
                s: {"items": 4, "answered": 4, "missing": 0, "errors": 0} for s in ("a", "b")
            }
        },
    }
    page = render_comparison_html(comparison)
    assert "<h1>NOVA comparison: qwen &amp; co (A) vs llava (B)</h1>" in page
    assert "<th>90% CI of A - B</th>" in page
    assert page.count("<table>") == page.count('<div class="wide" tabindex="0"><table>') == 1
    assert "<li>llava (B) diagnosis: 4/4 answered" in page
    # the frame's shadows are the one definition the explorer Space's tables use too
    from novabench.report.html import SCROLL_SHADOWS_CSS

    wide_rule = page[page.index(".wide {") :].split("}", 1)[0]
    assert wide_rule.endswith(SCROLL_SHADOWS_CSS + " ")


def _chromium_or_skip():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"no Chromium at {CHROMIUM} or on PATH (CI installs it in .ci/run)")
    return sync_api, CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


# Starting Chromium takes 5-20 s on 2 shared cores; the page's markup is checked above.
@pytest.mark.slow
def test_page_renders_offline_in_headless_chromium(sample_release: Path, tmp_path: Path) -> None:
    sync_api, executable = _chromium_or_skip()
    images, cases = sample_items(sample_release)
    report = report_dict(items=write_items(tmp_path / "items", images, cases))
    html_path = tmp_path / "report.html"
    html_path.write_text(
        render_html(
            report, release=sample_release, report_path=tmp_path / "r.json", gallery_size=2
        ),
        encoding="utf-8",
    )
    requested: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            page = browser.new_page()
            page.on("request", lambda request: requested.append(request.url))
            page.goto(html_path.as_uri())
            page.wait_for_load_state("load")
            pictures = page.eval_on_selector_all(
                "img", "els => els.map(e => [e.className, e.alt, e.complete, e.naturalWidth])"
            )
            drawings = page.eval_on_selector_all(
                "svg.plot",
                "els => els.map(e => [e.getAttribute('aria-label'), e.querySelectorAll("
                "'polyline, rect.bin').length])",
            )
            title = page.title()
            toc_targets = page.eval_on_selector_all(
                "nav.toc a",
                "els => els.map(a => !!document.getElementById(a.getAttribute('href').slice(1)))",
            )
            page.click("nav.toc a[href='#gallery']")  # an in-page jump: no request
        finally:
            browser.close()
    assert title == "NOVA report: tiny-vlm"
    overlays = [p for p in pictures if p[0] == "overlay"]
    assert len(overlays) == len(pictures)  # the plots are drawn, not pictures
    assert [name for name, _ in drawings] == [
        "Localisation: hit rate against the IoU threshold",
        "Localisation: distribution of the best IoU",
    ]
    assert all(shapes > 0 for _, shapes in drawings)
    assert len(overlays) == 8  # four sections of 2 (sample_items: hits, misses and the rest)
    assert all(complete and width > 0 for _, _, complete, width in pictures)
    assert len(toc_targets) == 10 and all(toc_targets)  # with the published figures, keys
    # The page itself is the only request: data: URLs are not fetched from anywhere.
    assert [url for url in requested if not url.startswith("data:")] == [html_path.as_uri()]


def test_published_figures_are_shown_beside_the_model_and_marked_not_rescored() -> None:
    report = report_dict(with_breakdowns=False, human=False)
    page = render_html(report)
    published = section(page, "published")
    assert "not recomputed here" in published
    # Every published figure of a key the report scores is there, with its source.
    from novabench.published import published_beside

    shown = published_beside(report)
    assert shown and all(result.model in published for result, _ in shown)
    assert "arXiv:2505.14064" in published and "WALDO" in published
    assert external_references(page) == []  # sources are named, never linked or fetched


def _coverage(items: int, **statuses: int) -> dict:
    return {"items": items, "answered": items, "missing": 0, "errors": 0, "parse_status": statuses}


def _with_captioning(report: dict, metrics: dict, notes: list[str] | None = None) -> dict:
    report["tasks"]["captioning"] = {
        "metrics": metrics,
        "confidence_intervals": {"BLEU-4": [0.01, 0.03]},
        "notes": notes or [],
        "coverage": _coverage(4, ok=4),
    }
    return report


def test_headline_leads_with_the_papers_keys_and_more_measures_hold_the_rest() -> None:
    report = report_dict(human=False, with_breakdowns=False)
    report["tasks"]["localization"]["metrics"].update({"mAP@50": 0.25, "COCO-AP@30": 0.4})
    metrics = {"BLEU-4": 0.02, "ROUGE-L": 0.2, "METEOR": 0.3, "ClinicalF1": 0.15}
    page = render_html(_with_captioning(report, metrics))
    headline = table_rows(section(page, "headline"))
    assert [row[:2] for row in headline] == [
        ["localization", "mAP@30"],
        ["localization", "mAP@50"],
        ["captioning", "BLEU-4"],
        ["captioning", "METEOR"],
        ["captioning", "ClinicalF1"],
        ["diagnosis", "top1"],
        ["diagnosis", "top5"],
    ]
    assert headline[2][2:4] == ["2.0", "[1.0, 3.0]"]  # 0.02 and its interval, in percent
    more = table_rows(section(page, "more-measures"))
    # The rest in each task's headline order (registry), nothing of the headline repeated.
    assert [row[:2] for row in more] == [
        ["localization", "COCO-AP@30"],
        ["localization", "hit@30"],
        ["localization", "hit@50"],
        ["captioning", "ROUGE-L"],
    ]


def test_headline_shows_the_human_reference_and_the_published_figures_beside() -> None:
    import json
    from importlib import resources

    page = render_html(report_dict(with_breakdowns=False))
    rows = {row[1]: row for row in table_rows(section(page, "headline"))}
    # report_dict: the raters' mAP@30 is 0.9 in all three comparisons, no interval.
    assert (
        rows["mAP@30"][4] == "rater 1 vs gold: 90.0 rater 2 vs gold: 90.0 rater 1 vs rater 2: 90.0"
    )
    assert rows["top1"][4] == "none for this task"
    data = json.loads(
        resources.files("novabench").joinpath("resources/published_results.json").read_text()
    )
    mAP30 = [r["value"] for r in data["results"] if r["metric"] == "mAP@30"]
    top1 = [r["value"] for r in data["results"] if r["metric"] == "top1"]
    assert rows["mAP@30"][5] == f"{len(mAP30)} figures: {min(mAP30):.1f} to {max(mAP30):.1f}"
    assert rows["top1"][5] == f"1 figure: {top1[0]:.1f}" and rows["top5"][5] == "none"
    assert '<a href="#published">' in section(page, "headline")
    without = render_html(report_dict(with_breakdowns=False, human=False))
    assert table_rows(section(without, "headline"))[0][4] == "not computed"


def test_meteor_stand_in_keeps_its_own_name_and_is_said_first() -> None:
    note = "METEOR not computed: the nltk WordNet corpus is not installed"
    metrics = {"BLEU-4": 0.02, "METEOR-exact+stem": 0.3, "ClinicalF1": 0.15}
    page = render_html(_with_captioning(report_dict(human=False), metrics, [note]))
    headline = section(page, "headline")
    keys = [row[1] for row in table_rows(headline)]
    assert keys[3].startswith("METEOR-exact+stem") and "in place of the paper's METEOR" in keys[3]
    assert "<td>METEOR</td>" not in page  # never relabelled
    warnings = page[page.index('<div class="warnings"') : page.index('<nav class="toc">')]
    assert note in warnings


def test_a_task_mostly_without_usable_answers_is_warned_about_first() -> None:
    report = report_dict(human=False, with_breakdowns=False)
    report["tasks"]["diagnosis"]["coverage"] = _coverage(4, ok=1, unparseable=3)
    page = render_html(report)
    warnings = page[page.index('<div class="warnings"') : page.index('<nav class="toc">')]
    assert "diagnosis: 3 of 4 items (75%) have no usable answer" in warnings
    assert "unparseable 3" in warnings and "what to do" in warnings
    report["tasks"]["diagnosis"]["coverage"] = _coverage(4, ok=2, unparseable=2)  # half: no
    assert '<div class="warnings"' not in render_html(report)


def test_missing_answers_count_toward_the_warning() -> None:
    report = report_dict(human=False, with_breakdowns=False)
    # 4 images: 1 ok, 1 ambiguous convention, 2 without a line (1 a model error).
    report["tasks"]["localization"]["coverage"] = {
        "items": 4,
        "answered": 2,
        "missing": 2,
        "errors": 1,
        "parse_status": {"ok": 1, "ambiguous_convention": 1},
    }
    page = render_html(report)
    assert "localization: 3 of 4 items (75%) have no usable answer" in page
    assert "missing 2 (1 model error)" in page and "--box-convention" in page


def test_every_table_scrolls_in_its_frame_and_only_the_headline_is_open(
    sample_release: Path, tmp_path: Path
) -> None:
    images, cases = sample_items(sample_release)
    report = report_dict(items=write_items(tmp_path / "items", images, cases))
    page = render_html(
        report, release=sample_release, report_path=tmp_path / "report.json", gallery_size=1
    )
    assert page.count("<table>") == page.count('<div class="wide" tabindex="0"><table>') > 5
    opened = [anchor for anchor, _ in headings(page) if f'<section id="{anchor}">' in page]
    assert opened == ["headline", "coverage"]
    assert page.count("<section><details>") == len(headings(page)) - 2
    gallery = section(page, "gallery")
    assert "best" not in gallery.lower().replace("best iou", "")


def test_commands_in_the_read_first_box_are_code_not_raw_backticks() -> None:
    report = report_dict(human=False, with_breakdowns=False)
    report["tasks"]["localization"]["coverage"] = {
        "items": 4,
        "answered": 2,
        "missing": 2,
        "errors": 0,
        "parse_status": {"ok": 1, "ambiguous_convention": 1},
    }
    page = render_html(report)
    warnings = page[page.index('<div class="warnings"') : page.index('<nav class="toc">')]
    assert "<code>nova run</code> resumes its file" in warnings
    assert "<code>nova evaluate</code> on this run" in warnings
    assert "`" not in warnings


def test_code_spans_come_only_after_escaping_so_no_tag_comes_from_the_text() -> None:
    from novabench.report.html import _text_with_code

    assert _text_with_code("run `<b>x</b>` then `a & b`") == (
        "run <code>&lt;b&gt;x&lt;/b&gt;</code> then <code>a &amp; b</code>"
    )
    assert _text_with_code("one ` alone") == "one ` alone"  # no pair: left as written
