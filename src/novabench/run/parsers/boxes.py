"""Localisation answers to boxes: :func:`parse_localization` and :class:`ParsedBoxes`.

Boxes are found in JSON (objects with box keys, bare 4-number lists, named corners) or,
failing that, in labelled lines and Qwen2-VL box tokens; the convention they are written
in is then resolved and they are converted to pixels of the original image.

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

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from novabench.errors import NovaInputError
from novabench.registry import TASKS
from novabench.run.defaults import CONVENTIONS
from novabench.run.parsers.lenient_json import (
    _MAX_DEPTH,
    _NUMBER_PATTERN,
    _norm_key,
    _number_token,
    _structures,
)
from novabench.run.parsers.text import (
    _MAX_CHARS,
    _coerce_text,
    _is_null_literal,
    _strip_reasoning,
    _without_fences,
)


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
            Never ``"ok_clipped"``: the predictions layer gives that one after parsing.
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

    #: The task of :mod:`novabench.registry` this result answers.
    TASK: ClassVar[str] = "localization"
    #: Counts :class:`ParseStats` adds up over the answers (attributes of both).
    COUNTED: ClassVar[tuple[str, ...]] = (
        "n_boxes",
        "n_degenerate_dropped",
        "n_out_of_range",
        "n_swapped",
    )
    #: Attributes whose values :class:`ParseStats` counts in its ``<name>_counts``.
    TALLIED: ClassVar[tuple[str, ...]] = ("convention",)

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


#: Statuses of :class:`ParsedBoxes`, as the task registry declares them. One of them,
#: ``"ok_clipped"``, is never returned by :func:`parse_localization`: the predictions layer
#: (:mod:`novabench.run.predictions`) gives it to an ``"ok"`` answer whose boxes had to be
#: clipped to the image (``n_out_of_range > 0``), a frequent sign of a wrong convention.
LOCALIZATION_STATUSES: tuple[str, ...] = TASKS[ParsedBoxes.TASK].parse_statuses


# --------------------------------------------------------------------------- reading boxes


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
    if (
        len(value) == 4
        and all(isinstance(v, str) for v in value)
        and all(_NUMBER_PATTERN.fullmatch(v.strip()) for v in value)
    ):
        value = [_number_token(v.strip()) for v in value]  # {"bbox_2d": ["10", "20", ...]}
    if len(value) == 4 and all(_is_number(v) for v in value):
        return list(value)
    if len(value) == 2 and all(isinstance(v, list) and len(v) == 2 for v in value):
        flat = value[0] + value[1]
        if all(_is_number(v) for v in flat):
            return flat
    return None


_QWEN_KEYS = frozenset({"bbox_2d", "bbox2d"})
_YXYX_KEYS = frozenset({"box_2d", "box2d"})
_GENERIC_BOX_KEYS = frozenset(
    {
        "bbox",
        "box",
        "bounding_box",
        "boundingbox",
        "coordinates",
        "coords",
        "bbox_xyxy",
        "box_xyxy",
        "xyxy",
        "location",
        "position",
        "rect",
        "region_box",
    }
)
_LABEL_KEYS = (
    "label",
    "name",
    "class",
    "category",
    "finding",
    "type",
    "description",
    "object",
    "text",
)
_CONTAINER_KEYS = frozenset(
    {
        "boxes",
        "bboxes",
        "bounding_boxes",
        "objects",
        "detections",
        "findings",
        "regions",
        "results",
        "annotations",
        "abnormalities",
        "lesions",
        "targets",
        "predictions",
        "answer",
        "output",
        "data",
        "items",
        "anomalies",
    }
)
_XYXY_KEY_SETS = (
    ("x1", "y1", "x2", "y2"),
    ("xmin", "ymin", "xmax", "ymax"),
    ("x_min", "y_min", "x_max", "y_max"),
    ("left", "top", "right", "bottom"),
)
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
            extraction.candidates.append(
                _Candidate(label, numbers, "bare", from_json_object=depth > 0)
            )
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
                        _Candidate(label, values, hint, from_json_object=True)
                    )
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
                extraction.candidates.append(
                    _Candidate(label, numbers, hint, from_json_object=True)
                )
                found_box = True
    if found_box:
        return
    for key, value in obj.items():
        norm = _norm_key(key)
        numbers = _four_numbers(value)
        if numbers is not None and norm not in _CONTAINER_KEYS:
            # {"left frontal lesion": [ymin, xmin, ymax, xmax]}: the key is the label.
            extraction.candidates.append(
                _Candidate(str(key), numbers, "bare", from_json_object=True)
            )
        elif isinstance(value, (dict, list)):
            _walk(value, extraction, label, depth + 1)


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SEP = r"(?:\s*[,;]\s*|\s+)"
_BRACKET_BOX = re.compile(
    rf"[\[(]\s*({_NUM}){_SEP}({_NUM}){_SEP}({_NUM}){_SEP}({_NUM})\s*,?\s*[\])]"
)
_QWEN2_BOX = re.compile(
    rf"<\|box_start\|>\s*"
    rf"\(\s*(?P<a>{_NUM})\s*,\s*(?P<b>{_NUM})\s*\)\s*,?\s*\(\s*(?P<c>{_NUM})\s*,\s*(?P<d>{_NUM})\s*\)"
    rf"\s*<\|box_end\|>"
)
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
                _Candidate(_clean_label(refs[-1] if refs else ""), numbers, "qwen2_tokens")
            )
            previous_end = match.end()
        return
    for line in text.splitlines():
        label = ""
        previous_end = 0
        for match in _BRACKET_BOX.finditer(line):
            between = _clean_label(line[previous_end : match.start()])
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
            return (
                None,
                "every value is 0 or 1: 0..1 fractions or 0..1000 units cannot be told apart",
            )
        if top <= 1000.0:
            return "protocol", ""
        return (
            None,
            f"values up to {top:g} exceed 1000, so they are not the protocol's 0..1000 units",
        )
    return (
        None,
        f"a generic box key with values up to {top:g}: pixels or 0..1000 units, xyxy or yxyx",
    )


def _to_pixel_corners(
    numbers: list[float],
    convention: str,
    width: float,
    height: float,
    input_width: float,
    input_height: float,
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
        The parsed boxes with a status from :data:`LOCALIZATION_STATUSES` (never
        ``"ok_clipped"``, which is given after parsing).

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
            field="convention",
        )
    width, height = _validate_size(image_size, "image_size")
    if input_size is not None:
        input_width, input_height = _validate_size(input_size, "input_size")
    else:
        input_width, input_height = width, height
    try:
        return _parse_localization(
            text, width, height, input_width, input_height, input_size is not None, convention
        )
    except Exception as exc:  # the contract: a status, never an exception
        return ParsedBoxes(status="unparseable", error=f"internal parser error: {exc!r}")


def _parse_localization(
    raw: Any,
    width: float,
    height: float,
    input_width: float,
    input_height: float,
    has_input_size: bool,
    convention: str,
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
        return ParsedBoxes(
            status="empty", error=f"answer is the null literal {text.strip()!r}", notes=tuple(notes)
        )

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
        extraction = _Extraction(
            said_not_found=extraction.said_not_found, explicit_empty=extraction.explicit_empty
        )
        _line_candidates(_without_fences(text), extraction)
        extraction.truncated = extraction.truncated or (
            json_truncated and bool(extraction.candidates)
        )

    candidates = extraction.candidates
    if not candidates:
        if extraction.said_not_found or extraction.explicit_empty or _says_no_target(text):
            return ParsedBoxes(status="no_target", notes=tuple(notes))
        if extraction.truncated:
            return ParsedBoxes(
                status="unparseable",
                notes=tuple(notes),
                error="answer cut off before the first complete box",
            )
        return ParsedBoxes(
            status="unparseable",
            notes=tuple(notes),
            error="no box and no 'no target' statement found",
        )

    if extraction.said_not_found:
        notes.append("the answer says nothing was found but also gives boxes; boxes kept")
    elif _says_no_target(_strip_json_strings(text)) and not extraction.truncated:
        notes.append("the answer mentions 'no target' but also gives boxes; boxes kept")

    used = convention
    if convention == "auto":
        chosen, reason = _resolve_auto(candidates)
        if chosen is None:
            return ParsedBoxes(
                status="ambiguous_convention",
                notes=tuple(notes),
                error=f"{len(candidates)} box(es) found but the convention is ambiguous: {reason}; "
                "pass convention= explicitly",
            )
        used = chosen
    if used in {"qwen"} and not has_input_size:
        notes.append("input_size not given: assumed the model saw the original image size")

    boxes: list[list[float]] = []
    labels: list[str] = []
    n_degenerate = n_out = n_swapped = 0
    for candidate in candidates:
        x1, y1, x2, y2 = _to_pixel_corners(
            candidate.numbers, used, width, height, input_width, input_height
        )
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
