"""Where two prediction sets give the same answers, item by item (for ``nova compare``).

Two runs whose parsed answers are equal on every item score the same on every metric and
every bootstrap resample, so a comparison of them shows A = B with a zero-width interval.
The comparison says so in words instead of leaving two identical columns to the reader.
Answers are compared as the metrics take them: after parsing (with each run's box
convention), in release order, a missing answer being the task's empty answer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # scoring is imported when needed: the renderers import this module
    from novabench.report.scoring import PredictionPaths, ScoringOptions

__all__ = ["IDENTICAL_ANSWERS", "agreement_counts", "answer_agreement", "identical_tasks"]

#: What a comparison says when both sets answer every scored item of a task the same way.
IDENTICAL_ANSWERS = "the two prediction sets give identical answers on every scored item"


def answer_agreement(
    data: str | os.PathLike[str],
    predictions_a: PredictionPaths,
    predictions_b: PredictionPaths,
    options: ScoringOptions | None = None,
    *,
    tasks: Sequence[str] | None = None,
) -> dict[str, dict[str, int]]:
    """Per task both sets answer, how many items get the same parsed answer from both.

    Args:
        data: the release folder.
        predictions_a: predictions file(s) of A.
        predictions_b: predictions file(s) of B.
        options: the comparison's scoring options (box convention, tasks, other release).
        tasks: only these tasks (default: every task both sets answer).

    Returns:
        ``{task: {"items": n, "identical": k}}``: ``k`` of the task's ``n`` items (images or
        cases) have equal answers in A and B.

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=3, seed=0, progress=False)
        >>> line = {"case_id": "case0001", "diagnoses": ["glioma"]}
        >>> _ = (root / "a.jsonl").write_text(json.dumps(line) + "\\n")
        >>> _ = (root / "b.jsonl").write_text(json.dumps({**line, "diagnoses": ["abscess"]}))
        >>> answer_agreement(release, root / "a.jsonl", root / "a.jsonl")
        {'diagnosis': {'items': 3, 'identical': 3}}
        >>> answer_agreement(release, root / "a.jsonl", root / "b.jsonl")
        {'diagnosis': {'items': 3, 'identical': 2}}
    """
    from novabench.data.release import read_release
    from novabench.report.scoring import ScoringOptions, _load

    chosen = ScoringOptions.build(options)
    release = read_release(data)
    fingerprint = release.fingerprint()
    loaded_a = _load(data, predictions_a, chosen, release=release, fingerprint=fingerprint)
    loaded_b = _load(data, predictions_b, chosen, release=release, fingerprint=fingerprint)
    shared = [task for task in loaded_a.tasks if task in loaded_b.tasks]
    if tasks is not None:
        shared = [task for task in shared if task in tasks]
    return agreement_counts(loaded_a.prediction_set, loaded_b.prediction_set, shared)


def agreement_counts(
    predictions_a: Any, predictions_b: Any, tasks: Sequence[str]
) -> dict[str, dict[str, int]]:
    """:func:`answer_agreement` of two prediction sets already read against one release.

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

    Reads ``comparison["answer_agreement"]`` (:func:`answer_agreement`); none without it.

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
