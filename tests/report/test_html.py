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
    return re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', page)


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
    assert 'alt="parse status mix"' in page and 'alt="hit rate' not in page
    assert "Human reference" not in page and external_references(page) == []


def test_breakdowns_and_human_reference_come_from_the_report() -> None:
    page = render_html(report_dict())
    assert 'alt="localization by pathology_category"' in page
    assert 'alt="diagnosis by pathology_category"' in page
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
    assert 'alt="hit rate against the IoU threshold"' in page
    assert 'alt="distribution of the best IoU"' in page
    assert page.count('class="overlay"') == 6  # best, worst, random: 2 each
    assert "caption 1 &lt;b&gt;bold?&lt;/b&gt;" in page or "(no caption)" in page
    assert "--items DIR" not in page and external_references(page) == []


def test_contents_link_every_section_present_and_nothing_else(
    sample_release: Path, tmp_path: Path
) -> None:
    bare = render_html(report_dict(with_breakdowns=False, human=False))
    assert contents(bare) == headings(bare)
    assert [title for _, title in contents(bare)] == [
        "Headline numbers",
        "Coverage",
        "Parse status",
        "Published zero-shot results (published, not re-scored)",
    ]
    images, cases = sample_items(sample_release)
    report = report_dict(items=write_items(tmp_path / "items", images, cases))
    full = render_html(
        report, release=sample_release, report_path=tmp_path / "report.json", gallery_size=1
    )
    assert contents(full) == headings(full)
    assert [title for _, title in contents(full)] == [
        "Headline numbers",
        "Coverage",
        "Parse status",
        "Human reference (localisation)",
        "Published zero-shot results (published, not re-scored)",
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
    section = report["human_reference"]["localization"]
    section["rater_1_vs_gold"]["confidence_intervals"] = {"hit@30": [0.75, 1.0]}
    page = render_html(report)
    human = page[page.index('<h2 id="human-reference">') :]
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
    assert "<li>llava (B) diagnosis: 4/4 answered" in page


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
            title = page.title()
            toc_targets = page.eval_on_selector_all(
                "nav.toc a",
                "els => els.map(a => !!document.getElementById(a.getAttribute('href').slice(1)))",
            )
            page.click("nav.toc a[href='#gallery']")  # an in-page jump: no request
        finally:
            browser.close()
    assert title == "NOVA report: tiny-vlm"
    plots = [p for p in pictures if p[0] == "plot"]
    overlays = [p for p in pictures if p[0] == "overlay"]
    plot_names = {p[1] for p in plots}
    assert {
        "parse status mix",
        "hit rate against the IoU threshold",
        "distribution of the best IoU",
        "localization by pathology_category",
    } <= plot_names
    assert len(overlays) == 6
    assert all(complete and width > 0 for _, _, complete, width in pictures)
    assert len(toc_targets) == 8 and all(toc_targets)  # with the published figures
    # The page itself is the only request: data: URLs are not fetched from anywhere.
    assert [url for url in requested if not url.startswith("data:")] == [html_path.as_uri()]


def test_published_figures_are_shown_beside_the_model_and_marked_not_rescored() -> None:
    report = report_dict(with_breakdowns=False, human=False)
    page = render_html(report)
    section = page.split('id="published"', 1)[1].split("<h2", 1)[0]
    assert "not recomputed here" in section
    # Every published figure of a key the report scores is there, with its source.
    from novabench.published import published_beside

    shown = published_beside(report)
    assert shown and all(result.model in section for result, _ in shown)
    assert "arXiv:2505.14064" in section and "WALDO" in section
    assert external_references(page) == []  # sources are named, never linked or fetched
