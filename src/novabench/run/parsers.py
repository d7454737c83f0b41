"""Turn raw model answers into boxes, captions and diagnoses, and count how it went.

Every parser here is total: whatever the text (empty, ``None``, bytes, a cut-off
JSON list, prose around a code fence), it returns a result with a ``status``
instead of raising. Failures are statuses so a report can say how many answers
of a model could not be read: a parser that silently drops a valid box changes
that model's score.

The reasoning of thinking models (``<think>...</think>``, ``<thinking>...</thinking>``,
Kimi-VL's ``\u25c1think\u25b7...\u25c1/think\u25b7``) is removed before anything is read, so
neither a box, a diagnosis nor a sentence of the reasoning is scored. A closing
tag without an opening one (the chat template opened the block in the prompt)
makes everything before it reasoning; a block that is never closed (the answer
ran out of tokens while thinking) makes everything after its opening reasoning,
so such an answer is ``"empty"``: a counted failure, not a caption.

Localisation conventions (``convention=``):

============== ====================================== =====================================
name           numbers                                 scale
============== ====================================== =====================================
protocol       ``[ymin, xmin, ymax, xmax]``            0..1000 of the image height/width
qwen           ``bbox_2d: [x1, y1, x2, y2]``           pixels of the image the model saw
xyxy_norm1     ``[x1, y1, x2, y2]``                    0..1 of the image width/height
xyxy_norm1000  ``[x1, y1, x2, y2]``                    0..1000 (Qwen2-VL, Qwen3-VL grounding)
xyxy_pixel     ``[x1, y1, x2, y2]``                    pixels of the image the model saw
xywh_pixel     ``[x, y, width, height]``               pixels of the image the model saw
============== ====================================== =====================================

"Pixels of the image the model saw" are rescaled from ``input_size`` to
``image_size`` (the original image); without ``input_size`` the model is
assumed to have seen the original size. Qwen2.5-VL answers in absolute pixels
of its internally resized input, so pass that size (``input_size``) for it;
Qwen3-VL answers ``bbox_2d`` in 0..1000 (use ``convention="xyxy_norm1000"``).

``convention="auto"`` decides only when the form of the answer is unambiguous
and records which convention it used: a ``bbox_2d`` key means ``qwen``, a
``box_2d`` key means ``protocol`` order (Gemini's form), Qwen2-VL's
``<|box_start|>`` tokens mean ``xyxy_norm1000``, labelled lines or bare
4-number lists with every value <= 1000 mean ``protocol``, values all in [0, 1]
written with decimals mean ``xyxy_norm1``, explicit ``x``/``y``/``width``/``height``
keys with pixel values mean ``xywh_pixel``. Anything else (for example a
generic ``"bbox": [..]`` key with values above 1, or lines with values above
1000) gives the status ``"ambiguous_convention"`` and no boxes rather than a
guess: the runner must then pass a convention.

All sizes are ``(width, height)`` in pixels, as ``PIL.Image.size`` gives them.
Boxes come out as ``[x, y, width, height]`` floats in pixels of the original
image, clipped to it, with positive width and height.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Union

from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import (
    DiagnosisLexicon,
    load_diagnosis_lexicon,
    normalize_diagnosis,
)

__all__ = [
    "CAPTION_STATUSES",
    "CONVENTIONS",
    "DIAGNOSIS_STATUSES",
    "FAILURE_STATUSES",
    "LOCALIZATION_STATUSES",
    "ParseStats",
    "ParsedBoxes",
    "ParsedCaption",
    "ParsedDiagnoses",
    "parse_caption",
    "parse_diagnoses",
    "parse_localization",
]

#: Conventions accepted by :func:`parse_localization` (``"auto"`` decides per answer).
CONVENTIONS: tuple[str, ...] = (
    "auto", "protocol", "qwen", "xyxy_norm1", "xyxy_norm1000", "xyxy_pixel", "xywh_pixel",
)

#: Statuses of :class:`ParsedBoxes`.
LOCALIZATION_STATUSES: tuple[str, ...] = (
    "ok", "no_target", "empty", "unparseable", "truncated_ok", "ambiguous_convention",
)
#: Statuses of :class:`ParsedDiagnoses`.
DIAGNOSIS_STATUSES: tuple[str, ...] = ("ok", "partial", "fallback_list", "empty", "unparseable")
#: Statuses of :class:`ParsedCaption`.
CAPTION_STATUSES: tuple[str, ...] = ("ok", "empty", "unparseable")
#: Statuses meaning "nothing usable was read from the answer".
FAILURE_STATUSES: frozenset[str] = frozenset({"empty", "unparseable", "ambiguous_convention"})

# Answers longer than this are read only up to here (a runaway generation);
# the cut is recorded in the notes.
_MAX_CHARS = 200_000


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ParsedBoxes:
    """Boxes read from one localisation answer.

    Attributes:
        boxes: ``[x, y, width, height]`` in pixels of the original image, clipped to it.
        labels: one label per box (``""`` when the model gave none).
        status: one of :data:`LOCALIZATION_STATUSES`: ``"ok"``; ``"no_target"`` (the model
            said nothing abnormal is visible: a valid empty answer); ``"empty"`` (no text);
            ``"unparseable"``; ``"truncated_ok"`` (boxes recovered from a cut-off answer);
            ``"ambiguous_convention"`` (boxes present but their convention cannot be told).
        convention: the convention used (``None`` when no box was converted).
        n_degenerate_dropped: boxes dropped for zero area after clipping (or NaN values).
        n_out_of_range: boxes that had at least one coordinate clipped to the image.
        n_swapped: boxes whose corners came in the wrong order and were put right.
        error: why nothing (or not everything) could be read; ``None`` when all went well.
        notes: other remarks worth a report line (assumed sizes, contradictions).

    Example:
        >>> parsed = parse_localization("lesion: [250, 100, 750, 500]", image_size=(480, 480))
        >>> parsed.status, parsed.boxes, parsed.n_boxes
        ('ok', [[48.0, 120.0, 192.0, 240.0]], 1)
    """

    boxes: list[list[float]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    status: str = "ok"
    convention: str | None = None
    n_degenerate_dropped: int = 0
    n_out_of_range: int = 0
    n_swapped: int = 0
    error: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def n_boxes(self) -> int:
        """Number of boxes kept.

        Example:
            >>> ParsedBoxes().n_boxes
            0
        """
        return len(self.boxes)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (lists and strings), e.g. for a predictions file.

        Example:
            >>> ParsedBoxes(status="empty").to_dict()["status"]
            'empty'
        """
        result = asdict(self)
        result["notes"] = list(self.notes)
        return result


