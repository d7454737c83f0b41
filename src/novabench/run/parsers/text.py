"""Shared text handling: what every answer goes through before a parser reads it.

- ``_coerce_text``: any value (str, bytes, ``None``, a decoded dict/list) to text or a
  type error, so a parser never raises on the type of its input.
- ``_is_null_literal``: ``"null"``, ``"N/A"`` and the like, which mean "no answer".
- ``_strip_reasoning``: the reasoning of thinking models (``<think>...</think>``,
  ``<thinking>...</thinking>``, Kimi-VL's ``\u25c1think\u25b7...\u25c1/think\u25b7``) is removed
  before anything is read, so neither a box, a diagnosis nor a sentence of the reasoning is
  scored. A closing tag without an opening one (the chat template opened the block in the
  prompt) makes everything before it reasoning; a block that is never closed (the answer
  ran out of tokens while thinking) makes everything after its opening reasoning, so such
  an answer is ``"empty"``: a counted failure, not a caption.
- ``_fenced_blocks`` / ``_without_fences``: Markdown code fences.
- ``_with_number_groups_on_one_line``: a bracketed group of numbers written across lines
  (``json.dumps(indent=2)``) put on one line, so a reader that goes line by line reads it
  as it reads the compact form.
- ``_MAX_CHARS``: how much of a runaway answer is read.
- ``_without_surrogates``: lone UTF-16 surrogates become U+FFFD, so no output string
  is unencodable.
- ``_with_ascii_punctuation``: fullwidth forms (``［502，392］``, ``：``, the ideographic
  space and comma) as their ASCII characters, so box numbers a model writes with a CJK
  input method are read.

Everything here is private to :mod:`novabench.run.parsers`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Answers longer than this are read only up to here (a runaway generation);
# the cut is recorded in the notes.
_MAX_CHARS = 200_000


_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(text: str) -> str:
    """The text with surrogate pairs joined and lone surrogates replaced by U+FFFD.

    A lone surrogate (a string sliced mid-pair, a ``\\ud800`` escape) is no character:
    it cannot be encoded to UTF-8, so a caption, label or diagnosis holding one would
    break the predictions file. It is replaced as undecodable bytes are.
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


# U+FF01..U+FF5E are the fullwidth forms of "!".."~"; U+3000 and U+3001 the ideographic
# space and comma (a list separator); U+3010 and U+3011 the lenticular brackets a CJK input
# method gives for "[" and "]". Nothing else is folded: "。" ends a sentence.
_FULLWIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {
    0x3000: ord(" "),
    0x3001: ord(","),
    0x3010: ord("["),
    0x3011: ord("]"),
}
_HAS_FULLWIDTH = re.compile("[\uff01-\uff5e\u3000\u3001\u3010\u3011]")


def _with_ascii_punctuation(text: str) -> tuple[str, bool]:
    """The text with fullwidth forms as ASCII, and whether there were any.

    Example:
        >>> _with_ascii_punctuation("lesión：［502，392，552，454］")
        ('lesión:[502,392,552,454]', True)
        >>> _with_ascii_punctuation("lesion: [1, 2, 3, 4]")
        ('lesion: [1, 2, 3, 4]', False)
    """
    if _HAS_FULLWIDTH.search(text) is None:
        return text, False
    return text.translate(_FULLWIDTH), True


def _coerce_text(value: Any) -> tuple[str | None, str | None]:
    """Return (text, error) for any input; text None means 'not text'."""
    if value is None:
        return "", None
    if isinstance(value, str):
        return _without_surrogates(value), None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace"), None
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value), None
        except (TypeError, ValueError):
            return None, f"expected text, got a {type(value).__name__} that is not JSON"
    return None, f"expected text, got {type(value).__name__}"


_NULL_LITERALS = frozenset({"none", "null", "nil", "n/a", "na", "nan", "undefined"})


def _is_null_literal(text: str) -> bool:
    return text.strip().strip(".`'\"").strip().lower() in _NULL_LITERALS


# Reasoning blocks of thinking VLMs: <think>...</think> (Qwen3-VL thinking, GLM-4.1V-Thinking,
# DeepSeek-style), <thinking>...</thinking>, and Kimi-VL's \u25c1think\u25b7...\u25c1/think\u25b7.
_REASONING_TAG = re.compile(
    r"(?:<|\u25c1)\s*(?P<close>/?)\s*(?:think|thinking)\s*(?:>|\u25b7)", re.IGNORECASE
)


