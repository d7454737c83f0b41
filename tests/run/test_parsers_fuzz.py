"""Seeded fuzzing of the three answer parsers: whatever the answer, a declared status.

Inputs are random bytes, random code points (lone surrogates included) and the realistic
answers of ``answers_table.py`` mutated where parsers look: brackets, quotes, fences,
reasoning tags, numbers, list markers. The seeds are fixed, so a failure reproduces; the
number of inputs is bounded so the file runs in a few seconds (the unbounded search is
``test_parsers_properties.py``'s job).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from novabench.run.parsers import (
    CAPTION_STATUSES,
    CONVENTIONS,
    DIAGNOSIS_STATUSES,
    LOCALIZATION_STATUSES,
    parse_caption,
    parse_diagnoses,
    parse_localization,
)

from .answers_table import CAPTION_CASES, DIAGNOSIS_CASES, LOCALIZATION_CASES

SEEDS = range(4)
INPUTS_PER_SEED = 1000
# Each parser meets seed 0's inputs in the fast suite; seeds 1-3 under `make test-slow`.
FAST_THEN_SLOW_SEEDS = [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in SEEDS[1:])]

# Pieces the parsers treat specially, inserted by the mutations.
TOKENS = [
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    '"',
    "'",
    ",",
    ":",
    ";",
    "\n",
    "\n\n",
    " ",
    "```",
    "```json\n",
    "<think>",
    "</think>",
    "\u25c1/think\u25b7",
    "//",
    "/*",
    "*/",
    "\\",
    "\\u",
    "\\ud800",
    "\ud800",
    "\udfff",
    "\ud83d",
    "\ufffd",
    "\x00",
    "0",
    "1000",
    "-7",
    "1e999",
    "NaN",
    ".5",
    "null",
    "true",
    "bbox_2d",
    "box_2d",
    "<|box_start|>",
    "<|box_end|>",
    "1. ",
    "- ",
    "**",
    "Most likely: ",
    "Others: ",
    "Differentials include ",
    " and ",
    " or ",
    "no target",
    "\u00e9",
    "\U0001f600",
    "\u200b",
]
REAL_ANSWERS = [
    case.text
    for table in (LOCALIZATION_CASES, DIAGNOSIS_CASES, CAPTION_CASES)
    for case in table
    if isinstance(case.text, str) and case.text
]


def _random_bytes(rng: random.Random) -> bytes:
    return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))


def _random_code_points(rng: random.Random) -> str:
    # Mostly ASCII, then anything below U+110000, surrogates included.
    return "".join(
        chr(rng.randrange(128) if rng.random() < 0.7 else rng.randrange(0x110000))
        for _ in range(rng.randrange(0, 200))
    )


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 6)):
        at = rng.randint(0, len(text))
        end = rng.randint(at, min(len(text), at + 40))
        choice = rng.randrange(7)
        if choice == 0:  # insert a special token
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        elif choice == 1:  # delete a span
            text = text[:at] + text[end:]
        elif choice == 2:  # cut the answer off, as a token limit does
            text = text[:at]
        elif choice == 3:  # repeat a span, as a looping generation does
            text = text[:end] + text[at:end] * rng.randint(2, 20) + text[end:]
        elif choice == 4:  # replace a span by a token
            text = text[:at] + rng.choice(TOKENS) + text[end:]
        elif choice == 5:  # splice in part of another real answer
            other = rng.choice(REAL_ANSWERS)
            start = rng.randint(0, len(other))
            text = text[:at] + other[start : start + 80] + text[end:]
        else:  # change the case of a span
            text = text[:at] + text[at:end].swapcase() + text[end:]
    return text


def _fuzz_inputs(seed: int) -> list[Any]:
    rng = random.Random(seed)
    inputs: list[Any] = []
    for _ in range(INPUTS_PER_SEED):
        kind = rng.randrange(4)
        if kind == 0:
            raw = _random_bytes(rng)
            # As bytes, and as text decoded keeping the bad bytes as lone surrogates.
            inputs.append(raw if rng.random() < 0.5 else raw.decode("utf-8", "surrogateescape"))
        elif kind == 1:
            inputs.append(_random_code_points(rng))
        else:
            inputs.append(_mutate(rng, rng.choice(REAL_ANSWERS)))
    return inputs


def _strings_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings_in(item)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _strings_in(item)]
    return []


def _assert_declared(parsed: Any, statuses: tuple[str, ...], answer: Any) -> None:
    assert parsed.status in statuses, (parsed, answer)
    assert parsed.error is None or "internal parser error" not in parsed.error, (parsed, answer)
    for text in _strings_in(parsed.to_dict()):
        text.encode("utf-8")  # no lone surrogate leaks into a result


def test_fuzz_inputs_are_seeded_and_varied() -> None:
    assert _fuzz_inputs(0) == _fuzz_inputs(0)
    inputs = [answer for seed in SEEDS for answer in _fuzz_inputs(seed)]
    assert any(isinstance(answer, bytes) for answer in inputs)
    surrogate = [
        answer
        for answer in inputs
        if isinstance(answer, str) and any("\ud800" <= char <= "\udfff" for char in answer)
    ]
    assert len(surrogate) >= 10  # the case issue 9 is about is well represented
    assert len(set(map(repr, inputs))) > 0.9 * len(inputs)


@pytest.mark.parametrize("seed", FAST_THEN_SLOW_SEEDS)
def test_localization_never_raises_and_out_of_image_boxes_are_counted(seed: int) -> None:
    rng = random.Random(1000 + seed)
    for answer in _fuzz_inputs(seed):
        width, height = rng.randint(1, 2000), rng.randint(1, 2000)
        input_size = rng.choice([None, (rng.randint(1, 2000), rng.randint(1, 2000))])
        parsed = parse_localization(
            answer,
            image_size=(width, height),
            input_size=input_size,
            convention=rng.choice(CONVENTIONS),
        )
        _assert_declared(parsed, LOCALIZATION_STATUSES, answer)
        assert parsed.status != "ok_out_of_image"  # given after parsing, by the predictions layer
        assert len(parsed.labels) == len(parsed.boxes)
        outside = 0
        for x, y, box_width, box_height in parsed.boxes:
            assert all(math.isfinite(v) for v in (x, y, box_width, box_height))
            assert box_width > 0 and box_height > 0
            inside = x >= -1e-6 * width and y >= -1e-6 * height
            inside = inside and x + box_width <= width * (1 + 1e-6)
            outside += not (inside and y + box_height <= height * (1 + 1e-6))
        assert parsed.n_out_of_range == outside  # kept as given, every one counted


@pytest.mark.parametrize(
    "parse, statuses",
    [
        (parse_diagnoses, DIAGNOSIS_STATUSES),
        (parse_caption, CAPTION_STATUSES),
    ],
    ids=["diagnoses", "caption"],
)
@pytest.mark.parametrize("seed", FAST_THEN_SLOW_SEEDS)
def test_text_parsers_never_raise(
    seed: int, parse: Callable[[Any], Any], statuses: tuple[str, ...]
) -> None:
    for answer in _fuzz_inputs(seed):
        _assert_declared(parse(answer), statuses, answer)
