"""Both Spaces driven in a real browser: headless system Chromium through Playwright.

The main test of each Space builds it as a user does (``nova space build KIND OUT``, no
data: the Space's own synthetic sample) and serves the built ``app.py`` in a child process,
so the page is the Space's own (its stylesheet, its launch settings, the vendored wheel).
The other tests serve an app by Gradio in this process. Each uses a free localhost port.
A failing test saves a screenshot and names its path in the failure. Skipped, with the
reason, only when Playwright is not importable or no Chromium binary exists.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS, NEEDS_CHROMIUM
from tests.lazy_import import LazyModule
from tests.spaces.colour_words import colour_words, hue_is

# A browser session per app takes about a minute on a 2-core machine: outside the fast run.
pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
# Imported when a test runs, not when the fast suite collects this file only to deselect it.
sync_api = LazyModule("playwright.sync_api")


@pytest.fixture(scope="module", autouse=True)
def _browser_libraries() -> None:
    pytest.importorskip("gradio")
    pytest.importorskip(
        "playwright.sync_api", reason="the playwright Python package is not installed"
    )


pytestmark.append(NEEDS_CHROMIUM)
# A served app keeps the browser open for minutes: no updater, sync or first-run page either.
SPACE_CHROMIUM_ARGS = [
    *CHROMIUM_ARGS,
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 60_000  # an upper bound for slow machines, not a timing assertion


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _served(demo, **launch) -> Iterator[str]:
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    port = _free_port()
    demo.launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        demo.close()


@contextlib.contextmanager
def _built_space_served(kind: str, folder: Path) -> Iterator[str]:
    """``nova space build KIND`` into ``folder`` with defaults, its ``app.py`` served."""
    space = folder / f"{kind}-space"
    build = subprocess.run(
        [sys.executable, "-m", "novabench.cli", "space", "build", kind, str(space)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    port = _free_port()
    # Served from outside the checkout, without NOVA_SOURCE: the Space's own default data.
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "NOVA_SOURCE"}}
    env.update(
        GRADIO_SERVER_PORT=str(port),
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
    )
    log_path = folder / f"{kind}-server.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, str(space / "app.py")], cwd=folder, env=env, stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 4 * WAIT_MS / 1000
            while server.poll() is None and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"{url}/config", timeout=5):
                        break
                except OSError:
                    time.sleep(1)
            else:
                raise AssertionError(f"the built {kind} Space never served:\n"
                                     + log_path.read_text()[-3000:])  # fmt: skip
            yield url
        finally:
            server.terminate()
            server.wait(timeout=60)


_LONGEST_WORD_PX = r"""
cells => cells.map(cell => {
  // The cell's content width against its longest word set alone on one line, same font.
  const style = getComputedStyle(cell);
  const probe = document.createElement('span');
  probe.style.whiteSpace = 'nowrap';
  probe.style.position = 'absolute';  // out of the page's flex flow: its own width
  probe.style.display = 'inline-block';
  probe.style.font = style.font;
  probe.style.letterSpacing = style.letterSpacing;
  document.body.appendChild(probe);
  let longest = 0;
  for (const word of cell.innerText.split(/\s+/)) {
    probe.textContent = word;
    longest = Math.max(longest, probe.getBoundingClientRect().width);
  }
  probe.remove();
  const inner = cell.getBoundingClientRect().width - parseFloat(style.paddingLeft)
    - parseFloat(style.paddingRight) - parseFloat(style.borderLeftWidth)
    - parseFloat(style.borderRightWidth);
  return [cell.innerText, inner, longest];
})
"""


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=SPACE_CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@contextlib.contextmanager
def _screenshot_on_failure(page, name: str) -> Iterator[None]:
    try:
        yield
    except BaseException as error:
        folder = Path(tempfile.mkdtemp(prefix="nova-browser-"))
        shot = folder / f"{name}.png"
        with contextlib.suppress(Exception):
            page.screenshot(path=str(shot), full_page=True)
        raise AssertionError(f"{error}\n(screenshot of the page: {shot})") from error


def _image_src(page) -> str:
    return page.locator("#nova-image img").first.get_attribute("src") or ""


def _wait_new_image(page, old: str) -> str:
    page.wait_for_function(
        "old => { const i = document.querySelector('#nova-image img');"
        " return i && i.src && i.src !== old; }",
        arg=old,
        timeout=WAIT_MS,
    )
    return _image_src(page)


def _fetch_png(page, src: str):
    # The explorer serves each slice from a file written once under a name given by its
    # content (spaces.explorer.slice_file), never rewritten in place as Gradio rewrote the
    # PIL images it was given: one read must give the whole PNG.
    body = page.request.get(src).body()
    assert body[:8] == b"\x89PNG\r\n\x1a\n", f"the slice is not served as PNG: {body[:12]!r}"
    return _decoded_rgb(body)


def _decoded_rgb(body: bytes):
    from PIL import Image

    image = Image.open(io.BytesIO(body))
    image.load()  # a file cut short fails here, not at the first pixel read
    return image.convert("RGB")


def _toggle(page, label: str) -> str:
    old = _image_src(page)
    page.locator("#nova-layers label").filter(has_text=label).first.click()
    return _wait_new_image(page, old)


def test_explorer_in_the_browser(browser, tmp_path: Path) -> None:
    from novabench.data.render import GOLD_COLOUR, PREDICTION_COLOUR
    from novabench.spaces import explorer
    from novabench.spaces.source import open_source

    opened = open_source("")  # the data a Space built without --data shows: the sample
    cases = opened.release.cases()
    linked = next(case for case in cases[1:] if case.images[0].boxes)
    picked = next(c for c in cases if c.case_id != linked.case_id and c.images[0].boxes)
    raters = explorer.rater_names(opened.release)
    with _built_space_served("explorer", tmp_path) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        with _screenshot_on_failure(page, "explorer"):
            # A link opens one case; the synthetic sample says what it is.
            page.goto(f"{url}/?case={linked.case_id}")
            details = page.locator("#nova-details")
            details.get_by_text(linked.case_id).first.wait_for(timeout=WAIT_MS)
            assert "Not the real data" in page.locator("#nova-notice").inner_text()

            # Pick another case from the list.
            old = _image_src(page)
            page.locator("#nova-case input").click()
            page.locator("#nova-case input").fill(picked.case_id)
            page.get_by_role("option").filter(has_text=picked.case_id).first.click()
            details.get_by_text(picked.case_id).first.wait_for(timeout=WAIT_MS)
            src = _wait_new_image(page, old)
            image = picked.images[0]
            for caption in (image.caption, picked.clinical_history):
                assert caption[:40] in details.inner_text()

            # Lossless PNG, and the gold box edge has the gold colour.
            x, y, w, h = (int(v) for v in image.boxes[0])
            edge = (x, y + h // 2)
            assert _fetch_png(page, src).getpixel(edge) == GOLD_COLOUR

            # Each layer toggles: all off, then each one alone on (its colour), then off again.
            rater_boxes = {entry["rater"]: entry["boxes"] for entry in image.rater_boxes}
            layers = [(explorer.GOLD_LAYER, image.boxes[0], GOLD_COLOUR)] + [
                (explorer.rater_layer(name), rater_boxes[name][0], explorer.rater_colour(index))
                for index, name in enumerate(raters)
                if rater_boxes.get(name)
            ]
            assert len(layers) >= 2, "the sample slice should carry rater boxes"
            drawn_here = {label for label, _, _ in layers}
            for label in [explorer.GOLD_LAYER, *(explorer.rater_layer(n) for n in raters)]:
                if label in drawn_here:
                    src = _toggle(page, label)
                else:  # no box of this layer on this slice: the image cannot change
                    page.locator("#nova-layers label").filter(has_text=label).first.click()
            assert _fetch_png(page, src).getpixel(edge) != GOLD_COLOUR
            for label, box, colour in layers:
                bx, by, bw, bh = (int(v) for v in box)
                point = (bx, by + bh // 2)
                assert _fetch_png(page, _toggle(page, label)).getpixel(point) == colour, label
                assert _fetch_png(page, _toggle(page, label)).getpixel(point) != colour, label
            _toggle(page, explorer.GOLD_LAYER)

            # Upload predictions: the model layer, per-slice IoU and the parsed answers.
            predicted = [x + 5, y + 5, w, h]
            run = tmp_path / "my_run.jsonl"
            run.write_text(
                json.dumps({"filename": image.filename, "boxes": [predicted]}) + "\n"
                + json.dumps({"case_id": picked.case_id, "diagnoses": ["Zebra disease"]}) + "\n"
            )  # fmt: skip
            page.locator("#nova-model").get_by_text("Overlay a model's predictions").click()
            old = _image_src(page)
            page.locator("#nova-upload input[type=file]").set_input_files(str(run))
            page.locator("#nova-upload-status").get_by_text("Loaded").wait_for(timeout=WAIT_MS)
            src = _wait_new_image(page, old)
            assert _fetch_png(page, src).getpixel((x + 5, y + 5 + h // 2)) == PREDICTION_COLOUR
            text = details.inner_text()
            assert "best IoU" in text and "Zebra disease" in text
            iou = explorer.slice_iou([predicted], image.boxes)
            assert f"{iou:.2f}" in text
            assert "my_run.jsonl" in page.locator("#nova-upload-status").inner_text()
            assert "model" in page.locator("#nova-legend").inner_text()

            # The per-slice table with the model's columns: every header at least as wide as
            # its longest word, every filename on one line (the table scrolls sideways).
            cells = page.evaluate(_LONGEST_WORD_PX, details.locator("th").element_handles())
            assert [c[0] for c in cells][-2:] == ["best IoU", "model's caption"]
            narrow = [c for c in cells if c[1] + 0.5 < c[2]]
            assert narrow == [], f"headers narrower than their longest word: {narrow}"
            # That the table scrolls is shown: a line names the two columns, and a shadow
            # (a radial gradient fixed to the frame) marks an edge with more to see.
            assert "scroll the table sideways" in details.inner_text()
            shadow = details.locator("table").first.evaluate(
                "t => [getComputedStyle(t).backgroundImage, getComputedStyle(t).overflowX]"
            )
            assert "radial-gradient" in shadow[0] and shadow[1] == "auto", shadow
            filenames = details.locator("td:first-child")
            assert filenames.count() == len(picked.images)
            lines = filenames.evaluate_all(
                "cells => cells.map(c => [c.innerText, c.getClientRects().length,"
                " (() => { const r = document.createRange(); r.selectNodeContents(c);"
                " const tops = new Set([...r.getClientRects()].map(b => Math.round(b.top)));"
                " return tops.size; })()])"
            )
            assert [text for text, _, _ in lines] == [i.filename for i in picked.images]
            assert [row for row in lines if row[2] != 1] == [], f"filenames split: {lines}"
            # The help and the legend name the colour the model's boxes are drawn in.
            drawn = _fetch_png(page, src).getpixel((x + 5, y + 5 + h // 2))
            help_text = page.locator("#nova-model-help").inner_text()
            said = colour_words(help_text)
            assert said and all(hue_is(word, drawn) for word in said), (help_text, drawn)
            legend_model = page.locator("#nova-legend .nova-legend-item").last.inner_text()
            assert [w for w in colour_words(legend_model) if hue_is(w, drawn)], legend_model

        page.close()

        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        with _screenshot_on_failure(phone, "explorer-phone"):
            phone.goto(url)
            phone.locator("#nova-details").get_by_text(cases[0].case_id).first.wait_for(
                timeout=WAIT_MS
            )
            widths = phone.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert widths[0] <= widths[1] + 1, f"the page scrolls sideways on a phone: {widths}"
        phone.close()


def test_explorer_bad_source_page_in_the_browser(browser, tmp_path: Path) -> None:
    from novabench.spaces import explorer

    demo = explorer.build_demo(str(tmp_path / "no-release-here"))
    with _served(demo) as url:
        page = browser.new_page()
        with _screenshot_on_failure(page, "explorer-error"):
            page.goto(url)
            page.locator("#nova-error").get_by_text("could not be opened").wait_for(timeout=WAIT_MS)
            assert str(tmp_path) not in page.locator("body").inner_text()
        page.close()


def _set_code(page, elem_id: str, text: str) -> None:
    editor = page.locator(f"#{elem_id} .cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def _code_text(page, elem_id: str) -> str:
    return page.locator(f"#{elem_id} .cm-content").inner_text()


def _choose_task(page, task: str) -> None:
    page.locator("#nova-task input").click()
    page.get_by_role("option").filter(has_text=task).first.click()


# "in view" when the results cell reading exactly `label` lies inside the box of every
# ancestor that clips its content (the table's own scroll frame): no scrolling shows it.
_IN_VIEW_OF_ITS_TABLE = """label => {
  const cells = [...document.querySelectorAll('#nova-results td, #nova-results [role=gridcell]')];
  const cell = cells.find(c => c.innerText.trim() === label);
  if (!cell) return 'absent';
  const r = cell.getBoundingClientRect();
  for (let box = cell.parentElement; box; box = box.parentElement) {
    if (!['auto', 'scroll', 'hidden'].includes(getComputedStyle(box).overflowY)) continue;
    const b = box.getBoundingClientRect();
    if (r.top < b.top - 1 || r.bottom > b.bottom + 1) return 'clipped';
  }
  return 'in view';
}"""


def test_metric_space_in_the_browser(browser, tmp_path: Path) -> None:
    from novabench.spaces import metric
    from novabench.spaces.source import open_source

    cases = open_source("").release.cases()  # the built Space's own data: the sample
    with _built_space_served("metric", tmp_path) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        with _screenshot_on_failure(page, "metric"):
            page.goto(url)
            results = page.locator("#nova-results")
            page.locator("#nova-resamples input").fill("50")
            page.locator("#nova-score").click()
            results.get_by_text("mAP@30 (%)").first.wait_for(timeout=WAIT_MS)
            assert "50 resamples" in page.locator("#nova-message").inner_text()

            # All tasks at once (39 rows): every task's paper keys are in view in the table,
            # with no scrolling inside it.
            _choose_task(page, "all")
            page.wait_for_timeout(500)  # lets the example texts of "all" arrive
            page.locator("#nova-score").click()
            results.get_by_text("top5-lexicon (%)").first.wait_for(timeout=WAIT_MS)
            for label in ("mAP@30 (%)", "mAP@50 (%)", "BLEU-4 (%)", "ClinicalF1-lexicon (%)",
                          "top1-lexicon (%)", "top5-lexicon (%)"):  # fmt: skip
                assert page.evaluate(_IN_VIEW_OF_ITS_TABLE, label) == "in view", label

            # What the user pasted survives a change of task.
            pasted = '[["glioblastoma", "lymphoma"]]'
            _set_code(page, "nova-predictions", pasted)
            _set_code(page, "nova-references", '["Glioblastoma"]')
            _choose_task(page, "diagnosis")
            page.wait_for_timeout(500)  # lets a (wrong) task handler run before checking
            assert json.loads(_code_text(page, "nova-predictions")) == json.loads(pasted)
            page.locator("#nova-score").click()
            results.get_by_text("top1-lexicon (%)").first.wait_for(timeout=WAIT_MS)
            assert re.search(r"top1-lexicon \(%\)\s+100\.0\s+100\.0 – 100\.0", results.inner_text())

            # Uploading a predictions file fills the box; its path never shows.
            upload = tmp_path / "captions.jsonl"
            upload.write_text(json.dumps("Axial FLAIR shows a lesion.") + "\n")
            _choose_task(page, "captioning")
            page.locator("#nova-predictions-file input[type=file]").set_input_files(str(upload))
            page.wait_for_function(
                "() => document.querySelector('#nova-predictions .cm-content')"
                ".innerText.includes('Axial FLAIR shows a lesion')",
                timeout=WAIT_MS,
            )
            _set_code(page, "nova-references", '["Axial FLAIR image with a lesion."]')
            page.locator("#nova-score").click()
            results.get_by_text("ROUGE-L (%)").first.wait_for(timeout=WAIT_MS)
            assert str(tmp_path) not in page.locator("body").inner_text()

            # Against the Space's own NOVA data: each case answered with its own diagnosis
            # is a top-1 hit on every case that has one.
            _choose_task(page, "diagnosis")
            page.locator("#nova-references-mode").get_by_text(metric.REFERENCES_FROM_DATA).click()
            answered = [c for c in cases if c.final_diagnosis]
            _set_code(page, "nova-predictions", "\n".join(
                json.dumps({"case_id": c.case_id, "diagnoses": [c.final_diagnosis]})
                for c in answered
            ))  # fmt: skip
            page.wait_for_timeout(500)  # lets the editor's change reach the server's state
            before = results.inner_text()
            page.locator("#nova-score").click()
            page.wait_for_function(
                "old => { const r = document.querySelector('#nova-results');"
                " return r && r.innerText !== old && r.innerText.includes('top1-lexicon (%)'); }",
                arg=before,
                timeout=WAIT_MS,
            )
            assert re.search(r"top1-lexicon \(%\)\s+100\.0\b", results.inner_text()), (
                results.inner_text(),
                page.locator("#nova-message").inner_text(),
            )
        page.close()


# --------------------------------------------------------------------------- hostile text

# Anything the page fetches or runs because of these strings carries "pwn" in its URL or
# sets window.__pwned; port 9 (discard) on loopback answers nothing.
_TRAP = "http://127.0.0.1:9/pwn"
_HOSTILE_TEXT = (
    f"Glioma ![x]({_TRAP}-md.png) [click]({_TRAP}-link) "
    f'<img src="{_TRAP}-html.png" onerror="window.__pwned=1"> '
    f"<script>window.__pwned=2</script> `code` {_TRAP}-bare www.pwn.invalid \u202eevil"
)


@contextlib.contextmanager
def _watched(page) -> Iterator[list[str]]:
    """Every request the page makes and every dialog it opens, for the assertions after."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    page.on("dialog", lambda dialog: (seen.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    yield seen


