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
from novabench.report.render import TASK_ORDER
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


def _rank_tasks(
    models: Sequence[dict[str, Any]],
    tables: Sequence[Mapping[str, Any] | None],
    table_readings: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    differences: Sequence[Mapping[str, Any]],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any]:
    """Each task's ranking entry (a task no model scored has none); the models' ranks are
    set in their rows."""
    ranking: dict[str, Any] = {}
    for task in TASK_ORDER:
        entry = _rank_task(
            task,
            models,
            tables,
            table_readings,
            names,
            differences,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        if entry is not None:
            ranking[task] = entry
    return ranking


def _rank_task(
    task: str,
    models: Sequence[dict[str, Any]],
    tables: Sequence[Mapping[str, Any] | None],
    table_readings: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    differences: Sequence[Mapping[str, Any]],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any] | None:
    """One task's ranking entry, or why it is not ranked (None when no model scored it)."""
    readings = _readings_held(models, task)
    if len(readings) > 1:
        # Two quantities under two keys: each value stays under its own, none is ranked.
        return _not_ranked(None, _READINGS_DIFFER, _readings_reason(task, readings), readings)
    metric = next(iter(readings), RANK_METRICS[task])
    unranked = [d["setting"] for d in differences if d["task"] == task and metric in d["metrics"]]
    scored = [
        index
        for index, model in enumerate(models)
        if _number(model["tasks"].get(task, {}).get("metrics", {}).get(metric)) is not None
        # A model that answered nothing scores as no prediction: no rank to share.
        and not model["tasks"][task].get("unranked")
    ]
    if not scored:
        return None
    if len(scored) == 1:
        # One model has nothing to be ranked against: no rank, no tie statement.
        return _not_ranked(metric, _ONE_MODEL, _ONE_MODEL, readings)
    if unranked:
        # Values scored with different settings: ordering them would mislead.
        method = f"{_NOT_COMPARABLE} ({', '.join(unranked)} differs between the reports)"
        reason = (
            f"the reports scored its ranking metric {metric} with a different "
            f"{' and '.join(unranked)}"
        )
        return _not_ranked(metric, method, reason, readings)
    scored.sort(key=lambda index: -float(models[index]["tasks"][task]["metrics"][metric]))
    with_items = all(task in table_readings[index] for index in scored)
    sides = (
        [(tables[index] or {}, table_readings[index][task]) for index in scored]
        if with_items
        else None
    )
    apart = _different_items(task, sides) if sides is not None else None
    if apart is not None:
        # Means over different items (two --answered-only runs): no one quantity.
        first, second = (names[scored[position]] for position in apart)
        reason = (
            f"{first} and {second} scored different {task} items (their per-item tables "
            "differ, e.g. --answered-only runs that answered different items): their "
            f"{metric} values are means over different items"
        )
        return _not_ranked(metric, _DIFFERENT_ITEMS, reason, readings)
    neighbours = _ranks_with_ties(
        task,
        metric,
        [models[index] for index in scored],
        sides,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    return {
        "metric": metric,
        "ranked": True,
        "reason": None,
        "readings": readings,
        "method": _method(len(scored), with_items, n_resamples, confidence, seed),
        "neighbours": neighbours,
    }


def _ranks_with_ties(
    task: str,
    metric: str,
    ordered: Sequence[dict[str, Any]],
    sides: Sequence[tuple[Mapping[str, Any], str]] | None,
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[dict[str, Any]]:
    """Set the task's rank in each row of ``ordered`` (best value first): a neighbour that
    the paired bootstrap of their per-item tables (``sides``, in the same order) cannot
    separate, or without tables one of the same value, shares the rank above it. Returns
    the neighbours' tests (none without tables)."""
    neighbours = []
    rank = 1
    for position, model in enumerate(ordered):
        if position:
            previous = ordered[position - 1]
            tie = False
            if sides is not None:
                test = _separable(
                    task,
                    sides[position - 1],
                    sides[position],
                    n_resamples=n_resamples,
                    confidence=confidence,
                    seed=seed,
                )
                tie = not test["separable"]
                neighbours.append(
                    {
                        "a": previous["model"],
                        "b": model["model"],
                        # The model names may repeat: the reports as the board names them.
                        "a_report": previous["path"],
                        "b_report": model["path"],
                        **test,
                    }
                )
            else:
                tie = _same(previous, model, task, metric)
            rank = rank if tie else position + 1
        model["tasks"][task]["rank"] = rank
    return neighbours
