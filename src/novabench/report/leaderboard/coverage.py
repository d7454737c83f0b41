"""How much of each task a report answered: counted, shown and warned about.

From the per-item tables when they can say, else as the report records it; a task that
answered none of its items is shown unranked, and a report that answered only part of a
task gets a warning naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novabench.report.render import TASK_ORDER, coverage_phrase
from novabench.tasks import behaviour


def _table_coverage(
    report: Mapping[str, Any], task: str, tables: Mapping[str, Any]
) -> dict[str, int] | None:
    """A task's coverage counted from its per-item table (None when the table cannot say).

    Answered: rows whose status is an answer (not missing, not a model error). Total: the
    release's count of the task's unit (``data.n_images``/``n_cases``), or the rows when
    larger (an ``--answered-only`` table holds only the answered rows).
    """
    table_name = behaviour(task).rank_item_column[0]
    table = tables.get(table_name)
    status = f"{task}_status"
    if table is None or status not in table.columns:
        return None
    statuses = table[status]
    given = statuses[statuses.notna()].astype(str)
    errors = int((given == "error").sum())
    answered = int((~given.isin(["missing", "error"])).sum())
    recorded = (report.get("data") or {}).get(f"n_{table_name}")
    total = max(len(table), recorded if isinstance(recorded, int) else 0)
    return {
        "items": total,
        "answered": answered,
        "errors": errors,
        # Model errors are among the missing answers, as the report counts them.
        "missing": total - answered,
    }


def _task_coverage(
    report: Mapping[str, Any], task: str, tables: Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    """A task's coverage: counted from the per-item tables when they can, else as recorded
    (None when neither says it)."""
    coverage = _table_coverage(report, task, tables) if tables is not None else None
    if coverage is None:
        coverage = ((report.get("tasks") or {}).get(task) or {}).get("coverage")
    if not isinstance(coverage, Mapping) or not {"items", "answered"} <= set(coverage):
        return None
    return coverage


def _answered_nothing(coverage: Mapping[str, Any] | None) -> str | None:
    """Why a task of a report is shown unranked when it answered none of its items (None
    when it answered some, or its coverage is unknown): its scores are those of no
    prediction, and a rank shared with a model that answered would say they are alike.

    Example:
        >>> _answered_nothing({"items": 6, "answered": 0, "missing": 6, "errors": 6})
        'answered nothing (0/6 answered; its scores are those of no prediction): shown, not ranked'
        >>> _answered_nothing({"items": 6, "answered": 1, "missing": 5, "errors": 5}) is None
        True
    """
    if coverage is None or coverage["answered"] or not coverage["items"]:
        return None
    return (
        f"answered nothing (0/{coverage['items']} answered; its scores are those of no "
        "prediction): shown, not ranked"
    )


def _coverage_cell(coverage: Mapping[str, Any] | None) -> str:
    """A task's coverage as the CSV gives it: answered/total, or "unknown".

    Example:
        >>> _coverage_cell({"items": 37, "answered": 5}), _coverage_cell(None)
        ('5/37', 'unknown')
    """
    return "unknown" if coverage is None else f"{coverage['answered']}/{coverage['items']}"


def _coverage_warning(
    report: Mapping[str, Any], name: str, tables: Mapping[str, Any] | None = None
) -> str:
    """A warning naming the report when some task's items were not all answered ("" if not).

    With per-item tables the coverage is counted from them (a report's ``coverage`` field
    can be edited or deleted); without, read from the coverage ``nova evaluate`` records
    per task: answered/total, and how the missing items were counted (as misses, or left
    out with ``--answered-only``). A task with neither is said to have unknown coverage.

    Example:
        >>> report = {"tasks": {"diagnosis": {"coverage": {"items": 40, "answered": 10,
        ...                                                "missing": 30, "errors": 0}}}}
        >>> _coverage_warning(report, "a.json")
        'warning: a.json answered only part of the items: diagnosis 10/40 answered, 30 missing (scored as no prediction): 0 model errors, 30 without a line'
    """
    answered_only = bool(report.get("answered_only"))
    parts = []
    unknown = []
    for task in TASK_ORDER:
        section = (report.get("tasks") or {}).get(task)
        if not isinstance(section, Mapping):
            continue
        coverage = _task_coverage(report, task, tables)
        if coverage is None:
            unknown.append(task)
            continue
        if coverage["answered"] < coverage["items"]:
            filled = {"missing": 0, "errors": 0, **coverage}
            parts.append(f"{task} {coverage_phrase(filled, answered_only=answered_only)}")
    lines = []
    if parts:
        lines.append(f"warning: {name} answered only part of the items: " + "; ".join(parts))
    if unknown:
        lines.append(
            f"warning: {name} records no coverage of {', '.join(unknown)} and no per-item "
            "tables count it: how many items it answered is unknown"
        )
    return "\n".join(lines)