def _assert_inert(page, seen: list[str], base: str) -> None:
    from urllib.parse import urlsplit

    page.wait_for_timeout(1000)  # lets a (wrong) image load or handler run before checking
    assert seen, "no request was recorded at all: the watcher is not working"
    left = [u for u in seen if not u.startswith((base + "/", "data:", "blob:"))]
    assert left == []  # nothing left the Space's own origin (dialogs included)
    assert [u for u in seen if "pwn" in urlsplit(u).path] == []  # nor asked it for a trap
    assert page.evaluate("window.__pwned") is None
    assert (
        page.locator("#nova-details img, #nova-upload-status img, #nova-link-note img").count() == 0
    )
    assert page.locator("#nova-details a, #nova-link-note a, #nova-upload-status a").count() == 0


def test_explorer_shows_hostile_release_text_upload_and_link_as_text(
    browser, tmp_path: Path
) -> None:
    from urllib.parse import quote

    from novabench.spaces import explorer
    from novabench.spaces.source import open_source
    from tests.release_factory import default_rows, write_v1_release

    rows = default_rows(n_cases=2, image_size=(64, 64))
    for row in rows:
        if row["case_id"] == "case0001":
            row["caption_text"] = _HOSTILE_TEXT
            for key in ("title", "clinical_history", "final_diagnosis", "differential_diagnosis"):
                row["meta"][key] = _HOSTILE_TEXT
    release = write_v1_release(tmp_path / "rel", rows)
    demo = explorer.build_demo(opened=open_source(str(release)))
    run = tmp_path / "run`![u](pwn-name.png)`<b>.jsonl"
    run.write_text(
        json.dumps({"case_id": "case0001", "diagnoses": [_HOSTILE_TEXT]}) + "\n", encoding="utf-8"
    )
    link = quote(f"x`![a]({_TRAP}-case.png)`<img src={_TRAP}-q.png onerror=window.__pwned=3>")
    with _served(demo, css=explorer.theme_css()) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        with _screenshot_on_failure(page, "explorer-hostile"), _watched(page) as seen:
            page.goto(f"{url}/?case={link}")
            details = page.locator("#nova-details")
            details.get_by_text("Final diagnosis.").first.wait_for(timeout=WAIT_MS)
            page.wait_for_function(
                "() => document.querySelector('#nova-link-note').innerText.trim() !== ''",
                timeout=WAIT_MS,
            )
            page.locator("#nova-model").get_by_text("Overlay a model's predictions").click()
            page.locator("#nova-upload input[type=file]").set_input_files(str(run))
            page.locator("#nova-upload-status").get_by_text("Loaded").wait_for(timeout=WAIT_MS)
            _assert_inert(page, seen, url)
            note = page.locator("#nova-link-note").inner_text()
            assert "not in this data" in note and "pwn" not in note
            shown = details.inner_text()
            assert "![x](" in shown and "<script>" in shown and "<U+202E>evil" in shown
            # Gradio drops some characters of an upload's name; the rest shows as text.
            assert "[u](pwn-name.png)" in page.locator("#nova-upload-status").inner_text()
        page.close()


