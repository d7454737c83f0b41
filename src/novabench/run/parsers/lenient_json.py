"""The lenient JSON reader: JSON-like structures in model output, cut-off ones included.

``_structures`` finds every top-level ``[...]`` / ``{...}`` of an answer (inside code
fences when there are any) with whether it was closed; ``_norm_key`` folds the spellings
of an object key and ``_number_token`` keeps whether a number was written with decimals.
Reading is budgeted so adversarial text stays linear. Private to
:mod:`novabench.run.parsers`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from novabench.run.parsers.text import _fenced_blocks, _without_surrogates


class _ParseError(Exception):
    pass


class _BudgetExceeded(Exception):
    pass


class _UnclosedList(list[Any]):
    """A list whose closing bracket was cut off: its last item may be missing.

    It is a ``list`` for every reader; the box reader refuses it as a box, so a cut-off
    ``[158, 200, 190, 239`` (or ``239,`` or ``239\\n``) gives no box whatever follows the last
    number: a box is complete once its ``]`` is written.
    """


_MISSING = object()
_NUMBER_PATTERN = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORD_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_VALUES: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "none": None,
    "nan": math.nan,
    "infinity": math.inf,
}
_MAX_DEPTH = 40
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
_MAX_FAILED_STARTS = 1000
_MAX_VALUES_READ = 1_000_000


class _LenientJSON:
    """A forgiving JSON reader for model output.

    Accepts ``//`` and ``/* */`` comments, trailing or missing commas, single
    quotes, bare keys and words, Python literals, and whitespace-separated
    numbers. At the end of the text (a cut-off answer) it returns what was
    complete: an array drops its unfinished last element unless it is an object
    (an object's finished members are complete values), an object keeps the
    partial container of its last key, and an array cut off before its ``]`` is an
    :class:`_UnclosedList`. ``complete`` tells whether the value was closed. Whitespace
    (newlines included) never changes what is read, so ``json.dumps(indent=2)`` and the
    compact form give the same values wherever they are cut.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.budget = _MAX_VALUES_READ

    def skip(self, pos: int) -> int:
        text, length = self.text, self.length
        while pos < length:
            char = text[pos]
            if char.isspace():
                pos += 1
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = length if end < 0 else end + 1
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                pos = length if end < 0 else end + 2
            else:
                break
        return pos

    def value(self, pos: int, depth: int = 0) -> tuple[Any, int, bool]:
        if depth > _MAX_DEPTH:
            raise _ParseError("nested too deeply")
        self.budget -= 1
        if self.budget < 0:
            raise _BudgetExceeded
        pos = self.skip(pos)
        if pos >= self.length:
            return _MISSING, pos, False
        char = self.text[pos]
        if char == "{":
            return self.object(pos + 1, depth + 1)
        if char == "[":
            return self.array(pos + 1, depth + 1)
        if char in "\"'":
            return self.string(pos)
        number = _NUMBER_PATTERN.match(self.text, pos)
        if number:
            end = number.end()
            token = number.group()
            return _number_token(token), end, end < self.length
        word = _WORD_PATTERN.match(self.text, pos)
        if word:
            end = word.end()
            token = word.group()
            result = _WORD_VALUES.get(token.lower(), token)
            return result, end, end < self.length
        raise _ParseError(f"unexpected character {char!r} at {pos}")

    def string(self, pos: int) -> tuple[Any, int, bool]:
        quote = self.text[pos]
        pos += 1
        parts: list[str] = []
        text, length = self.text, self.length
        while pos < length:
            char = text[pos]
            if char == quote:
                return _without_surrogates("".join(parts)), pos + 1, True
            if char == "\\" and pos + 1 < length:
                escaped = text[pos + 1]
                if escaped == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[pos + 2 : pos + 6]):
                    parts.append(chr(int(text[pos + 2 : pos + 6], 16)))
                    pos += 6
                    continue
                parts.append(_ESCAPES.get(escaped, escaped))
                pos += 2
                continue
            parts.append(char)
            pos += 1
        return _MISSING, pos, False

    def array(self, pos: int, depth: int) -> tuple[Any, int, bool]:
        items: list[Any] = []
        while True:
            pos = self.skip(pos)
            if pos >= self.length:
                return _UnclosedList(items), pos, False
            char = self.text[pos]
            if char == "]":
                return items, pos + 1, True
            if char in ",;":
                pos += 1
                continue
            item, pos, complete = self.value(pos, depth)
            if not complete:
                # A cut-off object keeps its finished members ([{"bbox_2d": [..], "label": ..).
                if isinstance(item, dict) and item:
                    items.append(item)
                return _UnclosedList(items), pos, False
            items.append(item)

    def object(self, pos: int, depth: int) -> tuple[Any, int, bool]:
        result: dict[str, Any] = {}
        while True:
            pos = self.skip(pos)
            if pos >= self.length:
                return result, pos, False
            char = self.text[pos]
            if char == "}":
                return result, pos + 1, True
            if char in ",;":
                pos += 1
                continue
            key, pos, complete = self.value(pos, depth)
            if not complete:
                return result, pos, False
            if isinstance(key, (dict, list)):
                raise _ParseError("a container cannot be a key")
            pos = self.skip(pos)
            if pos >= self.length:
                return result, pos, False
            if self.text[pos] not in ":=":
                raise _ParseError(f"expected ':' at {pos}")
            item, pos, complete = self.value(pos + 1, depth)
            if complete:
                result[str(key)] = item
                continue
            if isinstance(item, (dict, list)):
                result[str(key)] = item
            return result, pos, False


def _json_values(text: str) -> Iterator[tuple[Any, bool]]:
    """Every top-level JSON-like structure in ``text`` with its completeness.

    A failed start is retried one character later (prose such as "[left]" can
    precede real JSON); the number of failed starts and of values read are
    capped so adversarial text stays linear instead of quadratic.
    """
    for value, complete, _, _ in _json_spans(text):
        yield value, complete


def _json_spans(text: str) -> Iterator[tuple[Any, bool, int, int]]:
    """:func:`_json_values` with where each structure starts and ends in ``text``."""
    reader = _LenientJSON(text)
    pos = 0
    failures = 0
    starts = re.compile(r"[\[{]")
    while failures < _MAX_FAILED_STARTS:
        match = starts.search(text, pos)
        if match is None:
            return
        try:
            value, end, complete = reader.value(match.start())
        except _BudgetExceeded:
            return
        except _ParseError:
            failures += 1
            pos = match.start() + 1
            continue
        yield value, complete, match.start(), end
        pos = max(end, match.start() + 1)


def _structures(text: str) -> list[tuple[Any, bool]]:
    blocks = _fenced_blocks(text)
    sources = blocks if blocks else [text]
    found: list[tuple[Any, bool]] = []
    for source in sources:
        found.extend(_json_values(source))
    if blocks and not found:
        found.extend(_json_values(text))
    return found


def _norm_key(key: Any) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(key).lower()).strip("_")


def _number_token(token: str) -> float | int:
    """An int when written without decimals, so 'written with decimals' is kept."""
    if any(c in token for c in ".eE") or len(token) > 15:
        return float(token)  # long digit runs become float (inf if huge), never an overflow
    return int(token)
