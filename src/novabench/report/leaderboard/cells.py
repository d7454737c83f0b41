"""The board's cells and labels: what one table cell or title says.

A value in percent with its CI (and the CI's level where it is not the header's), a rank or
"not ranked", a model's row name, a metric's column title (marked where settings differ),
the CSV's plain numbers and its verified and bootstrap cells; and the tasks and keys a board
shows, in order. Read from the dict :func:`~novabench.report.leaderboard.build_leaderboard`
returns; nothing here checks or ranks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novabench.report.leaderboard.ranking import (
    _ONE_MODEL,
)
from novabench.report.leaderboard.recomputed import UNVERIFIED_MARK
from novabench.report.leaderboard.settings import (
    _HUMAN_TASKS,
)
from novabench.report.leaderboard.values import _number
from novabench.report.render import HEADLINE_KEYS, TASK_ORDER, headline_keys


def _level_text(level: Any) -> str:
    """A CI level in percent, as the tables write it ("95%"; "unknown" when not recorded).

    Example:
        >>> _level_text(0.95), _level_text(0.5), _level_text(0.999), _level_text(None)
        ('95%', '50%', '99.9%', 'unknown')
    """
    if level is None:
        return "unknown"
    return f"{100 * float(level):g}%"


def _header_level(board: Mapping[str, Any]) -> str:
    """The level the tables' header names ("95% "), "" when no report states a CI.

    A cell whose CI has another level says its own (:func:`_level_mark`).
    """
    level = board.get("ci_level")
    return f"{_level_text(level)} " if level is not None else ""


def _level_mark(board: Mapping[str, Any], level: Any) -> str:
    """What a cell of a report's CIs adds when their level is not the header's ("" if it is)."""
    if level == board.get("ci_level"):
        return ""
    return f"{_level_text(level)} CI" if level is not None else "CI level not recorded"


def _verified_cell(model: Mapping[str, Any]) -> str:
    """The CSV's ``verified``: "yes" when every value and CI was checked against per-item
    tables, "no" when none was, else "partly: " and the keys taken as stated ("task key",
    comma-separated); "" for a model with no task.

    Example:
        >>> _verified_cell({"tasks": {"localization": {"metrics": {"mAP@30": 0.5,
        ...     "COCO-AP@30": 0.4}, "taken_as_stated": ["COCO-AP@30"]}}})
        'partly: localization COCO-AP@30'
    """
    held = [(task, key) for task, entry in model["tasks"].items() for key in entry["metrics"]]
    stated = [
        (task, key) for task, entry in model["tasks"].items() for key in entry["taken_as_stated"]
    ]
    if not held:
        return ""
    if not stated:
        return "yes"
    if len(stated) == len(held):
        return "no"
    return "partly: " + ", ".join(f"{task} {key}" for task, key in stated)


def _percent(value: Any) -> str:
    number = _number(value)
    return "n/a" if number is None else f"{100 * number:.1f}"


def _with_interval(value: Any, interval: Any, level_mark: str = "") -> str:
    """A value in percent and its CI; ``level_mark`` (e.g. "50% CI") after a CI whose level
    is not the tables' header's."""
    text = _percent(value)
    if text != "n/a" and interval and all(_number(v) is not None for v in interval):
        text += f" [{_percent(interval[0])}, {_percent(interval[1])}]"
        text += f" ({level_mark})" if level_mark else ""
    return text


def _cell(task_entry: Mapping[str, Any], key: str, level_mark: str = "") -> str:
    """A model's value with its CI; "" for a key it does not hold (another reading's).

    Marked when nothing could check it (:data:`UNVERIFIED_MARK`, explained in the warnings),
    and with its level when its CI's is not the header's.
    """
    if key not in task_entry["metrics"]:
        return ""
    interval = task_entry.get("ci", {}).get(key)
    text = _with_interval(task_entry["metrics"][key], interval, level_mark)
    unverified = key in task_entry.get("taken_as_stated", ()) and text != "n/a"
    return f"{text} {UNVERIFIED_MARK}" if unverified else text


def _human_cell(human: Mapping[str, Any], key: str, level_mark: str = "") -> str:
    """A rater's value with its CI (the report's human reference keeps both), "" if absent;
    marked when nothing could check it."""
    metrics = human["metrics"]
    if metrics.get(key) is None:
        return ""
    interval = (metrics.get("confidence_intervals") or {}).get(key)
    text = _with_interval(metrics[key], interval, level_mark)
    # Rows of boards built before the check carry no list: nothing was checked.
    unverified = key in human.get("taken_as_stated", metrics) and text != "n/a"
    return f"{text} {UNVERIFIED_MARK}" if unverified else text


def _label(board: Mapping[str, Any], model: Mapping[str, Any]) -> str:
    """A model's row name: its report's path added when another report has the same name."""
    names = [other["model"] for other in board["models"]]
    if names.count(model["model"]) == 1:
        return str(model["model"])
    return f"{model['model']} ({model['path']})"


#: A rank cell of a model whose task the board leaves unranked (the ranking line says why).
NOT_RANKED = "not ranked"


def _rank(entry: Mapping[str, Any] | None) -> str:
    return "" if entry is None or entry.get("rank") is None else str(entry["rank"])


def _shown_rank(board: Mapping[str, Any], task: str, entry: Mapping[str, Any] | None) -> str:
    """A rank cell of the tables: the rank, or "not ranked" where the task is left unranked.

    Blank for one model alone (nothing to rank against) and for a model without the metric.
    """
    if entry is not None and entry.get("unranked"):
        return NOT_RANKED
    rule = board["ranking"].get(task) or {}
    unranked = rule.get("ranked") is False and rule.get("method") != _ONE_MODEL
    if entry is not None and entry.get("rank") is None and unranked:
        return NOT_RANKED
    rank = _rank(entry)
    # A rank set by a value nothing checked (taken as stated) is as unverified as the value.
    if rank and entry is not None and rule.get("metric") in entry.get("taken_as_stated", ()):
        return f"{rank} {UNVERIFIED_MARK}"
    return rank


def _tasks(board: Mapping[str, Any]) -> list[str]:
    present = {task for model in board["models"] for task in model["tasks"]}
    return [task for task in TASK_ORDER if task in present]


def _task_keys(board: Mapping[str, Any], task: str) -> list[str]:
    keys = {k for model in board["models"] for k in model["tasks"].get(task, {}).get("metrics", {})}
    return [key for key in headline_keys(task, keys) if key in keys]


def _differing(board: Mapping[str, Any], task: str) -> list[Mapping[str, Any]]:
    """The task's setting differences (:func:`build_leaderboard`), in the order found."""
    return [d for d in board.get("setting_differences") or () if d["task"] == task]


