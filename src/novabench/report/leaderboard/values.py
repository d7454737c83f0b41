"""A report's headline values as the board reads them, refused where it cannot show them.

Each value null or a finite fraction, each CI two fractions in order (:func:`_check_values`);
the reading of a task's ranking metric a report holds (:func:`_held_reading`); a stated CI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from novabench.errors import NovaInputError
from novabench.report.leaderboard.settings import RANK_METRICS
from novabench.report.render import HEADLINE_KEYS, headline_keys
from novabench.tasks import behaviour


def _fraction_problem(value: Any) -> str | None:
    """What makes a report's metric value unusable (None when it is a fraction or null)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r} is not a number"
    if not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if not 0 <= value <= 1:
        return f"{value!r} is not a fraction in [0, 1] (reports hold fractions, not percent)"
    return None


# Float rounding allowed between a stated value and its recomputation or its interval.
_TOLERANCE = 1e-9


def _check_values(report: Mapping[str, Any], source: str) -> None:
    """Refuse, in one line naming the report and field, a headline value the board cannot show.

    Each headline metric a task holds is null or a finite fraction in [0, 1]; its interval,
    when given (not null, nor two nulls: none could be computed), is two finite fractions,
    low <= high.

    The rule for a value outside its interval: refused for a key that is a mean over items
    (``TaskBehaviour.mean_keys``: hit rates, mAP@30/50, Top-1/Top-5, per-caption scores)
    when the report records 100 resamples or more; shown otherwise. Why: the resampled means
    average exactly the stated mean and, for 0/1 hits, their count is binomial with its
    median within one item of it, so a 95% percentile interval leaves the stated mean out
    only when over 97.5% of resamples fall on one side of it, which a mean over items does
    not do; a statistic that is no mean (COCO-AP, corpus BLEU) can, and so can any interval
    from few resamples (where ``nova evaluate`` itself warns).
    """
    tasks = report.get("tasks")
    if not isinstance(tasks, Mapping):
        raise NovaInputError("tasks is not an object", source=source, field="tasks")
    for task, section in tasks.items():
        if task not in HEADLINE_KEYS:
            continue
        where = f"tasks.{task}"
        if not isinstance(section, Mapping) or not isinstance(section.get("metrics"), Mapping):
            raise NovaInputError("has no metrics object", source=source, field=where)
        metrics = section["metrics"]
        intervals = section.get("confidence_intervals")
        if intervals is not None and not isinstance(intervals, Mapping):
            raise NovaInputError(
                "is not an object", source=source, field=f"{where}.confidence_intervals"
            )
        for key in headline_keys(task, metrics):
            if key not in metrics:
                continue
            value = metrics[key]
            problem = _fraction_problem(value)
            if problem:
                raise NovaInputError(problem, source=source, field=f"{where}.metrics.{key}")
            interval = (intervals or {}).get(key)
            if interval is None:
                continue
            field = f"{where}.confidence_intervals.{key}"
            if not isinstance(interval, (list, tuple)) or len(interval) != 2:
                raise NovaInputError(
                    f"{interval!r} is not an interval [low, high]", source=source, field=field
                )
            if all(end is None for end in interval):
                continue  # no interval could be computed (nothing resampled defined it)
            for end in interval:
                problem = _fraction_problem(end) or (
                    f"{end!r} is not a number" if end is None else None
                )
                if problem:
                    raise NovaInputError(
                        f"{interval!r} is not an interval of two fractions: {problem}",
                        source=source,
                        field=field,
                    )
            low, high = interval
            if low > high:
                raise NovaInputError(
                    f"{interval!r}: low end above high end", source=source, field=field
                )
            if (
                value is not None
                and key in behaviour(task).mean_keys
                and _enough_resamples(report)
                and not low - _TOLERANCE <= value <= high + _TOLERANCE
            ):
                raise NovaInputError(
                    f"{key} = {value!r} lies outside its own interval {interval!r}: a "
                    "percentile interval of a mean over items contains the mean (the report "
                    "was edited?)",
                    source=source,
                    field=f"{where}.metrics.{key}",
                )


def _enough_resamples(report: Mapping[str, Any]) -> bool:
    """Whether the report's CIs rest on a recorded number of resamples that is not too few."""
    from novabench.report.render import FEW_RESAMPLES

    n_resamples = (report.get("bootstrap") or {}).get("n_resamples")
    return isinstance(n_resamples, int) and n_resamples >= FEW_RESAMPLES


def _held_reading(report: Mapping[str, Any], task: str) -> str | None:
    """The key of the task's ranking metric the report holds (a number), or None."""
    metrics = ((report.get("tasks") or {}).get(task) or {}).get("metrics") or {}
    return next(
        (
            key
            for key in (RANK_METRICS[task], *behaviour(task).rank_metric_readings)
            if _number(metrics.get(key)) is not None
        ),
        None,
    )


def _stated_interval(section: Mapping[str, Any], key: str) -> list[float] | None:
    """A task section's CI of ``key`` (checked by :func:`_check_values`), None when it states
    none (no entry, or two nulls: nothing resampled defined it)."""
    interval = (section.get("confidence_intervals") or {}).get(key)
    if interval is None or all(end is None for end in interval):
        return None
    return [float(end) for end in interval]


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return None if math.isnan(number) else number
