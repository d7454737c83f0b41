"""Untrusted text through every writer: shown as text, never as markup, formula or reordering.

One hostile corpus (model names, file names, captions written by someone else) goes through
the escaping functions and through each writer that shows such text: the leaderboard's
Markdown, CSV and HTML, the report's Markdown and HTML, the gallery figure. The HTML checks
parse the page with lxml, a reference HTML parser; the Markdown checks apply CommonMark's
rules for backslash escapes and code spans by hand.
"""

from __future__ import annotations

import csv
import io
import re

import lxml.html
import pytest
from PIL import Image

from novabench.escaping import (
    csv_cell,
    html_text,
    markdown_code_span,
    markdown_text,
    markdown_text_with_code,
    plot_text,
    visible_text,
)
from novabench.report.gallery import GalleryItem, gallery_figure
from novabench.report.html import render_html
from novabench.report.leaderboard import (
    build_leaderboard,
    leaderboard_csv,
    render_leaderboard_html,
    render_leaderboard_markdown,
)
from novabench.report.render import render_comparison_markdown, render_markdown
from tests.report.contract_tables import report_dict

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src="http://tracker.invalid/p.png" onerror="alert(1)">',
    "![pixel](http://tracker.invalid/p.png)",
    "[their link](http://elsewhere.invalid/)",
    "qwen` ![x](http://tracker.invalid/p.png) `",
    "``double`` and `single",
    "7b | injected | cells",
    "first line\nsecond line\r\nthird",
    "=cmd|' /C calc'!A0",
    "+SUM(A1:A9)",
    "-2+3",
    "@SUM(A1)",
    "\t=tabbed",
    "caption \u202eevil.exe\u202c normal",
    "\u2066isolated\u2069 \u202a\u202b\u202c\u202d",
    "nul\x00byte",
    "lone\ud800surrogate",
    "&#x202e;entity &lt;b&gt;",
    "**bold** _em_ ~~gone~~ $x^{2$",
    "# heading",
    "1. listed",
    "see www.elsewhere.invalid or HTTPS://elsewhere.invalid, mail me@elsewhere.invalid",
]
# What a renderer may never see unescaped: markup openers (Markdown, HTML).
MARKUP = set("\\`*_[]<>#!|&~$")
# What GFM renderers (GitHub, marked) link without any markup.
BARE_LINK = re.compile(r"[A-Za-z0-9]://|\bwww\.|[A-Za-z0-9]@[\w-]+\.\w", re.IGNORECASE)
ASCII_PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
HIDDEN = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200e\u200f\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]"
)


def unescaped_markup(markdown: str) -> list[str]:
    """Markup characters not made literal by a backslash (CommonMark: before ASCII punctuation)."""
    found, index = [], 0
    while index < len(markdown):
        char = markdown[index]
        if char == "\\" and index + 1 < len(markdown) and markdown[index + 1] in ASCII_PUNCTUATION:
            index += 2
            continue
        if char in MARKUP:
            found.append(char)
        index += 1
    return found


def code_span_content(span: str) -> str:
    """The text a CommonMark code span shows; fails when the span closes early."""
    fence = re.match("`+", span).group()
    inner = span[len(fence) : len(span) - len(fence)]
    assert span.endswith(fence) and not inner.startswith("`") or inner.startswith(" `")
    # An inner run of exactly the fence's length would close the span before its end.
    assert all(len(run) != len(fence) for run in re.findall("`+", inner)), span
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" "):
        inner = inner[1:-1]
    return inner


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_leaves_no_markup_and_no_hidden_character(text: str) -> None:
    escaped = markdown_text(text)
    assert unescaped_markup(escaped) == [] and not BARE_LINK.search(escaped)
    assert not HIDDEN.search(escaped) and "\n" not in escaped and "\r" not in escaped
    # Dropping the escapes gives back the text (controls shown, lines joined): nothing lost.
    shown = re.sub(r"\\(.)", r"\1", escaped)
    assert shown == re.sub(r"\r\n|[\r\n]", " ", visible_text(text))