def _settings_differ(board: Mapping[str, Any], task: str, key: str) -> bool:
    """Whether the reports scored the task's metric ``key`` with different settings."""
    return any(key in difference["metrics"] for difference in _differing(board, task))


def _key_header(board: Mapping[str, Any], task: str, key: str) -> str:
    """A metric's column title; marked when the reports scored it with different settings."""
    if _settings_differ(board, task, key):
        return f"{key} (%, settings differ)"
    return f"{key} (%)"


def _columns(board: Mapping[str, Any]) -> list[tuple[str, str]]:
    columns = []
    for task in _tasks(board):
        columns.append((task, "rank"))
        columns += [(task, key) for key in _task_keys(board, task)]
    return columns


def _csv_percent(value: Any) -> str:
    """A fraction as a plain percent number for the CSV (4 decimals); "" when undefined."""
    number = _number(value)
    return "" if number is None else f"{100 * number:.4f}"


def _csv_cells(value: Any, interval: Any) -> list[str]:
    """Value, CI low, CI high: three plain percent numbers ("" where undefined)."""
    low, high = interval if interval and len(interval) == 2 else (None, None)
    defined = _number(value) is not None
    return [_csv_percent(value)] + [_csv_percent(v) if defined else "" for v in (low, high)]


def _human_keys(human: Mapping[str, Any]) -> list[str]:
    """The headline keys a raters' row holds a value of."""
    return [
        key
        for task in _HUMAN_TASKS
        for key in HEADLINE_KEYS[task]
        if _number(human["metrics"].get(key)) is not None
    ]


def _csv_bootstrap_cells(model: Mapping[str, Any]) -> list[str]:
    """A row's CI level (percent) and resamples; "" where not recorded.

    Example:
        >>> _csv_bootstrap_cells({"ci_level": 0.5, "ci_resamples": 1000}), _csv_bootstrap_cells({})
        (['50', '1000'], ['', ''])
    """
    level, resamples = model.get("ci_level"), model.get("ci_resamples")
    return [
        "" if level is None else f"{100 * float(level):g}",
        "" if resamples is None else str(resamples),
    ]


def _overview_keys(board: Mapping[str, Any], task: str) -> list[str]:
    """The task's overview columns: its ranking metric, or each reading held when several."""
    rule = board["ranking"][task]
    if rule.get("metric") is None:
        return list(rule.get("readings") or {})
    return [rule["metric"]]


def _human_level(board: Mapping[str, Any]) -> Any:
    """The CI level of the raters' rows: the level of the report they come from."""
    return next(
        (
            model.get("ci_level")
            for model in board["models"]
            if model.get("path") == board.get("human_reference_from")
        ),
        board.get("ci_level"),
    )