@dataclass(frozen=True)
class ParsedDiagnoses:
    """Diagnoses read from one diagnosis answer, most likely first.

    Attributes:
        diagnoses: the diagnoses in the model's order, duplicates removed
            (case-insensitively, first kept). All are kept, even beyond five:
            the metric looks at the first five only.
        status: one of :data:`DIAGNOSIS_STATUSES`: ``"ok"`` (the JSON object, five or
            more diagnoses), ``"partial"`` (the JSON object, fewer than five),
            ``"fallback_list"`` (no usable JSON; read from a numbered or bulleted list,
            ``Most likely: X`` lines, prose statements such as "the most likely diagnosis
            is X. Differentials include A and B" or a bare one-line answer), ``"empty"``,
            ``"unparseable"``.
        n_duplicates_removed: diagnoses dropped as repeats.
        error: why nothing could be read, else ``None``.
        notes: other remarks (a cut-off JSON object, for instance).

    Example:
        >>> parsed = parse_diagnoses('{"most_likely_diagnosis": "Glioma", "differentials": []}')
        >>> parsed.diagnoses, parsed.status, parsed.n_duplicates_removed
        (['Glioma'], 'partial', 0)
    """

    diagnoses: list[str] = field(default_factory=list)
    status: str = "ok"
    n_duplicates_removed: int = 0
    error: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def most_likely(self) -> str | None:
        """The first diagnosis, or None.

        Example:
            >>> parse_diagnoses("1. Glioma\\n2. Lymphoma").most_likely
            'Glioma'
        """
        return self.diagnoses[0] if self.diagnoses else None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form.

        Example:
            >>> ParsedDiagnoses(status="empty").to_dict()["diagnoses"]
            []
        """
        result = asdict(self)
        result["notes"] = list(self.notes)
        return result


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


Parsed = Union[ParsedBoxes, ParsedDiagnoses, ParsedCaption]


# --------------------------------------------------------------------------- text input


def _coerce_text(value: Any) -> tuple[str | None, str | None]:
    """Return (text, error) for any input; text None means 'not text'."""
    if value is None:
        return "", None
    if isinstance(value, str):
        return value, None
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
    r"(?:<|\u25c1)\s*(?P<close>/?)\s*(?:think|thinking)\s*(?:>|\u25b7)", re.IGNORECASE)


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
            return ("the answer is a <think> reasoning block cut off before the answer "
                    "(out of new tokens?)")
        return "nothing but a <think> reasoning block"


def _strip_reasoning(text: str) -> _Reasoning:
    """The answer without the reasoning blocks of a thinking model.

    ``<think>...</think>`` blocks are removed wherever they are; a closing tag
    without an opening one (the chat template put ``<think>`` in the prompt)
    means everything before it was reasoning; an opening tag that is never
    closed (generation cut off by the token limit) means everything after it
    is reasoning. One pass over the tags, so the cost stays linear.
    """
    kept: list[str] = []
    start = 0  # where the current stretch of answer text began
    open_at: int | None = None
    removed = False
    for tag in _REASONING_TAG.finditer(text):
        removed = True
        if not tag.group("close"):
            if open_at is None:  # a tag opened inside a block is part of the block
                kept.append(text[start:tag.start()])
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


def _without_fences(text: str) -> str:
    """The text with fence markers removed but their contents kept."""
    return re.sub(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*", "\n", text)


# --------------------------------------------------------------------------- lenient JSON


class _ParseError(Exception):
    pass


class _BudgetExceeded(Exception):
    pass


_MISSING = object()
_NUMBER_PATTERN = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORD_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_VALUES: dict[str, Any] = {
    "true": True, "false": False, "null": None, "none": None, "nan": math.nan,
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
    complete: an array drops its unfinished last element, an object keeps the
    partial container of its last key. ``complete`` tells whether the value
    was closed.
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
                return "".join(parts), pos + 1, True
            if char == "\\" and pos + 1 < length:
                escaped = text[pos + 1]
                if escaped == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[pos + 2:pos + 6]):
                    parts.append(chr(int(text[pos + 2:pos + 6], 16)))
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
                return items, pos, False
            char = self.text[pos]
            if char == "]":
                return items, pos + 1, True
            if char in ",;":
                pos += 1
                continue
            item, pos, complete = self.value(pos, depth)
            if not complete:
                return items, pos, False
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
        yield value, complete
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


# --------------------------------------------------------------------------- localisation


@dataclass
class _Candidate:
    label: str
    numbers: list[float]  # ints stay ints: a float means the model wrote decimals
    hint: str  # how the box was written: decides the convention under "auto"
    from_json_object: bool = False

    @property
    def decimals(self) -> bool:
        return any(isinstance(v, float) for v in self.numbers)


@dataclass
class _Extraction:
    candidates: list[_Candidate] = field(default_factory=list)
    truncated: bool = False
    said_not_found: bool = False
    explicit_empty: bool = False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _four_numbers(value: Any) -> list[float] | None:
    """4 numbers from ``[a, b, c, d]``, ``[[a, b], [c, d]]`` or ``[[a, b, c, d]]``."""
    if not isinstance(value, list):
        return None
    if len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if len(value) == 4 and all(isinstance(v, str) for v in value) and all(
            _NUMBER_PATTERN.fullmatch(v.strip()) for v in value):
        value = [_number_token(v.strip()) for v in value]  # {"bbox_2d": ["10", "20", ...]}
    if len(value) == 4 and all(_is_number(v) for v in value):
        return list(value)
    if len(value) == 2 and all(isinstance(v, list) and len(v) == 2 for v in value):
        flat = value[0] + value[1]
        if all(_is_number(v) for v in flat):
            return flat
    return None


def _norm_key(key: Any) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(key).lower()).strip("_")


_QWEN_KEYS = frozenset({"bbox_2d", "bbox2d"})
_YXYX_KEYS = frozenset({"box_2d", "box2d"})
_GENERIC_BOX_KEYS = frozenset({
    "bbox", "box", "bounding_box", "boundingbox", "coordinates", "coords", "bbox_xyxy",
    "box_xyxy", "xyxy", "location", "position", "rect", "region_box",
})
_LABEL_KEYS = ("label", "name", "class", "category", "finding", "type", "description", "object", "text")
_CONTAINER_KEYS = frozenset({
    "boxes", "bboxes", "bounding_boxes", "objects", "detections", "findings", "regions",
    "results", "annotations", "abnormalities", "lesions", "targets", "predictions", "answer",
    "output", "data", "items", "anomalies",
})
_XYXY_KEY_SETS = (("x1", "y1", "x2", "y2"), ("xmin", "ymin", "xmax", "ymax"),
                  ("x_min", "y_min", "x_max", "y_max"), ("left", "top", "right", "bottom"))
_XYWH_KEY_SETS = (("x", "y", "width", "height"), ("x", "y", "w", "h"))
_NOT_FOUND_KEYS = frozenset({"found", "has_target", "abnormal", "abnormality_found", "detected"})


def _label_of(obj: dict[str, Any]) -> str:
    for key, value in obj.items():
        if _norm_key(key) in _LABEL_KEYS and isinstance(value, (str, int, float)):
            return str(value)
    return ""


def _walk(value: Any, extraction: _Extraction, label: str, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        _walk_object(value, extraction, depth)
    elif isinstance(value, list):
        numbers = _four_numbers(value)
        if numbers is not None:
            extraction.candidates.append(_Candidate(label, numbers, "bare", from_json_object=depth > 0))
            return
        if not value and depth == 0:
            extraction.explicit_empty = True
        for item in value:
            _walk(item, extraction, label, depth + 1)


def _walk_object(obj: dict[str, Any], extraction: _Extraction, depth: int) -> None:
    keys = {_norm_key(key): key for key in obj}
    label = _label_of(obj)
    for key, value in obj.items():
        norm = _norm_key(key)
        if norm in _NOT_FOUND_KEYS and value is False:
            extraction.said_not_found = True
        if norm in _CONTAINER_KEYS and isinstance(value, list) and not value:
            extraction.explicit_empty = True
    for key_set, hint in ((_XYXY_KEY_SETS, "xyxy_named"), (_XYWH_KEY_SETS, "xywh_named")):
        for names in key_set:
            if all(name in keys for name in names):
                values = [obj[keys[name]] for name in names]
                if all(_is_number(v) for v in values):
                    extraction.candidates.append(
                        _Candidate(label, values, hint, from_json_object=True))
                    return
    found_box = False
    for key, value in obj.items():
        norm = _norm_key(key)
        if norm in _QWEN_KEYS:
            hint = "qwen"
        elif norm in _YXYX_KEYS:
            hint = "yxyx1000"
        elif norm in _GENERIC_BOX_KEYS:
            hint = "generic_key"
        else:
            continue
        if _four_numbers(value) is not None:
            boxes = [value]
        else:  # {"bbox": [[...], [...]]}: several boxes under one key
            boxes = value if isinstance(value, list) else []
        for box in boxes:
            numbers = _four_numbers(box)
            if numbers is not None:
                extraction.candidates.append(_Candidate(label, numbers, hint, from_json_object=True))
                found_box = True
    if found_box:
        return
    for key, value in obj.items():
        norm = _norm_key(key)
        numbers = _four_numbers(value)
        if numbers is not None and norm not in _CONTAINER_KEYS:
            # {"left frontal lesion": [ymin, xmin, ymax, xmax]}: the key is the label.
            extraction.candidates.append(_Candidate(str(key), numbers, "bare", from_json_object=True))
        elif isinstance(value, (dict, list)):
            _walk(value, extraction, label, depth + 1)


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SEP = r"(?:\s*[,;]\s*|\s+)"
_BRACKET_BOX = re.compile(
    rf"[\[(]\s*({_NUM}){_SEP}({_NUM}){_SEP}({_NUM}){_SEP}({_NUM})\s*,?\s*[\])]")
_QWEN2_BOX = re.compile(
    rf"<\|box_start\|>\s*"
    rf"\(\s*(?P<a>{_NUM})\s*,\s*(?P<b>{_NUM})\s*\)\s*,?\s*\(\s*(?P<c>{_NUM})\s*,\s*(?P<d>{_NUM})\s*\)"
    rf"\s*<\|box_end\|>")
_QWEN2_REF = re.compile(r"<\|object_ref_start\|>([^<]*)<\|object_ref_end\|>")
_OPEN_BOX_AT_END = re.compile(rf"[\[(]\s*{_NUM}[^\])]*$")


def _clean_label(text: str) -> str:
    text = re.split(r"(?<=[.!?])\s+(?=\S)", text)[-1]  # prose before the label's sentence
    text = re.sub(r"[*_`]{2,}|`", "", text)
    text = re.sub(r"^\s*(?:[-*\u2022+]|\d+[.)])\s+", "", text)
    text = text.strip(" \t\"',;{}")
    text = text.lstrip(":=-[(").rstrip(":=-")
    text = text.strip(" \t\"',;")
    return " ".join(text.split())


def _number_token(token: str) -> float | int:
    """An int when written without decimals, so 'written with decimals' is kept."""
    if any(c in token for c in ".eE") or len(token) > 15:
        return float(token)  # long digit runs become float (inf if huge), never an overflow
    return int(token)


def _line_candidates(text: str, extraction: _Extraction) -> None:
    """Bracketed 4-number groups (or Qwen2-VL box tokens), with the label before them."""
    qwen2 = list(_QWEN2_BOX.finditer(text))
    if qwen2:
        previous_end = 0
        for match in qwen2:
            # The label is the last object reference between the previous box and this one.
            refs = _QWEN2_REF.findall(text, previous_end, match.start())
            numbers = [_number_token(match.group(g)) for g in "abcd"]
            extraction.candidates.append(
                _Candidate(_clean_label(refs[-1] if refs else ""), numbers, "qwen2_tokens"))
            previous_end = match.end()
        return
    for line in text.splitlines():
        label = ""
        previous_end = 0
        for match in _BRACKET_BOX.finditer(line):
            between = _clean_label(line[previous_end:match.start()])
            if between:
                label = between  # else a second box on the line shares the first's label
            numbers = [_number_token(token) for token in match.groups()]
            extraction.candidates.append(_Candidate(label, numbers, "bare"))
            previous_end = match.end()
    if _OPEN_BOX_AT_END.search(text.rstrip()[-200:]):
        extraction.truncated = True


_NO_TARGET_PATTERN = re.compile(
    r"""\b(?:
        no[\s_-]*targets?
      | no\s+(?:(?:clear|clearly|obvious|obviously|apparent|definite|definitive|visible|significant|
                  evident|detectable|discernible|focal|other)\s+)*
            (?:abnormalit(?:y|ies)|abnormal\b(?:\s+\w+)?|anomal(?:y|ies)|lesions?|findings?|patholog(?:y|ies)|
               bounding\s+box(?:es)?|regions?\s+of\s+(?:concern|abnormality))
      | nothing\s+(?:abnormal|suspicious|to\s+(?:report|locali[sz]e))
      | (?:within\s+)?normal\s+(?:limits|study|scan|examination|exam|brain|mri|image|appearance)
      | (?:appears|looks|is)\s+(?:entirely\s+|completely\s+)?normal\b
      | no\s+targets?\s+found
    )""",
    re.I | re.X,
)


def _says_no_target(text: str) -> bool:
    return bool(_NO_TARGET_PATTERN.search(text))


def _resolve_auto(candidates: list[_Candidate]) -> tuple[str | None, str]:
    """Pick a convention from the form of the answer, or explain why not."""
    hints = {c.hint for c in candidates}
    decimals = any(c.decimals for c in candidates)
    values = [v for c in candidates for v in c.numbers]
    finite = [v for v in values if math.isfinite(v)]
    top = max(finite) if finite else 0.0
    fraction = bool(finite) and decimals and all(0.0 <= v <= 1.0 for v in finite)
    if len(hints) > 1:
        return None, f"boxes written in several forms ({', '.join(sorted(hints))})"
    hint = hints.pop()
    if hint == "qwen":
        return "qwen", ""
    if hint == "yxyx1000":
        return "protocol", ""
    if hint == "qwen2_tokens":
        return "xyxy_norm1000", ""
    if fraction and hint in {"bare", "generic_key", "xyxy_named"}:
        return "xyxy_norm1", ""
    if hint == "xywh_named":
        if top > 1.0:
            return "xywh_pixel", ""
        return None, "x/y/width/height keys with values all in [0, 1]: unknown scale"
    if hint == "bare":
        if top <= 1.0 and not decimals:
            return None, "every value is 0 or 1: 0..1 fractions or 0..1000 units cannot be told apart"
        if top <= 1000.0:
            return "protocol", ""
        return None, f"values up to {top:g} exceed 1000, so they are not the protocol's 0..1000 units"
    return None, f"a generic box key with values up to {top:g}: pixels or 0..1000 units, xyxy or yxyx"


def _to_pixel_corners(
    numbers: list[float], convention: str, width: float, height: float,
    input_width: float, input_height: float,
) -> tuple[float, float, float, float]:
    a, b, c, d = numbers
    if convention == "protocol":
        return b * width / 1000.0, a * height / 1000.0, d * width / 1000.0, c * height / 1000.0
    if convention == "xyxy_norm1":
        return a * width, b * height, c * width, d * height
    if convention == "xyxy_norm1000":
        return a * width / 1000.0, b * height / 1000.0, c * width / 1000.0, d * height / 1000.0
    scale_x, scale_y = width / input_width, height / input_height
    if convention == "xywh_pixel":
        c, d = a + c, b + d
    return a * scale_x, b * scale_y, c * scale_x, d * scale_y


def _validate_size(value: Any, name: str) -> tuple[float, float]:
    try:
        w, h = (float(v) for v in value)
    except (TypeError, ValueError):
        raise NovaInputError(f"{name} must be (width, height), got {value!r}", field=name) from None
    if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
        raise NovaInputError(f"{name} must be positive (width, height), got {value!r}", field=name)
    return w, h


def parse_localization(
    text: Any,
    *,
    image_size: tuple[int, int],
    input_size: tuple[int, int] | None = None,
    convention: str = "auto",
) -> ParsedBoxes:
    """Read the boxes of one localisation answer, in pixels of the original image.

    Never raises on the answer: empty text, ``None``, prose, code fences, JSON
    with comments, trailing commas or single quotes, JSON cut off mid-list,
    ``{"found": false, "boxes": []}``, "no target" variants, ``<think>`` reasoning
    blocks (removed first; see the module docstring), labels holding
    colons or brackets, runaway lists (all boxes kept; the metric keeps 100),
    negative or out-of-image values (clipped, counted), swapped corners
    (reordered, counted) and zero-area boxes (dropped, counted) all give a
    :class:`ParsedBoxes` with a status.

    Args:
        text: the raw answer (str; bytes, None or an already-decoded JSON
            list/dict are accepted too).
        image_size: ``(width, height)`` of the original image.
        input_size: ``(width, height)`` of the image the model was given, when
            its processor resized it; used by the pixel conventions.
        convention: one of :data:`CONVENTIONS`; see the module docstring.

    Returns:
        The parsed boxes with a status from :data:`LOCALIZATION_STATUSES`.

    Raises:
        NovaInputError: only for a wrong argument (unknown convention, a size
            that is not two positive numbers), never because of the answer.

    Example:
        >>> answer = '```json\\n[{"bbox_2d": [48, 120, 240, 360], "label": "mass"}]\\n``` Done.'
        >>> parsed = parse_localization(answer, image_size=(480, 480), input_size=(960, 960))
        >>> parsed.status, parsed.convention, parsed.boxes, parsed.labels
        ('ok', 'qwen', [[24.0, 60.0, 96.0, 120.0]], ['mass'])
        >>> parse_localization("No target.", image_size=(480, 480)).status
        'no_target'
        >>> parse_localization('{"bbox": [10, 20, 30, 40]}', image_size=(480, 480)).status
        'ambiguous_convention'
    """
    if convention not in CONVENTIONS:
        raise NovaInputError(
            f"unknown box convention {convention!r}; expected one of {', '.join(CONVENTIONS)}",
            field="convention")
    width, height = _validate_size(image_size, "image_size")
    if input_size is not None:
        input_width, input_height = _validate_size(input_size, "input_size")
    else:
        input_width, input_height = width, height
    try:
        return _parse_localization(text, width, height, input_width, input_height,
                                   input_size is not None, convention)
    except Exception as exc:  # the contract: a status, never an exception
        return ParsedBoxes(status="unparseable", error=f"internal parser error: {exc!r}")


def _parse_localization(
    raw: Any, width: float, height: float, input_width: float, input_height: float,
    has_input_size: bool, convention: str,
) -> ParsedBoxes:
    text, type_error = _coerce_text(raw)
    if text is None:
        return ParsedBoxes(status="unparseable", error=type_error)
    notes: list[str] = []
    reasoning = _strip_reasoning(text)
    text = reasoning.text
    if reasoning.note():
        notes.append(str(reasoning.note()))
    if len(text) > _MAX_CHARS:
        notes.append(f"answer of {len(text)} characters read up to {_MAX_CHARS}")
        text = text[:_MAX_CHARS]
    if not text.strip():
        error = reasoning.empty_error() if reasoning.removed else "no answer text"
        return ParsedBoxes(status="empty", error=error, notes=tuple(notes))
    if _is_null_literal(text):
        return ParsedBoxes(status="empty", error=f"answer is the null literal {text.strip()!r}",
                           notes=tuple(notes))

    extraction = _Extraction()
    structures = _structures(text)
    for value, complete in structures:
        explicit_empty = extraction.explicit_empty
        _walk(value, extraction, "")
        if not complete:
            extraction.truncated = True
            # "[" cut off before its first item is not an empty answer.
            extraction.explicit_empty = explicit_empty
    if not any(c.from_json_object for c in extraction.candidates):
        # No boxes inside JSON objects: read labelled lines instead, which keeps
        # labels such as "lesion [left]" that a JSON reader would split.
        json_truncated = extraction.truncated
        extraction = _Extraction(said_not_found=extraction.said_not_found,
                                 explicit_empty=extraction.explicit_empty)
        _line_candidates(_without_fences(text), extraction)
        extraction.truncated = extraction.truncated or (json_truncated and bool(extraction.candidates))

    candidates = extraction.candidates
    if not candidates:
        if extraction.said_not_found or extraction.explicit_empty or _says_no_target(text):
            return ParsedBoxes(status="no_target", notes=tuple(notes))
        if extraction.truncated:
            return ParsedBoxes(status="unparseable", notes=tuple(notes),
                               error="answer cut off before the first complete box")
        return ParsedBoxes(status="unparseable", notes=tuple(notes),
                           error="no box and no 'no target' statement found")

    if extraction.said_not_found:
        notes.append("the answer says nothing was found but also gives boxes; boxes kept")
    elif _says_no_target(_strip_json_strings(text)) and not extraction.truncated:
        notes.append("the answer mentions 'no target' but also gives boxes; boxes kept")

    used = convention
    if convention == "auto":
        chosen, reason = _resolve_auto(candidates)
        if chosen is None:
            return ParsedBoxes(
                status="ambiguous_convention", notes=tuple(notes),
                error=f"{len(candidates)} box(es) found but the convention is ambiguous: {reason}; "
                      "pass convention= explicitly")
        used = chosen
    if used in {"qwen"} and not has_input_size:
        notes.append("input_size not given: assumed the model saw the original image size")

    boxes: list[list[float]] = []
    labels: list[str] = []
    n_degenerate = n_out = n_swapped = 0
    for candidate in candidates:
        x1, y1, x2, y2 = _to_pixel_corners(candidate.numbers, used, width, height,
                                           input_width, input_height)
        if any(math.isnan(v) for v in (x1, y1, x2, y2)):
            n_degenerate += 1
            continue
        if x1 > x2 or y1 > y2:
            n_swapped += 1
            x1, x2 = min(x1, x2), max(x1, x2)
            y1, y2 = min(y1, y2), max(y1, y2)
        cx1, cy1 = min(max(x1, 0.0), width), min(max(y1, 0.0), height)
        cx2, cy2 = min(max(x2, 0.0), width), min(max(y2, 0.0), height)
        if (cx1, cy1, cx2, cy2) != (x1, y1, x2, y2):
            n_out += 1
        box_width, box_height = cx2 - cx1, cy2 - cy1
        if not (box_width > 0.0 and box_height > 0.0):
            n_degenerate += 1
            continue
        boxes.append([cx1, cy1, box_width, box_height])
        labels.append(candidate.label)
    if not boxes:
        notes.append("every box had zero area after clipping")
    return ParsedBoxes(
        boxes=boxes,
        labels=labels,
        status="truncated_ok" if extraction.truncated and boxes else "ok",
        convention=used,
        n_degenerate_dropped=n_degenerate,
        n_out_of_range=n_out,
        n_swapped=n_swapped,
        error=None,
        notes=tuple(notes),
    )


def _strip_json_strings(text: str) -> str:
    """Text without quoted strings, so a label like "no lesion" is not read as a statement."""
    return re.sub(r'"[^"\n]*"', '""', text)


# --------------------------------------------------------------------------- diagnosis


_MOST_LIKELY_KEYS = frozenset({
    "most_likely_diagnosis", "most_likely", "most_likely_dx", "primary_diagnosis", "diagnosis",
    "top_diagnosis", "final_diagnosis", "likely_diagnosis", "main_diagnosis", "leading_diagnosis",
    "best_diagnosis", "top_1", "top1", "working_diagnosis",
})
_OTHER_KEYS = frozenset({
    "other_possible_diagnoses", "other_diagnoses", "differentials", "differential",
    "differential_diagnoses", "differential_diagnosis", "alternatives", "alternative_diagnoses",
    "possible_diagnoses", "other_possible_diagnosis", "ddx", "others", "diagnoses",
    "top_5", "top5", "other_differentials",
})
_DIAGNOSIS_NAME_KEYS = ("diagnosis", "name", "label", "dx", "condition", "disease", "value")


def _is_most_likely_key(norm: str) -> bool:
    return norm in _MOST_LIKELY_KEYS or "most_likely" in norm or (
        "primary" in norm and "diagnos" in norm)


def _is_other_key(norm: str) -> bool:
    return norm in _OTHER_KEYS or "differential" in norm or norm.startswith("other") or (
        "alternative" in norm)


def _strings_of(value: Any, depth: int = 0) -> list[str]:
    if depth > 5:
        return []
    if isinstance(value, str):
        parts = re.split(r"\s*;\s*|\n+", value) if (";" in value or "\n" in value) else [value]
        return parts
    if isinstance(value, dict):
        for key, item in value.items():
            if _norm_key(key) in _DIAGNOSIS_NAME_KEYS and isinstance(item, str):
                return [item]
        return [item for item in value.values() if isinstance(item, str)][:1]
    if isinstance(value, list):
        return [text for item in value for text in _strings_of(item, depth + 1)]
    return []


def _clean_diagnosis(text: str) -> str:
    text = re.sub(r"\*\*|__|`", "", text)
    # "a)", "(b)", "C." are list markers; "E. coli", "C. neoformans" are genus initials.
    text = re.sub(r"^\s*(?:[-*\u2022+]|\(?\d+[.):]|\(?[a-eA-E]\)|[a-eA-E]\.(?!\s*[a-z]))\s*",
                  "", text)
    text = " ".join(text.split())
    text = text.strip(" \"'\u201c\u201d")
    text = text.rstrip(" .;,")
    return text if re.search(r"[A-Za-z0-9]", text) else ""


def _deduplicate(items: Iterable[str]) -> tuple[list[str], int]:
    kept: list[str] = []
    seen: set[str] = set()
    removed = 0
    for item in items:
        cleaned = _clean_diagnosis(item)
        if not cleaned:
            continue
        key = " ".join(cleaned.casefold().split())
        if key in seen:
            removed += 1
            continue
        seen.add(key)
        kept.append(cleaned)
    return kept, removed


def _diagnoses_from_object(obj: dict[str, Any]) -> list[str] | None:
    """Most likely first, then the others; None when no recognised key."""
    first: list[str] = []
    others: list[str] = []
    recognised = False
    for key, value in obj.items():
        norm = _norm_key(key)
        if _is_most_likely_key(norm) and not _is_other_key(norm):
            recognised = True
            first.extend(_strings_of(value))
        elif _is_other_key(norm):
            recognised = True
            others.extend(_strings_of(value))
    if recognised:
        return first + others
    for value in obj.values():
        if isinstance(value, dict):
            nested = _diagnoses_from_object(value)
            if nested is not None:
                return nested
    return None


# "Most likely: X", "Primary diagnosis is X", "**Leading diagnosis** - X" (a hyphen only with
# a space next to it, so "Primary-progressive MS" is a name, not a label).
_MOST_LIKELY_LABEL = (
    r"(?:the\s+)?(?:most\s+likely|primary|leading|final|working)(?:\s+diagnosis)?"
    r"\**(?:\s*:|\s+is\b|\s+[-\u2013\u2014]|[-\u2013\u2014](?=\s))")
# "Others: A, B", "Other possible diagnoses include A, B", "Differential (ranked): A; B", ...
_DIFFERENTIAL_LABEL = (
    r"(?:other\s+(?:possible\s+|potential\s+|likely\s+|differential\s+)?"
    r"(?:diagnos[ie]s|differentials?|possibilities|considerations)(?:\s+to\s+consider)?"
    r"|others?|differentials?(?:\s+diagnos[ie]s)?|alternatives?(?:\s+diagnos[ie]s)?|ddx)"
    r"\**(?:\s*\([^)\n]{0,60}\))?\**(?:\s*:|\s+includes?\b|\s+[-\u2013\u2014]|[-\u2013\u2014](?=\s)"
    # "Others are A, B" but not "Others are less likely": that is a remark, not names.
    r"|\s+are\b(?!\s+(?:less|more|not|also|un\w*|possible|possibly|considered|ruled|excluded)\b))")
_MOST_LIKELY_LINE = re.compile(rf"^\W*{_MOST_LIKELY_LABEL}\s*\**\s*(?P<value>.+)$", re.I)
_DIAGNOSIS_LINE = re.compile(r"^\W*diagnosis\**\s*:\s*\**\s*(?P<value>.+)$", re.I)
_DIFFERENTIAL_LINE = re.compile(rf"^\W*{_DIFFERENTIAL_LABEL}\s*\**\s*(?P<value>.+)$", re.I)
# A list marker: "1.", "1)", "(1)", "1:", "a.", "(a)", "-", "*", "+", a bullet; "**1.**" too.
_LIST_MARKER = re.compile(
    r"^\s*(?:\*\*|__)?(?:\(?\d{1,2}[.):]|[-*\u2022+]|\(?[a-e][.)])(?:\*\*|__)?\s+")
_LIST_ITEM = re.compile(_LIST_MARKER.pattern + r"(?P<value>.+)$")
# A labelled statement after a sentence on the same line ("Most likely: X. Others: A, B").
_STATEMENT_BREAK = re.compile(
    rf"(?<=[.;])\s+(?=(?:\*\*|__)?(?:{_MOST_LIKELY_LABEL}|{_DIFFERENTIAL_LABEL}))", re.I)
_REFUSAL = re.compile(r"\b(?:cannot|can't|can not|unable|not able|sorry|as an ai)\b", re.I)
# Words a period may follow inside a name ("St. Louis encephalitis", "vs.", "e.g.").
_ABBREVIATIONS = frozenset({
    "st", "vs", "v", "dr", "mr", "mrs", "no", "sp", "spp", "approx", "etc", "incl", "e.g", "i.e",
    "cf", "var", "subsp", "mt", "ca", "ie", "eg", "susp", "prob", "poss",
})


_SENTENCE_END = re.compile(r"(?<![A-Za-z.])(?P<word>[A-Za-z.]*)\.\s+(?=\S)")


def _first_sentence(text: str) -> str:
    """The text up to its first sentence end (a period and a space, not an abbreviation)."""
    first_letter = re.search(r"[A-Za-z]", text)
    if first_letter is None:
        return text
    for end in _SENTENCE_END.finditer(text, first_letter.start()):  # "1. " opens no sentence
        word = end.group("word").strip(".")
        if len(word) == 1 or word.lower() in _ABBREVIATIONS:
            continue  # an initial ("N. meningitidis") or an abbreviation ("St. Louis")
        return text[:end.start("word") + len(end.group("word"))]
    return text


def _item_name(text: str) -> str:
    """The diagnosis at the start of a list item, without the explanation after it.

    The explanation is what follows a bold name, a spaced dash, a colon, a
    "(most likely" remark or the end of the first sentence: in
    ``"2. Susac syndrome. Less likely: vasculitis"`` the item is "Susac syndrome".
    """
    bold = re.match(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)", text)
    if bold:
        return bold.group(1).rstrip(":")
    text = _first_sentence(text)
    return re.split(r"\s+[-\u2013\u2014]\s+|:\s+|\s+\((?:most likely|likely|less likely)",
                    text, maxsplit=1)[0]


def _break_statements(text: str) -> str:
    """One labelled statement per line; a list marker's own period is not a sentence end."""
    lines = []
    for line in text.splitlines():
        marker = _LIST_MARKER.match(line)
        head = marker.group() if marker else ""
        lines.append(head + _STATEMENT_BREAK.sub("\n", line[len(head):]))
    return "\n".join(lines)


