"""Untrusted text made safe for each format novabench writes: one function per format.

Model names, file names, release text (titles, histories, captions, links) and uploads come
from other people. Every writer passes such text through the function of its format, so that
it shows up as text and nothing else: no Markdown image or link, no HTML tag, no live
spreadsheet formula, no reordered display.

All functions first apply :func:`visible_text`: bidirectional controls (which can reorder
what a reader sees), other control characters (NUL and the like) and lone surrogates (which
no UTF-8 file can hold) are replaced by a visible ``<U+XXXX>`` marker, so nothing is lost
silently and the reader sees that the text held them.
"""

from __future__ import annotations

import html
import re

__all__ = [
    "csv_cell",
    "html_text",
    "markdown_code_span",
    "markdown_text",
    "markdown_text_with_code",
    "plot_text",
    "visible_text",
]

# Bidi embeddings/overrides (U+202A..U+202E), isolates (U+2066..U+2069), the implicit marks
# (U+200E, U+200F, U+061C); C0 controls but tab and line breaks; DEL and C1 controls; lone
# surrogates (U+D800..U+DFFF, only reachable through "surrogateescape" or JSON "\\ud800").
_HIDDEN = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]"
)
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x85]")
# Every character that opens inline markup anywhere in a line: code spans, emphasis, links
# and images ("[" and "!"), autolinks and raw HTML ("<"), entities ("&"), table pipes, GFM
# strikethrough ("~"), math ("$"), headings ("#"). CommonMark lets a backslash escape them.
_MARKDOWN_INLINE = frozenset("\\`*_[]<>#!|&~$")
# GFM (GitHub, marked in Gradio) turns bare "scheme://", "www." and e-mail addresses into
# links; an escape inside each pattern keeps it text ("mAP@30" is no address: no dot).
_BARE_LINK = re.compile(
    r"(?<=[A-Za-z0-9])(?=://)|(?<=\bwww)(?=\.)|(?<=[A-Za-z0-9._+-])(?=@[\w-]+\.\w)",
    re.IGNORECASE,
)
# What opens a block only at the start of a line: list items, quotes, setext underlines,
# ordered lists ("1." / "1)").
_MARKDOWN_LINE_START = re.compile(r"^([-+=]|\d+[.)])")
# OWASP's list of characters that make a spreadsheet read a cell as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def visible_text(text: object) -> str:
    """``text`` with every bidi control, other control character and lone surrogate shown as ``<U+XXXX>``.

    Tabs and line breaks are kept (they do not hide or reorder text).

    Args:
        text: anything; it is turned into ``str`` first.

    Returns:
        The text with the hidden characters replaced by visible markers.

    Example:
        >>> visible_text("left\\u202eevil")
        'left<U+202E>evil'
        >>> visible_text("a\\x00b\\tc")
        'a<U+0000>b\\tc'
    """
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", str(text))


def markdown_text(text: object) -> str:
    """``text`` as inline Markdown that renders as exactly that text on one line.

    Every character that can open markup is backslash-escaped, so no image, link, HTML
    tag, entity, emphasis or table pipe can come from it, and bare URLs (``http://``,
    ``www.``, e-mail addresses) are broken by an escape so no renderer links them; line
    breaks become spaces.

    Args:
        text: untrusted text (a model name, a file name, a release field).

    Returns:
        Markdown source for a table cell, a heading or running text.

    Example:
        >>> print(markdown_text("![x](http://a/) <b>"))
        \\!\\[x\\](http\\://a/) \\<b\\>
        >>> print(markdown_text("- qwen | 7b\\nnext"))
        \\- qwen \\| 7b next
    """
    flat = _LINE_BREAKS.sub(" ", visible_text(text))
    escaped = "".join("\\" + c if c in _MARKDOWN_INLINE else c for c in flat)
    escaped = _BARE_LINK.sub("\\\\", escaped)
    return _MARKDOWN_LINE_START.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], escaped)


