"""Captioning answers to captions: :func:`parse_caption` and :class:`ParsedCaption`.

The caption is what is left of the answer once the chat wrapping is gone: code fences,
preambles, answer prefixes, markdown, courtesy lines and quotes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from novabench.registry import TASKS, task_answered_in
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
    TASK: ClassVar[str] = task_answered_in("caption")
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
    if is_refusal(caption):  # scored as the empty caption, counted as a non-answer
        shown = caption if len(caption) <= 80 else caption[:77] + "..."
        return ParsedCaption(
            status="refusal", error=f"the model declined to describe the image: {shown!r}"
        )
    return ParsedCaption(caption=caption, status="ok")


# A refusal opens the answer: an apology, or the model saying what it cannot or will not do.
_REFUSAL_OPENING = re.compile(
    r"^\W*(?:"
    r"(?:i'?m|i am)\s+(?:so\s+|very\s+|truly\s+)?sorry"
    r"|sorry\b"
    r"|(?:i|we)\s+apologi[sz]e"
    r"|my apologies"
    r"|unfortunately,?\s+(?:i|as an ai)\b"
    r"|(?:i|we)\s+(?:can(?:no|')t|can not|cannot|am unable|'?m unable|am not able|'?m not able|"
    r"won'?t|will not|must decline|have to decline)\b"
    r"|i'?m\s+(?:unable|not able)\b"
    r"|as an? (?:ai|artificial intelligence|language model|large language model|ai language model"
    r"|text-based (?:ai|model))\b"
    r")",
    re.IGNORECASE,
)
# What a caption is made of: a plane, a sequence, a finding, a place in the brain. A refusal
# names none of them ("medical images", "MRI scans" and "brain" are what it declines).
_IMAGING_CONTENT = re.compile(
    r"\b(?:axial|sagittal|coronal|flair|t1|t2|t1w|t2w|dwi|adc|swi|gre|diffusion|"
    r"weighted|contrast|gadolinium|hyperintens\w*|hypointens\w*|isointens\w*|enhanc\w*|"
    r"lesions?|mass(?:es)?|nodules?|cysts?|cystic|tumou?rs?|oedema|edema|infarcts?|"
    r"ha?emorrhag\w*|bleeds?|microbleeds?|atroph\w*|calcif\w*|necro\w*|ring|"
    r"signal|hydrocephalus|ventric\w*|sulc\w*|lobes?|frontal|parietal|temporal|occipital|"
    r"cerebell\w*|thalam\w*|pons|pontine|midbrain|medulla|hippocamp\w*|basal ganglia|"
    r"white matter|grey matter|gray matter|cortex|cortical|subcortical|periventricular|"
    r"hemispheres?|midline|corpus callosum|meningeal|dural|extra-axial|intra-axial|"
    r"left|right|bilateral|abnormal\w*|normal|sequences?|planes?)\b",
    re.IGNORECASE,
)
# Longer than this, an answer holds more than a refusal: it is read as a caption.
_REFUSAL_MAX_CHARS = 400


def is_refusal(caption: str) -> bool:
    """Whether a cleaned captioning answer, as a whole, declines to describe the image.

    Conservative: the answer must open with an apology or a statement of what the model
    cannot or will not do, stay short, and name no plane, sequence, finding or place in the
    brain. A caption that says "a metastasis cannot be excluded", or a disclaimer followed
    by a description, stays a caption.

    Args:
        caption: the answer as :func:`parse_caption` cleaned it.

    Returns:
        True for a whole-answer refusal.

    Example:
        >>> is_refusal("I'm sorry, but I can't help with describing medical images.")
        True
        >>> is_refusal("As an AI, I cannot diagnose, but this axial FLAIR image shows a "
        ...            "right temporal hyperintense lesion.")
        False
        >>> is_refusal("Axial T2 image; a low-grade glioma cannot be excluded.")
        False
        >>> is_refusal("I\u2019m sorry, but I can\u2019t help with interpreting medical images.")
        True
    """
    return _opens_declining(caption) and _IMAGING_CONTENT.search(_fold_lookalikes(caption)) is None


def _opens_declining(text: str, also: re.Pattern[str] | None = None) -> bool:
    """Whether a short answer (at most :data:`_REFUSAL_MAX_CHARS`, look-alikes folded) opens
    with an apology or a statement of what the model cannot or will not do (or ``also``):
    the first half of :func:`is_refusal`, which the diagnosis parser shares."""
    folded = _fold_lookalikes(text).strip()
    return len(folded) <= _REFUSAL_MAX_CHARS and (
        _REFUSAL_OPENING.match(folded) is not None
        or (also is not None and also.match(folded) is not None)
    )


# Typographic and other look-alike characters chat models write for the ASCII ones the
# refusal patterns spell (GPT-4o writes "I’m sorry, but I can’t ...").
_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u02bc\u02b9\u00b4\u0060", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u00a0\u2007\u202f", " "),
        **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff"),  # zero-width: gone
    }
)


def _fold_lookalikes(text: str) -> str:
    """The text with compatibility forms (full-width letters, ligatures) and typographic
    quotes, apostrophes, dashes and spaces written as their ASCII counterparts."""
    return unicodedata.normalize("NFKC", text).translate(_LOOKALIKES)


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