# --------------------------------------------------------------------------- diagnosis prose
#
# Models that ignore the JSON instruction write their ranking as prose: "Based on the
# findings, the most likely diagnosis is glioblastoma. Differential diagnoses include
# lymphoma, metastasis and abscess." The most likely name is read from a "lead" statement,
# the others from a "differential" statement, and the lists are cut into names with the
# diagnosis lexicon deciding when " and " joins two diagnoses and when it is part of one.

_LOOKUP_BUDGET = 400  # lexicon look-ups per answer; past it names are cut by punctuation only
_MAX_NAME_CHARS = 160  # longer text is never looked up as one name (the longest alias is ~90)
_MAX_LIST_NAMES = 100  # names read from one statement's list (a runaway list is cut there)
_MAX_CUE_ATTEMPTS = 20  # negated or subject-less cues tried in one sentence
_NAME_WINDOW = 4  # pieces one known name may span ("mitochondrial encephalomyopathy, lactic ...")
_MAX_SUBJECT_CHARS = 300  # how far back a "X is the most likely diagnosis" subject is looked for
# Names with a comma or an "and" that the lexicon does not hold, as lower-case letters and digits.
_JOINED_NAMES = frozenset({"handfootandmouthdisease", "handfootandmouth", "handfootmouthdisease"})