def markdown_code_span(text: object) -> str:
    """``text`` as a complete Markdown code span (backticks included) that no content can close.

    The fence is one backtick longer than the longest run of backticks inside; a space pads
    content that starts or ends with a backtick (CommonMark strips one such space again).

    Args:
        text: untrusted text shown verbatim (a path, a file name).

    Returns:
        The code span, e.g. ```runs/a.jsonl```.

    Example:
        >>> markdown_code_span("runs/a.jsonl")
        '`runs/a.jsonl`'
        >>> markdown_code_span("a`b")
        '``a`b``'
        >>> markdown_code_span("`x")
        '`` `x ``'
    """
    content = _LINE_BREAKS.sub(" ", visible_text(text))
    longest = max((len(run) for run in re.findall("`+", content)), default=0)
    fence = "`" * (longest + 1)
    if content.startswith("`") or content.endswith("`") or not content.strip():
        content = f" {content} "
    return f"{fence}{content}{fence}"


# A run of backticks, the shortest text, then a run of the same length: a CommonMark code span.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def markdown_text_with_code(text: object) -> str:
    """``text`` as inline Markdown, its `code spans` kept as code spans, the rest escaped.

    Our warning lines are worded for the terminal too, with commands in backticks:
    :func:`markdown_text` alone would show the backticks escaped (inside bold text as
    well). Each span found becomes a :func:`markdown_code_span` (no content can close it)
    and the text between spans goes through :func:`markdown_text`, so nothing else in the
    text can open markup.

    Args:
        text: a line of ours that may quote untrusted text (a command, a path).

    Returns:
        Markdown source for running text, bold included.

    Example:
        >>> print(markdown_text_with_code("run `nova sample --cases 6` on *data*"))
        run `nova sample --cases 6` on \\*data\\*
        >>> print(markdown_text_with_code("an unpaired ` stays text"))
        an unpaired \\` stays text
    """
    flat = _LINE_BREAKS.sub(" ", visible_text(text))
    parts, last = [], 0
    for span in _CODE_SPAN.finditer(flat):
        parts += [markdown_text(flat[last : span.start()]), markdown_code_span(span.group(2))]
        last = span.end()
    parts.append(markdown_text(flat[last:]))
    return "".join(parts)


def csv_cell(text: object) -> str:
    """``text`` as a CSV cell that no spreadsheet runs as a formula.

    A cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading
    apostrophe (OWASP's rule for CSV injection); quoting of commas and quotes is left to the
    ``csv`` writer. Only for text from others, never for numbers novabench writes.

    Args:
        text: untrusted text (a model name, a path).

    Returns:
        The cell's text.

    Example:
        >>> csv_cell('=HYPERLINK("http://a")')
        '\\'=HYPERLINK("http://a")'
        >>> csv_cell("qwen-7b")
        'qwen-7b'
    """
    cell = visible_text(text)
    return "'" + cell if cell.startswith(_FORMULA_STARTS) else cell


def html_text(text: object) -> str:
    """``text`` escaped for HTML element content and quoted attribute values.

    Args:
        text: untrusted text.

    Returns:
        The text with ``& < > " '`` escaped and hidden characters made visible.

    Example:
        >>> html_text('<img src=x onerror="alert(1)">')
        '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
        >>> html_text("a\\u202eb")
        'a&lt;U+202E&gt;b'
    """
    return html.escape(visible_text(text), quote=True)


def plot_text(text: object) -> str:
    """``text`` for a matplotlib title, label or legend entry: shown as typed, never as math.

    Matplotlib reads text between two ``$`` as mathtext (and fails to draw a figure on a
    malformed one); ``\\$`` is its literal dollar.

    Args:
        text: untrusted text (a model name, a caption, a file name).

    Returns:
        The text with dollars escaped and hidden characters made visible.

    Example:
        >>> print(plot_text("costs $x^{2$ more"))
        costs \\$x^{2\\$ more
    """
    return visible_text(text).replace("$", "\\$")