@pytest.mark.parametrize("text", HOSTILE)
def test_a_code_span_cannot_be_closed_by_its_content(text: str) -> None:
    span = markdown_code_span(text)
    assert code_span_content(span) == re.sub(r"\r\n|[\r\n]", " ", visible_text(text))


@pytest.mark.parametrize("text", HOSTILE)
def test_csv_cell_is_never_a_formula(text: str) -> None:
    cell = csv_cell(text)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) and not HIDDEN.search(cell)


def test_hidden_characters_become_visible_markers() -> None:
    # Hand-written: U+202E is RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT ISOLATE.
    assert visible_text("a\u202eb\u2066c\x00d\ud800") == "a<U+202E>b<U+2066>c<U+0000>d<U+D800>"
    assert visible_text("tab\tand\nline") == "tab\tand\nline"
    assert html_text("x\u202ey") == "x&lt;U+202E&gt;y"
    assert plot_text("$1 and $2") == "\\$1 and \\$2"


def hostile_board() -> dict:
    reports = [report_dict(text, hit_30=0.1 + index / 50) for index, text in enumerate(HOSTILE)]
    paths = [f"reports/{text}.json" for text in HOSTILE]
    return build_leaderboard(reports, paths, n_resamples=0)


def test_leaderboard_markdown_shows_hostile_names_as_text() -> None:
    markdown = render_leaderboard_markdown(hostile_board())
    assert not HIDDEN.search(markdown)
    for line in markdown.splitlines():
        assert "<" not in unescaped_markup(line) and "!" not in unescaped_markup(line), line
        assert "&" not in unescaped_markup(line) and not BARE_LINK.search(line), line
    for text in HOSTILE:
        assert markdown_text(text) in markdown


def test_leaderboard_markdown_tables_keep_their_columns() -> None:
    lines = render_leaderboard_markdown(hostile_board()).splitlines()
    tables: list[list[str]] = []
    for line in lines:
        if line.startswith("|"):
            if tables and lines[lines.index(line) - 1].startswith("|"):
                tables[-1].append(line)
            else:
                tables.append([line])
    assert tables
    for table in tables:
        widths = {unescaped_markup(row).count("|") for row in table}
        assert len(widths) == 1, table


def test_leaderboard_csv_names_are_text_not_formulas() -> None:
    rows = list(csv.reader(io.StringIO(leaderboard_csv(hostile_board()))))
    names = [row[0] for row in rows[1:] if not row[0].startswith("human: ")]
    assert sorted(names) == sorted(csv_cell(text) for text in HOSTILE)
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in names)
    assert len({len(row) for row in rows}) == 1  # no name broke a row apart


def parsed_page(page: str) -> lxml.html.HtmlElement:
    tree = lxml.html.document_fromstring(page)
    assert tree.xpath("//script") == []
    assert [a for a in tree.xpath("//@*") if a.attrname.lower().startswith("on")] == []
    assert [s for s in tree.xpath("//img/@src") if not s.startswith("data:")] == []
    assert [h for h in tree.xpath("//a/@href") if not h.startswith("#")] == []
    return tree


def test_leaderboard_html_shows_hostile_names_as_text() -> None:
    page = render_leaderboard_html(hostile_board())
    assert not HIDDEN.search(page)
    text = parsed_page(page).text_content()
    for name in HOSTILE:
        assert visible_text(name).replace("\r\n", "\n") in text  # HTML reads CRLF as LF


# A report page draws its figures (about a third of a second on an idle core). The fast suite
# renders the texts that attack HTML, entities, controls and invisible characters; the rest run
# under `make test-slow`. Every text stays in the fast suite through the escaping functions'
# own tests above and the leaderboard's Markdown and HTML, which use the same escaping.
HTML_ATTACKS = {
    "<script>alert(1)</script>",
    '<img src="http://tracker.invalid/p.png" onerror="alert(1)">',
    "first line\nsecond line\r\nthird",
    "caption \u202eevil.exe\u202c normal",
    "\u2066isolated\u2069 \u202a\u202b\u202c\u202d",
    "nul\x00byte",
    "lone\ud800surrogate",
    "&#x202e;entity &lt;b&gt;",
}


