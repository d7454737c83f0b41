"""Input checks shared by every entry path: one rule, one message, one place.

Each check raises :class:`novabench.errors.NovaInputError` naming the source, record and
field of the bad value. Booleans are refused wherever a number is expected (``bool`` and
``numpy.bool_``): Arrow and numpy silently turn ``True`` into ``1.0``. Integers too large
for a float (a 400-digit box value) are a named error, never an ``OverflowError``.

Importing this module does not import numpy: the checks of single values work without it
(a value can only be a numpy value once numpy is imported, so numpy types are recognised
through ``sys.modules``), and the checks of box and score arrays import it when called. So
modules that must stay light (the HTTP client, the judges, the ingest manifest reader)
share these checks instead of keeping their own.

Example:
    >>> from novabench import checks
    >>> checks.positive_int(5, field="max_detections")
    5
    >>> checks.number(True, record="example 2", field="scores[0]")
    Traceback (most recent call last):
    ...
    novabench.errors.NovaInputError: example 2, field 'scores[0]': expected a real number, got bool True
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from numbers import Real
from typing import TYPE_CHECKING, Any

from novabench.errors import NovaInputError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BOX_FORMATS",
    "box_batch",
    "box_columns",
    "box_format",
    "box_inside_image",
    "box_list",
    "box_values",
    "bounded_number",
    "finite_float_option",
    "first_invalid_box",
    "image_size",
    "integer",
    "is_real_number",
    "MAX_IMAGE_SIDE",
    "nonnegative_float_option",
    "nonnegative_int_option",
    "number",
    "positive_float_option",
    "positive_int",
    "positive_int_option",
    "score_batch",
    "score_columns",
    "seed",
    "text",
]

BOX_FORMATS: tuple[str, ...] = ("xywh", "xyxy")


def _numpy() -> Any:
    """numpy when some module has imported it, else None (then no value is a numpy value)."""
    return sys.modules.get("numpy")


def _booleans() -> tuple[type[Any], ...]:
    """The boolean types: ``bool``, and ``numpy.bool_`` once numpy is loaded."""
    numpy = _numpy()
    return (bool,) if numpy is None else (bool, numpy.bool_)


def _integers() -> tuple[type[Any], ...]:
    """The integer types (booleans among them: refuse those first)."""
    numpy = _numpy()
    return (int,) if numpy is None else (int, numpy.integer)


def _sequences() -> tuple[type[Any], ...]:
    """What may hold a box or a size: a sequence, or a numpy array once numpy is loaded."""
    numpy = _numpy()
    return (Sequence,) if numpy is None else (Sequence, numpy.ndarray)


#: Largest image side (pixels) an ``input_size`` may give: far beyond any model's input,
#: small enough that sizes and box scales stay ordinary floats.
MAX_IMAGE_SIDE = 1_000_000


def _record(index: int) -> str:
    return f"example {index}"


def is_real_number(value: Any) -> bool:
    """Whether ``value`` is a real number (Python or numpy), booleans excluded.

    Example:
        >>> import numpy as np
        >>> is_real_number(3), is_real_number(np.float32(2.5)), is_real_number(np.True_)
        (True, True, False)
    """
    numpy = _numpy()
    if numpy is None:
        return isinstance(value, Real) and not isinstance(value, bool)
    return (
        isinstance(value, (Real, numpy.number))
        and not isinstance(value, (bool, numpy.bool_))
        and not (isinstance(value, numpy.number) and value.dtype.kind == "c")
    )


def number(
    value: Any,
    *,
    source: str | None = None,
    record: str | None = None,
    field: str | None = None,
    finite: bool = True,
) -> float:
    """A real number (not a boolean) as a float; NaN and infinity refused unless ``finite=False``.

    Example:
        >>> number(2, field="confidence")
        2.0
        >>> number(float("nan"), record="example 0", field="scores[1]")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 0, field 'scores[1]': expected a finite number, got nan
    """
    if not is_real_number(value):
        raise NovaInputError(
            f"expected a real number, got {type(value).__name__} {value!r}",
            source=source,
            record=record,
            field=field,
        )
    try:
        converted = float(value)
    except OverflowError:
        raise NovaInputError(
            f"number too large for a float: {_short(value)}",
            source=source,
            record=record,
            field=field,
        ) from None
    if finite and not math.isfinite(converted):
        raise NovaInputError(
            f"expected a finite number, got {value!r}", source=source, record=record, field=field
        )
    return converted


def integer(
    value: Any,
    *,
    minimum: int | None = None,
    source: str | None = None,
    record: str | None = None,
    field: str | None = None,
) -> int:
    """An integer (Python or numpy, not a boolean) at least ``minimum``.

    Example:
        >>> integer(0, minimum=0, field="seed")
        0
        >>> integer(1.5, field="seed")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'seed': expected an integer, got float 1.5
    """
    if isinstance(value, _booleans()) or not isinstance(value, _integers()):
        raise NovaInputError(
            f"expected an integer, got {type(value).__name__} {value!r}",
            source=source,
            record=record,
            field=field,
        )
    if minimum is not None and value < minimum:
        raise NovaInputError(
            f"must be >= {minimum}, got {value}", source=source, record=record, field=field
        )
    return int(value)


def seed(value: Any, *, field: str = "seed") -> int:
    """A random seed (the bootstrap's): an integer >= 0, numpy's or Python's, not a boolean.

    Every entry point that takes a seed checks it with its other settings, before anything
    is scored or asked: numpy's own refusal came late and in its words ("expected
    non-negative integer"), and ``int()`` read 1.5 and True as 1.

    Example:
        >>> seed(3)
        3
        >>> seed(-1)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'seed': must be >= 0, got -1
    """
    return integer(value, minimum=0, field=field)


def confidence_level(value: Any, *, field: str = "confidence") -> float:
    """An interval's confidence level: a real number strictly between 0 and 1.

    Checked with the other scoring settings, before any model is asked (``evaluate_model``
    asked every item before the bootstrap refused ``confidence=2``).

    Example:
        >>> confidence_level(0.9)
        0.9
        >>> confidence_level(95)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'confidence': must be strictly between 0 and 1, got 95
    """
    # "not 0 < c < 1" spelt so that NaN fails it too.
    if not is_real_number(value) or value <= 0 or not value < 1:
        raise NovaInputError(f"must be strictly between 0 and 1, got {value!r}", field=field)
    return float(value)


def positive_int(
    value: Any, *, source: str | None = None, record: str | None = None, field: str | None = None
) -> int:
    """A positive integer option (``max_detections``, ``n_resamples``, a batch size...).

    Example:
        >>> positive_int(0, field="max_detections")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'max_detections': must be a positive integer, got 0
    """
    if isinstance(value, _booleans()) or not isinstance(value, _integers()) or value < 1:
        raise NovaInputError(
            f"must be a positive integer, got {value!r}", source=source, record=record, field=field
        )
    return int(value)


def bounded_number(
    value: Any,
    *,
    minimum: float,
    strict: bool = False,
    integer: bool = False,
    source: str | None = None,
    record: str | None = None,
    field: str | None = None,
) -> float:
    """A finite real number (an integer when ``integer``) at least ``minimum`` (above it when ``strict``).

    A setting's check (a timeout, a retry count, a concurrency): one message for every way
    the value can be wrong, naming the bound.

    Args:
        value: the value given.
        minimum: the bound.
        strict: the value must be above ``minimum``, not equal to it.
        integer: the value must be an integer (Python or numpy); it is returned as ``int``.
        source: where the value came from, for the error.
        record: which record, for the error.
        field: which setting, for the error.

    Returns:
        The value as a float (as an int when ``integer``).

    Raises:
        NovaInputError: a boolean, a non-number, NaN or infinity, or out of bounds.

    Example:
        >>> bounded_number(2.5, minimum=0, strict=True, field="timeout_s")
        2.5
        >>> bounded_number(float("inf"), minimum=0, strict=True, field="timeout_s")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'timeout_s': must be a number > 0, got inf
        >>> bounded_number(True, minimum=0, integer=True, field="max_retries")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'max_retries': must be an integer >= 0, got True
    """
    kind_ok = (
        isinstance(value, _integers()) and not isinstance(value, _booleans())
        if integer
        else is_real_number(value)
    )
    converted: float | None = None
    if kind_ok:
        try:
            converted = float(value)
        except OverflowError:  # an integer beyond any float: out of every bound we use
            converted = math.inf if value > 0 else -math.inf
    if (
        converted is None
        or not math.isfinite(converted)
        or not (converted > minimum if strict else converted >= minimum)
    ):
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        raise NovaInputError(
            f"must be {'an integer' if integer else 'a number'} {bound}, got {value!r}",
            source=source,
            record=record,
            field=field,
        )
    return int(value) if integer else converted


def image_size(
    value: Any, *, source: str | None = None, record: str | None = None, field: str | None = None
) -> tuple[int, int]:
    """``[width, height]``: two whole positive pixel counts (at most :data:`MAX_IMAGE_SIDE`).

    Example:
        >>> image_size([1092, 812.0])
        (1092, 812)
        >>> image_size([1e308, 1e308], record="line 4", field="input_size")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: line 4, field 'input_size': must be [width, height] in whole positive pixels up to 1000000, got [1e+308, 1e+308]
    """

    def whole(side: Any) -> bool:
        if not is_real_number(side):
            return False
        try:
            converted = float(side)
        except OverflowError:
            return False
        return 0 < converted <= MAX_IMAGE_SIDE and converted.is_integer()

    if (
        isinstance(value, (str, bytes, Mapping))
        or not isinstance(value, _sequences())
        or len(value) != 2
        or not all(whole(side) for side in value)
    ):
        raise NovaInputError(
            f"must be [width, height] in whole positive pixels up to {MAX_IMAGE_SIDE}, "
            f"got {_short(value)}",
            source=source,
            record=record,
            field=field,
        )
    return int(value[0]), int(value[1])


def _option_number(text: str, kind: type) -> Any:
    import argparse

    try:
        value = kind(text)
    except (TypeError, ValueError):
        name = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {name}, got {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def finite_float_option(text: str) -> float:
    """argparse ``type=`` of a float option: NaN and infinity are refused in one line.

    Example:
        >>> finite_float_option("0.7")
        0.7
        >>> finite_float_option("nan")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected a finite number, got 'nan'
    """
    return float(_option_number(text, float))


def positive_float_option(text: str) -> float:
    """argparse ``type=`` of a float option that must be finite and above zero (a timeout).

    Example:
        >>> positive_float_option("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be positive, got '0'
    """
    value = finite_float_option(text)
    if value <= 0:
        import argparse

        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def nonnegative_float_option(text: str) -> float:
    """argparse ``type=`` of a float option that must be finite and at least zero.

    Example:
        >>> nonnegative_float_option("-0.5")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be >= 0, got '-0.5'
    """
    value = finite_float_option(text)
    if value < 0:
        import argparse

        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def positive_int_option(text: str) -> int:
    """argparse ``type=`` of an integer option that must be at least 1 (a batch size).

    Example:
        >>> positive_int_option("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be a positive integer, got '0'
    """
    value = int(_option_number(text, int))
    if value < 1:
        import argparse

        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def nonnegative_int_option(text: str) -> int:
    """argparse ``type=`` of an integer option that may be 0 but not negative (a seed, retries).

    Example:
        >>> nonnegative_int_option("-1")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be >= 0, got '-1'
    """
    value = int(_option_number(text, int))
    if value < 0:
        import argparse

        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def text(
    value: Any,
    *,
    source: str | None = None,
    record: str | None = None,
    field: str | None = None,
    allow_blank: bool = False,
    none_as_empty: bool = False,
) -> str:
    """A string; blank refused unless ``allow_blank``; ``None`` is ``""`` when ``none_as_empty``.

    A lone UTF-16 surrogate (``"\\ud800"`` in JSON) is refused: no UTF-8 file or Arrow
    column can hold it, so it would fail later, far from the value that held it.

    Example:
        >>> text("Glioma", field="reference")
        'Glioma'
        >>> text("  ", record="example 1", field="reference")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1, field 'reference': empty text
    """
    if value is None and none_as_empty:
        return ""
    if not isinstance(value, str):
        wanted = "a string or None" if none_as_empty else "a string"
        raise NovaInputError(
            f"expected {wanted}, got {type(value).__name__}",
            source=source,
            record=record,
            field=field,
        )
    if not allow_blank and not value.strip():
        raise NovaInputError("empty text", source=source, record=record, field=field)
    surrogate = _LONE_SURROGATE.search(value)
    if surrogate:
        raise NovaInputError(
            f"lone surrogate U+{ord(surrogate.group()):04X} at character {surrogate.start()}: "
            "not valid Unicode text (decode the source with errors='replace')",
            source=source,
            record=record,
            field=field,
        )
    return value


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def box_format(value: Any, *, field: str = "box_format") -> str:
    """``"xywh"`` or ``"xyxy"``.

    Example:
        >>> box_format("xyxy")
        'xyxy'
    """
    if value not in BOX_FORMATS:
        raise NovaInputError(f"box_format must be one of {BOX_FORMATS}, got {value!r}", field=field)
    return str(value)


_check_box_format = box_format


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else f"{shown[:40]}... ({len(shown)} characters)"


def _box_problem(box: Any) -> str | None:
    """Why one box is not four finite real numbers fitting a float, or None if it is."""
    if isinstance(box, (str, bytes)) or not isinstance(box, _sequences()):
        return f"a box must be a list of 4 numbers, got {type(box).__name__} {_short(box)}"
    if len(box) != 4:
        return f"a box must have 4 numbers, got {len(box)}: {_short(list(box))}"
    for value in box:
        if not is_real_number(value):
            return f"box values must be real numbers, got {type(value).__name__} {_short(value)}"
        try:
            converted = float(value)
        except OverflowError:
            return f"box value too large for a float: {_short(value)}"
        if not math.isfinite(converted):
            return f"box values must be finite, got {_short(list(box))}"
    return None


def first_invalid_box(array: np.ndarray, box_format: str = "xywh") -> int | None:
    """Row of the first box with a negative size, a non-finite value, or a far corner, size
    or area past the largest float (which every IoU would overflow on), or None.

    Example:
        >>> import numpy as np
        >>> first_invalid_box(np.array([[0, 0, 1, 1], [0, 0, 1, -1.0]]))
        1
        >>> first_invalid_box(np.array([[5, 5, 6, 6.0]]), "xyxy") is None
        True
        >>> first_invalid_box(np.array([[1e308, 0, 1e308, 1.0]]))
        0
    """
    import numpy as np

    if array.shape[0] == 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # such rows are refused below
        sizes = array[:, 2:] - array[:, :2] if box_format == "xyxy" else array[:, 2:]
        bad = ~np.isfinite(array).all(axis=1) | (sizes < 0).any(axis=1)
    # Below 1e150 no sum, difference or product of two values overflows: the usual case skips
    # the overflow pass (NaN makes the maximum NaN, and the row is bad already).
    if np.abs(array).max() >= _NO_OVERFLOW_BELOW:
        bad |= _sizes_and_overflow(array, box_format)[1]
    return int(np.argmax(bad)) if bad.any() else None


_NO_OVERFLOW_BELOW = 1e150


def _sizes_and_overflow(array: np.ndarray, box_format: str) -> tuple[np.ndarray, np.ndarray]:
    """Per box its width and height, and whether its far corner, a side or its area is past
    the largest float (finite values can still overflow there)."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        if box_format == "xyxy":
            sizes, far = array[:, 2:] - array[:, :2], array[:, 2:]
        else:
            sizes = array[:, 2:]
            far = array[:, :2] + sizes
        area = sizes[:, 0] * sizes[:, 1]
    beyond = ~np.isfinite(far).all(axis=1) | ~np.isfinite(sizes).all(axis=1) | ~np.isfinite(area)
    return sizes, beyond & np.isfinite(array).all(axis=1)


def _size_problem(box: np.ndarray, box_format: str) -> str:
    import numpy as np

    if not np.isfinite(box).all():
        return f"box values must be finite, got {box.tolist()!r}"
    sizes, beyond = _sizes_and_overflow(box.reshape(1, 4), box_format)
    if (sizes >= 0).all() and beyond[0]:
        return (
            f"too large: its far corner or its area is past the largest float, got {box.tolist()!r}"
        )
    if box_format == "xyxy":
        if box[2] < box[0]:
            return f"x_max must be >= x_min, got {box.tolist()!r}"
        return f"y_max must be >= y_min, got {box.tolist()!r}"
    if box[2] < 0:
        return f"width must be >= 0, got {float(box[2])!r}"
    return f"height must be >= 0, got {float(box[3])!r}"


def _as_box_array(boxes: Any) -> np.ndarray | None:
    """``boxes`` as a float64 ``(n, 4)`` array, or None when it is not numeric of that shape."""
    import numpy as np

    try:
        raw = np.asarray(boxes)
    except (ValueError, TypeError, OverflowError):  # ragged nesting
        return None
    if raw.size == 0 and raw.ndim in (1, 2) and (raw.ndim == 1 or raw.shape[1] in (0, 4)):
        return np.zeros((0, 4), dtype=np.float64)
    if raw.ndim != 2 or raw.shape[1] != 4 or raw.dtype.kind not in "iuf":
        return None
    if not isinstance(boxes, np.ndarray) and any(
        isinstance(value, (bool, np.bool_)) for box in boxes for value in box
    ):
        return None  # numpy reads True as 1 (or 1.0 beside a float); the slow path names it
    array = raw.astype(np.float64, copy=True)
    return array if np.isfinite(array).all() else None


def box_list(
    boxes: Any,
    *,
    source: str | None = None,
    record: str | None = None,
    field: str = "boxes",
    box_format: str | None = "xywh",
) -> np.ndarray:
    """One item's boxes as a float64 ``(n, 4)`` array (in the given format), checked.

    Each box is four finite real numbers; with a ``box_format`` a negative width or
    height (``x_max < x_min`` in xyxy) is refused too (``None`` skips the size check).

    Example:
        >>> box_list([[10, 20, 30, 40]], record="example 0").tolist()
        [[10.0, 20.0, 30.0, 40.0]]
        >>> box_list([[0, 0, -1, 5]], record="example 2")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 2, field 'boxes[0]': width must be >= 0, got -1.0
    """
    import numpy as np

    if box_format is not None:
        _check_box_format(box_format)
    if (
        boxes is None
        or isinstance(boxes, (str, bytes, Mapping))
        or not isinstance(boxes, (Sequence, np.ndarray))
    ):
        raise NovaInputError(
            f"boxes must be a list of [x, y, w, h] lists, got {type(boxes).__name__}",
            source=source,
            record=record,
            field=field,
        )
    array = _as_box_array(boxes)
    if array is None:
        for index, box in enumerate(boxes):
            problem = _box_problem(box)
            if problem is not None:
                raise NovaInputError(
                    problem, source=source, record=record, field=f"{field}[{index}]"
                )
        # Every value is a real number numpy cannot hold as one array (a Fraction, an int
        # of 2**64 or more): each becomes a float, as float() reads it.
        array = np.array(
            [[float(value) for value in box] for box in boxes], dtype=np.float64
        ).reshape(-1, 4)
    bad_row = None if box_format is None else first_invalid_box(array, box_format)
    if bad_row is not None:
        raise NovaInputError(
            _size_problem(array[bad_row], str(box_format)),
            source=source,
            record=record,
            field=f"{field}[{bad_row}]",
        )
    return array


def _leaf_types(per_item: list[Any], depth: int) -> set[type] | None:
    """Types of the values ``depth`` levels down (one C-level pass), None on wrong nesting."""
    try:
        leaves: Iterable[Any] = chain.from_iterable(per_item)
        for _ in range(depth - 1):
            leaves = chain.from_iterable(leaves)
        return set(map(type, leaves))
    except TypeError:  # a number where a list was expected
        return None


def _all_real(per_item: list[Any], depth: int) -> bool:
    """Whether every leaf is a real number (booleans excluded); arrays judged by dtype."""
    import numpy as np

    lists = [values for values in per_item if not isinstance(values, np.ndarray)]
    if any(values.dtype.kind not in "iuf" for values in per_item if isinstance(values, np.ndarray)):
        return False
    kinds = _leaf_types(lists, depth)
    return kinds is not None and all(
        kind not in (bool, np.bool_) and issubclass(kind, (Real, np.number)) for kind in kinds
    )


def box_batch(
    per_item: Sequence[Any],
    counts: np.ndarray,
    *,
    field: str,
    box_format: str | None = "xywh",
    source: str | None = None,
    start_index: int = 0,
) -> np.ndarray:
    """Every item's boxes stacked as one float64 ``(sum(counts), 4)`` array, checked.

    The fast path is one ``np.array`` call over all boxes after one pass over the value
    types; any failure re-reads the culprit item so the error names it
    (``example {start_index + i}``) and the box.

    Example:
        >>> import numpy as np
        >>> box_batch([[[0, 0, 1, 1]], []], np.array([1, 0]), field="boxes").shape
        (1, 4)
        >>> box_batch([[], [[0, 0, 1, np.True_]]], np.array([0, 1]), field="boxes")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1, field 'boxes[0]': box values must be real numbers, got bool np.True_
    """
    import numpy as np

    per_item = list(per_item)
    total = int(counts.sum())
    flat: np.ndarray | None = None
    if total == 0:
        flat = np.zeros((0, 4))
    elif _all_real(per_item, depth=2):
        try:
            raw = np.array(list(chain.from_iterable(per_item)))
        except (ValueError, TypeError, OverflowError):  # ragged or mixed nesting
            raw = None
        if raw is not None and raw.shape == (total, 4) and raw.dtype.kind in "iuf":
            flat = raw.astype(np.float64, copy=False)
    bad_row = None
    if flat is not None:
        bad_row = (
            first_invalid_box(flat, box_format)
            if box_format is not None
            else (None if np.isfinite(flat).all() else first_invalid_box(flat))
        )
    if flat is None or bad_row is not None:
        items: Sequence[int] = range(len(per_item))
        if bad_row is not None:
            items = [int(np.searchsorted(np.cumsum(counts), bad_row, side="right"))]
        checked = [
            box_list(
                per_item[item],
                source=source,
                record=_record(start_index + item),
                field=field,
                box_format=box_format,
            )
            for item in items
        ]
        if bad_row is not None:  # pragma: no cover - defensive: box_list raised above
            raise NovaInputError("boxes could not be read as numbers", source=source, field=field)
        # Valid values numpy could not stack at once (see box_list): read item by item.
        flat = np.concatenate([np.zeros((0, 4)), *checked])
    return flat


def box_columns(
    boxes: Any, counts: np.ndarray, *, field: str, box_format: str = "xywh"
) -> np.ndarray:
    """Stacked boxes (the columnar form) as float64 ``(n, 4)``, checked against ``counts``.

    Example:
        >>> import numpy as np
        >>> box_columns(np.ones((1, 4), dtype=bool), np.array([1]), field="boxes")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'boxes': box values must be numbers, got a boolean array
    """
    import numpy as np

    if np.asarray(boxes).dtype == np.bool_:  # would become 0/1 silently
        raise NovaInputError("box values must be numbers, got a boolean array", field=field)
    array = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if len(array) != int(counts.sum()):
        raise NovaInputError(
            f"{len(array)} boxes for counts summing to {int(counts.sum())}", field=field
        )
    bad_row = first_invalid_box(array, box_format)
    if bad_row is not None:
        ends = np.cumsum(counts)
        item = int(np.searchsorted(ends, bad_row, side="right"))
        box_list(
            array[ends[item] - counts[item] : ends[item]],
            record=_record(item),
            field=field,
            box_format=box_format,
        )
    return array


def _score_problem(scores: Any, n_boxes: int | None, field: str) -> tuple[str, str] | None:
    """(message, field) of what is wrong with one item's scores, or None."""
    if isinstance(scores, (str, bytes, Mapping)) or not hasattr(scores, "__len__"):
        return f"scores must be a list of numbers, got {type(scores).__name__}", field
    if n_boxes is not None and len(scores) != n_boxes:
        boxes = f"is {n_boxes} box" if n_boxes == 1 else f"are {n_boxes} boxes"
        return f"scores has {len(scores)} values but there {boxes}", field
    for index, value in enumerate(scores):
        try:
            number(value, field=f"{field}[{index}]")
        except NovaInputError as error:
            return f"scores must be finite numbers: {error.message}", f"{field}[{index}]"
    return None


def _sized_not_text(value: Any) -> bool:
    """A sized value that is no string, bytes or mapping (a list of scores, an array...)."""
    return hasattr(value, "__len__") and not isinstance(value, (str, bytes, Mapping))


def score_batch(
    per_item: Sequence[Any],
    counts: np.ndarray | None,
    *,
    field: str = "predictions.scores",
    start_index: int = 0,
) -> np.ndarray:
    """Every item's scores as one float64 array, aligned with the boxes.

    ``None`` for an item means "no scores": each of its ``counts[i]`` boxes scores 1.0, so
    stable sorts keep the given order. With ``counts=None`` only the values are checked
    (any length) and the given scores are returned.

    Example:
        >>> import numpy as np
        >>> score_batch([[0.9], None], np.array([1, 2])).tolist()
        [0.9, 1.0, 1.0]
        >>> score_batch([[0.9, 0.1]], np.array([1]))
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 0, field 'predictions.scores': scores has 2 values but there is 1 box
    """
    import numpy as np

    per_item = list(per_item)
    given = [scores for scores in per_item if scores is not None]
    flat: np.ndarray | None = None
    if _all_real(given, depth=1):
        try:
            raw = np.array(list(chain.from_iterable(given))) if given else np.zeros(0)
            if raw.ndim == 1 and (raw.dtype.kind in "iuf" or raw.size == 0):
                flat = raw.astype(np.float64, copy=False)
        except (ValueError, TypeError, OverflowError):
            flat = None
    lengths = [None] * len(per_item) if counts is None else counts.tolist()
    lengths_ok = all(
        scores is None
        or (
            (type(scores) is list or _sized_not_text(scores))
            and (count is None or len(scores) == count)
        )
        for scores, count in zip(per_item, lengths)
    )
    if flat is None or not lengths_ok or not np.isfinite(flat).all():
        for item, (scores, count) in enumerate(zip(per_item, lengths)):
            problem = None if scores is None else _score_problem(scores, count, field)
            if problem is not None:
                raise NovaInputError(
                    problem[0], record=_record(start_index + item), field=problem[1]
                )
        # Valid values numpy could not stack at once (a Fraction, an int of 2**64 or more):
        # each becomes a float, as float() reads it.
        flat = np.array([float(value) for scores in given for value in scores], dtype=np.float64)
    if counts is None or all(scores is not None for scores in per_item):
        return flat
    out = np.ones(int(counts.sum()), dtype=np.float64)
    out[np.repeat(np.array([scores is not None for scores in per_item]), counts)] = flat
    return out


def score_columns(
    scores: Any, counts: np.ndarray, *, field: str = "predictions.scores"
) -> np.ndarray:
    """Stacked scores (the columnar form), one finite number per box.

    Example:
        >>> import numpy as np
        >>> score_columns(np.array([0.5, np.nan]), np.array([1, 1]))
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 1, field 'predictions.scores': scores must be finite numbers, got nan
    """
    import numpy as np

    if np.asarray(scores).dtype == np.bool_:
        raise NovaInputError("scores must be numbers, got a boolean array", field=field)
    flat = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(flat) != int(counts.sum()):
        raise NovaInputError(f"{len(flat)} scores for {int(counts.sum())} boxes", field=field)
    bad = np.flatnonzero(~np.isfinite(flat))
    if len(bad):
        item = int(np.searchsorted(np.cumsum(counts), bad[0], side="right"))
        raise NovaInputError(
            f"scores must be finite numbers, got {flat[bad[0]]}", record=_record(item), field=field
        )
    return flat


def box_values(items: Sequence[Mapping[str, Any]], *, side: str, start_index: int = 0) -> None:
    """Box values and scores of plain items are numbers (no booleans, no strings) and finite.

    What the ``evaluate`` face checks as a batch is added, before Arrow would store
    ``True`` as 1.0. Box lengths and sizes (which depend on ``box_format``) are checked
    at ``compute()``; malformed nesting is left to Arrow's errors (then explained).

    Example:
        >>> box_values([{"boxes": [[0, 0, 1, 1]], "scores": [0.5]}], side="predictions")
        >>> box_values([{"boxes": [[0, 0, 1, float("inf")]]}], side="references", start_index=4)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: example 4, field 'references.boxes[0]': box values must be finite, got [0, 0, 1, inf]
    """
    import numpy as np

    values: list[Any] | None
    try:  # one flat list of every value: its types and finiteness in C-level passes
        values = list(chain.from_iterable(chain.from_iterable(item["boxes"] for item in items)))
        values.extend(chain.from_iterable(item.get("scores") or () for item in items))
    except (TypeError, ValueError):  # malformed nesting: the per-item pass below names it
        values = None
    if values is not None:
        kinds = set(map(type, values))
        if not kinds:
            return
        if all(
            kind not in (bool, np.bool_) and issubclass(kind, (int, float, np.number))
            for kind in kinds
        ):
            try:
                if np.isfinite(np.asarray(values, dtype=np.float64)).all():
                    return
            except (TypeError, ValueError, OverflowError):
                pass
    for offset, item in enumerate(items):
        record = _record(start_index + offset)
        for position, box in enumerate(item["boxes"]):
            if isinstance(box, (list, tuple, np.ndarray)):
                is_array = isinstance(box, np.ndarray)
                leaves = np.asarray(box).reshape(-1).tolist() if is_array else list(box)
                if any(isinstance(value, (bool, np.bool_)) for value in leaves) or (
                    isinstance(box, np.ndarray) and box.dtype == np.bool_
                ):
                    raise NovaInputError(
                        f"box values must be numbers, got {_short(leaves)}",
                        record=record,
                        field=f"{side}.boxes[{position}]",
                    )
                problem = _box_problem(box) if len(box) == 4 else None
                if problem is not None:  # "12" too: Arrow would read it as 12.0 silently
                    raise NovaInputError(problem, record=record, field=f"{side}.boxes[{position}]")
            elif isinstance(box, (bool, np.bool_)):
                raise NovaInputError(
                    f"expected a number, got {box!r}",
                    record=record,
                    field=f"{side}.boxes[{position}]",
                )
        for position, score in enumerate(item.get("scores") or ()):
            # "0.9" too: Arrow would read it as 0.9 silently, where the scorers refuse it.
            number(score, record=record, field=f"{side}.scores[{position}]")


def box_inside_image(box: Any, image_size: tuple[float, float]) -> bool:
    """Whether an ``[x, y, width, height]`` box in pixels lies within its image.

    A rounding error of a millionth of the image size is allowed: a box that reaches the
    edge through a 0..1000 conversion is inside.

    Args:
        box: ``[x, y, width, height]`` in pixels.
        image_size: ``(width, height)`` of the image.

    Returns:
        False when any edge lies outside the image.

    Example:
        >>> box_inside_image([0, 0, 480, 480], (480, 480)), box_inside_image([-2, 0, 10, 10], (480, 480))
        (True, False)
    """
    x, y, box_width, box_height = (float(v) for v in box)
    image_width, image_height = (float(v) for v in image_size)
    slack_x, slack_y = 1e-6 * image_width, 1e-6 * image_height
    return (
        x >= -slack_x
        and y >= -slack_y
        and x + box_width <= image_width + slack_x
        and y + box_height <= image_height + slack_y
    )
