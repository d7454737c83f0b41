"""Re-read the reviewed answer corpora with the installed parsers and show every read that moved.

``tests/data/answer_corpora/diagnoses.jsonl`` and ``boxes.jsonl`` hold the ~1,600 distinct
answers that hostile reviewers (u24w, u27w, u29w for diagnoses; u25w, u28w for boxes) wrote
on 2026-12-06 to test parser rules, each with what the reviewer expected (the case's gold
diagnoses; the box letters a radiologist reads, ``?`` in front when ambiguous) and the read
pinned from this tree (``"read"``). This script reads every answer again, prints how many
reads moved, each one before -> after, and for answers with an expectation whether the move
goes toward it or away from it. Without ``--check`` it then writes the new reads into the
files (review the diff first: a moved read is a score-moving change, with a CHANGELOG entry
and SCORING_REVISION raised). With ``--check`` it writes nothing and exits 1 when a read moved.

    PYTHONPATH=src python scripts/pin_answer_corpora.py [--check] [--show N]

Box letters: A, B, C, D are the four boxes the reviewers wrote, as the parser returns them
(``[x, y, width, height]`` pixels of a 480x480 image), either from ``box_2d`` (0-1000) or from
pixel coordinates:

>>> letters_of([[48.0, 48.0, 48.0, 48.0], [300.0, 300.0, 50.0, 50.0], [1.0, 2.0, 3.0, 4.0]])
'AB?'
>>> direction_for_boxes("AB", {"letters": "B"}, {"letters": "AB"})
'toward'
>>> direction_for_boxes("?AB", {"letters": "AB"}, {"letters": "B"})
'away (ambiguous)'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).resolve().parents[1] / "tests" / "data" / "answer_corpora"
DIAGNOSES = CORPORA / "diagnoses.jsonl"
BOXES = CORPORA / "boxes.jsonl"

# The reviewers' boxes A-D as parse_localization returns them on a 480x480 image: from
# "box_2d" [ymin, xmin, ymax, xmax] in 0-1000 (first) and from pixel corners (second).
LETTER_BOXES: dict[tuple[float, ...], str] = {
    (48.0, 48.0, 48.0, 48.0): "A",
    (50.0, 50.0, 50.0, 50.0): "A",
    (288.0, 288.0, 48.0, 48.0): "B",
    (300.0, 300.0, 50.0, 50.0): "B",
    (336.0, 144.0, 48.0, 48.0): "C",
    (350.0, 150.0, 50.0, 50.0): "C",
    (96.0, 336.0, 48.0, 48.0): "D",
    (100.0, 350.0, 50.0, 50.0): "D",
}
BOX_DECIMALS = 3


def letters_of(boxes: Iterable[Iterable[float]]) -> str:
    """The reviewers' letter of each box in order; ``?`` for a box that is none of theirs."""
    return "".join(LETTER_BOXES.get(tuple(round(x, 1) for x in box), "?") for box in boxes)


def read_diagnosis_answer(row: dict[str, Any]) -> dict[str, Any]:
    """The current read of one diagnosis answer: status, diagnoses (best first), error.

    >>> read_diagnosis_answer({"answer": "1. Glioblastoma\\n2. Lymphoma"})["diagnoses"]
    ['Glioblastoma', 'Lymphoma']
    """
    from novabench.run.parsers import parse_diagnoses

    parsed = parse_diagnoses(row["answer"])
    return {"status": parsed.status, "diagnoses": list(parsed.diagnoses), "error": parsed.error}


def read_box_answer(row: dict[str, Any]) -> dict[str, Any]:
    """The current read of one box answer: status, boxes (rounded), their letters, notes.

    >>> row = {"answer": '{"box_2d": [100, 100, 200, 200], "label": "lesion"}',
    ...        "image_size": [480, 480], "convention": "auto"}
    >>> read = read_box_answer(row)
    >>> read["status"], read["boxes"], read["letters"]
    ('ok', [[48.0, 48.0, 48.0, 48.0]], 'A')
    """
    from novabench.run.parsers import parse_localization

    width, height = row["image_size"]
    parsed = parse_localization(
        row["answer"], image_size=(width, height), convention=row["convention"]
    )
    boxes = [[round(float(x), BOX_DECIMALS) for x in box] for box in parsed.boxes]
    return {
        "status": parsed.status,
        "boxes": boxes,
        "letters": letters_of(boxes),
        "notes": list(parsed.notes),
    }


def _gold_hits(diagnoses: list[str], golds: list[str]) -> tuple[int, int]:
    """(Top-1 hits, Top-5 hits) of one read over the answer's gold diagnoses."""
    from novabench.metrics.diagnosis import score_diagnosis

    if not golds or not diagnoses:
        return 0, 0
    scores = score_diagnosis([diagnoses] * len(golds), list(golds))
    n = len(golds)
    return round(scores["top1-lexicon"] * n), round(scores["top5-lexicon"] * n)