# Ollama's command line prints a thinking model's reasoning between a first line
# "Thinking..." and a line "...done thinking."; read as <think> and </think>.
_OLLAMA_THINKING_OPEN = re.compile(r"\s*Thinking\.\.\.[ \t]*\r?\n")
_OLLAMA_THINKING_CLOSE = re.compile(r"^\.\.\.done thinking\.[ \t\r]*$", re.MULTILINE)


@dataclass(frozen=True)
class _Reasoning:
    text: str  # the answer without its reasoning blocks
    removed: bool = False  # at least one block (or a closing tag's reasoning) was removed
    cut_off: bool = False  # a block was opened and never closed: the answer ran out inside it

    def note(self) -> str | None:
        if self.cut_off:
            return "a <think> reasoning block was never closed; it was dropped up to the end"
        if self.removed:
            return "a <think> reasoning block was removed"
        return None

    def empty_error(self) -> str:
        if self.cut_off:
            return (
                "the answer is a <think> reasoning block cut off before the answer "
                "(out of new tokens?)"
            )
        return "nothing but a <think> reasoning block"


def _strip_reasoning(text: str) -> _Reasoning:
    """The answer without the reasoning blocks of a thinking model.

    ``<think>...</think>`` blocks are removed wherever they are; a closing tag
    without an opening one (the chat template put ``<think>`` in the prompt)
    means everything before it was reasoning; an opening tag that is never
    closed (generation cut off by the token limit) means everything after it
    is reasoning. One pass over the tags, so the cost stays linear. Ollama's
    ``Thinking...`` / ``...done thinking.`` lines, when the answer opens with the first,
    are read as those tags.

    Example:
        >>> _strip_reasoning("Thinking...\\nlesion?\\n...done thinking.\\n\\nno target").text
        '\\n\\nno target'
    """
    opened = _OLLAMA_THINKING_OPEN.match(text)
    if opened is not None:
        text = "<think>" + _OLLAMA_THINKING_CLOSE.sub("</think>", text[opened.end() :], count=1)
    kept: list[str] = []
    start = 0  # where the current stretch of answer text began
    open_at: int | None = None
    removed = False
    for tag in _REASONING_TAG.finditer(text):
        removed = True
        if not tag.group("close"):
            if open_at is None:  # a tag opened inside a block is part of the block
                kept.append(text[start : tag.start()])
                open_at = tag.start()
        elif open_at is not None:
            open_at = None
            start = tag.end()
        else:  # a closing tag with no opening: what came before was reasoning
            kept = []
            start = tag.end()
    if not removed:
        return _Reasoning(text)
    if open_at is None:
        kept.append(text[start:])
    answer = "\n".join(part for part in kept if part)
    return _Reasoning(answer, removed=True, cut_off=open_at is not None)


_FENCE_PATTERN = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)(?:```|\Z)", re.S)


def _fenced_blocks(text: str) -> list[str]:
    """Contents of ```-fenced blocks (an unclosed final fence runs to the end)."""
    return [match.group(2) for match in _FENCE_PATTERN.finditer(text) if match.group(2).strip()]


def _fenced_spans(text: str) -> list[tuple[int, int]]:
    """Where the contents of each ```-fenced block that is not blank start and end.

    Example:
        >>> _fenced_spans("Box:\\n```json\\n[[1, 2, 3, 4]]\\n```\\nDone.")
        [(13, 28)]
    """
    return [match.span(2) for match in _FENCE_PATTERN.finditer(text) if match.group(2).strip()]


def _without_fences(text: str) -> str:
    """The text with fence markers removed but their contents kept."""
    return re.sub(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*", "\n", text)


# A bracketed group of numbers and separators only: no bracket inside, so each opening
# bracket is scanned once up to the next character outside the class (linear).
_NUMBER_GROUP = re.compile(r"[\[(][-+.0-9eE\s,;]*[\])]")


def _with_number_groups_on_one_line(text: str) -> str:
    """The text with each bracketed group of numbers spanning lines written on one line.

    JSON allows a newline wherever a space goes; a pretty-printed box list
    (``json.dumps(indent=2)``) puts each number on a line of its own. Lines that hold no
    such group are unchanged, so a label before a group stays on the group's line.

    Example:
        >>> _with_number_groups_on_one_line('"bbox_2d": [\\n  158,\\n  200,\\n  190,\\n  239\\n]')
        '"bbox_2d": [ 158, 200, 190, 239 ]'
        >>> _with_number_groups_on_one_line("mass: [1, 2, 3, 4]\\nedema: [5, 6, 7, 8]")
        'mass: [1, 2, 3, 4]\\nedema: [5, 6, 7, 8]'
    """
    return _NUMBER_GROUP.sub(
        lambda group: (
            re.sub(r"\s+", " ", group.group()) if "\n" in group.group() else group.group()
        ),
        text,
    )
