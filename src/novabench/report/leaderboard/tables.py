"""The board's tables as header and rows of cells, before any format.

The overview (each task's ranking metric and rank per model), one table per task (its
headline keys, best rank first, the raters under localisation), the CSV's one wide table,
and the published figures beside the board's keys.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from novabench.report.leaderboard.cells import (
    _cell,
    _columns,
    _csv_bootstrap_cells,
    _csv_cells,
    _human_cell,
    _human_keys,
    _human_level,
    _key_header,
    _label,
    _level_mark,
    _overview_keys,
    _rank,
    _settings_differ,
    _shown_rank,
    _task_keys,
    _tasks,
    _verified_cell,
)
from novabench.report.leaderboard.settings import (
    _HUMAN_TASKS,
)
from novabench.report.leaderboard.values import _number


def _table(board: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The one wide table of the CSV: a row per model and rater, numbers first.

    Per task a rank column, then per headline key three columns: the value, its CI's low
    and high end, in percent; empty cells where there is no value. Column titles are the
    task, key and unit only, whatever the board holds; then a note column per task says
    what it was ranked on (or why not) and which keys the reports scored with different
    settings; last, what the warnings say per row: ``data`` ("synthetic sample" or ""),
    ``verified`` (:func:`_verified_cell`: "yes", "no", or "partly: " and the keys taken as
    stated), a
    coverage column per task (answered/total, or "unknown") and ``run`` ("" for a finished
    run, else its manifest statuses and the tasks asked but never answered).
    """
    columns = _columns(board)
    tasks = _tasks(board)
    header = ["model"]
    for task, key in columns:
        if key == "rank":
            # Titles stay put whatever the board holds (scripts read them): what was ranked
            # and which keys are marked go in the note columns, after the numbers.
            header.append(f"{task} rank")
        else:
            header += [f"{task} {key} (%)", f"{task} {key} CI low (%)", f"{task} {key} CI high (%)"]
    header += [f"{task} note" for task in tasks]
    # What the warnings say, per row (a CSV read by pandas has no room for comment lines).
    header += ["data", "verified"] + [f"{task} coverage" for task in tasks] + ["run"]
    # Each row's CIs: their level and resamples (reports may differ; the header has none).
    header += ["ci_level (%)", "ci_resamples"]
    rows = []
    for model in board["models"]:
        cells = [_label(board, model)]
        for task, key in columns:
            entry = model["tasks"].get(task)
            if key == "rank":
                cells.append(_rank(entry))
            elif entry is None:
                cells += ["", "", ""]
            else:
                cells += _csv_cells(entry["metrics"].get(key), entry.get("ci", {}).get(key))
        cells += [_csv_note(board, task) if task in model["tasks"] else "" for task in tasks]
        cells += [str(model.get("data", "")), _verified_cell(model)]
        cells += [str(model["tasks"].get(task, {}).get("coverage", "")) for task in tasks]
        cells.append(str(model.get("run", "")))
        cells += _csv_bootstrap_cells(model)
        rows.append(cells)
    for human in board["human_reference"]:
        cells = [f"human: {human['who']}"]
        metrics = human["metrics"]
        for task, key in columns:
            if key == "rank":
                cells.append("")
            elif task in _HUMAN_TASKS:
                interval = (metrics.get("confidence_intervals") or {}).get(key)
                cells += _csv_cells(metrics.get(key), interval)
            else:
                cells += ["", "", ""]
        data = next((str(model.get("data", "")) for model in board["models"]), "")
        source: Mapping[str, Any] = next(
            (m for m in board["models"] if m.get("path") == board.get("human_reference_from")),
            {},
        )
        verified = "no" if human.get("taken_as_stated", True) else "yes"
        if 0 < len(human.get("taken_as_stated", ())) < len(_human_keys(human)):
            # "task key" pairs, as a model's row names them
            verified = "partly: " + ", ".join(
                f"{task} {key}" for task in _HUMAN_TASKS for key in human["taken_as_stated"]
            )
        rows.append(
            cells
            + [""] * len(tasks)
            + [data, verified]
            + [""] * len(tasks)
            + [""]
            + _csv_bootstrap_cells(source)
        )
    return header, rows


def _csv_note(board: Mapping[str, Any], task: str) -> str:
    """The CSV's note on a task: what it was ranked on (or why not) and the marked keys."""
    rule = board["ranking"].get(task) or {}
    if rule.get("ranked"):
        parts = [f"ranked on {rule['metric']}"]
    elif rule:
        parts = [rule.get("method") or "not ranked"]
    else:
        parts = ["not ranked"]
    marked = [key for key in _task_keys(board, task) if _settings_differ(board, task, key)]
    if marked:
        parts.append(f"settings differ: {', '.join(marked)}")
    return "; ".join(parts)