def direction_for_diagnoses(golds: list[str], before: dict[str, Any], after: dict[str, Any]) -> str:
    """Whether a moved read scores more or fewer Top-1/Top-5 hits on the answer's golds.

    >>> direction_for_diagnoses(["Lymphoma"], {"diagnoses": ["Glioblastoma", "Lymphoma"]},
    ...                         {"diagnoses": ["Lymphoma"]})
    'toward (top-1 0->1, top-5 1->1)'
    >>> direction_for_diagnoses([], {"diagnoses": []}, {"diagnoses": ["Lymphoma"]})
    'no expectation'
    """
    if not golds:
        return "no expectation"
    b1, b5 = _gold_hits(before["diagnoses"], golds)
    a1, a5 = _gold_hits(after["diagnoses"], golds)
    way = "toward" if (a1, a5) > (b1, b5) else "away" if (a1, a5) < (b1, b5) else "level"
    return f"{way} (top-1 {b1}->{a1}, top-5 {b5}->{a5})"


def direction_for_boxes(expected: str, before: dict[str, Any], after: dict[str, Any]) -> str:
    """Whether a moved read reaches or leaves the box letters the reviewer expected."""
    want = expected.lstrip("?")
    tail = " (ambiguous)" if expected.startswith("?") else ""
    if after["letters"] == want and before["letters"] != want:
        return "toward" + tail
    if before["letters"] == want and after["letters"] != want:
        return "away" + tail
    return "neither" + tail


@dataclass(frozen=True)
class Move:
    """One answer whose current read differs from the pinned one."""

    corpus: str
    id: str
    answer: str
    before: dict[str, Any]
    after: dict[str, Any]
    direction: str

    def describe(self) -> str:
        """Two lines: the answer, then pinned -> current read and the direction."""
        keys = ("status", "diagnoses") if self.corpus == "diagnoses" else ("status", "letters")
        before = {k: self.before.get(k) for k in keys}
        after = {k: self.after.get(k) for k in keys}
        if before == after:  # only the notes, the error text or the box numbers moved
            before, after = self.before, self.after
        return f"{self.corpus} {self.id} {self.answer[:160]!r}\n    {before} -> {after}  [{self.direction}]"


def load(path: Path) -> list[dict[str, Any]]:
    """The rows of one corpus file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def find_moves(
    corpus: str,
    rows: list[dict[str, Any]],
    reader: Callable[[dict[str, Any]], dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[Move]]:
    """Every row's current read, and the rows whose read differs from the pinned one."""
    current: list[dict[str, Any]] = []
    moves: list[Move] = []
    for row in rows:
        after = reader(row)
        current.append(after)
        before = row.get("read")
        if before == after:
            continue
        if before is None:
            direction = "new answer"
        elif corpus == "diagnoses":
            direction = direction_for_diagnoses(row["golds"], before, after)
        else:
            direction = direction_for_boxes(row["expected"], before, after)
        moves.append(Move(corpus, row["id"], row["answer"], before or {}, after, direction))
    return current, moves


def agreement(diagnoses: list[dict[str, Any]], boxes: list[dict[str, Any]]) -> dict[str, int]:
    """How the pinned reads meet the reviewers' expectations (the figures the test pins).

    Diagnoses: each (answer, gold) pair scores a Top-1 and a Top-5 hit or not; and of the
    reads a withdrawn rule gave that a reviewer judged right / wrong / neutral, how many the
    current read equals. Boxes: the read letters equal the expected ones, counted apart for
    firm and ambiguous (``?``) expectations.
    """
    out = {"dx_pairs": 0, "dx_top1": 0, "dx_top5": 0}
    for judged in ("right", "wrong", "neutral"):
        out[f"dx_judged_{judged}"] = 0
        out[f"dx_judged_{judged}_now"] = 0
    for row in diagnoses:
        top1, top5 = _gold_hits(row["read"]["diagnoses"], row["golds"])
        out["dx_pairs"] += len(row["golds"])
        out["dx_top1"] += top1
        out["dx_top5"] += top5
        for review in row.get("reviews", []):
            out[f"dx_judged_{review['judged']}"] += 1
            now = [row["read"]["status"], row["read"]["diagnoses"]]
            out[f"dx_judged_{review['judged']}_now"] += now == [review["status"], review["read"]]
    for kind in ("firm", "ambiguous"):
        out[f"box_{kind}"] = 0
        out[f"box_{kind}_agree"] = 0
    for row in boxes:
        kind = "ambiguous" if row["expected"].startswith("?") else "firm"
        out[f"box_{kind}"] += 1
        out[f"box_{kind}_agree"] += row["read"]["letters"] == row["expected"].lstrip("?")
    return out


def _write(path: Path, rows: list[dict[str, Any]], reads: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row, read in zip(rows, reads, strict=True):
            handle.write(json.dumps({**row, "read": read}, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Re-read both corpora; print the moves; pin them (or, with --check, exit 1 on any)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a read moved"
    )
    parser.add_argument("--show", type=int, default=None, help="print at most N moves")
    args = parser.parse_args(argv)
    exit_code = 0
    for corpus, path, reader in (
        ("diagnoses", DIAGNOSES, read_diagnosis_answer),
        ("boxes", BOXES, read_box_answer),
    ):
        rows = load(path)
        current, moves = find_moves(corpus, rows, reader)
        ways: dict[str, int] = {}
        for move in moves:
            way = move.direction.split(" (")[0]
            ways[way] = ways.get(way, 0) + 1
        print(f"{corpus}: {len(rows)} answers, {len(moves)} reads moved {ways or ''}")
        for move in moves[: args.show]:
            print("  " + move.describe())
        if moves:
            exit_code = 1
            if not args.check:
                _write(path, rows, current)
                print(f"  pinned the new reads in {path}")
    if not args.check:
        return 0
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