# Separators of the names of a list: brackets (tracked, never cut inside), punctuation, words.
_NAME_SEPARATOR = re.compile(
    r"(?:^| )\(?\d{1,2}\)(?= )|[()\[\];,]| (?:and/or|or|and|as well as|&|vs\.?|versus) (?=\S)",
    re.I)
# Hedges, articles and connectives before a name ("and possibly a", "such as", "less likely").
_NAME_LEAD_IN = re.compile(
    r"(?:(?:and/or|and|or|also|possibly|probably|perhaps|maybe|presumably|potentially|"
    r"(?:most|more|less)\s+likely|likely|less\s+commonly|rarely|including|namely|either|both|"
    r"e\.g\.|i\.e\.|such\s+as|a\s+diagnosis\s+of|the\s+diagnosis\s+of|a\s+case\s+of|"
    r"(?:an?|the)(?=\s+\S))(?![\w/-])[\s,:]*)+", re.I)
# The end of a name inside a sentence: an explanation, a reason, the patient or a rival.
_NAME_TAIL = re.compile(
    r"\s[-\u2013\u2014]\s|:\s|\s\((?:most\s+|more\s+|less\s+)?likely\b"
    r"|\s(?:given|because|since|considering|based\s+on|as\s+(?:evidenced|suggested|indicated|"
    r"seen|shown)|in\s+view\s+of|in\s+light\s+of|which|rather\s+than|instead\s+of|over|"
    r"although|though|but|however|whereas|while|"
    r"with\s+(?:a\s+|the\s+)?(?:differentials?|alternatives?|others?)|"
    r"in\s+(?:this|a|an|the|our)\s+(?:[\w-]+\s+){0,2}?(?:patient|case|setting|context|scenario|"
    r"population|age\s+group|individual|child|adult|man|woman|person|clinical))\b", re.I)
# A remark before the names: "(in order of likelihood): A, B".
_REMARK_FIRST = re.compile(r"^\([^()]{0,80}\)\s*:?\s*")
# A piece of a list that is a clause, not a name ("lymphoma, given the location, and ...").
_CLAUSE_PIECE = re.compile(
    r"(?:given|because|since|as|which|who|where|when|if|especially|particularly|although|though|"
    r"but|however|considering|based|while|whereas|depending|that|this|these|those|it|they|there|"
    r"making|suggesting|indicating|supporting|so|then|thus|hence|therefore|not|no)\b", re.I)
# Whole values that are no name: pronouns, the lesion itself, "broad", "as follows".
_NOT_A_NAME = re.compile(
    r"(?:(?:this|that|the|these|its?)\s+)?(?:this|that|it|these|those|they|which|one|lesions?|"
    r"mass(?:es)?|findings?|abnormalit(?:y|ies)|appearances?|diagnos[ie]s|differentials?|"
    r"pictures?|case|patient|imaging|presentation|pattern|others?|following|below|above|broad|"
    r"wide|extensive|limited|numerous|several|many|various|unclear|uncertain|unknown|none|"
    r"unlikely|possible|likely|less\s+likely|etc|the|an)", re.I)
