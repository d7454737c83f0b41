"""Ranks with ties, task by task, and why a task is left unranked.

Neighbours share a rank when a paired bootstrap of their per-item difference has an
interval containing 0 (:func:`_separable`); without per-item tables for every report,
ranks follow the point estimates. A task is not ranked when one model holds it, the
reports hold different readings of its ranking metric, scored it with different settings,
or their tables cover different items (:func:`_not_ranked` says which).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from novabench.errors import NovaInputError
from novabench.report.leaderboard.recomputed import _item_values, _ItemRatios
from novabench.report.leaderboard.settings import RANK_METRICS
from novabench.report.leaderboard.values import _number
from novabench.tasks import behaviour


def _different_items(
    task: str, sides: Sequence[tuple[Mapping[str, Any], str]]
) -> tuple[int, int] | None:
    """The positions of the first two sides whose tables cover different items (None if all
    cover the same): a paired bootstrap needs the same items on both sides."""
    item_sets = [sorted(_item_values(task, *side)[0]) for side in sides]
    for position, keys in enumerate(item_sets[1:], start=1):
        if keys != item_sets[0]:
            return 0, position
    return None


def _separable(
    task: str,
    side_a: tuple[Mapping[str, Any], str],
    side_b: tuple[Mapping[str, Any], str],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any]:
    """The paired bootstrap of two reports' per-item values (each: tables, column's reading)."""
    from novabench.metrics.stats import paired_bootstrap

    keys_a, values_a = _item_values(task, *side_a)
    keys_b, values_b = _item_values(task, *side_b)
    if sorted(keys_a) != sorted(keys_b):
        raise NovaInputError(
            f"the {task} per-item tables of two reports cover different items",
            field="items",
        )
    order_b = {key: index for index, key in enumerate(keys_b)}
    aligned_b = values_b[[order_b[key] for key in keys_a]]
    ones = np.ones(len(values_a))
    # Whole cases drawn (every image of a drawn case), as nova evaluate and nova compare do;
    # None for a case task (its items are cases) or tables without case ids.
    cases = behaviour(task).item_case_ids(*side_a)
    result = paired_bootstrap(
        _ItemRatios({"value": (values_a, ones)}),
        _ItemRatios({"value": (aligned_b, ones)}),
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        clusters=cases,
    )["value"]
    low, high = result["ci"]
    return {
        "difference": result["difference"],
        "ci": [low, high],
        "p_value": result["p_value"],
        "separable": bool(low > 0 or high < 0),
    }


def _readings_held(models: Sequence[Mapping[str, Any]], task: str) -> dict[str, list[str]]:
    """Each reading of the task's ranking metric the reports hold, with the reports holding it.

    Readings in the task's order (the paper's key first), reports in the board's order.

    Example:
        >>> models = [{"path": "a.json", "tasks": {"diagnosis": {"metrics": {"top1-lexicon": 0.4}}}},
        ...           {"path": "b.json", "tasks": {"diagnosis": {"metrics": {"top1": 0.5}}}}]
        >>> _readings_held(models, "diagnosis")
        {'top1': ['b.json'], 'top1-lexicon': ['a.json']}
        >>> _readings_held([], "diagnosis")
        {}
    """
    held: dict[str, list[str]] = {}
    for key in (RANK_METRICS[task], *behaviour(task).rank_metric_readings):
        for model in models:
            if _number(model["tasks"].get(task, {}).get("metrics", {}).get(key)) is not None:
                held.setdefault(key, []).append(str(model["path"]))
    return held


def _readings_reason(task: str, readings: Mapping[str, Sequence[str]]) -> str:
    """Why a task holding several readings of its ranking metric is not ranked, and the cure."""
    listing = " and ".join(f"{key} ({', '.join(paths)})" for key, paths in readings.items())
    advice = behaviour(task).rank_readings_advice or "score every report the same way"
    return (
        f"the reports hold different readings of its ranking metric, {listing}: different "
        f"quantities, never ranked together (each is shown under its own key); to rank "
        f"them, {advice}"
    )


def _not_ranked(
    metric: str | None, method: str, reason: str, readings: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """A task's ranking entry when it is not ranked (no ranks, no neighbours)."""
    return {
        "metric": metric,
        "ranked": False,
        "reason": reason,
        "readings": {key: list(paths) for key, paths in readings.items()},
        "method": method,
        "neighbours": [],
    }


_ONE_MODEL = "one model only: nothing to rank it against"

_NOT_COMPARABLE = "not ranked: the reports scored its ranking metric with different settings"

_READINGS_DIFFER = "not ranked: the reports hold different readings of its ranking metric"

_DIFFERENT_ITEMS = "not ranked: the reports' per-item tables cover different items"


def _method(n_models: int, with_items: bool, n_resamples: int, confidence: float, seed: int) -> str:
    """How a task's ranks were set, worded for two models or for a chain of neighbours."""
    level = int(round(100 * confidence))
    if not with_items:
        return (
            "point estimates (not every model has per-item values: ties cannot be assessed; "
            "equal values share a rank)"
        )
    if n_models == 2:
        return (
            f"paired bootstrap of the two models (n={n_resamples}, seed={seed}, whole cases "
            "drawn): they share "
            f"the rank when the {level}% CI of their difference contains 0"
        )
    return (
        f"paired bootstrap of each pair of neighbours (n={n_resamples}, seed={seed}, whole "
        "cases drawn): "
        f"neighbours share a rank when the {level}% CI of their difference contains 0"
    )


def _same(a: Mapping[str, Any], b: Mapping[str, Any], task: str, metric: str) -> bool:
    return bool(a["tasks"][task]["metrics"][metric] == b["tasks"][task]["metrics"][metric])