def test_metric_space_keeps_hostile_and_large_uploads_out_of_the_page(
    browser, tmp_path: Path
) -> None:
    from novabench.spaces import metric

    demo = metric.build_demo(REPO / "metrics" / "nova_metric")
    large = tmp_path / "large.jsonl"
    line = json.dumps(_HOSTILE_TEXT) + "\n"
    large.write_text(line * (metric.MAX_SHOWN_UPLOAD_BYTES // len(line) + 10), encoding="utf-8")
    n_lines = metric.MAX_SHOWN_UPLOAD_BYTES // len(line) + 10
    with _served(demo) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        with _screenshot_on_failure(page, "metric-hostile"), _watched(page) as seen:
            page.goto(url)
            _choose_task(page, "captioning")
            # A large upload: one line in the editor, the file scored as it is.
            page.locator("#nova-predictions-file input[type=file]").set_input_files(str(large))
            page.wait_for_function(
                "() => document.querySelector('#nova-predictions .cm-content')"
                ".innerText.includes('bytes uploaded')",
                timeout=WAIT_MS,
            )
            assert len(_code_text(page, "nova-predictions")) < 300
            _set_code(page, "nova-references", json.dumps([_HOSTILE_TEXT] * n_lines))
            page.locator("#nova-score").click()
            page.locator("#nova-results").get_by_text("ROUGE-L (%)").first.wait_for(timeout=WAIT_MS)
            # Deep nesting pasted: one line of refusal, the page still answers.
            _set_code(page, "nova-predictions", "[" * 100_000 + "]" * 100_000)
            page.locator("#nova-score").click()
            page.locator("#nova-message").get_by_text("nested deeper").wait_for(timeout=WAIT_MS)
            # A hostile error message is shown as text.
            _set_code(page, "nova-predictions", json.dumps([{"boxes": _HOSTILE_TEXT}]))
            page.locator("#nova-score").click()
            page.locator("#nova-message").get_by_text("Could not score").wait_for(timeout=WAIT_MS)
            _assert_inert(page, seen, url)
            assert page.locator("#nova-message img, #nova-message a").count() == 0
        page.close()