_SEPARATOR_RANK = {"": 0, "or": 1, "and": 1, ",": 2, ";": 3}
_JOINERS = {",": ", ", ";": "; ", "and": " and ", "or": " or "}
_NAME_TRAILERS = frozenset({"etc", "etc.", "and", "or", "others", "so", "on"})

# "The most likely diagnosis is X", "X is most likely Y", "I favour X", "in favour of X".
_LEAD_WORDS = (r"(?:most\s+likely|likeliest|most\s+probable|leading|top|favou?red|preferred|"
               r"primary|working|final|main|best|presumptive|presumed)")
_LEAD_CUE = re.compile(
    rf"\b{_LEAD_WORDS}\s+(?:diagnosis|diagnostic\s+consideration|consideration|possibility|"
    r"etiology|aetiology|explanation|impression)"
    r"(?:\s+(?:here|in\s+this\s+(?:case|patient)|for\s+this\s+(?:case|patient|lesion)))?"
    r"\s*(?:(?:is|would\s+be|remains|seems\s+to\s+be|appears\s+to\s+be)\b|:|=)\s*"
    r"|\b(?:the|my|our)\s+(?:(?:radiological|imaging|clinical|overall)\s+)?diagnosis\s+"
    r"(?:here\s+|in\s+this\s+case\s+)?(?:is|would\s+be)\s+"
    r"|\b(?:is|are|represents?|reflects?)\s+most\s+(?:likely|probably)\s+(?:to\s+be\s+)?"
    r"|\bmost\s+(?:likely|probably)\s+(?:represents?|reflects?|is|are|to\s+be)\s+"
    r"|\bin\s+favou?r\s+of\s+|\bfavou?r(?:s|ing)?\s+(?!of\b)", re.I)
# "X is the most likely diagnosis", "X is favoured": the name comes before.
_LEAD_AFTER = re.compile(
    r"\b(?:is|are|remains|would\s+be|seems\s+to\s+be|appears\s+to\s+be)\s+(?:the|my|our)\s+"
    rf"(?:{_LEAD_WORDS}|first)\s+(?:diagnosis|diagnoses|consideration|possibility|choice|"
    r"candidate)\b"
    r"|\b(?:is|are)\s+(?:most\s+likely|the\s+most\s+likely|favou?red|the\s+likeliest|"
    r"most\s+probable)(?=\s*(?:[.,;:!?)]|$)|\s(?:given|because|based|here|in\s+this|over|"
    r"considering)\b)", re.I)
# "Findings are suggestive of X", "most consistent with X": weaker, used when nothing stronger is.
_SUGGESTS = (r"(?:consistent\s+with|suggestive\s+of|compatible\s+with|in\s+keeping\s+with|"
             r"characteristic\s+of|typical\s+of|diagnostic\s+of|concerning\s+for|"
             r"suspicious\s+for|indicative\s+of)")
_SUGGEST_CUE = re.compile(
    rf"\b(?:(?P<degree>most|highly|strongly|very|quite)\s+)?(?:{_SUGGESTS}|(?P<verb>suggests?))"
    r"\s+(?:a\s+diagnosis\s+of\s+)?", re.I)
# What must come before a plain "consistent with" / "suggest": "the findings are", "imaging
# features ... suggest". Searched in the few words before the cue only.
_SUGGEST_SUBJECT = re.compile(
    r"\b(?:findings|appearances?|features|picture|pattern|constellation|presentation|imaging)"
    r"\b(?:\s[\w-]+){0,6}?\s?$", re.I)
_SUGGEST_LINK = re.compile(r"\b(?:is|are|seems?|appears?|be)\s(?:not\s)?$", re.I)
# "Differential diagnoses include A, B", "other considerations are", "to consider: A".
_DIFFERENTIAL_QUALIFIER = (
    r"(?:\s+(?:to\s+consider|to\s+be\s+considered|that\s+should\s+be\s+considered|"
    r"worth\s+considering|here|in\s+this\s+case|for\s+(?:a|an|this|these|the|such)\s+"
    r"(?:[\w-]+\s+){0,5}?(?:lesions?|findings?|appearances?|cases?|patients?|presentation|"
    r"mass(?:es)?|abnormalit(?:y|ies)|pattern)))?"
    r"\s*(?:(?:would|could|may|might|should|must)\s+)?(?:also\s+)?")
_DIFFERENTIAL_CUE = re.compile(
    # "differential(s)" may be followed by "are"/"is"; "possibilities are" only after "other"
    r"\b(?:differentials?(?:\s+diagnos[ie]s)?|differential\s+considerations?)"
    rf"{_DIFFERENTIAL_QUALIFIER}(?:(?:include|includes|including|are|is)\b|:)\s*"
    r"|\b(?:considerations|possibilities|alternatives|diagnoses|others|entities|conditions)"
    rf"{_DIFFERENTIAL_QUALIFIER}(?:(?:include|includes|including)\b|:)\s*"
    r"|(?<=other )(?:considerations|possibilities|alternatives|diagnoses)\s+are\s+"
    r"|\bto\s+consider\s*(?::|(?:include|are)\b)\s*|\balso\s+consider(?:ed)?\s*:?\s+"
    r"|\b(?:followed|trailed)\s+by\s+", re.I)
# "The differential is broad and includes A, B": the names follow "includes".
_BROAD_DIFFERENTIAL = re.compile(
    r"(?:broad|wide|extensive|long|limited|varied)\b[^,:;]{0,40}?\binclud(?:es|ing|e)\b\s*:?\s*",
    re.I)
# "X, with A and B as differentials": the names between "with" and "as" (looked for backwards).
_AS_DIFFERENTIALS = re.compile(
    r"\bas\s+(?:the\s+)?(?:(?:main|other|possible|alternative|less\s+likely)\s+)?"
    r"(?:differentials?|differential\s+diagnos[ie]s|alternatives|considerations|possibilities)\b",
    re.I)
# "A and B should also be considered", "C is also in the differential": the names come before.
_DIFFERENTIAL_AFTER = re.compile(
    r"\b(?:should|could|may|might|must|can|would)\s+(?:also\s+)?be\s+considered\b"
    r"|\b(?:is|are)\s+(?:also\s+)?in\s+the\s+differential\b"
    r"|\b(?:is|are)\s+also\s+(?:possible|a\s+consideration|a\s+possibility)\b"
    r"|\b(?:is|are)\s+(?:also\s+)?(?:(?:other|additional|alternative|less\s+likely|possible)\s+)?"
    r"(?:considerations|possibilities|differentials|alternatives)\b", re.I)
# Words that open a sentence before its subject ("I think", "Overall,", "Therefore").
_SUBJECT_LEAD_IN = re.compile(
    r"(?:(?:(?:i|we)\s+(?:would\s+|still\s+)?(?:think|believe|suspect|say|feel|consider|"
    r"suggest)(?:\s+that)?|overall|therefore|thus|hence|so|then|ultimately|in\s+summary|"
    r"in\s+conclusion|in\s+short|however|but|yet|although|though|while|whereas|and|that)"
    r"\b[\s,]*)+", re.I)
_STATEMENT_VERB = re.compile(r"\b(?:is|are|was|were|be|include|includes|including)\b", re.I)
_NOT_BUT = re.compile(r"not\s+[^,;]{0,80}?\bbut\s+(?:rather\s+)?", re.I)
# Words one of which each kind of statement needs: a cheap test before the regular expressions.
_DIFFERENTIAL_WORDS = ("differential", "consider", "possib", "alternative", "diagnoses", "others",
                       "entities", "conditions", "followed", "trailed")
_LEAD_WORDS_NEEDED = ("diagnos", "consideration", "possibility", "etiology", "explanation",
                      "impression", "choice", "candidate", "most likely", "most probabl", "favo",
                      "likeliest")
_SUGGEST_WORDS = ("consistent", "suggest", "compatible", "keeping", "characteristic", "typical",
                  "diagnostic", "concerning", "suspicious", "indicative")
_NEGATED_BEFORE = re.compile(r"(?:\bnot|\bnever|\bless|n't)\s+(?:\w+\s+)?$", re.I)


def _diagnosis_lexicon() -> DiagnosisLexicon | None:
    """The diagnosis lexicon, or None if it cannot be built (names are then cut by punctuation)."""
    try:
        return load_diagnosis_lexicon()
    except Exception:  # the parser stays total even with a broken lexicon
        return None


def _sentences(text: str) -> Iterator[str]:
    """The sentences of a line (a period and a space that is no initial or abbreviation)."""
    start = 0
    for end in _SENTENCE_END.finditer(text):
        word = end.group("word").strip(".")
        if len(word) == 1 or word.lower() in _ABBREVIATIONS:
            continue
        yield text[start:end.start("word") + len(end.group("word"))]
        start = end.end()
    yield text[start:]


def _plain_sentence(text: str) -> str:
    """A sentence without markdown emphasis and with single spaces."""
    return " ".join(text.replace("**", "").replace("__", "").replace("`", "").split())


def _subject_start(text: str, end: int, floor: int = 0, *, names: bool = False) -> int:
    """Where the noun phrase before ``end`` starts: after the last bracket-free ``,;:(``
    (looked for at most :data:`_MAX_SUBJECT_CHARS` back, never before ``floor``), past
    opening words such as "I think", "Overall," or "although". With ``names`` the phrase
    is a list ("A, B and C should also be considered"): commas between names are crossed.
    """
    start = max(floor, end - _MAX_SUBJECT_CHARS)
    depth = 0
    for position in range(end - 1, start - 1, -1):
        char = text[position]
        if char == ")":
            depth += 1
        elif char == "(" and depth:
            depth -= 1
        elif char in (";:(" if names else ",;:(") and not depth:
            start = position + 1
            break
    if names:
        start = _list_start(text, start, end)
    while start < end and text[start] == " ":
        start += 1
    lead_in = _SUBJECT_LEAD_IN.match(text, start, end)
    return lead_in.end() if lead_in else start


