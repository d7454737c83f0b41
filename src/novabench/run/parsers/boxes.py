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
yxyx_norm1     ``[ymin, xmin, ymax, xmax]``            0..1 of the image height/width
============== ====================================== =====================================

"Pixels of the image the model saw" are rescaled from ``input_size`` to
``image_size`` (the original image); without ``input_size`` the model is
assumed to have seen the original size. Qwen2.5-VL answers in absolute pixels
of its internally resized input, so pass that size (``input_size``) for it;
Qwen3-VL answers ``bbox_2d`` in 0..1000 (use ``convention="xyxy_norm1000"``).
``yxyx_norm1`` reads the protocol's y-first order written as 0..1 fractions; ``auto``
picks it only for ``box_2d`` keys (y first by their own form) when the run's prompt asked
for 0..1 fractions (fractions in the protocol's lines may as well be x-first): else the
user chooses it.

A convention is a reading of what an answer leaves open. What the answer's own keys fix,
the order of its four numbers, is read from the keys whatever the convention:
``x``/``y``/``width``/``height`` are a corner and a size; named corners (``x1``/``y1``/
``x2``/``y2``, ``xmin``/``ymin``/..., ``left``/``top``/...), ``bbox_2d`` and Qwen2-VL's
``(x1,y1),(x2,y2)`` tokens are x first; ``box_2d`` is y first. An explicit convention
(``--box-convention``, or the one a preset sets) then gives only the scale: 0..1000
units, 0..1 fractions or pixels of the image the model saw. When its own order
contradicts the keys (``protocol``, y first, on ``{"x": .., "y": .., "width": ..,
"height": ..}``), the keys win for the order and the convention gives the scale (here
0..1000 units); the answer gets the status ``"ok_order_from_keys"`` (a cut-off one stays
``"truncated_ok"``, and ``n_order_from_keys`` counts its boxes all the same) and a note
naming both, so a report counts such answers. ``box_2d`` fixes more than an order: its
only documented meaning (Gemini's) is y first AND 0..1000, so under a pixel convention
(``qwen``, ``xyxy_pixel``, ``xywh_pixel``), or ``auto`` with a prompt on record that asked
for pixels, its scale is unknown and the answer is ``"ambiguous_convention"``. Bare lists,
generic keys such as ``"bbox"`` and labelled lines fix no order: the convention reads
them whole. ``auto`` always picks a convention in the keys' order.

``convention="auto"`` decides only from evidence that fixes the coordinate order,
and records which convention it used. Exactly these forms are decided:

- a ``bbox_2d`` key: ``qwen``, or ``xyxy_norm1000`` when the run's prompt asked for
  ``bbox_2d`` in 0..1000 (the ``qwen2-vl`` and ``qwen3-vl`` presets);
- a ``box_2d`` key: ``protocol`` (Gemini's y-first 0..1000 form), unless the run's prompt
  asked for pixels (``qwen``: ambiguous) or 0..1 fractions (``xyxy_norm1``: values all in
  [0, 1] are read as ``yxyx_norm1``, the key's order in the prompt's scale; larger ones are
  ambiguous), or its values are fractions (0..1 with decimals) no prompt on record asked
  for (ambiguous, ``yxyx_norm1`` reads them); fraction boxes beside larger values in one
  answer are two scales, read by no single convention (ambiguous);
- Qwen2-VL ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>`` tokens: ``xyxy_norm1000``;
- the protocol's labelled lines ``label: [ymin, xmin, ymax, xmax]`` (a colon before
  the list) with values up to 1000: ``protocol`` when no prompt is on record; a prompt
  on record reads them as it reads bare lists (below), so lines answering a custom
  prompt (``prompt_convention=CUSTOM_PROMPT``), which may have asked x first in the
  same form, are ``"ambiguous_convention"``;
- named corners (``x1``/``y1``/``x2``/``y2``, ``xmin``/``ymin``/..., ``left``/``top``/...)
  with values all in [0, 1] written with decimals: ``xyxy_norm1``;
- ``x``/``y``/``width``/``height`` keys with values above 1: ``xywh_pixel``;
- bare 4-number lists (``{"boxes": [[a, b, c, d]]}``, a list quoted in prose, a list
  under a label key or under a generic key such as ``"bbox"``) with values up to 1000,
  only when ``prompt_convention`` says which order the run's prompt asked for
  (``protocol`` for the toolkit's default localisation prompt, as its manifest records;
  a preset's prompt may also fix ``qwen`` pixels or ``xyxy_norm1`` fractions).

Anything else gives the status ``"ambiguous_convention"`` and no boxes rather than a
guess, and :attr:`ParsedBoxes.readable_with` names the conventions that would read it:
the user passes one (``--box-convention``). That covers bare lists without a prompt on
record (the numbers alone cannot tell ``[ymin, xmin, ...]`` from ``[x1, y1, ...]``),
values above 1000 where 0..1000 units are expected, every value 0 or 1, fractions in
labelled lines (``yxyx_norm1`` reads them) or bare lists, and answers that mix forms.

Once a JSON answer has been read (an object, a list of boxes, or an empty list), text
after it adds no boxes: prose that quotes a box again is not counted twice, and a different
box in prose is not scored either (a note names it). Of several JSON answers (a second
fenced block after "Corrected:"), the last complete one is scored; a note names the
others. One exception: JSON answers that are an enumeration of separate lesions, each
after its own numbered label ("Lesion 1: {...} Lesion 2: {...}", "1. ...: {...}"), each
with boxes no other repeats, with no word of a final or corrected answer between them, are
all scored (a note says so). The labels decide: "Lesion N (<description>)" is a lesion
whatever the description says ("possible satellite lesion"; overlapping boxes too), while
a numbered label naming a likelihood, guess, hypothesis, candidate, option, estimate,
alternative, revision or refinement ("2. Less likely location", "2. Second guess"), or an
item opened by "or", makes them alternatives or revisions of one answer; these, and a
restated, corrected or summed-up answer, keep the rule of the last one. Likewise, once a box was read from the protocol's labelled lines, the same four
numbers quoted again later in prose (no colon before them) add no box; a note counts them.

All sizes are ``(width, height)`` in pixels, as ``PIL.Image.size`` gives them.
Boxes come out as ``[x, y, width, height]`` floats in pixels of the original image,
with positive width and height, where the model placed them: a box reaching past the
image is kept as given (the rule of the co-authors' WALDO harness, which scores boxes
unclipped) and counted in ``n_out_of_range``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from novabench.checks import box_inside_image
from novabench.errors import NovaInputError
from novabench.registry import TASKS, task_answered_in
from novabench.run.defaults import CONVENTIONS, CUSTOM_PROMPT
from novabench.run.parsers.captions import is_refusal
from novabench.run.parsers.lenient_json import (
    _MAX_DEPTH,
    _NUMBER_PATTERN,
    _json_spans,
    _norm_key,
    _number_token,
    _UnclosedList,
)
from novabench.run.parsers.text import (
    _MAX_CHARS,
    _coerce_text,
    _fenced_spans,
    _is_null_literal,
    _strip_reasoning,
    _with_ascii_punctuation,
    _with_number_groups_on_one_line,
    _without_fences,
)


@dataclass(frozen=True)
class ParsedBoxes:
    """Boxes read from one localisation answer.

    Attributes:
        boxes: ``[x, y, width, height]`` in pixels of the original image, as the model
            placed them (not clipped: a box past the image edge is counted in
            ``n_out_of_range``).
        labels: one label per box (``""`` when the model gave none).
        status: one of :data:`LOCALIZATION_STATUSES`: ``"ok"``; ``"no_target"`` (the model
            said nothing abnormal is visible: a valid empty answer); ``"empty"`` (no text);
            ``"unparseable"``; ``"truncated_ok"`` (boxes recovered from a cut-off answer);
            ``"ok_order_from_keys"`` (read, but under an explicit convention whose order the
            answer's own keys contradict: read in the keys' order, the convention's scale);
            ``"ambiguous_convention"`` (boxes present but their convention cannot be told);
            ``"invalid_boxes"`` (boxes written, every one of zero area or with a value that
            is not a finite number, even as width x height; ``[nan, 100, 150, 150]`` in
            text too, which no reader takes as a box: the error says so); ``"refusal"`` (no box, and
            the whole answer declines: "I cannot help with this"; scored as no answer,
            never as "no target"). Never ``"ok_out_of_image"``: the predictions layer gives that one after parsing.
        convention: the convention used (``None`` when no box was converted); for
            ``"ok_order_from_keys"``, the explicit one, which gave only the scale.
        n_degenerate_dropped: boxes dropped for zero area (or values that are not finite),
            and ``box_2d`` boxes beside readable ones under a pixel convention.
        dropped_why: ``n_degenerate_dropped`` per reason, in the words of the answer's note
            (``{"with a value that is not a finite number": 1}``); ``{}`` when none.
        n_out_of_range: boxes kept that reach past the image on at least one side.
        n_swapped: boxes whose corners came in the wrong order and were put right.
        n_order_from_keys: boxes read in the order their keys fix, not the explicit
            convention's (the status says ``"ok_order_from_keys"`` unless the answer was cut
            off: ``"truncated_ok"`` wins, and this count still tells).
        error: why nothing (or not everything) could be read; ``None`` when all went well.
        notes: other remarks worth a report line (assumed sizes, contradictions).
        readable_with: for ``"ambiguous_convention"``, the explicit conventions that
            would read the answer (for bare 0..1000 lists ``("protocol",
            "xyxy_norm1000")``: y-first or x-first, as the prompt asked); else ``()``.

    Example:
        >>> parsed = parse_localization("lesion: [250, 100, 750, 500]", image_size=(480, 480))
        >>> parsed.status, parsed.boxes, parsed.n_boxes
        ('ok', [[48.0, 120.0, 192.0, 240.0]], 1)
    """

    #: The task of :mod:`novabench.registry` this result answers.
    TASK: ClassVar[str] = task_answered_in("boxes")
    #: Counts :class:`ParseStats` adds up over the answers (attributes of both).
    COUNTED: ClassVar[tuple[str, ...]] = (
        "n_boxes",
        "n_degenerate_dropped",
        "n_out_of_range",
        "n_swapped",
        "n_order_from_keys",
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
    readable_with: tuple[str, ...] = ()
    n_order_from_keys: int = 0
    dropped_why: dict[str, int] = field(default_factory=dict)

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
        result["readable_with"] = list(self.readable_with)
        return result


#: Statuses of :class:`ParsedBoxes`, as the task registry declares them. One of them,
#: ``"ok_out_of_image"``, is never returned by :func:`parse_localization`: the predictions
#: layer (:mod:`novabench.run.predictions`) gives it to an ``"ok"`` answer with a box that
#: reaches past the image (``n_out_of_range > 0``), a frequent sign of a wrong convention.
LOCALIZATION_STATUSES: tuple[str, ...] = TASKS[ParsedBoxes.TASK].parse_statuses
#: Boxes were written but none is one (zero area, or a value past a float): no prediction.
INVALID_BOXES = "invalid_boxes"
# Why a written box is dropped, as an answer's note says it.
_ZERO_SIZE = "of zero width or height"
_NOT_FINITE = "with a value that is not a finite number"
_PAST_A_FLOAT = "with a width, height or area past the largest float"
_BOX_2D_UNDER_PIXELS = "with box_2d keys (y first in 0..1000, a scale pixels contradict)"
#: Boxes read under an explicit convention whose order the answer's own keys contradict:
#: read in the keys' order, in the convention's scale (a note says so).
ORDER_FROM_KEYS = "ok_order_from_keys"


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
    # Entries under a box list key ("boxes": [[], "n/a"]) that are not boxes, as written.
    not_boxes: list[str] = field(default_factory=list)
    # Boxes written in text with a value that is no finite number ("[nan, 100, 150, 150]"),
    # as written: no line rule reads them (so no read moves); dropped boxes all the same.
    not_finite: list[str] = field(default_factory=list)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _four_numbers(value: Any) -> list[float] | None:
    """4 numbers from ``[a, b, c, d]``, ``[[a, b], [c, d]]`` or ``[[a, b, c, d]]``."""
    if not isinstance(value, list):
        return None
    if len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, _UnclosedList):  # cut off before its "]": the last number may be cut
        return None
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
        if norm in _CONTAINER_KEYS and numbers is None and isinstance(value, list):
            extraction.not_boxes += [_shown(item) for item in value if not _may_hold_boxes(item)]
        if numbers is not None and norm not in _CONTAINER_KEYS:
            # {"left frontal lesion": [ymin, xmin, ymax, xmax]}: the key is the label.
            extraction.candidates.append(
                _Candidate(str(key), numbers, "bare", from_json_object=True)
            )
        elif isinstance(value, (dict, list)):
            _walk(value, extraction, label, depth + 1)


def _may_hold_boxes(item: Any) -> bool:
    """Whether an entry of a box list is a box, an object, or a list of such."""
    if isinstance(item, dict) or _four_numbers(item) is not None:
        return True
    return isinstance(item, list) and bool(item) and all(isinstance(i, (list, dict)) for i in item)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SEP = r"(?:\s*[,;]\s*|\s+)"
_BRACKET_BOX = re.compile(
    rf"[\[(]\s*({_NUM}){_SEP}({_NUM}){_SEP}({_NUM}){_SEP}({_NUM})\s*,?\s*[\])]"
)
# A value that is no finite number, as a model writes it in text ("nan", "-inf", "Infinity").
_NOT_FINITE_WORD = r"[-+]?\b(?:nan|inf(?:inity)?)\b"
_NUM_OR_NOT_FINITE = rf"(?:{_NUM}|{_NOT_FINITE_WORD})"
# A bracketed group of 4 that :data:`_BRACKET_BOX` would read but for such a value: a box
# the model wrote that is no box. Noted, never read (so no read moves).
_NOT_FINITE_BOX = re.compile(
    rf"[\[(]\s*{_NUM_OR_NOT_FINITE}{_SEP}{_NUM_OR_NOT_FINITE}{_SEP}{_NUM_OR_NOT_FINITE}{_SEP}"
    rf"{_NUM_OR_NOT_FINITE}\s*,?\s*[\])]",
    re.IGNORECASE,
)
_NOT_FINITE_TOKEN = re.compile(_NOT_FINITE_WORD, re.IGNORECASE)
_QWEN2_BOX = re.compile(
    rf"<\|box_start\|>\s*"
    rf"\(\s*(?P<a>{_NUM})\s*,\s*(?P<b>{_NUM})\s*\)\s*,?\s*\(\s*(?P<c>{_NUM})\s*,\s*(?P<d>{_NUM})\s*\)"
    rf"\s*<\|box_end\|>"
)
_QWEN2_REF = re.compile(r"<\|object_ref_start\|>([^<]*)<\|object_ref_end\|>")
_OPEN_BOX_AT_END = re.compile(rf"[\[(]\s*{_NUM}[^\])]*$")
_LABEL_COLON = re.compile(r"\S\s*[*_`]*\s*:[*_`\s]*$")


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
    for line in _with_number_groups_on_one_line(text).splitlines():
        label, hint = "", "bare"
        previous_end = 0
        for match in _BRACKET_BOX.finditer(line):
            before = line[previous_end : match.start()]
            between = _clean_label(before)
            if between:
                label = between  # else a second box on the line shares the first's label
                # The protocol's "label: [ymin, xmin, ymax, xmax]": a colon ends the label.
                labelled = _LABEL_COLON.search(before) is not None
                hint = "labelled_line" if labelled else "bare"
            numbers = [_number_token(token) for token in match.groups()]
            extraction.candidates.append(_Candidate(label, numbers, hint))
            previous_end = match.end()
        extraction.not_finite += [
            " ".join(match.group().split())
            for match in _NOT_FINITE_BOX.finditer(line)
            if _NOT_FINITE_TOKEN.search(match.group())
        ]
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


def _without_prose_repeats(candidates: list[_Candidate]) -> tuple[list[_Candidate], int]:
    """The candidates less prose quoting again a box read earlier from a labelled line."""
    labelled: set[tuple[float, ...]] = set()
    kept: list[_Candidate] = []
    for candidate in candidates:
        numbers = tuple(candidate.numbers)
        if candidate.hint == "labelled_line":
            labelled.add(numbers)
        elif candidate.hint == "bare" and numbers in labelled:
            continue  # "The box [..] covers the lesion." after "lesion: [..]"
        kept.append(candidate)
    return kept, len(candidates) - len(kept)


def _says_no_target(text: str) -> bool:
    return bool(_NO_TARGET_PATTERN.search(text))


#: The conventions a prompt on record can fix for bare lists (the toolkit's default prompt
#: and the presets' prompts, ``novabench.run.prompts.PROMPT_BOX_CONVENTIONS``).
PROMPT_CONVENTIONS: tuple[str, ...] = ("protocol", "xyxy_norm1000", "qwen", "xyxy_norm1")


# How an answer wrote boxes whose numbers fix no order, as a reason names them.
_UNORDERED_FORMS: dict[str, str] = {
    "generic_key": "a generic box key",
    "labelled_line": "labelled lines (label: [a, b, c, d])",
}


@dataclass(frozen=True)
class _Resolution:
    convention: str | None
    reason: str = ""
    # For an ambiguous answer: the explicit conventions that would read it.
    readable_with: tuple[str, ...] = ()


def _resolve_auto(candidates: list[_Candidate], prompt_convention: str | None) -> _Resolution:
    """Pick a convention from evidence that fixes the order, or explain why not."""
    hints = {c.hint for c in candidates}
    if hints == {"labelled_line", "bare"}:
        hints = {"labelled_line"}  # "lesion: [..], [..]" or a few unlabelled lines among them
    decimals = any(c.decimals for c in candidates)
    values = [v for c in candidates for v in c.numbers]
    finite = [v for v in values if math.isfinite(v)]
    top = max(finite) if finite else 0.0
    fraction = bool(finite) and decimals and all(0.0 <= v <= 1.0 for v in finite)
    zero_one = top <= 1.0 and not decimals
    per_mille = ("protocol", "xyxy_norm1000")
    if len(hints) > 1:
        return _Resolution(None, f"boxes written in several forms ({', '.join(sorted(hints))})")
    hint = hints.pop()
    if hint == "qwen":
        # bbox_2d is x-first; Qwen2.5-VL writes pixels, Qwen2-VL/Qwen3-VL 0..1000: a prompt
        # on record that asked for bbox_2d in 0..1000 says which.
        if prompt_convention == "xyxy_norm1000":
            if top <= 1000.0 and not fraction:
                return _Resolution("xyxy_norm1000")
            return _Resolution(
                None,
                f"bbox_2d values {'in 0..1' if fraction else f'up to {top:g}'}, but the "
                "run's prompt asked for 0..1000",
                ("qwen",),
            )
        return _Resolution("qwen")
    if hint == "yxyx1000":
        if prompt_convention in _PIXEL_CONVENTIONS:
            return _Resolution(
                None, _box_2d_in_pixels(f"the run's prompt asked for {prompt_convention}")
            )
        # The key fixes the order (y first); the scale is Gemini's 0..1000 unless the
        # prompt asked for 0..1 fractions, or the values are fractions, which 0..1000 units
        # would make a box smaller than a pixel in the image's corner.
        within_one = bool(finite) and all(0.0 <= v <= 1.0 for v in finite)
        if prompt_convention == "xyxy_norm1":
            if within_one:
                return _Resolution("yxyx_norm1")  # the prompt's scale, the key's order
            return _Resolution(
                None,
                f"box_2d values up to {top:g}, but the run's prompt asked for 0..1 "
                "fractions: Gemini's 0..1000 units or pixels cannot be told apart",
                ("protocol",),
            )
        in_fractions = sum(_fraction_box(c) for c in candidates)
        if in_fractions and not fraction:
            # Fractions beside larger values: read as 0..1000, such a box would sit in the
            # image's corner, smaller than a pixel; no single scale reads both.
            return _Resolution(
                None,
                f"box_2d values in 0..1 in {in_fractions} of {len(candidates)} boxes and up to "
                f"{top:g} in the others: 0..1 fractions and Gemini's 0..1000 units in one "
                "answer",
            )
        if fraction:
            return _Resolution(
                None,
                "box_2d values in 0..1, but box_2d is Gemini's 0..1000 form"
                + (
                    f" and the run's prompt asked for {prompt_convention}"
                    if prompt_convention is not None
                    else ""
                )
                + ": y-first fractions are read only when chosen",
                ("yxyx_norm1",),
            )
        return _Resolution("protocol")
    if hint == "qwen2_tokens":
        return _Resolution("xyxy_norm1000")
    if hint == "xywh_named":
        if top > 1.0:
            return _Resolution("xywh_pixel")
        return _Resolution(None, "x/y/width/height keys with values all in [0, 1]: unknown scale")
    if hint == "xyxy_named":
        if fraction:
            return _Resolution("xyxy_norm1")
        return _Resolution(
            None,
            f"named corners with values up to {top:g}: pixels or 0..1000 units",
            ("xyxy_pixel",) if top > 1000.0 else ("xyxy_norm1000", "xyxy_pixel"),
        )
    if zero_one:
        return _Resolution(
            None, "every value is 0 or 1: 0..1 fractions or 0..1000 units cannot be told apart"
        )
    if hint == "labelled_line" and prompt_convention is None:
        # No prompt on record: lines in the protocol's form are read in its order, y first in
        # 0..1000. A prompt on record decides them as it decides bare lists (below): a custom
        # prompt may ask x first in the very same form.
        if fraction:
            return _Resolution(
                None,
                "values in 0..1 in the protocol's [ymin, xmin, ymax, xmax] lines, which ask "
                "for 0..1000 units: y-first fractions are read only when chosen",
                ("yxyx_norm1",),
            )
        if top <= 1000.0:
            return _Resolution("protocol")
        return _Resolution(
            None,
            f"values up to {top:g} exceed 1000, so they are not the protocol's 0..1000 units",
            ("xyxy_pixel",),
        )
    # Bare lists (or a generic key such as "bbox", or labelled lines under a prompt on
    # record): the numbers carry no order of their own; the prompt's order reads them.
    custom = prompt_convention == CUSTOM_PROMPT
    if custom:
        prompt_convention = None  # on record, but the user's own: its order is unknown
    written_as = _UNORDERED_FORMS.get(hint, "bare lists")
    if fraction:
        readable: tuple[str, ...] = ("xyxy_norm1", "yxyx_norm1")
        if prompt_convention == "protocol":  # the prompt asked y-first, in other units
            readable = ("yxyx_norm1",)
        elif prompt_convention is not None:
            readable = ("xyxy_norm1",)
    elif top > 1000.0:
        readable = ("xyxy_pixel",)
    else:
        readable = per_mille
    if prompt_convention is not None:
        if prompt_convention == "xyxy_norm1":
            if fraction:
                return _Resolution("xyxy_norm1")
        elif prompt_convention == "qwen":  # pixels: any value above 1 may be one
            if not fraction:
                return _Resolution("qwen")
        elif not fraction and top <= 1000.0:
            return _Resolution(prompt_convention)
        return _Resolution(
            None,
            f"{written_as} with values {'in 0..1' if fraction else f'up to {top:g}'}, "
            f"but the run's prompt asked for {prompt_convention}",
            readable,
        )
    if custom:
        return _Resolution(
            None,
            f"{written_as} (values up to {top:g}) fix no coordinate order, and the run's "
            "prompt is its own (--prompt-file), whose order the toolkit does not know",
            readable,
        )
    return _Resolution(
        None,
        f"{'a generic box key' if hint == 'generic_key' else 'bare 4-number lists'} "
        f"(values up to {top:g}) fix no coordinate order and no prompt on record does",
        readable,
    )


def _fraction_box(candidate: _Candidate) -> bool:
    """A box written as 0..1 fractions: decimals, every value within [0, 1]."""
    return candidate.decimals and all(
        math.isfinite(v) and 0.0 <= v <= 1.0 for v in candidate.numbers
    )


def _box_2d_in_pixels(pixels_from: str) -> str:
    """Why a ``box_2d`` answer is not read where ``pixels_from`` says pixels."""
    return (
        f"box_2d keys are Gemini's form, y first in 0..1000 of the image, but {pixels_from} "
        "pixels: the key fixes the order, and nothing in the answer says whether its "
        "numbers are Gemini's 0..1000 units or pixels"
    )


# What each explicit convention reads: the order of the four numbers and their scale.
_CONVENTION_READING: dict[str, tuple[str, str]] = {
    "protocol": ("yxyx", "per_mille"),
    "qwen": ("xyxy", "pixels"),
    "xyxy_norm1": ("xyxy", "fraction"),
    "xyxy_norm1000": ("xyxy", "per_mille"),
    "xyxy_pixel": ("xyxy", "pixels"),
    "xywh_pixel": ("xywh", "pixels"),
    "yxyx_norm1": ("yxyx", "fraction"),
}
# Conventions in pixels of the image the model saw (the scale box_2d's own form contradicts).
_PIXEL_CONVENTIONS = frozenset(
    name for name, (_, scale) in _CONVENTION_READING.items() if scale == "pixels"
)
# The order an answer's own keys (or Qwen2-VL's point tokens) fix, whatever the convention,
# and how a note names them. Labelled lines, bare lists and generic keys fix none.
_KEYED_ORDER: dict[str, tuple[str, str]] = {
    "xywh_named": ("xywh", "x/y/width/height keys"),
    "xyxy_named": ("xyxy", "named corner keys (x1/y1/x2/y2 and the like)"),
    "qwen": ("xyxy", "bbox_2d keys"),
    "yxyx1000": ("yxyx", "box_2d keys"),
    "qwen2_tokens": ("xyxy", "Qwen2-VL (x1,y1),(x2,y2) box tokens"),
}
_ORDER_WORDS = {
    "xyxy": "[x1, y1, x2, y2]",
    "yxyx": "[ymin, xmin, ymax, xmax]",
    "xywh": "[x, y, width, height]",
}
_SCALE_WORDS = {
    "per_mille": "0..1000 units",
    "fraction": "0..1 fractions",
    "pixels": "pixels of the image the model saw",
}


def _to_pixel_corners(
    numbers: list[float],
    order: str,
    scale: str,
    width: float,
    height: float,
    input_width: float,
    input_height: float,
) -> tuple[float, float, float, float]:
    a, b, c, d = numbers
    if order == "yxyx":
        a, b, c, d = b, a, d, c
    elif order == "xywh":
        c, d = a + c, b + d
    if scale == "per_mille":
        return a * width / 1000.0, b * height / 1000.0, c * width / 1000.0, d * height / 1000.0
    if scale == "fraction":
        return a * width, b * height, c * width, d * height
    scale_x, scale_y = width / input_width, height / input_height
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
    prompt_convention: str | None = None,
) -> ParsedBoxes:
    """Read the boxes of one localisation answer, in pixels of the original image.

    Never raises on the answer: empty text, ``None``, prose, code fences, JSON
    with comments, trailing commas or single quotes, JSON cut off mid-list,
    ``{"found": false, "boxes": []}``, "no target" variants, ``<think>`` reasoning
    blocks (removed first; see the module docstring), labels holding
    colons or brackets, runaway lists (all boxes kept; the metric keeps 100),
    values outside the image (kept as given, counted), swapped corners
    (reordered, counted) and zero-area boxes or boxes too large for a float
    (dropped, counted; ``"invalid_boxes"`` when no box is left) all give a
    :class:`ParsedBoxes` with a status. Once a JSON answer has been read, text
    after it (prose quoting a box again, or another box) adds no boxes; a note counts them.
    So does prose quoting again a box of the protocol's labelled lines. Of several JSON
    answers, the last complete one is scored, unless they are a numbered list of separate
    lesions ("Lesion 1: {...} Lesion 2: {...}"), whose boxes are all scored (not one box
    revised, nor alternative places: see the module docstring).

    Args:
        text: the raw answer (str; bytes, None or an already-decoded JSON
            list/dict are accepted too).
        image_size: ``(width, height)`` of the original image.
        input_size: ``(width, height)`` of the image the model was given, when
            its processor resized it; used by the pixel conventions.
        convention: one of :data:`CONVENTIONS`; see the module docstring. It reads
            what the answer leaves open: an answer whose keys fix the order (``x``/``y``/
            ``width``/``height``, ``x1``/``y1``/..., ``bbox_2d``, ``box_2d``) is read in
            that order, in the convention's scale (``"ok_order_from_keys"`` when the
            convention's own order differs).
        prompt_convention: under ``convention="auto"``, the convention the run's
            prompt asked for (one of :data:`PROMPT_CONVENTIONS`, as
            ``novabench.run.prompts.prompt_box_convention`` tells from the
            manifest); it decides the order of bare 4-number lists and labelled
            lines. ``CUSTOM_PROMPT`` (``"custom"``): the run's prompt is on record but
            is the user's own, so neither is read. None (nothing on record): bare lists
            are ``"ambiguous_convention"``, labelled lines read in the protocol's order.

    Returns:
        The parsed boxes with a status from :data:`LOCALIZATION_STATUSES` (never
        ``"ok_out_of_image"``, which is given after parsing).

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
        >>> bare = parse_localization('{"boxes": [[100, 200, 300, 400]]}', image_size=(480, 480))
        >>> bare.status, bare.readable_with
        ('ambiguous_convention', ('protocol', 'xyxy_norm1000'))
        >>> parse_localization('{"boxes": [[100, 200, 300, 400]]}', image_size=(480, 480),
        ...                    prompt_convention="protocol").boxes
        [[96.0, 48.0, 96.0, 96.0]]
        >>> keyed = parse_localization('{"x": 100, "y": 50, "width": 200, "height": 100}',
        ...                            image_size=(480, 480), convention="protocol")
        >>> keyed.status, keyed.boxes
        ('ok_order_from_keys', [[48.0, 24.0, 96.0, 48.0]])
        >>> custom = parse_localization("mass: [100, 200, 300, 400]", image_size=(480, 480),
        ...                             prompt_convention="custom")
        >>> custom.status, custom.readable_with
        ('ambiguous_convention', ('protocol', 'xyxy_norm1000'))
        >>> repeated = parse_localization("mass: [100, 200, 300, 400]\\nThe box [100, 200, 300, "
        ...                               "400] is the mass.", image_size=(480, 480))
        >>> repeated.boxes, repeated.notes
        ([[96.0, 48.0, 96.0, 96.0]], ('1 box(es) quoted again in prose after the labelled lines not counted',))
    """
    if convention not in CONVENTIONS:
        raise NovaInputError(
            f"convention={convention!r}: unknown box convention; choose one of "
            f"{', '.join(CONVENTIONS)}",
            field="convention",
        )
    if prompt_convention is not None and prompt_convention not in (
        *PROMPT_CONVENTIONS,
        CUSTOM_PROMPT,
    ):
        raise NovaInputError(
            f"unknown prompt convention {prompt_convention!r}; expected one of "
            f"{', '.join((*PROMPT_CONVENTIONS, CUSTOM_PROMPT))}",
            field="prompt_convention",
        )
    width, height = _validate_size(image_size, "image_size")
    if input_size is not None:
        input_width, input_height = _validate_size(input_size, "input_size")
    else:
        input_width, input_height = width, height
    try:
        return _parse_localization(
            text,
            width,
            height,
            input_width,
            input_height,
            input_size is not None,
            convention,
            prompt_convention,
        )
    except Exception as exc:  # the contract: a status, never an exception
        return ParsedBoxes(status="unparseable", error=f"internal parser error: {exc!r}")


def _is_structured(value: Any) -> bool:
    """A JSON object or a list of boxes or objects (or ``[]``): an answer, not a quoted box."""
    if isinstance(value, dict):
        return True
    if not isinstance(value, list):
        return False
    return not value or any(isinstance(item, (list, dict)) for item in value)


@dataclass
class _JsonAnswer:
    """One JSON answer: a structure holding boxes (or saying none) and those right after it.

    Structures with only spaces or commas between them (one JSON object per line) are one
    answer.
    """

    extraction: _Extraction
    block: int  # which source: a fenced block's contents, or the whole text
    offset: int  # where that source starts in the text
    source: str
    start: int  # in ``source``
    end: int
    complete: bool = True


@dataclass
class _JsonReading:
    """What :func:`_read_json` found: the answer scored and what is written outside it."""

    text: str | None = None  # the scored answer's text (None: no JSON answer)
    outside: list[list[float]] = field(default_factory=list)  # boxes after the first answer
    set_aside: list[_JsonAnswer] = field(default_factory=list)  # JSON answers not scored
    listed: int = 0  # JSON answers scored together as one per lesion (0: one answer)


def _read_json(text: str, extraction: _Extraction) -> _JsonReading:
    """Walk the answer's JSON answers; the last complete one is scored, into ``extraction``.

    With code fences, each fenced block holding a JSON answer is one ("Corrected:" and a
    second block); without, each structured JSON value that is not right after the previous
    one. The last complete answer is the model's final one; a cut-off answer is scored
    only when no complete one precedes it. Boxes written after the first answer outside
    any answer (prose) are returned, to be noted: never scored.
    """
    spans = _fenced_spans(text)
    sources = [(start, text[start:end]) for start, end in spans] or [(0, text)]
    found = [list(_json_spans(source)) for _, source in sources]
    if spans and not any(found):
        sources, found = [(0, text)], [list(_json_spans(text))]
    pending = _Extraction()  # boxes before the first answer join it, as they always did
    answers: list[_JsonAnswer] = []
    for block, ((offset, source), structures) in enumerate(zip(sources, found)):
        for value, complete, start, end in structures:
            last = answers[-1] if answers else None
            if last is not None and last.block == block:
                if not source[last.end : start].strip(" \t\r\n,;"):
                    _walk_into(value, complete, last.extraction)
                    last.end, last.complete = end, last.complete and complete
                    continue
            target = pending if last is None else _Extraction()
            before = len(target.candidates)
            _walk_into(value, complete, target)
            answered = (
                len(target.candidates) > before
                or target.explicit_empty
                or target.said_not_found
                or bool(target.not_boxes)
            )
            if answered and _is_structured(value):
                answers.append(_JsonAnswer(target, block, offset, source, start, end, complete))
                pending = _Extraction()
    if not answers:
        _copy_extraction(pending, extraction)
        return _JsonReading()
    complete_answers = [answer for answer in answers if answer.complete]
    scored = complete_answers[-1] if complete_answers else answers[-1]
    first = answers[0]
    listed = _one_answer_per_lesion(text, complete_answers)
    if listed:
        # "Lesion 1: {...} Lesion 2: {...}": separate lesions, each its own object: all
        # scored, from the first one's text (with the prose before it) to the last one's.
        for answer in listed:
            extraction.candidates.extend(answer.extraction.candidates)
            extraction.not_boxes.extend(answer.extraction.not_boxes)
        last = listed[-1]
        scored_text = text[first.offset : last.offset + last.end]
        set_aside = [answer for answer in answers if answer not in listed]
    else:
        _copy_extraction(scored.extraction, extraction)
        # The first answer is read with the prose before it (labels), a later one alone.
        start = 0 if scored is first else scored.start
        scored_text = scored.source[start : scored.end]
        set_aside = [answer for answer in answers if answer is not scored]
    after = _Extraction()
    _line_candidates(_without_fences(text[first.offset + first.end :]), after)
    # A later answer's own boxes are no prose: taken out once each (a Counter keeps a
    # runaway answer linear).
    answers_boxes = Counter(
        tuple(candidate.numbers)
        for answer in answers[1:]
        for candidate in answer.extraction.candidates
    )
    outside = []
    for candidate in after.candidates:
        if answers_boxes[tuple(candidate.numbers)] > 0:
            answers_boxes[tuple(candidate.numbers)] -= 1
        else:
            outside.append(candidate.numbers)
    return _JsonReading(scored_text, outside, set_aside, len(listed))


# Words that make a later JSON answer the model's final one: it restates or corrects the
# answers before it, so it alone is scored (whatever it holds).
_FINAL_ANSWER_WORDS = re.compile(
    r"\b(?:final|correct(?:ed|ion)?|revis(?:ed|ion)|updated?|actually|instead|wait|"
    r"second\s+(?:look|thought)|re-?check(?:ed|ing)?|reconsider(?:ed|ing)?|summary|"
    r"summari[sz]e|in\s+total|altogether|combined|together|overall|all\s+(?:the\s+)?"
    r"(?:boxes|lesions|findings|regions))\b",
    re.IGNORECASE,
)
# Words that make a numbered item's label ("2. <label>:") a hedge between places for one
# answer: a likelihood, guess, hypothesis, candidate, option, estimate or alternative ("1.
# Most likely location", "2) Alternative location", "2. Second guess", "1. Candidate A",
# "2. Refined estimate"). They make alternatives only in a label that names no lesion (see
# :data:`_LESION_LABEL`): "1. Right frontal lesion (likely GBM)" hedges a diagnosis. "possible",
# "or" and "estimated" are not among them: "1. Lesion in the left lobe, possibly a
# metastasis" or "..., estimated" still names a lesion.
_ALTERNATIVE_LABEL = re.compile(
    r"\b(?:(?:un)?likel(?:y|ihood)|probab\w*|guess\w*|hypothes[ie]s|candidates?|"
    r"options?|choices?|estimates?|alternativ\w*)\b",
    re.IGNORECASE,
)
# Words that make a numbered label a revision of one box, lesion word or not: "2. Refined
# estimate", "2. Lesion (second read, after zooming)", "2. Revised box".
_REVISION_LABEL = re.compile(
    r"\b(?:revis\w*|refin\w*|attempts?|"
    r"(?:first|second|third|initial|final|new|another)\s+(?:read(?:ing)?|look|pass|try))\b",
    re.IGNORECASE,
)
# Words that make a numbered label name a lesion-like thing or a place in the brain: such a
# label is a separate lesion whatever hedge it carries ("2. Likely satellite lesion", "2.
# Surrounding region, likely oedema", "1. Candidate lesion (right frontal)"). "location"
# alone is no lesion ("1. Most likely location" is a hedge).
_LESION_LABEL = re.compile(
    r"\b(?:lesions?|mass(?:es)?|nodules?|nodular|foc(?:us|i)|regions?|areas?|components?|"
    r"o?edema(?:tous)?|cores?|cysts?|cystic|tumou?rs?|enhancements?|enhancing|"
    r"abnormalit(?:y|ies)|findings?|metastas[ie]s|hyperintensit(?:y|ies)|"
    r"hypointensit(?:y|ies)|left|right|bilateral|midline|frontal|parietal|temporal|"
    r"occipital|insular?|cerebellar|cerebellum|thalamic|thalamus|brainstem|pontine|pons|"
    r"medulla(?:ry)?|midbrain|callos(?:al|um)|periventricular|juxtacortical|cortical|"
    r"subcortical|basal\s+ganglia|ventricles?|ventricular|hemispheres?|hemispheric|lobes?)\b",
    re.IGNORECASE,
)
# Text between two numbered items that opens with a connector of alternatives: "or, if the
# signal is flow-related," before "Lesion 2".
_ALTERNATIVE_CONNECTOR = re.compile(
    r"^[\s*_>-]*(?:or|alternatively|otherwise|else|if\s+not)\b", re.IGNORECASE
)
# The label that opens one item of an enumeration, at the end of the text before an
# answer: "Lesion 2:", "**Finding 2** (left):", "2. Right parietal lesion:", "- Lesion #2 -".
_ENUMERATED_ITEM = re.compile(
    r"(?:^|\n)[ \t>]*(?:[-*\u2022+][ \t]+)?[*_`]*[ \t]*(?:"
    r"(?:lesion|finding|region|abnormality|anomaly|object|box|area|target|mass|nodule|focus|"
    r"site|roi)s?[ \t]*(?:#|no\.?|number)?[ \t]*(?P<named>\d{1,2})\b"
    r"|(?P<numbered>\d{1,2})[.)][ \t](?P<label>[^\n{}\[\]]*)"
    r")[^\n{}\[\]]*$",
    re.IGNORECASE,
)


def _one_answer_per_lesion(text: str, answers: list[_JsonAnswer]) -> list[_JsonAnswer]:
    """The JSON answers that are one enumerated list of separate lesions, else ``[]``.

    A model that gives one object per lesion, each after its own label ("Lesion 1: {...}
    Lesion 2: {...}"), answers with all of them; one that restates, corrects or hedges its
    answer answers with the last one. The labels decide: at least two complete answers,
    each after a label numbering it 1, 2, 3... in order, each with boxes of its own (no box
    repeated), no word of a final, corrected or summed-up answer between them (see
    :data:`_FINAL_ANSWER_WORDS`), none opened by a connector of alternatives ("or, if ...":
    :data:`_ALTERNATIVE_CONNECTOR`), and no numbered label that revises a box or is a pure
    hedge naming no lesion (:func:`_is_alternative_label`: "2. Second guess", "2) Less likely
    location"; "2. Likely satellite lesion" is a lesion). A "Lesion N" label (or "Finding N", "Region N"...) names a lesion whatever
    its description says ("Lesion 2 (possible satellite lesion)"), and boxes that overlap
    are two boxes the model chose to give (a tumour core and its oedema). Then every box is
    scored; anything else keeps the rule of the last complete answer.
    """
    if len(answers) < 2:
        return []
    seen: set[tuple[float, ...]] = set()
    previous_end = 0
    for number, answer in enumerate(answers, start=1):
        before = _without_fences(text[previous_end : answer.offset + answer.start])
        previous_end = answer.offset + answer.end
        # The preamble's words are not read: "Here are the lesions, or what may be ..."
        between = before if number > 1 else ""
        if _FINAL_ANSWER_WORDS.search(between):
            return []
        stripped = before.rstrip(" \t\r\n")
        label = _ENUMERATED_ITEM.search(stripped)
        if label is None or int(label["named"] or label["numbered"]) != number:
            return []
        if number > 1 and _ALTERNATIVE_CONNECTOR.search(stripped[: label.start()]):
            return []  # "or, if the signal is flow-related," then "Lesion 2:"
        if label["label"] is not None and _is_alternative_label(label["label"]):
            return []  # "2. Refined estimate:", "2) Less likely location:"
        boxes = {tuple(candidate.numbers) for candidate in answer.extraction.candidates}
        if not boxes or boxes & seen:  # a box again: a restatement, not another lesion
            return []
        seen |= boxes
    return answers


def _is_alternative_label(label: str) -> bool:
    """Whether a numbered item's label offers another place or a revision, not a lesion.

    A revision ("refined", "second read") is one; a hedge ("likely", "guess", "option"...)
    only in a label that names no lesion-like thing or place (:data:`_LESION_LABEL`).

    >>> _is_alternative_label("Less likely location")
    True
    >>> _is_alternative_label("Left parietal lesion (likely metastasis)")
    False
    >>> _is_alternative_label("Lesion (second read, after zooming)")
    True
    """
    if _REVISION_LABEL.search(label):
        return True
    return bool(_ALTERNATIVE_LABEL.search(label)) and not _LESION_LABEL.search(label)


def _walk_into(value: Any, complete: bool, extraction: _Extraction) -> None:
    explicit_empty = extraction.explicit_empty
    _walk(value, extraction, "")
    if not complete:
        extraction.truncated = True
        # "[" cut off before its first item is not an empty answer.
        extraction.explicit_empty = explicit_empty


def _copy_extraction(source: _Extraction, target: _Extraction) -> None:
    target.candidates = source.candidates
    target.truncated = source.truncated
    target.said_not_found = source.said_not_found
    target.explicit_empty = source.explicit_empty
    target.not_boxes = source.not_boxes


def _parse_localization(
    raw: Any,
    width: float,
    height: float,
    input_width: float,
    input_height: float,
    has_input_size: bool,
    convention: str,
    prompt_convention: str | None,
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
    text, folded = _with_ascii_punctuation(text)
    if folded:
        notes.append("fullwidth characters read as their ASCII forms")
    if not text.strip():
        error = reasoning.empty_error() if reasoning.removed else "no answer text"
        return ParsedBoxes(status="empty", error=error, notes=tuple(notes))
    if _is_null_literal(text):
        return ParsedBoxes(
            status="empty", error=f"answer is the null literal {text.strip()!r}", notes=tuple(notes)
        )

    extraction = _Extraction()
    reading = _read_json(text, extraction)
    answer_text = reading.text
    not_boxes = extraction.not_boxes
    if not any(c.from_json_object for c in extraction.candidates):
        # No boxes inside JSON objects: read labelled lines instead, which keeps
        # labels such as "lesion [left]" that a JSON reader would split. After a
        # structured answer ("[[...]]" or an empty box list) only its own text is read.
        json_truncated = extraction.truncated
        extraction = _Extraction(
            said_not_found=extraction.said_not_found,
            explicit_empty=extraction.explicit_empty,
            not_boxes=not_boxes,
        )
        _line_candidates(_without_fences(answer_text or text), extraction)
        extraction.candidates, repeated = _without_prose_repeats(extraction.candidates)
        if repeated:
            notes.append(
                f"{repeated} box(es) quoted again in prose after the labelled lines not counted"
            )
        extraction.truncated = extraction.truncated or (
            json_truncated and bool(extraction.candidates)
        )
    notes.extend(_not_scored_notes(reading, extraction.candidates))
    not_finite = extraction.not_finite  # said in a note, or counted with the dropped boxes
    if not_boxes:
        notes.append(
            f"{len(not_boxes)} entr{'y' if len(not_boxes) == 1 else 'ies'} of a box list "
            f"not 4 numbers ({', '.join(not_boxes[:3])}): not read"
        )

    candidates = extraction.candidates
    if not candidates:
        if not_finite:
            notes.append(_not_finite_note(not_finite))
        # Whatever the answer is read as, a box it wrote with such a value is a dropped box,
        # counted as every other (user31: "no target [nan, 1, 2, 3]" counted none).
        dropped_here = len(not_finite)
        why_here = {_NOT_FINITE: dropped_here} if dropped_here else {}
        if not_boxes and not extraction.truncated:
            return ParsedBoxes(
                status="unparseable",
                notes=tuple(notes),
                n_degenerate_dropped=dropped_here,
                dropped_why=why_here,
                error=f"the box list holds {not_boxes[0]} where a box of 4 numbers "
                "was expected, and no box",
            )
        if extraction.said_not_found or extraction.explicit_empty or _says_no_target(text):
            return ParsedBoxes(
                status="no_target",
                notes=tuple(notes),
                n_degenerate_dropped=dropped_here,
                dropped_why=why_here,
            )
        if extraction.truncated:
            return ParsedBoxes(
                status="unparseable",
                notes=tuple(notes),
                n_degenerate_dropped=dropped_here,
                dropped_why=why_here,
                error="answer cut off before the first complete box",
            )
        if is_refusal(text):  # "I cannot help with this" declines; it is not "no target"
            shown = " ".join(text.split())
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            return ParsedBoxes(
                status="refusal",
                notes=tuple(notes),
                n_degenerate_dropped=dropped_here,
                dropped_why=why_here,
                error=f"the model declined to localise: {shown!r}",
            )
        if not_finite:  # a box was written, with a value no box can have: not "no box"
            return ParsedBoxes(
                status=INVALID_BOXES,
                notes=tuple(notes),
                n_degenerate_dropped=dropped_here,
                dropped_why=why_here,
                error=_not_finite_error(not_finite),
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

    # Read boxes with a value no box can have: dropped under every convention.
    never_boxes = [c for c in candidates if not all(math.isfinite(v) for v in c.numbers)]
    # Not read if the convention stays open: said in a note then, as dropped boxes are.
    unread_not_finite = not_finite + [_shown_numbers(c.numbers) for c in never_boxes]
    used = convention
    # Every box has such a value: no convention reads one, so auto asks for none; they are
    # dropped below as under an explicit convention (invalid_boxes), which none is said to be.
    no_convention_used = convention == "auto" and len(never_boxes) == len(candidates)
    if no_convention_used:
        used = "protocol"  # only to run the reading below, which converts no box
    elif convention == "auto":
        resolution = _resolve_auto(candidates, prompt_convention)
        if resolution.convention is None:
            if unread_not_finite:  # read under any convention, these would be dropped
                notes.append(_not_finite_note(unread_not_finite))
            n_finite = len(candidates) - len(never_boxes)
            return ParsedBoxes(
                status="ambiguous_convention",
                notes=tuple(notes),
                error=f"{n_finite} box(es) found but the convention is ambiguous: "
                f"{resolution.reason}; pass convention= explicitly",
                readable_with=resolution.readable_with,
            )
        used = resolution.convention
    # Boxes written in text with a value no number reader takes ("[nan, 1, 2, 3]") were
    # never candidates: dropped all the same, and counted as the JSON form's are.
    written = len(candidates) + len(not_finite)
    dropped: dict[str, int] = {_NOT_FINITE: len(not_finite)} if not_finite else {}
    # Every box dropped for such a value, as written in text or as read (JSON, 1e400).
    not_finite_shown = list(not_finite)
    if used in _PIXEL_CONVENTIONS and any(c.hint == "yxyx1000" for c in candidates):
        # Its key says y first in 0..1000 (Gemini's form), the convention pixels: no guess.
        readable = [c for c in candidates if c.hint != "yxyx1000"]
        if not readable:
            if unread_not_finite:
                notes.append(_not_finite_note(unread_not_finite))
            return ParsedBoxes(
                status="ambiguous_convention",
                notes=tuple(notes),
                error=f"{len(candidates)} box(es) found but the convention is ambiguous: "
                f"{_box_2d_in_pixels(f'convention={used} reads')}",
            )
        # The boxes whose own keys leave no doubt are read; the others go, as dropped boxes.
        dropped[_BOX_2D_UNDER_PIXELS] = len(candidates) - len(readable)
        candidates = readable
    if used in {"qwen"} and not has_input_size:
        notes.append("input_size not given: assumed the model saw the original image size")

    boxes: list[list[float]] = []
    labels: list[str] = []
    n_out = n_swapped = 0
    convention_order, scale = _CONVENTION_READING[used]
    # What the answer's keys fix wins over the convention, which then gives the scale only.
    keyed_over: dict[str, int] = {}
    for candidate in candidates:
        order = convention_order
        keyed = _KEYED_ORDER.get(candidate.hint)
        if keyed is not None and keyed[0] != order:
            order = keyed[0]
            keyed_over[candidate.hint] = keyed_over.get(candidate.hint, 0) + 1
        x1, y1, x2, y2 = _to_pixel_corners(
            candidate.numbers, order, scale, width, height, input_width, input_height
        )
        if not all(math.isfinite(v) for v in (x1, y1, x2, y2)):
            dropped[_NOT_FINITE] = dropped.get(_NOT_FINITE, 0) + 1
            not_finite_shown.append(_shown_numbers(candidate.numbers))
            continue
        if x1 > x2 or y1 > y2:
            n_swapped += 1
            x1, x2 = min(x1, x2), max(x1, x2)
            y1, y2 = min(y1, y2), max(y1, y2)
        box_width, box_height = x2 - x1, y2 - y1
        # A size or an area past the largest float (corners near 1e308) is no box either:
        # kept, it would overflow in every IoU.
        if not (box_width > 0.0 and box_height > 0.0 and math.isfinite(box_width * box_height)):
            why = _ZERO_SIZE if box_width == 0.0 or box_height == 0.0 else _PAST_A_FLOAT
            dropped[why] = dropped.get(why, 0) + 1
            continue
        # Kept as given (the co-authors' harness scores boxes unclipped), counted.
        n_out += not box_inside_image([x1, y1, box_width, box_height], (width, height))
        boxes.append([x1, y1, box_width, box_height])
        labels.append(candidate.label)
    n_degenerate = sum(dropped.values())
    if n_swapped:
        notes.append(
            f"{n_swapped} box(es) with corners in the wrong order (x1 > x2 or y1 > y2) put right"
        )
    for hint, n in keyed_over.items():
        order, keys = _KEYED_ORDER[hint]
        notes.append(
            f"{n} box(es) with {keys} read in the order they fix, {_ORDER_WORDS[order]}, not "
            f"{used}'s {_ORDER_WORDS[convention_order]}; {used} gave only the scale "
            f"({_SCALE_WORDS[scale]})"
        )
    invalid = None
    if extraction.truncated and boxes:
        notes.append("answer cut off: what follows its last complete box was not read")
    status = "truncated_ok" if extraction.truncated and boxes else "ok"
    if status == "ok" and keyed_over:
        status = ORDER_FROM_KEYS
    if not boxes:  # boxes were written, none is one: a status of its own, counted per answer
        status = INVALID_BOXES
        if set(dropped) == {_NOT_FINITE}:  # said as in every form: the boxes quoted
            invalid = _not_finite_error(not_finite_shown)
            notes.append(_not_finite_note(not_finite_shown))
        else:
            invalid = "every box had zero area (or a value that is not a finite number)"
            notes.append(invalid)
    elif n_degenerate:  # some kept, some not: the answer says which went, and why
        reasons = ", ".join(f"{count} {why}" for why, count in dropped.items())
        notes.append(f"{n_degenerate} of {written} boxes dropped (not scored): {reasons}")
    return ParsedBoxes(
        boxes=boxes,
        labels=labels,
        status=status,
        convention=None if no_convention_used else used,
        n_degenerate_dropped=n_degenerate,
        dropped_why={why: n for why, n in dropped.items() if n},
        n_out_of_range=n_out,
        n_swapped=n_swapped,
        error=invalid,
        notes=tuple(notes),
        n_order_from_keys=sum(keyed_over.values()),
    )


def _shown_numbers(numbers: list[float]) -> str:
    """Four numbers as a note shows them, whole numbers without a point.

    Example:
        >>> _shown_numbers([float("nan"), 100.0, 150.5, float("inf")])
        '[nan, 100, 150.5, inf]'
    """
    return "[" + ", ".join(_shown_number(float(v)) for v in numbers) + "]"


def _shown_number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)


def _first_three(written: list[str]) -> str:
    """The first three boxes as written, then ", ..." if there are more."""
    return ", ".join(written[:3]) + (", ..." if len(written) > 3 else "")


def _not_finite_error(written: list[str]) -> str:
    """The error of an answer whose every box had a value that is not a finite number."""
    shown = _first_three(written)
    return f"every box written had a value that is not a finite number ({shown}): no box to score"


def _not_finite_note(written: list[str]) -> str:
    """The note on boxes written with a value that is not a finite number (never read)."""
    shown = _first_three(written)
    return (
        f"{len(written)} box(es) with a value that is not a finite number (NaN or infinite) "
        f"not read: {shown}"
    )


def _boxes_shown(boxes: list[list[float]]) -> str:
    shown = ", ".join(str(box) for box in boxes[:3])
    return shown + (", ..." if len(boxes) > 3 else "")


def _not_scored_notes(reading: _JsonReading, scored: list[_Candidate]) -> list[str]:
    """Notes on the boxes written but not scored: other JSON answers, prose after the answer."""
    notes: list[str] = []
    if reading.listed:
        notes.append(
            f"{reading.listed} JSON answers, one per numbered lesion (Lesion 1, Lesion 2...), "
            "scored together"
        )
    for answer in reading.set_aside:
        boxes = [candidate.numbers for candidate in answer.extraction.candidates]
        held = f"{len(boxes)} box(es){': ' + _boxes_shown(boxes) if boxes else ''}"
        if answer.complete:
            notes.append(
                f"an earlier JSON answer not counted ({held}): the last complete JSON answer "
                "is the model's final answer"
            )
        else:
            notes.append(
                f"a later JSON answer cut off before its end not counted ({held}): the last "
                "complete JSON answer is scored"
            )
    scored_boxes = {tuple(candidate.numbers) for candidate in scored}
    quotes = [box for box in reading.outside if tuple(box) in scored_boxes]
    different = [box for box in reading.outside if tuple(box) not in scored_boxes]
    if quotes:
        notes.append(f"{len(quotes)} box(es) after the JSON answer quoting it again not counted")
    if different:
        notes.append(
            f"{len(different)} different box(es) after the JSON answer not counted: "
            f"{_boxes_shown(different)}"
        )
    return notes


def _strip_json_strings(text: str) -> str:
    """Text without quoted strings, so a label like "no lesion" is not read as a statement."""
    return re.sub(r'"[^"\n]*"', '""', text)
