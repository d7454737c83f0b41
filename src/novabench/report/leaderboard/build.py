"""The board's building: several checked reports on one release -> the leaderboard's dict.

:func:`build_leaderboard` checks that the reports may share a board (comparable.py), checks
each report's values against its tables (values.py, recomputed.py), builds a row per model
(with its coverage: coverage.py), ranks each task (ranking.py) and gathers the warnings and
notes every output shows; the rendering modules only read the dict it returns.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from novabench.errors import NovaInputError
from novabench.report.items import read_item_tables
from novabench.report.leaderboard.comparable import (
    _other_revision_line,
    _refusal_under_other_rules,
    _same_evaluations,
    _same_headlines,
    _same_predictions,
    _same_release,
    _same_release_sizes,
    _same_scoring_rules,
)
from novabench.report.leaderboard.coverage import (
    _answered_nothing,
    _coverage_cell,
    _coverage_warning,
    _task_coverage,
)
from novabench.report.leaderboard.ranking import (
    _rank_tasks,
)
from novabench.report.leaderboard.recomputed import (
    UNVERIFIED_MARK,
    _checked_headline_means,
    _checked_human_keys,
    _checked_table_readings,
    _renamed_key_lines,
    _shown_keys,
)
from novabench.report.leaderboard.settings import (
    _HUMAN_TASKS,
    _bootstrap_note,
    _setting_differences,
)
from novabench.report.leaderboard.values import _check_values, _number
from novabench.report.render import (
    HEADLINE_KEYS,
    TASK_ORDER,
    headline_keys,
    meteor_fallback_line,
    model_name,
    stand_in_lines,
    synthetic_data_line,
    unfinished_run_line,
    with_current_keys,
)
from novabench.run.manifest import is_running_status
from novabench.tasks.captioning import bertscore_folder_models


def build_leaderboard(
    reports: Sequence[Mapping[str, Any]],
    paths: Sequence[str | os.PathLike[str]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    shown: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Rank several reports on the same release, task by task.

    Args:
        reports: report dicts (``nova evaluate`` JSON).
        paths: where each report was read from (resolves ``items``; names in messages).
        shown: how the board names each report (default: ``paths`` as given), e.g. relative
            to the leaderboard's own files so a shared board reveals no local folder.
        n_resamples: paired bootstrap resamples for the tie tests.
        confidence: level of the paired intervals.
        seed: bootstrap seed.

    Returns:
        ``{"release", "warnings", "models": [{"model", "path", "tasks": {task: {"metrics",
        "ci", "rank"}}}], "ranking": {task: {"metric", "ranked", "reason", "readings",
        "method", "neighbours": [{"a", "b", "a_report", "b_report", "difference", "ci",
        "p_value", "separable"}]}}, "human_reference": [{"who", "metrics"}],
        "setting_differences": [{"task", "setting", "metrics", "values": {path: value},
        "sentence"}], "notes"}``. ``warnings`` are the lines a reader needs before any
        number (the synthetic sample, stand-ins shown in place of the paper's keys, partial
        coverage per report). ``rank`` is None where a
        task has a single model, the model lacks the ranking metric, the reports scored
        the ranking metric with different settings, or they hold different readings of it;
        then ``ranked`` is false and ``reason`` says why (None when ranked). ``readings``
        maps each reading of the ranking metric held to the reports holding it; where it
        has several, ``metric`` is None: no one quantity was ranked.

    Raises:
        NovaInputError: fewer than one report, reports on different release fingerprints
            or scored under different scoring revisions (``toolkit.scoring_revision``),
            an old report whose recorded matcher does not say its reading, a headline value
            or CI that is not a fraction (or a CI whose low end is above its high end), two reports of one
            evaluation (same run id or pinned tables), or a report whose per-item tables
            do not hold the reading it states or give another value or CI (or whose CIs
            have no bootstrap settings to be drawn again with).

    Example:
        >>> def report(name, top1):
        ...     return {"data": {"fingerprint": "f"}, "predictions": {"manifests": [{"model": name}]},
        ...             "tasks": {"diagnosis": {"metrics": {"top1": top1, "match_rule": "case-judge"},
        ...                                     "confidence_intervals": {}}}}
        >>> board = build_leaderboard([report("a", 0.2), report("b", 0.6)], ["a.json", "b.json"])
        >>> [(m["model"], m["tasks"]["diagnosis"]["rank"]) for m in board["models"]]
        [('a', 2), ('b', 1)]
        >>> board["ranking"]["diagnosis"]["method"].split(" (")[0]
        'point estimates'
    """
    if not reports or len(reports) != len(paths):
        raise NovaInputError("give at least one report, each with its path", field="reports")
    names = [str(path) for path in paths] if shown is None else [str(name) for name in shown]
    originals = reports
    compared = _comparable_reports(reports, paths, names)
    reports = compared.reports
    tables: list[dict[str, Any] | None] = [
        read_item_tables(report, path) if report.get("items") else None
        for report, path in zip(reports, paths)
    ]
    # Only per-item tables are checked (re-scored) under this novabench's rules.
    revision_line = _other_revision_line(reports) if any(tables) else ""
    table_readings, taken_as_stated = _checked_tables(
        reports, originals, tables, names, compared.folders
    )
    models = [
        _model_row(report, name, table, stated)
        for report, name, table, stated in zip(reports, names, tables, taken_as_stated)
    ]
    board_level = _board_level(models)
    notes: list[str] = []
    differences = _setting_differences(reports, names)
    ranking = _rank_tasks(
        models,
        tables,
        table_readings,
        names,
        differences,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    notes += [difference["sentence"] for difference in differences]
    human_rows, human_from = _human_rows(reports, tables, names)
    bootstrap_note = _bootstrap_note(reports, names)
    if bootstrap_note:
        notes.append(bootstrap_note)
    from novabench._version import toolkit_record

    return {
        "toolkit": toolkit_record(),
        "release": compared.release,
        # Read before any number: scores of the synthetic sample (one release, so all or
        # none), and proxies (top1-lexicon...) that are not the paper's keys.
        "warnings": _board_warnings(
            compared,
            originals,
            names,
            tables,
            models,
            taken_as_stated,
            revision_line,
        ),
        "models": models,
        "ranking": ranking,
        "human_reference": human_rows,
        # The report whose human reference the raters' rows show (its CI level is theirs).
        "human_reference_from": human_from,
        # The level most reports' CIs were drawn at: the tables' header says it, a cell of
        # another level says its own.
        "ci_level": board_level,
        "bootstrap": {
            "n_resamples": n_resamples,
            "confidence": confidence,
            "seed": seed,
            "unit": "case",
        },
        "setting_differences": differences,
        "notes": notes,
    }


@dataclass(frozen=True)
class _Compared:
    """Reports found fit to share one board (:func:`_comparable_reports`)."""

    #: The reports read with today's keys (:func:`novabench.report.render.with_current_keys`).
    reports: list[dict[str, Any]]
    #: BERTScore folder models the reports name (:func:`bertscore_folder_models`).
    folders: Any
    #: Warnings on one run's predictions scored under two readings.
    readings_of_one_run: list[str]
    #: The warning on reports of several builds of one scoring revision ("" if none).
    builds_line: str
    #: The release fingerprint every report states.
    release: Any


def _comparable_reports(
    reports: Sequence[Mapping[str, Any]],
    paths: Sequence[str | os.PathLike[str]],
    names: Sequence[str],
) -> _Compared:
    """Refuse reports that cannot share a board (each check in comparable.py and values.py);
    the rest read with today's keys, and what the warnings need of the checks."""
    for report, name in zip(reports, names):
        _check_values(report, name)
    _same_evaluations(reports, names)
    # A hash cannot tell a folder's "parent/name" from a Hub id: the reports that hold the
    # folder's key say it, so an older report of that folder joins their column.
    folders = bertscore_folder_models(reports)
    # Old reports put other readings under the paper's keys (METEOR, top1...): today's keys.
    current = [
        with_current_keys(report, source=name, bertscore_folders=folders)
        for report, name in zip(reports, names)
    ]
    _same_headlines(current, names)
    readings_of_one_run = _same_predictions(current, names)
    builds_line = _same_scoring_rules(current, names)
    release = _same_release(current, paths)
    _same_release_sizes(current, names)
    return _Compared(current, folders, readings_of_one_run, builds_line, release)


def _checked_tables(
    reports: Sequence[Mapping[str, Any]],
    originals: Sequence[Mapping[str, Any]],
    tables: Sequence[dict[str, Any] | None],
    names: Sequence[str],
    folders: Any,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per report, the tables' column of each task's ranking metric and the keys taken as
    stated (both empty for a report without tables), every value its tables give checked."""
    # Per report and task, the tables' column of the ranking metric: checked to be the
    # reading the report states, giving the value it states.
    table_readings: list[dict[str, Any]] = []
    taken_as_stated: list[dict[str, Any]] = []
    for report, original, table, name in zip(reports, originals, tables, names):
        try:
            table_readings.append(
                {} if table is None else _checked_table_readings(report, original, table, name)
            )
            # Then every other key the tables recompute; the rest is taken as stated (noted),
            # under the keys the board shows (an old report's ClinicalF1 of the lexicon:
            # ClinicalF1-lexicon).
            taken_as_stated.append(
                {}
                if table is None
                else _shown_keys(
                    _checked_headline_means(original, table, name), original, name, folders
                )
            )
        except NovaInputError as error:  # checked under this novabench's rules
            raise _refusal_under_other_rules(error, original) from None
    return table_readings, taken_as_stated


def _model_row(
    report: Mapping[str, Any],
    name: str,
    table: Mapping[str, Any] | None,
    stated: Mapping[str, Any],
) -> dict[str, Any]:
    """One model's row of the board: its report's bootstrap, run and, per task, headline
    values and CIs, coverage and the keys taken as stated (unranked yet)."""
    entry: dict[str, Any] = {
        "model": model_name(report),
        "path": name,
        # The report's own bootstrap: its CIs' level and resamples (None: not recorded).
        "ci_level": _ci_setting(report, "confidence"),
        "ci_resamples": _ci_setting(report, "n_resamples"),
        "data": "synthetic sample" if synthetic_data_line(report) else "",
        # an interrupted or running run: its manifest statuses, for the CSV's rows
        "run": _run_cell(report),
        "tasks": {},
    }
    for task in TASK_ORDER:
        task_report = (report.get("tasks") or {}).get(task)
        if task_report is None:
            continue
        metrics = task_report.get("metrics", {})
        coverage = _task_coverage(report, task, table)
        # The keys whose value and CI were taken as stated (marked †): every key of a
        # report without tables, else those its tables cannot recompute.
        as_stated = [
            key
            for key in headline_keys(task, metrics)
            if key in metrics and (table is None or key in stated.get(task, []))
        ]
        entry["tasks"][task] = {
            "metrics": {k: metrics.get(k) for k in headline_keys(task, metrics) if k in metrics},
            "ci": {
                k: v
                for k, v in (task_report.get("confidence_intervals") or {}).items()
                if k in headline_keys(task, metrics)
            },
            "rank": None,
            "taken_as_stated": as_stated,
            # Every value and CI checked against per-item tables.
            "verified": not as_stated,
            "coverage": _coverage_cell(coverage),
            # Why the model is shown but not ranked (None: ranked as usual).
            "unranked": _answered_nothing(coverage),
        }
    return entry


def _board_warnings(
    compared: _Compared,
    originals: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    tables: Sequence[dict[str, Any] | None],
    models: Sequence[Mapping[str, Any]],
    taken_as_stated: Sequence[Mapping[str, Any]],
    revision_line: str,
) -> list[str]:
    """The lines a reader needs before any number, in the order every output says them."""
    reports = compared.reports
    # Said once, by the warning below; each task's ranking method says what it does to ties.
    without_items = [name for table, name in zip(tables, names) if table is None]
    held = {
        task: {
            "metrics": {
                key: None
                for model in models
                for key in model["tasks"].get(task, {}).get("metrics", {})
            }
        }
        for task in TASK_ORDER
    }
    return [
        *([compared.builds_line] if compared.builds_line else []),
        *dict.fromkeys(line for line in map(synthetic_data_line, reports) if line),
        *([revision_line] if revision_line else []),
        # The METEOR fallback before the stand-ins, in the order nova evaluate says them.
        *dict.fromkeys(line for line in map(meteor_fallback_line, reports) if line),
        *stand_in_lines({"tasks": held}),
        *(
            line
            for text in map(_coverage_warning, reports, names, tables)
            for line in text.splitlines()
        ),
        *compared.readings_of_one_run,
        *(
            line
            for original, name in zip(originals, names)
            for line in _renamed_key_lines(original, name, compared.folders)
        ),
        *([_unverified_warning(without_items)] if without_items else []),
        *(
            _stated_keys_warning(name, task, keys)
            for stated, name in zip(taken_as_stated, names)
            for task, keys in stated.items()
        ),
        *(
            f"warning: {model['path']}: {task} {entry['unranked']}"
            for model in models
            for task, entry in model["tasks"].items()
            if entry.get("unranked")
        ),
        # ranked as they stood when scored: a running run's numbers were a snapshot
        *(
            f"warning: {name}: {line}"
            for name, line in zip(names, map(unfinished_run_line, reports))
            if line
        ),
    ]


def _ci_setting(report: Mapping[str, Any], setting: str) -> Any:
    """A report's recorded bootstrap ``confidence`` or ``n_resamples`` (None if not recorded).

    Example:
        >>> _ci_setting({"bootstrap": {"confidence": 0.5, "n_resamples": 200}}, "confidence")
        0.5
        >>> _ci_setting({}, "n_resamples") is None
        True
    """
    settings = report.get("bootstrap")
    value = settings.get(setting) if isinstance(settings, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _states_intervals(model: Mapping[str, Any]) -> bool:
    return any(
        interval and any(_number(end) is not None for end in interval)
        for entry in model["tasks"].values()
        for interval in entry["ci"].values()
    )


def _board_level(models: Sequence[Mapping[str, Any]]) -> float | None:
    """The CI level of most reports stating intervals (the first one's on a tie), which the
    tables' header names; None when no report states one.

    Example:
        >>> ci = {"localization": {"ci": {"mAP@30": [0.1, 0.2]}}}
        >>> _board_level([{"ci_level": 0.5, "tasks": ci}, {"ci_level": 0.95, "tasks": ci},
        ...               {"ci_level": 0.95, "tasks": ci}])
        0.95
    """
    levels = [model.get("ci_level") for model in models if _states_intervals(model)]
    if not levels:
        return None
    return max(dict.fromkeys(levels), key=levels.count)


def _run_cell(report: Mapping[str, Any]) -> str:
    """The CSV's word on the run a report scored: "" when finished, else its statuses (a
    ``running`` one with no writer when scored is said to be written by no process, as the
    report says).

    Example:
        >>> _run_cell({"predictions": {"unfinished_run": {"runs": [{"path": "r.jsonl",
        ...     "status": "interrupted"}], "asked_not_answered": ["diagnosis"]}}})
        'interrupted; diagnosis asked, no line'
        >>> _run_cell({"predictions": {"unfinished_run": {"runs": [{"path": "r.jsonl",
        ...     "status": "running", "writer": "pid 7"}], "asked_not_answered": []}}})
        'running (still being written when scored)'
        >>> _run_cell({"predictions": {"unfinished_run": {"runs": [{"path": "r.jsonl",
        ...     "status": "running", "writer": None}], "asked_not_answered": []}}})
        'running, not finished (no end record)'
        >>> _run_cell({})
        ''
    """
    recorded = (report.get("predictions") or {}).get("unfinished_run")
    if not isinstance(recorded, Mapping):
        return ""
    parts = []
    for run in recorded.get("runs") or []:
        if not isinstance(run, Mapping):
            continue
        status = str(run.get("status"))
        if run.get("writer"):
            parts.append(f"{status} (still being written when scored)")
        elif is_running_status(status) and run.get("writer_ended"):
            parts.append(f"{status} but its writer ended (e.g. killed)")
        elif is_running_status(status):
            # No end record, its writer not known to have ended: it may run elsewhere.
            parts.append(f"{status}, not finished (no end record)")
        else:
            parts.append(status)
    asked = [task for task in recorded.get("asked_not_answered") or [] if isinstance(task, str)]
    if asked:
        parts.append(f"{', '.join(asked)} asked, no line")
    return "; ".join(parts)


def _unverified_warning(names: Sequence[str]) -> str:
    """The warning naming the reports whose values nothing could check.

    Example:
        >>> _unverified_warning(["a.json"])
        'warning: a.json has no per-item tables (nova evaluate --items): its values and CIs are taken as stated, unverified, and marked † in the tables'
    """
    has, its = ("has", "its") if len(names) == 1 else ("have", "their")
    return (
        f"warning: {', '.join(names)} {has} no per-item tables (nova evaluate --items): "
        f"{its} values and CIs are taken as stated, unverified, and marked {UNVERIFIED_MARK} in "
        "the tables"
    )


def _stated_keys_warning(name: str, task: str, keys: Sequence[str]) -> str:
    """The warning naming the keys of a report with per-item tables that they cannot check.

    Example:
        >>> _stated_keys_warning("a.json", "captioning", ["BLEU-4", "BERTScore-F1"])
        "warning: a.json: captioning BLEU-4, BERTScore-F1: values and CIs taken as stated, unverified, and marked † in the tables (its per-item tables cannot recompute them; its other keys' values and CIs are checked against them)"
    """
    return (
        f"warning: {name}: {task} {', '.join(keys)}: values and CIs taken as stated, "
        f"unverified, and marked {UNVERIFIED_MARK} in the tables (its per-item tables cannot "
        "recompute them; its other keys' values and CIs are checked against them)"
    )


def _human_rows(
    reports: Sequence[Mapping[str, Any]],
    tables: Sequence[Mapping[str, Any] | None],
    names: Sequence[str],
) -> tuple[list[dict[str, Any]], str | None]:
    """The raters' rows (the first report holding a human reference gives them), each key
    the images table can recompute checked, value and CI, the rest listed as taken as stated.

    A rater-vs-gold row's hit rates (mAP@30, mAP@50, mAP@50:95) are means over the scored
    images of that rater's best IoU against gold, which the table holds
    (``rater_1_best_iou``...): recomputed as the model's are, from the rows localisation
    scored, and its CI redrawn with the report's bootstrap settings; anything else is
    refused in one line naming the report and the field. Every other key, every key of rater
    1 vs rater 2, and every key of a report without tables, is taken as stated (marked †).
    Returns the rows and the name of the report they come from (None without rows).
    """
    from novabench.report.human_reference import comparison_rows

    for task in _HUMAN_TASKS:
        for report, table, name in zip(reports, tables, names):
            section = (report.get("human_reference") or {}).get(task)
            rows = comparison_rows(section)
            if not rows:
                continue
            shown = []
            for who, row in rows:
                keys = [key for key in HEADLINE_KEYS[task] if _number(row.get(key)) is not None]
                checked = _checked_human_keys(report, table, task, who, row, keys, name)
                shown.append(
                    {
                        "who": who,
                        "metrics": dict(row),
                        "taken_as_stated": [key for key in keys if key not in checked],
                    }
                )
            return shown, name
    return [], None
