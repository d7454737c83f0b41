"""The HTML report as a researcher sees it: headless system Chromium through Playwright.

What the markup tests cannot show: which rows a reader sees first and in what order, that a
warning is on screen before any number, that nothing is cut off or scrolls the page sideways
at 1280 px, and that the contents links open and show the folded sections. Skipped, with
the reason, only when Playwright is not importable or no Chromium binary exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from novabench.data.release import read_release
from novabench.report import evaluate_predictions
from novabench.report.html import render_html
from novabench.report.render import HEADLINE_KEYS
from tests.browser import CHROMIUM, CHROMIUM_ARGS, NEEDS_CHROMIUM
from tests.lazy_import import LazyModule
from tests.report.contract_tables import cases_table, image_row, report_dict, write_items

# Starting Chromium takes 5-20 s on 2 shared cores: outside the fast run (the markup of the
# same features is checked in test_html.py).
pytestmark = [pytest.mark.slow]

# Imported by the first test that reads it (tests/lazy_import.py): every worker collects this
# file only to deselect it in the fast suite, and playwright costs each 0.2 CPU s to import.
sync_api = LazyModule(
    "playwright.sync_api", reason="the playwright Python package is not installed"
)


pytestmark.append(NEEDS_CHROMIUM)
WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _open(browser: Any, html: str, folder: Path) -> Any:
    path = folder / "report.html"
    path.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page


def _full_report(sample_release: Path, folder: Path, model: str = "tiny-vlm") -> str:
    """A page with every section: a long model name, captioning scored, items and gallery."""
    release = read_release(sample_release)
    rows = [
        image_row(image.filename, (index % 10) / 10, width=image.width, height=image.height)
        for index, image in enumerate(release.images)
    ]
    items = write_items(folder / "items", pd.DataFrame(rows), cases_table([True, False, True]))
    report = report_dict(model, items=items)
    # Every localisation key, for the model and the raters, as a real report has them: the
    # human reference table is then wider than the page.
    keys = HEADLINE_KEYS["localization"]
    report["tasks"]["localization"]["metrics"] = {k: 0.1 + i / 50 for i, k in enumerate(keys)}
    for name, row in report["human_reference"]["localization"].items():
        row.update({k: 0.5 + i / 50 for i, k in enumerate(keys)})
        row["confidence_intervals"] = {k: [0.4 + i / 50, 0.6 + i / 50] for i, k in enumerate(keys)}
    report["tasks"]["captioning"] = {
        "metrics": {"BLEU-4": 0.021, "ROUGE-L": 0.18, "METEOR": 0.2, "ClinicalF1": 0.14},
        "confidence_intervals": {"BLEU-4": [0.015, 0.027], "ClinicalF1": [0.11, 0.17]},
        "notes": [],
        "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0, "parse_status": {}},
    }
    return render_html(
        report, release=sample_release, report_path=folder / "report.json", gallery_size=2
    )


def test_headline_rows_show_the_papers_measures_in_the_papers_order(
    browser: Any, sample_release: Path, tmp_path: Path
) -> None:
    page = _open(browser, _full_report(sample_release, tmp_path), tmp_path)
    try:
        rows = page.eval_on_selector_all(
            "#headline table tr",
            "rows => rows.slice(1).map(r => [...r.cells].map(c => c.innerText.trim()))",
        )
        headline_visible = page.is_visible("#headline table")
        more_visible = page.is_visible("#more-measures")
    finally:
        page.close()
    assert headline_visible and not more_visible  # the rest is folded
    assert [row[1] for row in rows] == [
        "mAP@30",
        "mAP@50",
        "BLEU-4",
        "METEOR",
        "ClinicalF1",
        "top1",
        "top5",
    ]
    by_key = {row[1]: row for row in rows}
    # value and interval in percent: BLEU-4 0.021 [0.015, 0.027]
    assert by_key["BLEU-4"][2:4] == ["2.1", "[1.5, 2.7]"]
    # mAP@30 is the first localisation key: 0.1 for the model, 0.5 [0.4, 0.6] for the raters
    assert by_key["mAP@30"][2:4] == ["10.0", ""]  # the report holds no interval for it
    assert by_key["mAP@30"][4].splitlines()[0] == "rater 1 vs gold: 50.0 [40.0, 60.0]"


def _mostly_unparseable_run(release_dir: Path, folder: Path) -> Path:
    """Raw localisation answers: every fourth image a box, the others prose or cut-off JSON."""
    prose = (
        "I cannot identify a clear abnormality with confidence in this slice.",
        "The lesion appears in the left periventricular white matter, hyperintense on FLAIR.",
        '```json\n{"boxes": [[412, 388, 5',
    )
    lines = []
    for index, image in enumerate(read_release(release_dir).images):
        answer = "lesion: [380, 402, 515, 560]" if index % 4 == 0 else prose[index % 3]
        lines.append({"filename": image.filename, "raw_boxes": answer})
    path = folder / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_mostly_unparseable_answers_are_warned_about_on_the_first_screen(
    browser: Any, sample_release: Path, tmp_path: Path
) -> None:
    run = _mostly_unparseable_run(sample_release, tmp_path)
    report = evaluate_predictions(sample_release, run, tasks=["localization"], n_resamples=0)
    n_images = len(read_release(sample_release).images)
    boxed = len(range(0, n_images, 4))  # every fourth image answered with a box
    page = _open(browser, render_html(report), tmp_path)
    try:
        warning = page.inner_text("#warnings")
        warning_box = page.eval_on_selector("#warnings", "e => e.getBoundingClientRect().toJSON()")
        headline_top = page.eval_on_selector("#headline", "e => e.getBoundingClientRect().top")
    finally:
        page.close()
    unread = n_images - boxed
    expected = (
        f"localization: {unread} of {n_images} items ({100 * unread / n_images:.0f}%) "
        "have no usable answer"
    )
    assert expected in warning and f"unparseable {unread}" in warning
    assert warning_box["height"] > 0 and warning_box["bottom"] <= HEIGHT  # on the first screen
    assert warning_box["bottom"] <= headline_top  # above every number


def test_nothing_is_cut_off_or_scrolls_the_page_sideways_at_1280_px(
    browser: Any, sample_release: Path, tmp_path: Path
) -> None:
    long_name = "org/" + "very-long-model-name-without-any-space-" * 6 + "7b-instruct"
    page = _open(browser, _full_report(sample_release, tmp_path, long_name), tmp_path)
    try:
        page.eval_on_selector_all("details", "all => all.forEach(d => { d.open = true; })")
        page_width = page.evaluate("document.documentElement.scrollWidth")
        view_width = page.evaluate("document.documentElement.clientWidth")
        frames = page.eval_on_selector_all(
            ".wide",
            """frames => frames.map(f => ({
                 overflows: f.scrollWidth > f.clientWidth,
                 right: f.getBoundingClientRect().right,
                 overflowX: getComputedStyle(f).overflowX,
                 shadow: getComputedStyle(f).backgroundImage.includes('radial-gradient')}))""",
        )
        tables = page.eval_on_selector_all("table", "all => all.map(t => !!t.closest('.wide'))")
    finally:
        page.close()
    assert page_width <= view_width  # the page body never scrolls sideways
    assert tables and all(tables)  # every table sits in a scrolling frame
    assert all(f["overflowX"] == "auto" and f["shadow"] for f in frames)
    assert all(f["right"] <= view_width for f in frames)  # frames end inside the page
    # The human reference table (every localisation key) is wider than the page: it scrolls
    # in its frame, which is what the shadow shows.
    assert any(f["overflows"] for f in frames)


def test_contents_links_open_and_show_each_section(
    browser: Any, sample_release: Path, tmp_path: Path
) -> None:
    page = _open(browser, _full_report(sample_release, tmp_path), tmp_path)
    results = []
    try:
        anchors = page.eval_on_selector_all(
            "nav.toc a", "links => links.map(a => a.getAttribute('href').slice(1))"
        )
        for anchor in reversed(anchors):  # from the bottom up: every jump moves the page
            before = page.evaluate("window.scrollY")
            page.click(f"nav.toc a[href='#{anchor}']")
            page.wait_for_function(f"location.hash === '#{anchor}'")
            results.append(
                page.evaluate(
                    """anchor => {
                       const target = document.getElementById(anchor);
                       const details = target.closest('details');
                       const heading = (details ? details.querySelector('summary')
                                                : target.querySelector('h2'));
                       const top = heading.getBoundingClientRect().top;
                       return [anchor, details ? details.open : true, top, window.scrollY];
                    }""",
                    anchor,
                )
                + [before]
            )
            page.evaluate("window.scrollTo(0, 0)")
    finally:
        page.close()
    assert len(results) == 10 and {r[0] for r in results} >= {"headline", "gallery"}
    for anchor, is_open, heading_top, scrolled, _ in results:
        assert is_open, anchor  # a folded section opens when its link is followed
        assert 0 <= heading_top < HEIGHT / 2, (anchor, heading_top)  # its heading in view
        if anchor not in ("headline", "more-measures"):  # those start on the first screen
            assert scrolled > 0, anchor