@pytest.mark.parametrize(
    "text",
    [
        text if text in HTML_ATTACKS else pytest.param(text, marks=pytest.mark.slow)
        for text in HOSTILE
    ],
)
def test_report_markdown_and_html_show_hostile_model_and_paths_as_text(text: str) -> None:
    report = report_dict(text)
    report["predictions"]["paths"] = [f"runs/{text}.jsonl"]
    report["data"]["path"] = f"data/{text}"
    markdown = render_markdown(report)
    assert not HIDDEN.search(markdown)
    assert markdown_code_span(f"runs/{text}.jsonl") in markdown
    assert markdown_code_span(f"data/{text}") in markdown
    assert markdown_text(text) in markdown.splitlines()[0]
    page = render_html(report)
    assert not HIDDEN.search(page)
    assert visible_text(text).replace("\r\n", "\n") in parsed_page(page).text_content()


def test_the_fast_html_attacks_are_hostile_texts() -> None:
    assert HTML_ATTACKS <= set(HOSTILE)  # a renamed text would otherwise leave the fast run


def test_comparison_markdown_shows_hostile_paths_in_closed_spans() -> None:
    side_a, side_b = report_dict("a`b"), report_dict("<img src=x>")
    side_a["predictions"]["paths"] = ["runs/`![x](http://tracker.invalid/p.png)`.jsonl"]
    comparison = {"a": side_a, "b": side_b, "bootstrap": {}, "tasks": {}}
    markdown = render_comparison_markdown(comparison)
    assert markdown_code_span(side_a["predictions"]["paths"][0]) in markdown
    # B's name outside any code span is escaped (its default path shows it inside one).
    assert markdown.splitlines()[0] == "# NOVA comparison: a\\`b (A) vs \\<img src=x\\> (B)"


def test_gallery_draws_captions_holding_dollars_and_controls_as_text() -> None:
    buffer = io.BytesIO()
    Image.new("L", (8, 8)).save(buffer, format="PNG")
    caption = "lesion $x^{2$ costs \u202eevil"
    item = GalleryItem("best", "case0001_001.png", buffer.getvalue(), 0.5, "ok", caption, "$")
    figure = gallery_figure([item])
    figure.savefig(io.BytesIO(), format="png")  # a matplotlib math parse error would raise here
    [body] = [t.get_text() for axes in figure.axes for t in axes.texts]
    assert "\\$x^{2\\$ costs <U+202E>evil" in body.replace("\n", " ")


def test_breakdown_groups_from_a_users_category_map_show_as_text() -> None:
    from novabench.report.render import render_breakdowns

    rows = [{"group": text, "n": 3, "too_small": True, "top1": 0.5} for text in HOSTILE]
    lines = render_breakdowns({"breakdowns": {"diagnosis": {"my_categories": rows}}})
    table = [line for line in lines if line.startswith("| ") and "too small" in line]
    assert len(table) == len(HOSTILE)
    for line, text in zip(table, HOSTILE):
        assert line.startswith(f"| {markdown_text(text)} | 3 (too small) |")
        assert unescaped_markup(line).count("|") == 4 and not HIDDEN.search(line)


@pytest.mark.parametrize("text", HOSTILE)
def test_code_spans_of_our_lines_render_as_code_and_nothing_else_as_markup(text: str) -> None:
    from markdown_it import MarkdownIt

    line = f"warning: {text}; install it with `python -m nltk.downloader wordnet`, see `{text}`"
    rendered = MarkdownIt("commonmark").renderInline(f"**{markdown_text_with_code(line)}**")
    assert set(re.findall(r"</?([a-z]+)", rendered)) <= {"strong", "code"}
    assert rendered.startswith("<strong>") and rendered.endswith("</strong>")
    if "`" not in text:  # a stray backtick of the text may pair with ours: still no markup
        assert "<code>python -m nltk.downloader wordnet</code>" in rendered
