"""Where two prediction sets give the same answers, item by item (for ``nova compare``).

Pure counting on prediction sets already read: reading and parsing them is
:func:`novabench.report.scoring.answer_agreement`'s, so this module imports no other of the
report (the renderers import it).

Two runs whose parsed answers are equal on every item score the same on every metric and
every bootstrap resample, so a comparison of them shows A = B with a zero-width interval.
The comparison says so in words instead of leaving two identical columns to the reader.
Answers are compared as the metrics take them: after parsing (with each run's box
convention), in release order, a missing answer being the task's empty answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["IDENTICAL_ANSWERS", "agreement_counts", "identical_tasks"]

#: What a comparison says when both sets answer every scored item of a task the same way.
IDENTICAL_ANSWERS = "the two prediction sets give identical answers on every scored item"


def agreement_counts(
    predictions_a: Any, predictions_b: Any, tasks: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Per task, how many items two prediction sets (read against one release) answer alike.

    :func:`novabench.report.scoring.answer_agreement` reads and parses the two sets first.

    Example:
        >>> class Answers:
        ...     def __init__(self, answers): self._answers = answers
        ...     def answers(self, task): return self._answers
        >>> agreement_counts(Answers(["a", "b"]), Answers(["a", "c"]), ["diagnosis"])
        {'diagnosis': {'items': 2, 'identical': 1}}
    """
    agreement = {}
    for task in tasks:
        answers_a = predictions_a.answers(task)
        answers_b = predictions_b.answers(task)
        same = sum(1 for a, b in zip(answers_a, answers_b) if a == b)
        agreement[task] = {"items": len(answers_a), "identical": same}
    return agreement


def identical_tasks(comparison: Mapping[str, Any]) -> list[str]:
    """The compared tasks on which A and B answer every item the same way.

    Reads ``comparison["answer_agreement"]`` (:func:`agreement_counts`); none without it.

    Example:
        >>> identical_tasks({"tasks": {"diagnosis": {}, "captioning": {}}, "answer_agreement": {
        ...     "diagnosis": {"items": 3, "identical": 3},
        ...     "captioning": {"items": 9, "identical": 8}}})
        ['diagnosis']
    """
    agreement = comparison.get("answer_agreement") or {}
    return [
        task
        for task in comparison.get("tasks", {})
        if (counts := agreement.get(task)) and counts["items"] == counts["identical"]
    ]
