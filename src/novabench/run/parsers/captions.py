"""Captioning answers to captions: :func:`parse_caption` and :class:`ParsedCaption`.

The caption is what is left of the answer once the chat wrapping is gone: code fences,
preambles, answer prefixes, markdown, courtesy lines and quotes.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from novabench.registry import TASKS
from novabench.run.parsers.lenient_json import _norm_key, _structures
from novabench.run.parsers.text import (
    _MAX_CHARS,
    _coerce_text,
    _is_null_literal,
    _strip_reasoning,
    _without_fences,
)


@dataclass(frozen=True)
class ParsedCaption:
    """A caption cleaned of chat wrapping (prefixes, markdown, fences, quotes).

    Attributes:
        caption: the cleaned caption (``""`` when empty).
        status: one of :data:`CAPTION_STATUSES`.
        error: why nothing could be read, else ``None``.

    Example:
        >>> parse_caption("**Caption:** Axial T2 image.")
        ParsedCaption(caption='Axial T2 image.', status='ok', error=None)
    """

    #: The task of :mod:`novabench.registry` this result answers.
    TASK: ClassVar[str] = "captioning"
    #: Counts :class:`ParseStats` adds up over the answers (none for captions).
    COUNTED: ClassVar[tuple[str, ...]] = ()
    #: Attributes whose values :class:`ParseStats` counts in its ``<name>_counts``.
    TALLIED: ClassVar[tuple[str, ...]] = ()

    caption: str = ""
    status: str = "ok"
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form.

        Example:
            >>> ParsedCaption("x").to_dict()
            {'caption': 'x', 'status': 'ok', 'error': None}
        """
        return asdict(self)


#: Statuses of :class:`ParsedCaption`, as the task registry declares them.
CAPTION_STATUSES: tuple[str, ...] = TASKS[ParsedCaption.TASK].parse_statuses


# --------------------------------------------------------------------------- cleaning


_CAPTION_PREAMBLE = re.compile(
    r"^\s*(?:(?:sure|certainly|of course|absolutely|okay|ok|alright)\b[!.,]?\s*)?"
    r"(?:here(?:'s|\s+is|\s+are)\b[^:\n]*:\s*)",
    re.I,
)
_CAPTION_COURTESY = re.compile(
    r"^\s*(?:sure|certainly|of course|absolutely|okay|ok)\s*[!.,]\s*$", re.I
)
_CAPTION_PREFIX = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?:caption|answer|description|radiology\s+description|image\s+description|"
    r"findings|figure\s+legend|legend|response)\s*(?:\*\*|__)?\s*[:\-\u2013]\s*(?:\*\*|__)?\s*",
    re.I,
)
_CAPTION_HEADER_ONLY = re.compile(
    r"^(?:caption|answer|description|radiology description|image description|findings|"
    r"figure legend|legend|response)\s*:?$",
    re.I,
)
_CAPTION_TRAILER = re.compile(
    r"^\s*(?:let me know|i hope|please (?:note|consult)|note:|disclaimer|this (?:description|caption) "
    r"(?:is|was)|feel free)",
    re.I,
)


def _strip_markdown_line(line: str) -> tuple[str, bool]:
    """Return the line without markdown and whether it was a list item."""
    line = re.sub(r"^\s*#{1,6}\s*", "", line)
    is_item = bool(re.match(r"^\s*(?:[-*\u2022+]|\d{1,2}[.)])\s+", line))
    line = re.sub(r"^\s*(?:[-*\u2022+]|\d{1,2}[.)])\s+", "", line)
    line = re.sub(r"(\*\*|__)(.+?)\1", r"\2", line)
    line = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", line)
    line = line.replace("**", "").replace("`", "")
    return line.strip(), is_item