def _overview(board: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per model (report order): each task's ranking metric and rank (no rank for one model).

    A task whose reports hold several readings of its ranking metric gets a column per
    reading, a model's value under its own reading only (blank under the others).
    """
    tasks = [task for task in _tasks(board) if task in board["ranking"]]
    ranked = len(board["models"]) > 1
    header = ["model"]
    for task in tasks:
        header += [f"{task} {key} (%)" for key in _overview_keys(board, task)]
        header += [f"{task} rank"] if ranked else []
    rows = []
    for model in board["models"]:
        cells = [_label(board, model)]
        for task in tasks:
            entry = model["tasks"].get(task)
            keys = _overview_keys(board, task)
            if entry is None:
                cells += [""] * (len(keys) + ranked)
                continue
            mark = _level_mark(board, model.get("ci_level", board.get("ci_level")))
            if len(keys) > 1:  # a reading the model does not hold: blank, never another's
                cells += [
                    _cell(entry, key, mark) if key in entry["metrics"] else "" for key in keys
                ]
            else:
                cells += [_cell(entry, keys[0], mark)]
            cells += [_shown_rank(board, task, entry)] if ranked else []
        rows.append(cells)
    return header, rows


def _task_table(board: Mapping[str, Any], task: str) -> tuple[list[str], list[list[str]]]:
    """One task's headline keys per model, best rank first; the raters under localisation."""
    keys = _task_keys(board, task)
    header = ["model", "rank"] + [_key_header(board, task, key) for key in keys]
    entries = [
        (_label(board, m), m["tasks"][task], m.get("ci_level", board.get("ci_level")))
        for m in board["models"]
        if task in m["tasks"]
    ]
    rule = board["ranking"].get(task) or {}
    # One ranking metric, or (not ranked) the readings held: rows grouped by reading.
    readings = [rule["metric"]] if rule.get("metric") else list(rule.get("readings") or {})

    def order(item: tuple[str, Mapping[str, Any], Any]) -> tuple[float, float, float]:
        entry = item[1]
        held = next((k for k in readings if _number(entry["metrics"].get(k)) is not None), None)
        group = readings.index(held) if held is not None else len(readings)
        value = _number(entry["metrics"].get(held)) if held is not None else None
        rank = entry.get("rank")
        return (
            math.inf if rank is None else rank,
            group,
            -value if value is not None else math.inf,
        )

    rows = [
        [name, _shown_rank(board, task, entry)]
        + [_cell(entry, key, _level_mark(board, level)) for key in keys]
        for name, entry, level in sorted(entries, key=order)
    ]
    if task in _HUMAN_TASKS:
        level = _human_level(board)
        rows += [
            [f"human: {human['who']}", ""]
            + [_human_cell(human, key, _level_mark(board, level)) for key in keys]
            for human in board["human_reference"]
        ]
    return header, rows


def _undefined_lines(board: Mapping[str, Any], task: str) -> list[str]:
    """Why each ``n/a`` of a task's table is undefined, one line per key, in the registry's
    words as the report says them (``render.undefined_key_line``; a rater's row in its
    comparison's: "rater 1 vs rater 2" has rater 2's boxes for reference).

    Example:
        >>> board = {"models": [{"model": "a", "path": "a.json", "tasks": {"localization": {
        ...     "metrics": {"mAP@30": 0.0, "FP30": float("nan")}, "rank": None}}}],
        ...     "ranking": {}, "human_reference": [{"who": "rater 1 vs rater 2", "metrics":
        ...     {"mAP@30": 0.5, "FP30": float("nan")}}]}
        >>> _undefined_lines(board, "localization")
        ['n/a: localization FP30 is undefined when no box was predicted (0 / 0) (a); when rater 1 drew no box (0 / 0) (human: rater 1 vs rater 2)']
    """
    from novabench.report.render import undefined_key_line

    lines = []
    for key in _task_keys(board, task):
        columns = [
            (_label(board, model), "")
            for model in board["models"]
            if task in model["tasks"] and _cell(model["tasks"][task], key) == "n/a"
        ]
        if task in _HUMAN_TASKS:
            columns += [
                (f"human: {human['who']}", str(human["who"]))
                for human in board.get("human_reference") or ()
                if _human_cell(human, key) == "n/a"
            ]
        if columns:
            lines.append(undefined_key_line(task, key, columns))
    return lines


def _as_report(board: Mapping[str, Any]) -> dict[str, Any]:
    """The tasks and headline keys of a board as a report's shape, for the published figures."""
    return {
        "bootstrap": board.get("bootstrap") or {},
        "tasks": {
            task: {"metrics": dict.fromkeys(_task_keys(board, task))} for task in _tasks(board)
        },
    }


def _published_rows(board: Mapping[str, Any]) -> list[list[str]]:
    """The published figures of the board's keys; a paper key's marked where the board
    holds a stand-in of it (another quantity), whether or not another report holds the key."""
    from novabench import registry
    from novabench.published import published_rows

    report = _as_report(board)
    rows = published_rows(report)
    for row in rows:
        task, metric = row[0], row[1].split(" (")[0]
        held = report["tasks"].get(task, {}).get("metrics", {})
        stand_ins = [key for key in registry.TASKS[task].stand_ins(metric) if key in held]
        if stand_ins:  # else the row keeps its own label (a settings caveat, if any)
            row[1] = f"{metric} (not comparable with this board's {', '.join(stand_ins)})"
    return rows
