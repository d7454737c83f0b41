"""Reading judge replies: the pair verdict and the case verdict."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_YES = frozenset({"true", "yes", "match", "matches", "correct", "same"})
_NO = frozenset({"false", "no", "mismatch", "incorrect", "different"})
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")


def _as_verdict(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _YES | _NO:
        return value.strip().lower() in _YES
    return None


def parse_judge_verdict(text: str | None) -> bool | None:
    """Read a judge reply: a JSON object with ``match``, or a single yes/no word.

    Reasoning blocks (``<think>...</think>``) and code fences are ignored. A reply is read
    as a verdict when its JSON objects agree on a boolean ``match`` (``true``/``false``,
    or the strings ``"yes"``/``"no"``...), or when the whole reply is one word among
    true/yes/match/correct/same and false/no/mismatch/incorrect/different. Anything else,
    including contradicting objects, is unreadable.

    Args:
        text: the reply content (``None`` for a missing content).

    Returns:
        The verdict, or ``None`` when the reply cannot be read.

    Example:
        >>> parse_judge_verdict('```json\\n{"match": true}\\n```')
        True
        >>> parse_judge_verdict("No.")
        False
        >>> parse_judge_verdict("It depends on the grade.") is None
        True
    """
    if not isinstance(text, str):
        return None
    text = _THINKING.sub(" ", text)
    found: set[bool] = set()
    saw_json = False
    for chunk in _JSON_OBJECT.findall(text):
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue
        if isinstance(obj, dict) and "match" in obj:
            saw_json = True
            verdict = _as_verdict(obj["match"])
            if verdict is None:
                return None
            found.add(verdict)
    if saw_json:
        return found.pop() if len(found) == 1 else None
    words = re.findall(r"[a-z]+", text.lower().replace("```", " "))
    if len(words) == 1 and words[0] in _YES | _NO:
        return words[0] in _YES
    return None


@dataclass(frozen=True)
class CaseVerdict:
    """The case judge's verdict on one case.

    Attributes:
        top1: the first prediction matches the reference.
        top5: one of the (at most five) predictions matches.
        matched_slot: 1-based number of the first matching prediction, ``None`` for none.
    """

    top1: bool
    top5: bool
    matched_slot: int | None

    @classmethod
    def from_slot(cls, slot: int | None) -> CaseVerdict:
        """The verdict naming ``slot`` (``None``: no match).

        Example:
            >>> CaseVerdict.from_slot(3)
            CaseVerdict(top1=False, top5=True, matched_slot=3)
        """
        return cls(top1=slot == 1, top5=slot is not None and 1 <= slot <= 5, matched_slot=slot)


def parse_case_verdict(text: str | None, n_predictions: int = 5) -> CaseVerdict | None:
    """Read a case judge reply: one JSON object ``{"matched_slot": k or null}``.

    Reasoning blocks (``<think>...</think>``) and code fences are ignored. The slot must be
    an integer in ``1..n_predictions`` (and at most 5) or null; every JSON object carrying
    ``matched_slot`` must agree. Anything else is unreadable.

    Args:
        text: the reply content (``None`` for a missing content).
        n_predictions: how many predictions were shown to the judge.

    Returns:
        The verdict, or ``None`` when the reply is malformed or names a slot out of range.

    Example:
        >>> parse_case_verdict('```json\\n{"matched_slot": 3}\\n```')
        CaseVerdict(top1=False, top5=True, matched_slot=3)
        >>> parse_case_verdict('{"matched_slot": null}')
        CaseVerdict(top1=False, top5=False, matched_slot=None)
        >>> parse_case_verdict('{"matched_slot": 4}', n_predictions=2) is None
        True
        >>> parse_case_verdict("slot two") is None
        True
    """
    if not isinstance(text, str):
        return None
    text = _THINKING.sub(" ", text)
    slots: set[int | None] = set()
    for chunk in _JSON_OBJECT.findall(text):
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue
        if not (isinstance(obj, dict) and "matched_slot" in obj):
            continue
        slot = obj["matched_slot"]
        if slot is not None and (isinstance(slot, bool) or not isinstance(slot, int)):
            return None
        if slot is not None and not 1 <= slot <= min(n_predictions, 5):
            return None
        slots.add(slot)
    if len(slots) != 1:
        return None
    return CaseVerdict.from_slot(slots.pop())