def parse_caption(text: Any) -> ParsedCaption:
    """Clean a captioning answer down to the caption itself.

    Removes code fences, chat preambles ("Sure! Here is the caption:"),
    ``<think>`` reasoning blocks (an answer that is only reasoning is ``"empty"``),
    answer prefixes ("Caption:", "Answer:", "Description:"), markdown (bold,
    headers; bullet items become sentences), trailing courtesy lines ("Let me
    know if..."), surrounding quotes, and collapses whitespace. A JSON object
    with a ``caption`` or ``description`` key gives that value.

    Args:
        text: the raw answer (str; bytes or None too; a list gives its text items as
            sentences, and a list without text is ``"unparseable"``).

    Returns:
        The caption with a status from :data:`CAPTION_STATUSES`; never raises.

    Example:
        >>> parse_caption('Sure! Here is the caption:\\n\\n"Axial FLAIR  image, left frontal lesion."').caption
        'Axial FLAIR image, left frontal lesion.'
        >>> parse_caption("- Axial T2\\n- **Right** thalamic infarct").caption
        'Axial T2. Right thalamic infarct.'
        >>> parse_caption("   ").status
        'empty'
        >>> parse_caption([1, 2]).status
        'unparseable'
    """
    try:
        return _parse_caption(text)
    except Exception as exc:  # the contract: a status, never an exception
        return ParsedCaption(status="unparseable", error=f"internal parser error: {exc!r}")


def _parse_caption(raw: Any) -> ParsedCaption:
    if isinstance(raw, (list, tuple)):
        # a structured answer given as a list: its text items are the caption's sentences
        pieces = [item.strip() for item in raw if isinstance(item, str) and item.strip()]
        if not pieces:
            return ParsedCaption(status="unparseable", error="a list with no caption text in it")
        raw = "\n".join(f"- {piece}" for piece in pieces)
    text, type_error = _coerce_text(raw)
    if text is None:
        return ParsedCaption(status="unparseable", error=type_error)
    reasoning = _strip_reasoning(text)
    text = reasoning.text[:_MAX_CHARS]
    if not text.strip() and reasoning.removed:
        return ParsedCaption(status="empty", error=reasoning.empty_error())
    if not text.strip() or _is_null_literal(text):
        return ParsedCaption(status="empty", error="no answer text")

    stripped = text.strip()
    if stripped[:1] == "{" or stripped.startswith("```"):
        for value, _ in _structures(stripped):
            if isinstance(value, dict):
                for key, item in value.items():
                    if (
                        _norm_key(key) in {"caption", "description", "answer", "findings"}
                        and isinstance(item, str)
                        and item.strip()
                    ):
                        text = item
                        break
                break

    text = _without_fences(text)
    text = _CAPTION_PREAMBLE.sub("", text, count=1)
    sentences: list[str] = []
    for line in text.splitlines():
        if _CAPTION_COURTESY.match(line):
            continue
        cleaned, is_item = _strip_markdown_line(line)
        if not cleaned or _CAPTION_HEADER_ONLY.match(cleaned):
            continue
        if not sentences:  # answer prefixes only open the answer; later "Findings:" is content
            previous = None
            while previous != cleaned:
                previous = cleaned
                cleaned = _CAPTION_PREFIX.sub("", cleaned, count=1)
                cleaned = _CAPTION_PREAMBLE.sub("", cleaned, count=1)
            if not cleaned:
                continue
        if sentences and _CAPTION_TRAILER.match(cleaned):
            break
        if is_item and not re.search(r"[.!?:;]$", cleaned):
            cleaned += "."
        sentences.append(cleaned)
    caption = " ".join(" ".join(sentences).split())
    caption = _strip_quotes(caption)
    if not caption:
        return ParsedCaption(status="empty", error="nothing left after removing the chat wrapping")
    return ParsedCaption(caption=caption, status="ok")


_QUOTE_PAIRS = (('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("`", "`"))


def _strip_quotes(text: str) -> str:
    changed = True
    while changed and len(text) >= 2:
        changed = False
        for left, right in _QUOTE_PAIRS:
            if (
                text.startswith(left)
                and text.endswith(right)
                and text.count(left) + (text.count(right) if left != right else 0) <= 2
            ):
                text = text[len(left) : -len(right)].strip()
                changed = True
    return text
