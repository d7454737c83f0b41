"""Every check of novabench.checks: booleans, non-finite values, shapes, huge ints, nesting."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from novabench import checks
from novabench.errors import NovaInputError

HUGE = 10**400  # a 400-digit integer: float() would raise OverflowError


@pytest.mark.parametrize("value", [True, False, np.True_, np.bool_(False)])
def test_number_refuses_python_and_numpy_booleans(value) -> None:
    with pytest.raises(NovaInputError, match="real number") as info:
        checks.number(value, source="s", record="example 1", field="scores[0]")
    assert (info.value.source, info.value.record, info.value.field) == (
        "s",
        "example 1",
        "scores[0]",
    )


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -np.inf, np.float32("nan")])
def test_number_refuses_nan_and_infinity_unless_allowed(value) -> None:
    with pytest.raises(NovaInputError, match="finite"):
        checks.number(value, field="x")
    assert not np.isfinite(checks.number(value, field="x", finite=False))


def test_number_names_an_integer_too_large_for_a_float() -> None:
    with pytest.raises(NovaInputError, match="too large") as info:
        checks.number(HUGE, record="example 0", field="x")
    assert info.value.field == "x"
    assert len(str(info.value)) < 200  # the 400 digits are cut short in the message


@pytest.mark.parametrize("value", [0, -1, 1.0, True, np.True_, "3", None])
def test_positive_int_refuses_non_positive_non_integers_and_booleans(value) -> None:
    with pytest.raises(NovaInputError, match="positive integer") as info:
        checks.positive_int(value, field="max_detections")
    assert info.value.field == "max_detections"


def test_positive_int_and_integer_accept_numpy_integers() -> None:
    assert checks.positive_int(np.int64(3), field="n") == 3
    assert checks.integer(np.uint8(0), minimum=0, field="seed") == 0
    with pytest.raises(NovaInputError, match=">= 0"):
        checks.integer(-1, minimum=0, field="seed")
    with pytest.raises(NovaInputError, match="integer"):
        checks.integer(np.False_, field="seed")


def test_text_rules() -> None:
    assert checks.text(None, field="caption", none_as_empty=True) == ""
    assert checks.text(" ", field="caption", allow_blank=True) == " "
    with pytest.raises(NovaInputError, match="empty text") as info:
        checks.text("  ", record="example 2", field="reference")
    assert (info.value.record, info.value.field) == ("example 2", "reference")
    with pytest.raises(NovaInputError, match="expected a string, got int"):
        checks.text(3, field="reference")
    with pytest.raises(NovaInputError, match="expected a string"):
        checks.text(None, field="reference")


def test_box_format() -> None:
    assert checks.box_format("xywh") == "xywh"
    with pytest.raises(NovaInputError, match="box_format") as info:
        checks.box_format("cxcywh", field="reference_box_format")
    assert info.value.field == "reference_box_format"


@pytest.mark.parametrize(
    ("boxes", "field", "words"),
    [
        ([[0, 0, 1, True]], "boxes[0]", "real numbers"),
        ([[0.5, 0, 1, np.True_]], "boxes[0]", "real numbers"),  # hidden beside a float
        (np.array([[1, 0, 1, 1]], dtype=bool), "boxes[0]", "real numbers"),
        ([[0, 0, 1, float("nan")]], "boxes[0]", "finite"),
        ([[0, 0, 1, 1], [0, 0, float("inf"), 1]], "boxes[1]", "finite"),
        ([[0, 0, 1]], "boxes[0]", "4 numbers, got 3"),
        ([[0, 0, 1, 1, 1]], "boxes[0]", "4 numbers, got 5"),
        ([0, 0, 1, 1], "boxes[0]", "list of 4 numbers"),  # one level too shallow
        ([[[0, 0, 1, 1]]], "boxes[0]", "4 numbers, got 1"),  # one level too deep
        ([[[0, 0], [1, 1], [2, 2], [3, 3]]], "boxes[0]", "real numbers"),  # deep nesting
        ([[HUGE, 0, 1, 1]], "boxes[0]", "too large"),
        ([[0, 0, -1, 1]], "boxes[0]", "width must be >= 0"),
        ([[0, 0, 1, -1]], "boxes[0]", "height must be >= 0"),
        ("[[0, 0, 1, 1]]", "boxes", "list of"),
        (None, "boxes", "list of"),
        ({"x": 1}, "boxes", "list of"),
    ],
)
def test_box_list_names_the_bad_box(boxes, field, words) -> None:
    with pytest.raises(NovaInputError, match=words) as info:
        checks.box_list(boxes, source="file.jsonl", record="line 4", field="boxes")
    assert (info.value.source, info.value.record, info.value.field) == (
        "file.jsonl",
        "line 4",
        field,
    )


def test_box_list_formats_and_arrays() -> None:
    assert checks.box_list(np.array([[1, 2, 3, 4]], dtype=np.int32)).dtype == np.float64
    assert checks.box_list([]).shape == (0, 4)
    with pytest.raises(NovaInputError, match="x_max must be >= x_min"):
        checks.box_list([[10, 0, 5, 5]], box_format="xyxy")
    assert checks.box_list([[10, 0, 5, 5]], box_format=None).tolist() == [[10.0, 0.0, 5.0, 5.0]]


def test_box_batch_fast_path_matches_the_input() -> None:
    rng = np.random.default_rng(0)
    per_item = [rng.uniform(0, 100, size=(int(n), 4)).tolist() for n in rng.integers(0, 5, 200)]
    counts = np.array([len(boxes) for boxes in per_item])
    flat = checks.box_batch(per_item, counts, field="predictions.boxes")
    assert flat.tolist() == [box for boxes in per_item for box in boxes]
    arrays = [np.asarray(boxes, dtype=np.float32).reshape(-1, 4) for boxes in per_item]
    np.testing.assert_array_equal(
        checks.box_batch(arrays, counts, field="b"), flat.astype(np.float32)
    )


@pytest.mark.parametrize(
    ("bad_boxes", "field", "words"),
    [
        ([[0, 0, 1, np.bool_(True)]], "p.boxes[0]", "real numbers"),
        (np.array([[0, 0, 1, 1]], dtype=bool), "p.boxes[0]", "real numbers"),
        ([[0, 0, 1, 1], [HUGE, 0, 1, 1]], "p.boxes[1]", "too large"),
        ([[0, 0, float("nan"), 1]], "p.boxes[0]", "finite"),
        ([[0, 0, 1, -2]], "p.boxes[0]", "height"),
        ([[[0, 0, 1, 1]]], "p.boxes[0]", "4 numbers"),
    ],
)
def test_box_batch_names_the_record_and_box(bad_boxes, field, words) -> None:
    per_item = [[[0, 0, 1, 1]], [], bad_boxes]
    counts = np.array([len(boxes) for boxes in per_item])
    with pytest.raises(NovaInputError, match=words) as info:
        checks.box_batch(per_item, counts, field="p.boxes", start_index=10)
    assert (info.value.record, info.value.field) == ("example 12", field)


def test_box_columns() -> None:
    counts = np.array([1, 1])
    assert checks.box_columns(np.zeros((2, 4)), counts, field="b").shape == (2, 4)
    with pytest.raises(NovaInputError, match="boolean array"):
        checks.box_columns(np.ones((2, 4), dtype=bool), counts, field="b")
    with pytest.raises(NovaInputError, match="2 boxes for counts summing to 3"):
        checks.box_columns(np.zeros((2, 4)), np.array([1, 2]), field="b")
    with pytest.raises(NovaInputError, match="width") as info:
        checks.box_columns(np.array([[0, 0, 1, 1], [0, 0, -1, 1.0]]), counts, field="b")
    assert (info.value.record, info.value.field) == ("example 1", "b[0]")


def test_score_batch_aligns_scores_with_boxes() -> None:
    counts = np.array([2, 1, 0])
    assert checks.score_batch([[0.5, 0.25], None, []], counts).tolist() == [0.5, 0.25, 1.0]
    with pytest.raises(NovaInputError, match="1 values but there are 2 boxes") as info:
        checks.score_batch([[0.5], None, []], counts)
    assert (info.value.record, info.value.field) == ("example 0", "predictions.scores")
    with pytest.raises(NovaInputError, match="2 values but there is 1 box$"):
        checks.score_batch([None, [0.5, 0.25], []], counts)  # example 1 holds one box


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ([True], "real number"),
        ([np.False_], "real number"),
        ([np.nan], "finite"),
        ([HUGE], "too large"),
        (["high"], "real number"),
        (0.5, "list of numbers"),
        (np.array([True]), "real number"),
    ],
)
def test_score_batch_names_bad_values(bad, words) -> None:
    with pytest.raises(NovaInputError, match=words) as info:
        checks.score_batch([[0.5], bad], np.array([1, 1]), field="p.scores", start_index=3)
    assert info.value.record == "example 4" and info.value.field.startswith("p.scores")


def test_score_columns() -> None:
    with pytest.raises(NovaInputError, match="boolean array"):
        checks.score_columns(np.array([True]), np.array([1]))
    with pytest.raises(NovaInputError, match="2 scores for 1 boxes"):
        checks.score_columns(np.array([0.1, 0.2]), np.array([1]))
    with pytest.raises(NovaInputError, match="finite") as info:
        checks.score_columns(np.array([0.1, np.inf]), np.array([1, 1]))
    assert info.value.record == "example 1"


@pytest.mark.parametrize(
    ("item", "field", "words"),
    [
        ({"boxes": [[0, 0, 1, True]]}, "predictions.boxes[0]", "numbers"),
        ({"boxes": [np.array([0, 0, 1, 1], dtype=bool)]}, "predictions.boxes[0]", "numbers"),
        ({"boxes": [[0.5, 0, 1, np.True_]]}, "predictions.boxes[0]", "numbers"),
        ({"boxes": [[0, 0, 1, float("nan")]]}, "predictions.boxes[0]", "finite"),
        ({"boxes": [[0, 0, 1, HUGE]]}, "predictions.boxes[0]", "too large"),
        ({"boxes": [[0, 0, 1, 1]], "scores": [np.True_]}, "predictions.scores[0]", "real number"),
        ({"boxes": [[0, 0, 1, 1]], "scores": [float("-inf")]}, "predictions.scores[0]", "finite"),
        ({"boxes": [[0, 0, 1, 1]], "scores": [HUGE]}, "predictions.scores[0]", "too large"),
    ],
)
def test_box_values_of_a_face_batch(item, field, words) -> None:
    items = [{"boxes": [[1, 2, 3, 4]], "scores": [0.5]}, item]
    with pytest.raises(NovaInputError, match=words) as info:
        checks.box_values(items, side="predictions", start_index=7)
    assert (info.value.record, info.value.field) == ("example 8", field)


def test_box_values_leaves_shapes_and_sizes_to_compute() -> None:
    # Negative sizes depend on box_format (a compute option); wrong lengths are Arrow's to report.
    checks.box_values([{"boxes": [[0, 0, -1, 1], [1, 2, 3]]}, {"boxes": []}], side="references")
    checks.box_values([], side="references")


def test_is_real_number() -> None:
    assert [checks.is_real_number(v) for v in (1, 2.5, np.int8(1), np.float16(1), HUGE)] == [
        True
    ] * 5
    assert [checks.is_real_number(v) for v in (True, np.True_, "1", None, 1j, np.complex64(1))] == [
        False
    ] * 6


def test_metric_entry_paths_name_a_huge_integer_instead_of_overflowing() -> None:
    from novabench.metrics.evaluate_adapter import normalize_predictions
    from novabench.metrics.localization import score_localization

    with pytest.raises(NovaInputError, match="too large") as info:
        score_localization(
            [{"boxes": [[0, 0, 1, 1]]}, {"boxes": [[0, 0, HUGE, 1]]}],
            [{"boxes": []}, {"boxes": []}],
        )
    assert (info.value.record, info.value.field) == ("example 1", "predictions.boxes[0]")
    with pytest.raises(NovaInputError, match="too large") as info:
        normalize_predictions("localization", [{"boxes": [[0, 0, 1, HUGE]], "scores": [1]}])
    # The evaluate face's reader counts examples from 1, as nova evaluate counts lines.
    assert (info.value.record, info.value.field) == (
        "example 1 (0-based index 0)",
        "predictions.boxes[0]",
    )


@pytest.mark.parametrize("value", [Fraction(1, 3), 2**64, 2**70, -(2**65)])
def test_real_values_numpy_cannot_stack_are_read_as_float_reads_them(value) -> None:  # type: ignore[no-untyped-def]
    # A Fraction or an int beyond int64/uint64 is a valid real number for every per-value
    # check; the boxes and scores holding it are read value by value with float().
    box = [value, 0, 5, 5]
    expected = np.array([[float(value), 0.0, 5.0, 5.0]])
    assert np.array_equal(checks.box_list([box]), expected)
    stacked = checks.box_batch([[[1, 1, 2, 2]], [box]], np.array([1, 1]), field="boxes")
    assert np.array_equal(stacked, np.vstack([[[1.0, 1.0, 2.0, 2.0]], expected]))
    scores = checks.score_batch([[0.5], [value]], np.array([1, 1]))
    assert scores.tolist() == [0.5, float(value)]


def test_a_fraction_scores_as_the_float_it_stands_for() -> None:
    from novabench.metrics.localization import score_localization

    references = [{"boxes": [[0, 0, 10, 10]]}, {"boxes": [[0, 0, 10, 10]]}]
    exact = [{"boxes": [[0, Fraction(1, 3), 10, 10]], "scores": [Fraction(2, 3)]}] * 2
    rounded = [{"boxes": [[0, 1 / 3, 10, 10]], "scores": [2 / 3]}] * 2
    assert score_localization(exact, references) == score_localization(rounded, references)


# Run in a fresh interpreter where any import of numpy fails, as on a machine without it.
_WITHOUT_NUMPY = """
import sys

class NoNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("numpy is blocked in this test")

sys.meta_path.insert(0, NoNumpy())
from novabench import checks
from novabench.errors import NovaInputError

assert checks.number(3) == 3.0 and checks.integer(7, minimum=0) == 7
assert checks.image_size([1092, 812.0]) == (1092, 812)
assert checks.text("Axial FLAIR.") == "Axial FLAIR."
assert not checks.is_real_number(True) and checks.is_real_number(2.5)
assert checks.bounded_number(30, minimum=0, strict=True) == 30.0
for bad in (lambda: checks.number(float("nan")), lambda: checks.positive_int(True)):
    try:
        bad()
    except NovaInputError:
        pass
    else:
        raise AssertionError("a bad value passed")
assert "numpy" not in sys.modules
print("ok")
"""


def test_checks_import_and_check_single_values_without_numpy() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    source = Path(checks.__file__).resolve().parents[1]
    finished = subprocess.run(
        [sys.executable, "-c", _WITHOUT_NUMPY],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(source)},
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.strip() == "ok"


@pytest.mark.parametrize(
    ("value", "options", "message"),
    [
        (0, {"strict": True}, "must be a number > 0, got 0"),
        (float("inf"), {"strict": True}, "must be a number > 0, got inf"),
        (float("nan"), {}, "must be a number >= 0, got nan"),
        (True, {"integer": True}, "must be an integer >= 0, got True"),
        (np.True_, {}, "must be a number >= 0, got np.True_"),
        (2.5, {"integer": True}, "must be an integer >= 0, got 2.5"),
        ("3", {}, "must be a number >= 0, got '3'"),
        pytest.param(-HUGE, {}, "must be a number >= 0, got -1000", id="huge-negative-int"),
    ],
)
def test_bounded_number_refuses_in_one_message_naming_the_bound(value, options, message) -> None:
    with pytest.raises(NovaInputError) as info:
        checks.bounded_number(value, minimum=0, source="ChatClient", field="timeout_s", **options)
    assert info.value.message.startswith(message)
    assert (info.value.source, info.value.field) == ("ChatClient", "timeout_s")


def test_bounded_number_accepts_numpy_values_and_returns_plain_numbers() -> None:
    retries = checks.bounded_number(np.int64(3), minimum=0, integer=True)
    assert retries == 3 and type(retries) is int
    timeout = checks.bounded_number(np.float32(0.5), minimum=0, strict=True)
    assert timeout == 0.5 and type(timeout) is float
    assert checks.bounded_number(Fraction(1, 4), minimum=0) == 0.25


@pytest.mark.parametrize(
    ("box", "box_format"),
    [
        ([1e308, 10.0, 1e308, 20.0], "xywh"),  # its far corner
        ([10.0, 10.0, 1e200, 1e200], "xywh"),  # its area
        ([-1e308, 0.0, 1e308, 5.0], "xyxy"),  # its width
    ],
)
def test_a_box_past_the_largest_float_is_refused_where_every_box_enters(
    box: list[float], box_format: str
) -> None:
    """Finite values whose far corner, side or area overflows made every IoU overflow: numpy
    warned ("overflow encountered in multiply", naming nothing) and the box scored as a miss.
    The scorers and the evaluate module refuse it, as the predictions reader does (user11)."""
    from novabench.metrics.tasks import compute_task

    with pytest.raises(NovaInputError) as refused:
        compute_task(
            "localization",
            [{"boxes": [box], "scores": [1.0]}],
            [{"boxes": [[10, 10, 20, 20]]}],
            box_format=box_format,
        )
    assert str(refused.value) == (
        "example 0, field 'predictions.boxes[0]': too large: its far corner or its area is "
        f"past the largest float, got {box!r}"
    )
