"""Property tests: the parsers are total and their outputs keep their invariants."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from novabench.run.parsers import (
    CAPTION_STATUSES,
    CONVENTIONS,
    DIAGNOSIS_STATUSES,
    LOCALIZATION_STATUSES,
    ParsedBoxes,
    parse_caption,
    parse_diagnoses,
    parse_localization,
)

# The number of examples comes from the Hypothesis profile (tests/conftest.py): a few in the
# fast suite, 300 under `make test-slow`.
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Characters that matter to the parsers, so random text often looks like an answer.
ANSWER_ALPHABET = st.sampled_from(
    list("[]{}(),:;.-+'\"`/*\n 0123456789eE.abxyno_tlg")
    + [
        "```json\n",
        "```",
        "bbox_2d",
        "box_2d",
        "no target",
        "//",
        "/*",
        "*/",
        "found",
        "false",
        "<|box_start|>",
        "<|box_end|>",
        "1000",
        "1036",
        "NaN",
        "\u00e9",
        "\U0001f600",
        "<think>",
        "</think>",
        "<thinking>",
        "\u25c1/think\u25b7",
        "\n1. Primary ",
        "Others: ",
        "Most likely: ",
    ]
)
answer_text = st.one_of(st.text(), st.lists(ANSWER_ALPHABET, max_size=60).map("".join))
sizes = st.tuples(st.integers(1, 2000), st.integers(1, 2000))


def assert_boxes_valid(parsed: ParsedBoxes, image_size: tuple[int, int]) -> None:
    width, height = image_size
    assert parsed.status in LOCALIZATION_STATUSES
    assert parsed.error is None or not parsed.error.startswith("internal"), parsed.error
    assert len(parsed.labels) == len(parsed.boxes)
    assert all(isinstance(label, str) for label in parsed.labels)
    outside = 0
    for x, y, w, h in parsed.boxes:
        assert w > 0 and h > 0 and all(math.isfinite(v) for v in (x, y, w, h))
        inside = -1e-6 * width <= x and -1e-6 * height <= y
        outside += not (inside and x + w <= width * (1 + 1e-6) and y + h <= height * (1 + 1e-6))
    assert (
        parsed.n_out_of_range == outside
    )  # boxes are kept as given; each one past the edge counted
    if parsed.status not in {"ok", "ok_order_from_keys", "truncated_ok"}:
        assert parsed.boxes == []
    if parsed.status == "truncated_ok":
        assert parsed.boxes
    assert min(parsed.n_degenerate_dropped, parsed.n_out_of_range, parsed.n_swapped) >= 0


@SETTINGS
@given(
    text=answer_text,
    image_size=sizes,
    input_size=st.none() | sizes,
    convention=st.sampled_from(CONVENTIONS),
)
def test_localization_is_total_on_any_text(text, image_size, input_size, convention) -> None:
    parsed = parse_localization(
        text, image_size=image_size, input_size=input_size, convention=convention
    )
    assert_boxes_valid(parsed, image_size)


@SETTINGS
@given(
    value=st.one_of(
        st.none(),
        st.integers(),
        st.floats(),
        st.binary(max_size=50),
        st.lists(st.integers(), max_size=5),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    )
)
def test_parsers_are_total_on_non_text(value) -> None:
    assert_boxes_valid(parse_localization(value, image_size=(480, 480)), (480, 480))
    assert_diagnoses_valid(parse_diagnoses(value))
    if value is None or isinstance(value, (int, float)):  # no text at all: nothing to read
        assert parse_diagnoses(value).diagnoses == [] and parse_diagnoses(value).error
    caption = parse_caption(value)
    assert caption.status in CAPTION_STATUSES
    assert caption.caption == " ".join(caption.caption.split())
    assert (caption.caption == "") == (caption.status != "ok")


# --- structured random box answers

coordinate = st.one_of(st.integers(-300, 1300), st.floats(-300, 1300, allow_nan=False))
box_numbers = st.lists(coordinate, min_size=4, max_size=4)
label = st.text(alphabet=st.sampled_from(list("abc XYZ:[]()-'")), max_size=12)


def render(style: int, boxes: list[tuple[str, list[float]]]) -> str:
    if style == 0:  # protocol lines
        return "\n".join(
            f"{name}: [{', '.join(str(v) for v in numbers)}]" for name, numbers in boxes
        )
    if style == 1:  # Qwen JSON in a fence, with a comment and trailing commas
        items = ",\n".join(
            f'  {{"bbox_2d": {json.dumps(numbers)}, "label": {json.dumps(name)}}}, // x'
            for name, numbers in boxes
        )
        return f"Result:\n```json\n[\n{items}\n]\n```\nDone."
    if style == 2:  # found/boxes object
        return json.dumps(
            {"found": bool(boxes), "boxes": [{"box": n, "label": m} for m, n in boxes]}
        )
    return " ; ".join(f"[{' '.join(str(v) for v in numbers)}]" for _, numbers in boxes)  # spaces


@SETTINGS
@given(
    boxes=st.lists(st.tuples(label, box_numbers), max_size=8),
    style=st.integers(0, 3),
    cut=st.floats(0, 1),
    image_size=sizes,
    input_size=st.none() | sizes,
    convention=st.sampled_from(CONVENTIONS),
)
def test_localization_on_random_box_answers(
    boxes, style, cut, image_size, input_size, convention
) -> None:
    text = render(style, boxes)
    text = text[: int(len(text) * cut)] if cut < 0.5 else text
    parsed = parse_localization(
        text, image_size=image_size, input_size=input_size, convention=convention
    )
    assert_boxes_valid(parsed, image_size)


def _ordered(low: int, span: int) -> tuple[int, int]:
    return low, min(low + span, 1000)  # low <= 999 so high > low


# (ymin, xmin, ymax, xmax) with min < max, built without filtering (no rejected examples).
ordered_protocol_box = st.tuples(
    st.builds(_ordered, st.integers(0, 999), st.integers(1, 1000)),
    st.builds(_ordered, st.integers(0, 999), st.integers(1, 1000)),
).map(lambda yx: (yx[0][0], yx[1][0], yx[0][1], yx[1][1]))


@SETTINGS
@given(boxes=st.lists(ordered_protocol_box, min_size=1, max_size=6), image_size=sizes)
def test_protocol_lines_round_trip(boxes, image_size) -> None:
    width, height = image_size
    text = "\n".join(f"finding {i}: [{a}, {b}, {c}, {d}]" for i, (a, b, c, d) in enumerate(boxes))
    parsed = parse_localization(text, image_size=image_size)
    assume(any(v > 1 for box in boxes for v in box))  # all-0/1 boxes are ambiguous by design
    assert parsed.status == "ok" and parsed.convention == "protocol"
    assert parsed.labels == [f"finding {i}" for i in range(len(boxes))]
    for (ymin, xmin, ymax, xmax), got in zip(boxes, parsed.boxes):
        expected = [
            xmin / 1000 * width,
            ymin / 1000 * height,
            (xmax - xmin) / 1000 * width,
            (ymax - ymin) / 1000 * height,
        ]
        assert all(abs(g - e) <= 1e-9 * max(width, height) for g, e in zip(got, expected))


pixel_box = st.tuples(
    st.integers(0, 400), st.integers(0, 400), st.integers(1, 80), st.integers(1, 80)
)


@SETTINGS
@given(boxes=st.lists(pixel_box, min_size=1, max_size=6), cut=st.integers(0, 10_000))
def test_truncated_qwen_json_recovers_a_prefix(boxes, cut) -> None:
    items = [
        {"bbox_2d": [x, y, x + w, y + h], "label": f"l{i}"} for i, (x, y, w, h) in enumerate(boxes)
    ]
    full = "```json\n" + json.dumps(items, indent=2) + "\n```"
    text = full[: cut % (len(full) + 1)]
    parsed = parse_localization(text, image_size=(480, 480), input_size=(480, 480))
    expected = [[float(x), float(y), float(w), float(h)] for x, y, w, h in boxes]
    assert parsed.status in {"ok", "truncated_ok", "unparseable", "empty"}
    assert parsed.boxes == expected[: len(parsed.boxes)]
    written = [f"l{i}" for i in range(len(parsed.boxes))]
    # The last object may be cut inside its label: its box is complete, its label unknown.
    assert parsed.labels[:-1] == written[:-1]
    assert parsed.labels[-1:] in (written[-1:], [""])
    if text == full:
        assert parsed.status == "ok" and parsed.boxes == expected


# --- diagnoses and captions

word = st.text(
    alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN")),
    min_size=1,
    max_size=8,
)
diagnosis_name = st.lists(word, min_size=1, max_size=4).map(" ".join)


def assert_diagnoses_valid(parsed) -> None:
    assert parsed.status in DIAGNOSIS_STATUSES
    assert parsed.error is None or not parsed.error.startswith("internal"), parsed.error
    assert all(isinstance(d, str) and d.strip() == d and d for d in parsed.diagnoses)
    keys = [" ".join(d.casefold().split()) for d in parsed.diagnoses]
    assert len(keys) == len(set(keys))
    assert bool(parsed.diagnoses) == (
        parsed.status in {"ok", "partial", "fallback_list", "fallback_comma_one_name"}
    )


@SETTINGS
@given(text=answer_text)
def test_diagnoses_total_and_deduplicated(text) -> None:
    assert_diagnoses_valid(parse_diagnoses(text))


@SETTINGS
@given(
    first=diagnosis_name,
    others=st.lists(diagnosis_name, max_size=7),
    fenced=st.booleans(),
    quote=st.sampled_from(['"', "'"]),
)
def test_diagnosis_json_round_trip(first, others, fenced, quote) -> None:
    def q(text: str) -> str:
        return f"{quote}{text}{quote}"

    body = (
        f"{{{q('most_likely_diagnosis')}: {q(first)}, "
        f"{q('other_possible_diagnoses')}: [{', '.join(q(o) for o in others)}]}}"
    )
    text = f"Answer:\n```json\n{body}\n```\nHope this helps." if fenced else body
    expected: list[str] = []
    for name in [first, *others]:  # keep the first spelling of each case-insensitive name
        if name.casefold() not in {e.casefold() for e in expected}:
            expected.append(name)
    parsed = parse_diagnoses(text)
    assert parsed.diagnoses == expected
    assert parsed.status == ("ok" if len(expected) >= 5 else "partial")
    assert parsed.n_duplicates_removed == 1 + len(others) - len(expected)


@SETTINGS
@given(text=answer_text)
def test_caption_total_and_clean(text) -> None:
    parsed = parse_caption(text)
    assert parsed.status in CAPTION_STATUSES
    assert parsed.caption == " ".join(parsed.caption.split())
    assert (parsed.caption == "") == (parsed.status != "ok")


@SETTINGS
@given(
    words=st.lists(word, min_size=1, max_size=12),
    prefix=st.sampled_from(
        ["", "Caption: ", "**Answer:** ", "Sure! Here is the description:\n", "Description - "]
    ),
)
def test_caption_prefix_is_removed(words, prefix) -> None:
    sentence = " ".join(words) + "."
    assume(parse_caption(sentence).caption == sentence)  # the sentence itself is not a prefix
    assert parse_caption(prefix + sentence).caption == sentence


# --- reasoning blocks and fallback lists

TAG_WORDS = ("think", "\u25c1", "\u25b7")
tag_free_text = answer_text.filter(lambda text: not any(w in text.lower() for w in TAG_WORDS))


@SETTINGS
@given(reasoning=tag_free_text, answer=tag_free_text, thinking=st.booleans(), closed=st.booleans())
def test_reasoning_never_changes_the_parse(reasoning, answer, thinking, closed) -> None:
    tag = "thinking" if thinking else "think"
    # A closed block, or the closing tag alone (the template opened it in the prompt).
    text = f"<{tag}>{reasoning}</{tag}>{answer}" if closed else f"{reasoning}</{tag}>{answer}"
    expected_caption, got_caption = parse_caption(answer), parse_caption(text)
    assert (got_caption.caption, got_caption.status) == (
        expected_caption.caption,
        expected_caption.status,
    )
    expected_dx, got_dx = parse_diagnoses(answer), parse_diagnoses(text)
    assert (got_dx.diagnoses, got_dx.status) == (expected_dx.diagnoses, expected_dx.status)
    expected_boxes = parse_localization(answer, image_size=(480, 480))
    got_boxes = parse_localization(text, image_size=(480, 480))
    assert (got_boxes.boxes, got_boxes.labels, got_boxes.status) == (
        expected_boxes.boxes,
        expected_boxes.labels,
        expected_boxes.status,
    )


@SETTINGS
@given(reasoning=tag_free_text)
def test_cut_off_reasoning_is_a_failure(reasoning) -> None:
    text = "<think>" + reasoning
    assert parse_caption(text).status == "empty"
    assert parse_diagnoses(text).status == "empty"
    assert parse_localization(text, image_size=(480, 480)).status == "empty"


# Names whose first word is also a label word ("Primary", "Other"...), then plain words.
# Connector words ("is", "are", "include") would make "Primary is x" a label: left out.
plain_word = st.text(
    alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyz")), min_size=1, max_size=8
).filter(lambda w: w not in {"is", "are", "include", "includes"})
first_word = (
    st.sampled_from(
        [
            "Primary",
            "Leading",
            "Final",
            "Working",
            "Other",
            "Differential",
            "Alternative",
            "Most",
            "Glioma",
            "Abscess",
        ]
    )
    | word
)
list_name = st.builds(
    lambda first, rest: " ".join([first, *rest]),
    first_word,
    st.lists(plain_word, min_size=1, max_size=3),
)


@SETTINGS
@given(
    names=st.lists(list_name, min_size=1, max_size=8),
    marker=st.sampled_from(["{n}.", "{n})", "({n})", "-", "*", "\u2022", "**{n}.**"]),
    heading=st.sampled_from(["", "Differential diagnosis:\n", "<think>\n1. Primary x\n</think>\n"]),
)
def test_fallback_list_round_trip(names, marker, heading) -> None:
    text = heading + "\n".join(f"{marker.format(n=i)} {name}" for i, name in enumerate(names, 1))
    expected: list[str] = []
    for name in names:
        if name.casefold() not in {e.casefold() for e in expected}:
            expected.append(name)
    parsed = parse_diagnoses(text)
    assert parsed.status == "fallback_list" and parsed.diagnoses == expected


# --- diagnoses in prose

# Pieces of prose answers: statements, separators, brackets, negations, known and joined names.
PROSE_TOKENS = st.sampled_from(
    [
        "The most likely diagnosis is ",
        "Differential diagnoses include ",
        "Differentials: ",
        " is the most likely diagnosis",
        "Most likely: ",
        "I favour ",
        "I would not favour ",
        "the findings are consistent with ",
        "most consistent with ",
        " should also be considered",
        "followed by ",
        " with ",
        " as differentials",
        " over ",
        ", given the ",
        " in this patient",
        "The differential is broad and includes ",
        " is most likely",
        "not ",
        " but ",
        "the lesion",
        " and ",
        ", ",
        "; ",
        " or ",
        ", and ",
        "(",
        ")",
        "1) ",
        ". ",
        "\n",
        "**",
        "- ",
        "e.g. ",
        "etc.",
        "possibly a ",
        "glioblastoma",
        "lymphoma",
        "abscess",
        "hand, foot and mouth disease",
        "x",
        "hypomyelination with atrophy of the basal ganglia and cerebellum",
        "<think>",
        "</think>",
    ]
)
prose_text = st.lists(PROSE_TOKENS, max_size=40).map("".join)


@SETTINGS
@given(text=prose_text)
def test_prose_answers_are_total_and_deduplicated(text) -> None:
    assert_diagnoses_valid(parse_diagnoses(text))


# Made-up names no lexicon holds and no cue, hedge or clause word can be ("zqbt zqkm"):
# two words or more, so " and " between two of them is a list separator.
pseudo_word = st.text(
    alphabet=st.sampled_from(list("bcdfghjklmnprstvz")), min_size=1, max_size=5
).map(lambda letters: "zq" + letters)
prose_name = st.lists(pseudo_word, min_size=2, max_size=3).map(" ".join)
STRONG_LEADS = [
    "Based on the findings, the most likely diagnosis is {}.",
    "{} is the most likely diagnosis, given the imaging findings.",
    "Overall, I think {} is the leading diagnosis in this patient.",
    "I favour {} over the alternatives.",
    "This most likely represents a {}.",
    "The most likely diagnosis: {} - typical appearance.",
]
WEAK_LEADS = [
    "The findings are most consistent with {} in this patient.",
    "The imaging features are suggestive of {}.",
    "Highly suggestive of {}.",
]
DIFFERENTIALS = [
    "Differential diagnoses include {}.",
    "Other considerations include {}.",
    "To consider: {}.",
    "{} should also be considered.",
    "The differential is broad and includes {}.",
    "Differentials: {}.",
]
LAST_SEPARATORS = [" and ", ", and ", " or ", ", or ", ", "]


def _render_list(names: list[str], last: str) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + last + names[-1]


def _unique(names: list[str]) -> list[str]:
    kept: list[str] = []
    for name in names:
        if name.casefold() not in {k.casefold() for k in kept}:
            kept.append(name)
    return kept


@SETTINGS
@given(
    first=prose_name,
    others=st.lists(prose_name, min_size=1, max_size=6),
    lead=st.sampled_from(STRONG_LEADS),
    differential=st.sampled_from(DIFFERENTIALS),
    last=st.sampled_from(LAST_SEPARATORS),
    lead_last=st.booleans(),
)
def test_prose_round_trip(first, others, lead, differential, last, lead_last) -> None:
    statements = [lead.format(first), differential.format(_render_list(others, last))]
    text = " ".join(statements[::-1] if lead_last else statements)
    parsed = parse_diagnoses(text)
    assert parsed.status == "fallback_list"
    assert parsed.diagnoses == _unique([first, *others]), text


@SETTINGS
@given(
    first=prose_name,
    lead=st.sampled_from(WEAK_LEADS),
    others=st.lists(prose_name, max_size=4),
    last=st.sampled_from(LAST_SEPARATORS),
)
def test_prose_weak_lead_round_trip(first, lead, others, last) -> None:
    text = lead.format(first)
    if others:
        text += " Differentials include " + _render_list(others, last) + "."
    assert parse_diagnoses(text).diagnoses == _unique([first, *others]), text


@SETTINGS
@given(
    names=st.lists(prose_name, min_size=1, max_size=6),
    last=st.sampled_from(LAST_SEPARATORS),
    negated=st.sampled_from(
        [
            "I would not favour {}.",
            "The findings are not suggestive of {}.",
            "The most likely diagnosis is not {} but {}.",
        ]
    ),
)
def test_prose_negated_lead_is_never_first(names, last, negated) -> None:
    rejected = names[0]
    text = (
        negated.format(rejected, names[-1])
        + " Differentials include "
        + _render_list(names[1:] or ["zqx zqy"], last)
        + "."
    )
    parsed = parse_diagnoses(text)
    if "but" in negated:
        assert parsed.diagnoses[0] == names[-1]
    elif rejected not in names[1:]:
        assert rejected not in parsed.diagnoses