def _list_start(text: str, start: int, end: int) -> int:
    """Where a list of names ending at ``end`` starts, walking back over its commas until a
    piece opens a clause ("but A, B") or the piece before is a clause or a statement
    ("Given the history, A, B", "The most likely diagnosis is X, A and B")."""
    piece_end = end
    while True:
        comma = text.rfind(",", start, piece_end)
        if comma < 0:
            return start
        current = text[comma + 1:piece_end].strip()
        previous_comma = text.rfind(",", start, comma)
        previous_start = previous_comma + 1 if previous_comma >= 0 else start
        previous = text[previous_start:comma].strip()
        conjunction = re.match(r"(?:and|or)\s", current, re.I)  # ", and C": still the list
        if (not conjunction and (_SUBJECT_LEAD_IN.match(current) or _CLAUSE_PIECE.match(current))) \
                or _STATEMENT_VERB.search(previous):
            return comma + 1
        if _SUBJECT_LEAD_IN.match(previous):  # "..., but A, B and C": the list opens there
            return previous_start
        if _CLAUSE_PIECE.match(previous):  # "Given the history, A and B"
            return comma + 1
        piece_end = comma


def _subject_before(text: str, end: int) -> str:
    """The noun phrase before ``end`` (see :func:`_subject_start`)."""
    return text[_subject_start(text, end):end].strip()


class _NameReader:
    """Cuts prose and labelled values into diagnosis names, knowing names from the lexicon.

    Look-ups are budgeted per answer, so a hostile answer stays linear: once the budget is
    spent, names are cut at punctuation, "or" and every " and ".
    """

    def __init__(self) -> None:
        self.budget = _LOOKUP_BUDGET
        self._lexicon: DiagnosisLexicon | None = None
        self._loaded = False

    def lexicon(self) -> DiagnosisLexicon | None:
        if not self._loaded:
            self._lexicon, self._loaded = _diagnosis_lexicon(), True
        return self._lexicon

    def known(self, text: str) -> bool:
        """Whether ``text`` as a whole names one disease of the lexicon (or a joined name)."""
        if not text or len(text) > _MAX_NAME_CHARS or self.budget <= 0:
            return False
        self.budget -= 1
        if re.sub(r"[^0-9a-z]", "", text.casefold()) in _JOINED_NAMES:
            return True
        lexicon = self.lexicon()
        if lexicon is not None and lexicon.lookup(text) is not None:
            return True
        # "hand, foot and mouth disease (enterovirus 71 rhombencephalitis)": the name before
        # an explanation in brackets
        bracket = text.rfind("(")
        return text.endswith(")") and bracket > 0 and self.known(text[:bracket].strip())

    def mentions(self, text: str) -> bool:
        """Whether ``text`` mentions a disease of the lexicon anywhere."""
        if self.known(text):
            return True
        lexicon = self.lexicon()
        if lexicon is None or self.budget <= 0:
            return False
        self.budget -= 5  # a scan costs several look-ups
        found, _ = lexicon.find_mentions(normalize_diagnosis(text[:_MAX_NAME_CHARS]))
        return bool(found)

    def splits_at_and(self, left: str, right: str) -> bool:
        """Whether ``left and right`` are two diagnoses (see :func:`parse_diagnoses`)."""
        if self.known(left):
            return True
        construction = re.search(r"\b(?:with|without|of)\b", left, re.I) is not None
        if self.known(right):
            return not construction
        return not construction and len(left.split()) > 1

    def names(self, value: str, *, first_only: bool = False) -> list[str]:
        """The names of a list such as ``"A, B, or C"``, ``"A; B and C"``, in order.

        With ``first_only``, only the names before the first comma or semicolon (a lead
        statement's name is followed by a clause, not by more names).
        """
        texts, joiners, kinds = _name_pieces(value)
        names: list[str] = []
        count = len(texts)
        i = 0
        while i < count:
            if first_only and i and kinds[i] in ",;":
                break
            span = 0
            for width in range(min(_NAME_WINDOW, count - i) if self.budget > 0 else 0, 1, -1):
                if all(kinds[k] in (",", "and") for k in range(i + 1, i + width)) \
                        and self.known(_joined(texts, joiners, i, i + width)):
                    span = width
                    break
            if span:
                names.append(_joined(texts, joiners, i, i + span))
                i += span
                continue
            current, j = texts[i], i
            while j + 1 < count and kinds[j + 1] == "and" and not self.splits_at_and(
                    current, texts[j + 1]):
                current = f"{current} and {texts[j + 1]}"
                j += 1
            names.append(current)
            i = j + 1
        return [name for name in names if not _NOT_A_NAME.fullmatch(name)]

    def lead(self, value: str) -> list[str]:
        """The name(s) of a lead statement, most likely first ("glioma or lymphoma, given...")."""
        value = value.strip()
        rather = _NOT_BUT.match(value)  # "the most likely diagnosis is not X but Y"
        return self.names(value[rather.end():] if rather else value, first_only=True)


def _tidy_name(text: str) -> str:
    """A piece of a list without hedges, articles, explanations and trailing clauses."""
    text = _REMARK_FIRST.sub("", text.strip(" ,.;:"), count=1)
    lead_in = _NAME_LEAD_IN.match(text)
    if lead_in:
        text = text[lead_in.end():]
    if _CLAUSE_PIECE.match(text):
        return ""
    tail = _NAME_TAIL.search(text)
    if tail:
        text = text[:tail.start()]
    words = text.split()
    while words and (words[-1].lower().strip(",.") in _NAME_TRAILERS or (
            len(words) > 1 and words[-1].lower() in ("a", "an", "the"))):
        words.pop()
    return " ".join(words).strip(" ,.;:")


def _name_pieces(value: str) -> tuple[list[str], list[str], list[str]]:
    """Cut a list at separators outside brackets: (texts, joiners, kinds).

    ``kinds[i]`` is how piece ``i`` is set apart from the one before: ``""`` (first),
    ``","``, ``";"``, ``"and"`` or ``"or"``; ``joiners[i]`` is the separator as written,
    for looking a joined name up. Semicolons, when there are any, are the only
    punctuation that separates (commas are then inside names: "Glioblastoma, IDH-wildtype;
    lymphoma"). Pieces left empty by tidying are dropped, their separator merged.
    """
    value = " ".join(value.split())
    semicolons = ";" in value and _semicolon_outside_brackets(value)
    separators: list[tuple[int, int, str]] = []  # (start, end, kind) of the cuts outside brackets
    depth = 0
    end = len(value)
    for seen, match in enumerate(_NAME_SEPARATOR.finditer(value)):
        token = match.group()
        if seen == 8 * _MAX_LIST_NAMES:  # brackets and separators of a runaway list
            end = match.start()
            break
        if token in ("(", "["):
            depth += 1
            continue
        if token in (")", "]") or (depth and token.endswith(")")):  # "(grade 2)": a bracket
            depth = max(0, depth - 1)
            continue
        if depth or (token == "," and semicolons):
            continue
        if len(separators) + 1 >= _MAX_LIST_NAMES:  # a runaway list: the rest is not read
            end = match.start()
            break
        word = token.strip().lower()
        kind = (token if token in (",", ";") else "," if token.endswith(")")  # "1) A 2) B"
                else "and" if word in ("and", "&", "as well as") else "or")
        separators.append((match.start(), match.end(), kind))
    raw: list[tuple[str, str, str]] = []  # (text, joiner, kind)
    start, joiner, kind = 0, "", ""
    for cut_start, cut_end, cut_kind in separators:
        raw.append((value[start:cut_start], joiner, kind))
        start, kind = cut_end, cut_kind
        joiner = _JOINERS[cut_kind]
    raw.append((value[start:end], joiner, kind))

    texts: list[str] = []
    joiners: list[str] = []
    kinds: list[str] = []
    carried_joiner, carried_kind = "", ""  # the separators of pieces dropped since the last kept
    for text, joiner, kind in raw:
        if carried_kind:  # ", and C": the comma decides (a list item), the "and" is kept to look up
            joiner = carried_joiner.rstrip() + joiner
            kind = carried_kind if _SEPARATOR_RANK[carried_kind] >= _SEPARATOR_RANK[kind] else kind
        name = _tidy_name(text)
        if not name:
            carried_joiner, carried_kind = joiner, kind
            continue
        texts.append(name)
        joiners.append(joiner if len(texts) > 1 else "")
        kinds.append(kind if len(texts) > 1 else "")
        carried_joiner, carried_kind = "", ""
    return texts, joiners, kinds


def _semicolon_outside_brackets(value: str) -> bool:
    depth = 0
    for match in re.finditer(r"[()\[\];]", value):
        char = match.group()
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif not depth:
            return True
    return False


def _joined(texts: list[str], joiners: list[str], start: int, stop: int) -> str:
    """Pieces ``start..stop-1`` joined with their separators as written."""
    return texts[start] + "".join(joiners[k] + texts[k] for k in range(start + 1, stop))


@dataclass
class _ProseFindings:
    """What the statements of one answer say, in text order."""

    lead: list[str] | None = None  # from "Most likely: X" or "the most likely diagnosis is X"
    suggested: list[str] | None = None  # from "findings are most consistent with X"
    suggested_known: bool = False  # the suggested name is a disease of the lexicon
    # A lead statement was read but named nothing ("I would not favour lymphoma", "the lesion
    # is most likely"): the line is prose, not a bare one-line answer.
    unnamed_lead: bool = False
    others: list[str] = field(default_factory=list)  # differentials and list items
    list_items: int = 0  # how many of the others are numbered or bulleted list items

    def ranked(self) -> list[str]:
        if self.lead:
            return self.lead + self.others
        # A "consistent with" remark in an answer with a list must name a disease:
        # "1. Glioblastoma\n   The rim is consistent with necrosis" gives no lead.
        if self.suggested and (self.suggested_known or not self.list_items):
            return self.suggested + self.others
        return list(self.others)


def _read_prose_sentence(sentence: str, reader: _NameReader, found: _ProseFindings) -> None:
    """Read the lead and differential statements of one sentence of prose."""
    lowered = sentence.lower()
    differentials = any(word in lowered for word in _DIFFERENTIAL_WORDS)
    lead = found.lead is None and any(word in lowered for word in _LEAD_WORDS_NEEDED)
    suggests = found.lead is None and found.suggested is None and any(
        word in lowered for word in _SUGGEST_WORDS)
    if not (differentials or lead or suggests):
        return
    text = _plain_sentence(sentence)
    statement = _differential_statement(text) if differentials else None
    head = text[:statement.start] if statement else text
    names: list[str] = []
    if lead:
        names, _, seen = _lead_statement(head, reader)
        if not names and statement and statement.names_end == len(text):
            # "Differentials include A and B, but the most likely diagnosis is X": the
            # lead statement after the list also ends the list.
            names, lead_at, seen_after = _lead_statement(text, reader, statement.after)
            seen = seen or seen_after
            if names:
                statement = _Differential(statement.start, statement.names_start, lead_at,
                                          statement.after)
        if names:
            found.lead = names
        found.unnamed_lead = found.unnamed_lead or (seen and not names)
    if statement:
        found.others.extend(reader.names(text[statement.names_start:statement.names_end]))
    if suggests and not names:
        names, seen = _suggested_names(head, reader)
        if names:
            found.suggested = names
            found.suggested_known = reader.mentions(names[0])
        found.unnamed_lead = found.unnamed_lead or (seen and not names)


