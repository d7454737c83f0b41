"""The reviewed answer corpora: every answer's read is pinned, so a parser change shows each move.

``tests/data/answer_corpora/`` holds the distinct answers five hostile reviewers wrote on
2026-12-06 to test diagnosis and box parser rules (every rule written that night was
withdrawn: it read more of their answers wrong than right). When a test here fails, run
``PYTHONPATH=src python scripts/pin_answer_corpora.py --check`` and review every move it
prints (toward or away from the reviewer's expectation); a change that moves a read moves
scores: CHANGELOG entry, SCORING_REVISION raised, and the new reads pinned by running the
script without ``--check``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.scripts import load_script

pin = load_script("pin_answer_corpora")

_HOW = (
    "Run `PYTHONPATH=src python scripts/pin_answer_corpora.py --check` and review every move "
    "(toward/away from the reviewers' expectations). A parser change that moves a read is a "
    "score-moving change: CHANGELOG entry + SCORING_REVISION; then pin the new reads by running "
    "the script without --check."
)


@pytest.fixture(scope="module")
def diagnoses() -> list[dict[str, Any]]:
    return pin.load(pin.DIAGNOSES)


@pytest.fixture(scope="module")
def boxes() -> list[dict[str, Any]]:
    return pin.load(pin.BOXES)


def _fail_with(moves: list[Any], total: int) -> None:
    __tracebackhide__ = True
    shown = "\n".join(move.describe() for move in moves[:8])
    more = f"\n... and {len(moves) - 8} more" if len(moves) > 8 else ""
    pytest.fail(f"{len(moves)} of {total} pinned reads moved:\n{shown}{more}\n{_HOW}")


def test_every_diagnosis_answer_reads_as_pinned(diagnoses: list[dict[str, Any]]) -> None:
    _, moves = pin.find_moves("diagnoses", diagnoses, pin.read_diagnosis_answer)
    if moves:
        _fail_with(moves, len(diagnoses))


def test_every_box_answer_reads_as_pinned(boxes: list[dict[str, Any]]) -> None:
    _, moves = pin.find_moves("boxes", boxes, pin.read_box_answer)
    if moves:
        _fail_with(moves, len(boxes))


def test_a_moved_read_is_reported_with_its_direction(
    diagnoses: list[dict[str, Any]], boxes: list[dict[str, Any]]
) -> None:
    # A pinned read that differs from what the parser gives now must show as one move.
    box_row = copy.deepcopy(next(row for row in boxes if row["expected"] == "AB"))
    assert box_row["read"]["letters"] == "AB"
    box_row["read"]["letters"] = "B"
    _, moves = pin.find_moves("boxes", [box_row], pin.read_box_answer)
    assert [(m.id, m.direction) for m in moves] == [(box_row["id"], "toward")]

    dx_row = copy.deepcopy(
        next(r for r in diagnoses if r["golds"] and r["read"]["diagnoses"][:1] == r["golds"][:1])
    )
    dx_row["read"]["diagnoses"] = ["Not a disease"]
    _, moves = pin.find_moves("diagnoses", [dx_row], pin.read_diagnosis_answer)
    assert len(moves) == 1 and moves[0].direction.startswith("toward (top-1 0->1")


def test_the_corpora_are_distinct_answers_with_their_sources(
    diagnoses: list[dict[str, Any]], boxes: list[dict[str, Any]]
) -> None:
    assert len({row["answer"] for row in diagnoses}) == len(diagnoses) == 1132
    assert len({(row["answer"], row["convention"]) for row in boxes}) == len(boxes) == 445
    # with the duplicates folded in: every answer the reviewers wrote is accounted for
    assert sum(1 + len(row.get("also", [])) for row in diagnoses) == 1158
    assert sum(1 + len(row.get("also", [])) for row in boxes) == 211 + 242
    ids = [row["id"] for row in diagnoses + boxes]
    assert len(set(ids)) == len(ids)
    size = pin.DIAGNOSES.stat().st_size + pin.BOXES.stat().st_size
    assert size < 1_500_000


def test_how_many_reads_meet_the_reviewers_expectations(
    diagnoses: list[dict[str, Any]], boxes: list[dict[str, Any]]
) -> None:
    # Figures of the pinned reads at e9d1138; a change that moves them says so here.
    assert pin.agreement(diagnoses, boxes) == {
        "dx_pairs": 886,  # (answer, gold) pairs
        "dx_top1": 456,
        "dx_top5": 540,
        # reads a withdrawn rule gave and a reviewer judged (u27w b1-b3, u29w c1-c7)
        "dx_judged_right": 141,
        "dx_judged_right_now": 0,
        "dx_judged_wrong": 211,
        "dx_judged_wrong_now": 0,
        "dx_judged_neutral": 63,
        "dx_judged_neutral_now": 0,
        "box_firm": 333,
        "box_firm_agree": 250,
        "box_ambiguous": 112,
        "box_ambiguous_agree": 86,
    }
    # The box counts again, straight from the file, without the script's code.
    firm = [r for r in boxes if not r["expected"].startswith("?")]
    assert sum(r["read"]["letters"] == r["expected"] for r in firm) == 250


def test_the_letter_table_is_the_reviewers_boxes() -> None:
    # box_2d is [ymin, xmin, ymax, xmax] in 0-1000; on 480x480 pixels x 0.48; read as x, y, w, h.
    assert (
        pin.read_box_answer(
            {
                "answer": '{"box_2d": [300, 700, 400, 800], "label": "lesion"}',
                "image_size": [480, 480],
                "convention": "auto",
            }
        )["letters"]
        == "C"
    )
    assert pin.letters_of([[100.0, 350.0, 50.0, 50.0], [96.0, 336.0, 48.0, 48.0]]) == "DD"