@dataclass(frozen=True)
class _Differential:
    """Where a differential statement of a sentence is."""

    start: int  # where the statement begins (its cue, "with", or its names when they come first)
    names_start: int  # the span of its list of names
    names_end: int
    after: int  # where the text after the statement's cue begins


def _differential_statement(text: str) -> _Differential | None:
    """The first differential statement of a sentence, if any."""
    differential = _DIFFERENTIAL_CUE.search(text)
    listed = _AS_DIFFERENTIALS.search(text)
    if listed:  # "with A and B as differentials": from the last "with" before "as"
        window_start = max(0, listed.start() - _MAX_SUBJECT_CHARS)
        with_at = text.rfind(" with ", window_start, listed.start())
        if with_at >= 0 and not (differential and differential.start() < with_at):
            return _Differential(with_at, with_at + len(" with "), listed.start(), listed.end())
    if differential:
        broad = _BROAD_DIFFERENTIAL.match(text, differential.end())
        names_start = broad.end() if broad else differential.end()
        return _Differential(differential.start(), names_start, len(text), differential.end())
    considered = _DIFFERENTIAL_AFTER.search(text)
    if considered:  # "A and B should also be considered"
        subject = _subject_start(text, considered.start(), names=True)
        return _Differential(subject, subject, considered.start(), considered.end())
    return None


def _lead_statement(text: str, reader: _NameReader,
                    start: int = 0) -> tuple[list[str], int, bool]:
    """The name(s) of the first lead statement in ``text[start:]`` that is not negated,
    where the statement begins, and whether any lead statement (negated too) was seen."""
    forward = None
    seen = False
    for attempt, match in enumerate(_LEAD_CUE.finditer(text, start)):
        seen = True
        if attempt == _MAX_CUE_ATTEMPTS:
            break
        if not _NEGATED_BEFORE.search(text[max(start, match.start() - 30):match.start()]):
            forward = match
            break
    backward = _LEAD_AFTER.search(text, start)

    def after_cue() -> tuple[list[str], int]:  # "the most likely diagnosis is X"
        if forward is None:
            return [], 0
        return reader.lead(text[forward.end():]), forward.start()

    def before_cue() -> tuple[list[str], int]:  # "X is the most likely diagnosis"
        if backward is None:
            return [], 0
        subject = _subject_start(text, backward.start(), start)
        return reader.lead(text[subject:backward.start()]), subject

    # The earlier statement counts; the other one only if the earlier names nothing.
    first, second = after_cue, before_cue
    if backward and (forward is None or backward.start() <= forward.start()):
        first, second = before_cue, after_cue
    names, at = first()
    if not names:
        names, at = second()
    return names, at, seen or backward is not None


def _suggested_names(head: str, reader: _NameReader) -> tuple[list[str], bool]:
    """The name(s) after "most consistent with", "the findings are suggestive of"..., and
    whether such a statement (a negated one too) was seen."""
    seen = False
    for attempt, match in enumerate(_SUGGEST_CUE.finditer(head)):
        if attempt == _MAX_CUE_ATTEMPTS:
            break
        before = head[max(0, match.start() - 80):match.start()]
        if match.group("verb"):  # "the imaging features strongly suggest X"
            if not _SUGGEST_SUBJECT.search(before):
                continue
        elif not match.group("degree"):  # "the findings are consistent with X"
            link = _SUGGEST_LINK.search(before)
            if link is None or not _SUGGEST_SUBJECT.search(before[:link.start()]):
                continue
        seen = True
        if re.search(r"\b(?:not|no|never)\b|n't", match.group(), re.I) \
                or _NEGATED_BEFORE.search(before[-30:]):
            continue
        names = reader.lead(head[match.end():])
        if names:
            return names, True
    return [], seen


def _read_labelled_list(value: str, reader: _NameReader, found: _ProseFindings) -> None:
    """Read the names of an ``Others: A, B`` line; a lead statement in it ends the list
    ("Differentials include A and B, but the most likely diagnosis is X")."""
    text = _plain_sentence(value)
    end = len(text)
    lowered = text.lower()
    if found.lead is None and any(word in lowered for word in _LEAD_WORDS_NEEDED):
        names, lead_at, _ = _lead_statement(text, reader)
        if names:
            found.lead, end = names, lead_at
    found.others.extend(reader.names(text[:end]))


def _fallback_diagnoses(text: str) -> _ProseFindings:
    reader = _NameReader()
    found = _ProseFindings()
    for line in _break_statements(text).splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        item = _LIST_ITEM.match(line)
        value = item.group("value") if item else stripped
        match = _MOST_LIKELY_LINE.match(value) or _DIAGNOSIS_LINE.match(value)
        if match:
            if found.lead is None:  # a later "Final diagnosis: X" restates the first
                found.lead = reader.lead(_item_name(match.group("value"))) or None
            for sentence in _sentences(match.group("value")):  # "X, followed by A and B"
                _read_prose_sentence(sentence, reader, found)
            continue
        match = _DIFFERENTIAL_LINE.match(value)
        if match:
            first = _first_sentence(match.group("value"))
            _read_labelled_list(first, reader, found)
            for sentence in _sentences(match.group("value")[len(first):]):
                _read_prose_sentence(sentence, reader, found)
            continue
        if item:
            name = _item_name(value)
            if re.fullmatch(r"[^:]*(?:diagnos[ie]s|differentials?)\s*:?\s*", name, re.I):
                continue  # a heading such as "**Differential diagnoses:**"
            ranked = _LEAD_AFTER.search(name)  # "1. Glioblastoma is the most likely diagnosis"
            if ranked and _subject_before(name, ranked.start()):
                name = _subject_before(name, ranked.start())
            found.others.append(name)
            found.list_items += 1
            continue
        for sentence in _sentences(stripped):
            _read_prose_sentence(sentence, reader, found)
    return found


def parse_diagnoses(text: Any) -> ParsedDiagnoses:
    """Read the ranked diagnoses of one diagnosis answer, most likely first.

    The JSON object of the contract is found even inside code fences, with
    prose around it, single quotes, comments, trailing commas, other key
    spellings (``"most likely diagnosis"``, ``"differentials"``...) or cut off
    (complete strings are kept). Without usable JSON, numbered or bulleted
    lists (``1.``, ``1)``, ``(1)``, ``-``, ``*``, ``\u2022``), ``Most likely: X`` lines,
    labelled ``Differentials: A, B`` / ``Others: A; B`` / ``Alternatives: ...``
    lines, statements in prose, or a bare one-line answer are read (status
    ``"fallback_list"``). A list item is its name: the explanation after a colon,
    a spaced dash or the item's first sentence is left out. Duplicates are
    removed case-insensitively, keeping the first. ``<think>`` reasoning is
    removed first.

    Prose (how models answer when they ignore the JSON instruction) is read
    sentence by sentence, in the order it ranks:

    - the most likely diagnosis comes first, from a lead statement: "the most
      likely (leading, top, working...) diagnosis is X", "X is the most likely
      diagnosis", "X is favoured", "this most likely represents X", "I favour X",
      "in favour of X"; failing one, from "(the findings are) most consistent
      with X", "findings are suggestive of / consistent with X", "the imaging
      features suggest X" (in an answer with a numbered or bulleted list, only
      when X mentions a disease of the lexicon, so "the rim is consistent with
      necrosis" under a list item ranks nothing). A negated statement ("I would
      not favour X") and a pronoun or "the lesion" as X are skipped; of "not X
      but Y" Y is read; a one-line answer made of such a statement is
      ``"unparseable"``, not a bare name. The first lead statement counts, a
      later one restates it.
    - the others follow, in text order, from differential statements:
      "differential diagnoses (for this lesion) include A, B", "differentials
      are", "other considerations / possibilities include", "to consider: A",
      "also consider A", "followed by A and B", "with A and B as differentials",
      "A and B should also be considered", "A is also in the differential".
    - a name ends at a clause: hedges and articles are left out ("possibly a
      glioma" is "glioma"), and so is what follows ", given ...", " because",
      " which", " over" ("I favour X over Y"), " in this patient", " in the
      setting of ...", a spaced dash or a colon. A lead statement's name ends at
      its first comma ("glioblastoma, which..."), unless the lexicon knows the
      name with it ("Glioblastoma, IDH-wildtype"); "X or Y" there gives X, then Y.
    - a list is cut at semicolons if it has any, else at commas, and at "or",
      "vs" and inline "1) ... 2) ..." numbers, never inside brackets ("CADASIL
      (cerebral autosomal dominant arteriopathy with subcortical infarcts and
      leukoencephalopathy)" stays whole); ", and" / ", or" before the last name
      is a comma. A run of pieces that together are a name of the diagnosis
      lexicon is kept whole ("mitochondrial encephalomyopathy, lactic acidosis,
      and stroke-like episodes"; also "hand, foot and mouth disease").
    - " and " between two pieces is read with the lexicon
      (:mod:`novabench.lexicon.diagnoses`, exact look-up after its
      normalisation): when the whole is a known name it is kept ("hypomyelination
      with atrophy of basal ganglia and cerebellum"); else it is split when the
      left side is a known disease ("metastasis and abscess", "tuberous
      sclerosis and SEGA"), or when the right side is known and the left is not
      an "X with / of ..." construction; with neither side known it is split
      unless the left side is one word ("foot and mouth disease", "hypoxic and
      ischaemic injury") or an "X with / of ..." construction
      ("leukoencephalopathy with brainstem and spinal cord involvement"). So
      " and " splits whenever the whole is not a known name, except where the
      words show one name.

    A prose or labelled list is read up to its first 100 names, and lexicon
    look-ups are budgeted per answer, so hostile answers stay linear.

    Args:
        text: the raw answer (str; bytes, None or a decoded dict/list too).

    Returns:
        The diagnoses with a status from :data:`DIAGNOSIS_STATUSES`; never raises.

    Example:
        >>> answer = '''Here you go:
        ... ```json
        ... {"most_likely_diagnosis": "Glioblastoma",
        ...  "other_possible_diagnoses": ["Lymphoma", "Metastasis", "Abscess", "lymphoma",
        ...                               "Tumefactive MS",]}
        ... ```'''
        >>> parsed = parse_diagnoses(answer)
        >>> parsed.status, parsed.diagnoses, parsed.n_duplicates_removed
        ('ok', ['Glioblastoma', 'Lymphoma', 'Metastasis', 'Abscess', 'Tumefactive MS'], 1)
        >>> prose = ("Based on the findings, the most likely diagnosis is glioblastoma. "
        ...          "Differential diagnoses include lymphoma, metastasis and abscess.")
        >>> parse_diagnoses(prose).diagnoses
        ['glioblastoma', 'lymphoma', 'metastasis', 'abscess']
    """
    try:
        return _parse_diagnoses(text)
    except Exception as exc:  # the contract: a status, never an exception
        return ParsedDiagnoses(status="unparseable", error=f"internal parser error: {exc!r}")


def _parse_diagnoses(raw: Any) -> ParsedDiagnoses:
    text, type_error = _coerce_text(raw)
    if text is None:
        return ParsedDiagnoses(status="unparseable", error=type_error)
    reasoning = _strip_reasoning(text)
    notes: list[str] = [str(reasoning.note())] if reasoning.note() else []
    text = reasoning.text[:_MAX_CHARS]
    if not text.strip():
        error = reasoning.empty_error() if reasoning.removed else "no answer text"
        return ParsedDiagnoses(status="empty", error=error, notes=tuple(notes))
    if _is_null_literal(text):
        return ParsedDiagnoses(status="empty", notes=tuple(notes),
                               error=f"answer is the null literal {text.strip()!r}")

    json_list: list[str] | None = None
    for value, complete in _structures(text):
        found = _diagnoses_from_object(value) if isinstance(value, dict) else None
        if found is not None:
            diagnoses, removed = _deduplicate(found)
            if diagnoses:
                if not complete:
                    notes.append("the JSON object was cut off; complete entries kept")
                status = "ok" if len(diagnoses) >= 5 else "partial"
                return ParsedDiagnoses(diagnoses, status, removed, None, tuple(notes))
        if json_list is None and isinstance(value, list) and value and all(
                isinstance(item, str) for item in value):
            json_list = value

    if json_list is not None:
        diagnoses, removed = _deduplicate(json_list)
        if diagnoses:
            notes.append("a JSON list of strings, not the requested object")
            return ParsedDiagnoses(diagnoses, "fallback_list", removed, None, tuple(notes))

    plain = _without_fences(text)
    prose = _fallback_diagnoses(plain)
    diagnoses, removed = _deduplicate(prose.ranked())
    if diagnoses:
        return ParsedDiagnoses(diagnoses, "fallback_list", removed, None, tuple(notes))

    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    if len(lines) == 1 and len(lines[0].split()) <= 12 and not _REFUSAL.search(lines[0]) \
            and not prose.unnamed_lead \
            and not re.search(r"[{}\[\]]", lines[0]):
        single, _ = _deduplicate([_item_name(lines[0])])
        if single:
            notes.append("a bare one-line answer")
            return ParsedDiagnoses(single, "fallback_list", 0, None, tuple(notes))
    return ParsedDiagnoses(status="unparseable", notes=tuple(notes),
                           error="no diagnosis JSON object, list or one-line answer found")


# --------------------------------------------------------------------------- caption


_CAPTION_PREAMBLE = re.compile(
    r"^\s*(?:(?:sure|certainly|of course|absolutely|okay|ok|alright)\b[!.,]?\s*)?"
    r"(?:here(?:'s|\s+is|\s+are)\b[^:\n]*:\s*)", re.I)
_CAPTION_COURTESY = re.compile(r"^\s*(?:sure|certainly|of course|absolutely|okay|ok)\s*[!.,]\s*$", re.I)
_CAPTION_PREFIX = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?:caption|answer|description|radiology\s+description|image\s+description|"
    r"findings|figure\s+legend|legend|response)\s*(?:\*\*|__)?\s*[:\-\u2013]\s*(?:\*\*|__)?\s*", re.I)
_CAPTION_HEADER_ONLY = re.compile(
    r"^(?:caption|answer|description|radiology description|image description|findings|"
    r"figure legend|legend|response)\s*:?$", re.I)
_CAPTION_TRAILER = re.compile(
    r"^\s*(?:let me know|i hope|please (?:note|consult)|note:|disclaimer|this (?:description|caption) "
    r"(?:is|was)|feel free)", re.I)


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
        text: the raw answer (str; bytes or None too).

    Returns:
        The caption with a status from :data:`CAPTION_STATUSES`; never raises.

    Example:
        >>> parse_caption('Sure! Here is the caption:\\n\\n"Axial FLAIR  image, left frontal lesion."').caption
        'Axial FLAIR image, left frontal lesion.'
        >>> parse_caption("- Axial T2\\n- **Right** thalamic infarct").caption
        'Axial T2. Right thalamic infarct.'
        >>> parse_caption("   ").status
        'empty'
    """
    try:
        return _parse_caption(text)
    except Exception as exc:  # the contract: a status, never an exception
        return ParsedCaption(status="unparseable", error=f"internal parser error: {exc!r}")


def _parse_caption(raw: Any) -> ParsedCaption:
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
                    if _norm_key(key) in {"caption", "description", "answer", "findings"} and isinstance(
                            item, str) and item.strip():
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
            if text.startswith(left) and text.endswith(right) and text.count(left) + (
                    text.count(right) if left != right else 0) <= 2:
                text = text[len(left):-len(right)].strip()
                changed = True
    return text


# --------------------------------------------------------------------------- statistics


@dataclass
class ParseStats:
    """Counts of parse outcomes over many answers of one task.

    Add parsed results one by one (:meth:`add`) or in bulk (:meth:`from_results`);
    :meth:`as_dict` gives the numbers for a report. Mixing tasks is refused.

    Example:
        >>> stats = ParseStats.from_results(
        ...     parse_localization(answer, image_size=(480, 480))
        ...     for answer in ["lesion: [0, 0, 500, 500]", "no target", "", "???"])
        >>> stats.status_counts
        {'ok': 1, 'no_target': 1, 'empty': 1, 'unparseable': 1}
        >>> stats.n_answers, stats.n_failed, stats.failure_rate
        (4, 2, 0.5)
    """

    task: str | None = None
    n_answers: int = 0
    status_counts: dict[str, int] = field(default_factory=dict)
    convention_counts: dict[str, int] = field(default_factory=dict)
    n_boxes: int = 0
    n_degenerate_dropped: int = 0
    n_out_of_range: int = 0
    n_swapped: int = 0
    n_diagnoses: int = 0
    n_duplicates_removed: int = 0

    def add(self, parsed: Parsed) -> None:
        """Count one parsed answer.

        Args:
            parsed: a :class:`ParsedBoxes`, :class:`ParsedDiagnoses` or :class:`ParsedCaption`.

        Raises:
            NovaInputError: the result is of another task than those counted so far.

        Example:
            >>> stats = ParseStats()
            >>> stats.add(parse_caption("Axial T1."))
            >>> stats.task, stats.status_counts
            ('captioning', {'ok': 1})
        """
        task = _task_of(parsed)
        if self.task is None:
            self.task = task
        elif task != self.task:
            raise NovaInputError(f"ParseStats counts {self.task} answers, got a {task} result")
        self.n_answers += 1
        self.status_counts[parsed.status] = self.status_counts.get(parsed.status, 0) + 1
        if isinstance(parsed, ParsedBoxes):
            if parsed.convention is not None:
                self.convention_counts[parsed.convention] = (
                    self.convention_counts.get(parsed.convention, 0) + 1)
            self.n_boxes += parsed.n_boxes
            self.n_degenerate_dropped += parsed.n_degenerate_dropped
            self.n_out_of_range += parsed.n_out_of_range
            self.n_swapped += parsed.n_swapped
        elif isinstance(parsed, ParsedDiagnoses):
            self.n_diagnoses += len(parsed.diagnoses)
            self.n_duplicates_removed += parsed.n_duplicates_removed

    @classmethod
    def from_results(cls, results: Iterable[Parsed]) -> ParseStats:
        """Count every result of an iterable.

        Example:
            >>> ParseStats.from_results([parse_diagnoses("1. A\\n2. B")]).status_counts
            {'fallback_list': 1}
        """
        stats = cls()
        for parsed in results:
            stats.add(parsed)
        return stats

    @property
    def n_failed(self) -> int:
        """Answers with a status in :data:`FAILURE_STATUSES` (nothing usable read).

        Example:
            >>> ParseStats(n_answers=2, status_counts={"ok": 1, "empty": 1}).n_failed
            1
        """
        return sum(count for status, count in self.status_counts.items()
                   if status in FAILURE_STATUSES)

    @property
    def failure_rate(self) -> float:
        """``n_failed / n_answers`` (0.0 when nothing was counted).

        Example:
            >>> ParseStats().failure_rate
            0.0
        """
        return self.n_failed / self.n_answers if self.n_answers else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counts as plain JSON, fractions in [0, 1].

        Example:
            >>> ParseStats.from_results([parse_caption("")]).as_dict()["n_failed"]
            1
        """
        result: dict[str, Any] = {
            "task": self.task,
            "n_answers": self.n_answers,
            "status_counts": dict(self.status_counts),
            "n_failed": self.n_failed,
            "failure_rate": self.failure_rate,
        }
        if self.task == "localization":
            result.update(convention_counts=dict(self.convention_counts), n_boxes=self.n_boxes,
                          n_degenerate_dropped=self.n_degenerate_dropped,
                          n_out_of_range=self.n_out_of_range, n_swapped=self.n_swapped)
        elif self.task == "diagnosis":
            result.update(n_diagnoses=self.n_diagnoses, n_duplicates_removed=self.n_duplicates_removed)
        return result

    def summary(self) -> str:
        """One line for a terminal or a report, statuses by decreasing count.

        Example:
            >>> ParseStats.from_results([parse_caption("x"), parse_caption("")]).summary()
            'captioning: 2 answers, 1 unusable (50.0%); ok 1, empty 1'
        """
        ordered = Counter(self.status_counts).most_common()
        parts = ", ".join(f"{status} {count}" for status, count in ordered)
        return (f"{self.task or 'no task'}: {self.n_answers} answers, {self.n_failed} unusable "
                f"({100.0 * self.failure_rate:.1f}%); {parts}")


def _task_of(parsed: Any) -> str:
    if isinstance(parsed, ParsedBoxes):
        return "localization"
    if isinstance(parsed, ParsedDiagnoses):
        return "diagnosis"
    if isinstance(parsed, ParsedCaption):
        return "captioning"
    raise NovaInputError(f"ParseStats counts parser results, got {type(parsed).__name__}")
