"""A leaderboard of several reports on one release: headline numbers, CIs, ranks with ties.

Each task is ranked on one metric whose value is a mean over items, so the per-item tables
(``report["items"]``, written by ``nova evaluate --items``) can resample it:

- localisation: ``mAP@30`` (image hit: best IoU >= 0.30, over all images);
- captioning: ``ROUGE-L`` (the per-caption column);
- diagnosis: Top-1 (over the cases with a final diagnosis) under the key the reports hold:
  ``top1`` (the case judge, the paper's), ``top1-lexicon`` or ``top1-pairwise``.

Reports holding different readings of a task's ranking metric (one judged ``top1``, others
``top1-lexicon``) hold different quantities: that task is not ranked, each value is shown
under its own key (the overview gets a column per reading held), and its ranking says which
reports hold which reading and how to score them alike; the other tasks are ranked as usual.
The JSON says it per task: ``ranking[task]["ranked"]`` is false, ``"reason"`` the sentence,
``"readings"`` ``{key: [report, ...]}``.

Old reports are read with today's keys (:func:`novabench.report.render.with_current_keys`:
an old lexicon ``top1`` is ranked as ``top1-lexicon``, never as the paper's Top-1).

Values are checked where a report enters the board: each headline value is null or a finite
fraction in [0, 1], its CI two finite fractions, low <= high (a value outside its CI is
shown: a percentile CI of a statistic that is no mean can miss it); two reports of one
evaluation (same run id or same pinned tables: a copied report) are refused, naming both. A
report with per-item tables must hold, in them, the reading of each ranking metric it states
(the cases table's ``top1-lexicon`` never backs a stated ``top1``), and its stated value must
equal the value the task's module recomputes from them as the ranking resamples it
(``TaskBehaviour.rank_value``, up to float rounding); anything else is refused in one line
naming the report, the key and both values. So is every other headline key the tables can
recompute as a ratio of sums over items (``TaskBehaviour.item_mean_terms``: mAP@30/50,
mAP@50:95, hit@30/50, top1/top5 of any reading, ROUGE-L, METEOR, BERTScore-F1, BinaryF1 of
either reading,
and ClinicalF1/ModalityF1 of either reading: sample keyword averaging from the per-caption
F1s, micro from the per-caption counts), and its stated CI too: it must be the interval
``nova evaluate`` drew from those items with the report's own bootstrap settings
(resamples, confidence, seed, and unit: whole cases by the tables' ``case_id``, or single
images for a report without ``bootstrap.unit``), which the same bootstrap of the tables
gives again, to float
rounding; else one line naming the report, the key and both intervals. The keys no ratio
of per-item sums gives are scored again from the tables' own columns by the task's metric
(``TaskBehaviour.table_rescoring``): COCO-AP@30/50/50:95, ACC50, TP30, FP30 and FNR from
each scored image's predicted boxes, scores and gold boxes (``[x1, y1, x2, y2]``, scored in
that form), BLEU-4 from the two captions; value and CI (the same bootstrap, the same
settings) must be the report's, to float rounding, else one line as above. The keys the
tables cannot recompute (those, in tables written without the scores or the predicted
captions; micro-averaged keyword F1s of tables without counts) and every value and CI of
a report without tables are taken as stated: named in the warnings before the tables and each marked † under the key the
board shows (the CSV's ``verified`` names them per row).

Every value and CI is shown in percent; the header names the CI level most reports share,
and a cell whose CI has another level says its own ("(50% CI)"); the CSV gives each row's
``ci_level (%)`` and ``ci_resamples``. A rank set by a value taken as stated is marked † too.
The raters' rows (the first report holding a human reference) are checked where the images
table can: rater-vs-gold mAP@30/50 and mAP@50:95 from ``rater_*_best_iou``, value and CI;
their other values are marked †. The re-scored keys and the raters' rows are redrawn with
the same unit as the rest.

Models are ordered by the report's value of that metric; two neighbours share a rank when a
paired bootstrap of their difference (the same cases drawn for both, every image of each,
as ``nova compare``) has an interval containing 0. Ties chain: if A ties B and B ties C, all three share A's
rank. Without per-item tables for every report, ranks follow the point estimates and the
leaderboard says ties cannot be assessed. A task only one model has is not ranked (rank
None, no tie statement).

Scores are only comparable when the reports were scored with the same metric settings.
Each report records them (:data:`SCORING_SETTINGS`: the BERTScore model hash, the METEOR
variant, the keyword extractor and averaging, the diagnosis matcher or judge, whether only
answered items were scored); where a setting differs between reports (a report without it
counts as "unknown"), the metrics it affects are marked "settings differ" and a task whose
ranking metric is affected is not ranked. One sentence per difference names the setting and
the reports, in every output. Differing bootstrap settings (resamples, confidence, seed, or
unit: whole cases, or single images in reports written before cases were resampled) only
make the CIs differ: noted.
The rule for marks: every metric a differing setting affects is marked (METEOR of one report
beside METEOR-exact+stem of another: both keys, the variant differs), except for a task's
``reading_settings`` (the diagnosis matcher), whose value decides which keys a report holds:
reports of different readings are already told apart by their keys and left unranked, so a
key is marked only when the reports holding that key differ (two lexicon reports of one
matcher beside a judged report: ``top1-lexicon`` is not marked).

Warned about before any table, in every output (``board["warnings"]`` in the JSON): the
synthetic sample, stand-ins shown in place of the paper's keys (``top1-lexicon``...,
``METEOR-exact+stem`` where WordNet was missing), and each report that answered only part of
a task's items (answered/total, missing scored as misses or left out with
``--answered-only``, as its coverage records); the notes keep the rest.

Shown as an overview (per model, each task's ranking metric and rank; "not ranked" where the
task is left unranked) and one table per task with its headline keys (Markdown, terminal,
HTML); the CSV is one wide table whose titles are task, key and unit only, whatever the board
holds, with a note column per task last (what it was ranked on, keys whose settings differ).
The published figures of a paper key are marked not comparable wherever the board holds a
stand-in of it, even beside a report holding the key itself. JSON neighbours name their
reports (``a_report``, ``b_report``) as well as their models.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from novabench.escaping import csv_cell, html_text, markdown_code_span, markdown_text, visible_text
from novabench.report.items import read_item_tables
from novabench.report.leaderboard.build import build_leaderboard
from novabench.report.leaderboard.ranking import (
    _DIFFERENT_ITEMS,
    _NOT_COMPARABLE,
    _ONE_MODEL,
    _READINGS_DIFFER,
    _separable,  # noqa: F401 (tests import it here)
)
from novabench.report.leaderboard.recomputed import UNVERIFIED_MARK
from novabench.report.leaderboard.settings import (  # noqa: F401 (tests import the private two here)
    _CURVE_TASKS,
    _HUMAN_TASKS,
    RANK_METRICS,
    SCORING_SETTINGS,
    _bootstrap_note,
    _setting_differences,
)
from novabench.report.leaderboard.values import _number
from novabench.report.render import HEADLINE_KEYS, TASK_ORDER, headline_keys

__all__ = [
    "RANK_METRICS",
    "SCORING_SETTINGS",
    "build_leaderboard",
    "curve_note",
    "curve_tables",
    "leaderboard_csv",
    "read_item_tables",
    "render_leaderboard_html",
    "render_leaderboard_markdown",
    "render_leaderboard_text",
]


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


def _overview_keys(board: Mapping[str, Any], task: str) -> list[str]:
    """The task's overview columns: its ranking metric, or each reading held when several."""
    rule = board["ranking"][task]
    if rule.get("metric") is None:
        return list(rule.get("readings") or {})
    return [rule["metric"]]


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


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    # Headers hold metric keys read from others' reports, the first column their model names;
    # the other cells are numbers and intervals novabench formats itself.
    lines = [
        "| " + " | ".join(markdown_text(h) for h in header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    return lines + ["| " + " | ".join([markdown_text(row[0]), *row[1:]]) + " |" for row in rows]


_OVERVIEW_LEAD = (
    "Each task's ranking metric and rank; every headline metric is in the task's table below."
)
_OVERVIEW_LEAD_ONE_MODEL = (
    "Each task's ranking metric (one model: nothing to rank it against); every headline "
    "metric is in the task's table below."
)


def _overview_lead(board: Mapping[str, Any]) -> str:
    return _OVERVIEW_LEAD if len(board["models"]) > 1 else _OVERVIEW_LEAD_ONE_MODEL


def _ranking_line(board: Mapping[str, Any], task: str) -> str:
    rule = board["ranking"].get(task)
    if rule is None:
        return f"Not ranked: no model has {task}'s ranking metric {RANK_METRICS[task]}."
    if rule["method"] == _ONE_MODEL:
        if len(board["models"]) > 1:  # others shown, without the ranking metric
            holders = [path for paths in (rule.get("readings") or {}).values() for path in paths]
            who = f" ({', '.join(holders)})" if holders else ""
            return f"Not ranked: only one report holds {rule['metric']}{who}, the ranking metric."
        return f"One model only: not ranked ({rule['metric']} is the ranking metric)."
    if rule["method"] in (_READINGS_DIFFER, _DIFFERENT_ITEMS):
        return f"Not ranked: {rule['reason']}."
    if rule["method"].startswith(_NOT_COMPARABLE):
        settings = [d["setting"] for d in _differing(board, task) if rule["metric"] in d["metrics"]]
        return (
            f"Not ranked: the reports scored its ranking metric {rule['metric']} with a "
            f"different {' and '.join(settings) or 'setting'} (below)."
        )
    return f"Ranked on {rule['metric']}: {rule['method']}."


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


def render_leaderboard_markdown(board: Mapping[str, Any]) -> str:
    """The leaderboard as Markdown: warnings, an overview, one table per task, then the notes.

    The warnings (stand-ins shown in place of the paper's keys) come before any number, one
    bold paragraph each. The overview gives each task's ranking metric and rank per model
    (a column per reading where the reports hold several, the task then unranked); each
    task's table gives that task's headline metrics (registry order) with CIs, best rank
    first, the raters below the models under localisation.

    Example:
        >>> board = {"release": "f", "models": [{"model": "a", "path": "a.json", "tasks": {
        ...     "diagnosis": {"metrics": {"top1": 0.5}, "ci": {"top1": [0.25, 0.75]}, "rank": 1}}}],
        ...     "ranking": {"diagnosis": {"metric": "top1", "method": "point estimate"}},
        ...     "human_reference": [], "notes": []}
        >>> lines = render_leaderboard_markdown(board).splitlines()
        >>> lines[lines.index("## diagnosis") + 6]
        '| a | 1 | 50.0 [25.0, 75.0] |'
    """
    lines = [
        "# NOVA leaderboard",
        "",
        f"Release fingerprint {markdown_code_span(board['release'])}; values in percent with "
        f"{_header_level(board)}bootstrap CIs.",
    ]
    # Before any table, as nova evaluate's report: one paragraph each (adjacent lines would
    # run into one).
    for warning in board.get("warnings") or ():
        lines += ["", f"**{markdown_text(warning)}**"]
    overview_header, overview_rows = _overview(board)
    if len(overview_header) > 1:
        lines += ["", "## Overview", "", _overview_lead(board), ""]
        lines += _markdown_table(overview_header, overview_rows)
    for task in _tasks(board):
        header, rows = _task_table(board, task)
        lines += [
            "",
            f"## {markdown_text(task)}",
            "",
            markdown_text(_ranking_line(board, task)),
            "",
        ]
        for difference in _differing(board, task):
            lines += [markdown_text(difference["sentence"]), ""]
        lines += _markdown_table(header, rows)
    from novabench.report.render import render_published

    lines += render_published(_as_report(board), _published_rows(board))
    if board.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {markdown_text(note)}" for note in board["notes"]]
    return "\n".join(lines) + "\n"


def _plain(text: object) -> str:
    """Untrusted text for a terminal: hidden characters shown, on one line, nothing escaped."""
    return " ".join(visible_text(text).splitlines())


def _text_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool] | None = None
) -> list[str]:
    """Columns padded to their widest cell: numbers right-aligned, texts left.

    ``numeric`` says which columns hold numbers; by default all but the first (the names).
    """
    table = [[_plain(cell) for cell in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    right = list(numeric) if numeric is not None else [i > 0 for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(width) if right[i] else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths))
        ]
        return "  ".join(padded).rstrip()

    return [line(table[0]), "  ".join("-" * width for width in widths)] + [
        line(row) for row in table[1:]
    ]


def render_leaderboard_text(board: Mapping[str, Any]) -> str:
    """The leaderboard as plain text for a terminal: what the Markdown says, without its markup.

    The same sections as :func:`render_leaderboard_markdown` (warnings, overview, one table
    per task, the published figures, the notes), with aligned columns and no Markdown
    escapes, so a figure reads ``20.16``, not ``20\\.16``.

    Example:
        >>> board = {"release": "f", "models": [{"model": "a_1", "path": "a.json", "tasks": {
        ...     "diagnosis": {"metrics": {"top1": 0.5}, "ci": {"top1": [0.25, 0.75]}, "rank": 1}}}],
        ...     "ranking": {"diagnosis": {"metric": "top1", "method": "point estimate"}},
        ...     "human_reference": [], "notes": []}
        >>> lines = render_leaderboard_text(board).splitlines()
        >>> lines[lines.index("diagnosis") + 6]
        'a_1       1  50.0 [25.0, 75.0]'
    """
    lines = [
        "NOVA leaderboard",
        "",
        f"Release fingerprint {_plain(board['release'])}; values in percent with "
        f"{_header_level(board)}bootstrap CIs.",
    ]
    warnings = [_plain(warning) for warning in board.get("warnings") or ()]
    lines += ["", *warnings] if warnings else []  # before any table, as nova evaluate's report
    overview_header, overview_rows = _overview(board)
    if len(overview_header) > 1:
        lines += ["", "Overview", "", _overview_lead(board), ""]
        lines += _text_table(overview_header, overview_rows)
    for task in _tasks(board):
        header, rows = _task_table(board, task)
        lines += ["", _plain(task), "", _plain(_ranking_line(board, task)), ""]
        for difference in _differing(board, task):
            lines += [_plain(difference["sentence"]), ""]
        lines += _text_table(header, rows)
    from novabench.published import NOT_RESCORED, published_sources

    published = _published_rows(board)
    if published:
        lines += ["", f"Published zero-shot results ({NOT_RESCORED}), in percent", ""]
        lines += _text_table(
            ["task", "metric", "model", "value (%)", "images", "source"],
            published,
            numeric=[False, False, False, True, True, False],
        )
        lines.append("")
        lines += [
            _plain(f"- {source.title}: {source.reference}; {source.protocol}; {source.note}.")
            for source in published_sources().values()
        ]
    if board.get("notes"):
        lines += ["", "Notes", ""] + [f"- {_plain(note)}" for note in board["notes"]]
    return "\n".join(lines) + "\n"


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    escape = html_text
    parts = ["<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"]
    parts += ["<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(parts) + "</table>"


def curve_tables(
    board: Mapping[str, Any],
    reports: Sequence[Mapping[str, Any]],
    paths: Sequence[str | os.PathLike[str]],
) -> tuple[dict[str, Any], list[str]]:
    """The images tables the hit-rate curve draws, and the models it has to leave out.

    Models scored on localisation without per-item tables (``nova evaluate --items``)
    cannot be drawn; they are returned so the page can name them. Two models of the same
    name are told apart by their report's path.

    Returns:
        ``({curve label: images table}, [left-out model names])``.

    Example:
        >>> board = {"models": [{"model": "a", "path": "a.json", "tasks": {"localization": {}}}]}
        >>> curve_tables(board, [{"tasks": {}}], ["a.json"])
        ({}, ['a'])
    """
    names = [model["model"] for model in board["models"]]
    images: dict[str, Any] = {}
    left_out: list[str] = []
    for model, report, path in zip(board["models"], reports, paths):
        if not any(task in model["tasks"] for task in _CURVE_TASKS):
            continue
        label = (
            model["model"]
            if names.count(model["model"]) == 1
            else f"{model['model']} ({model['path']})"
        )
        if report.get("items"):
            images[label] = read_item_tables(report, path)["images"]
        else:
            left_out.append(label)
    return images, left_out


def curve_note(left_out: Sequence[str], drawn: int) -> str:
    """What the hit-rate curve leaves out and how to include it ("" when nothing).

    Example:
        >>> curve_note(["b"], 1).split(";")[0]
        'The hit-rate curve leaves out b: no per-item tables'
    """
    if not left_out:
        return ""
    who = ", ".join(left_out)
    them = "them" if len(left_out) > 1 else "it"
    if not drawn:
        return (
            f"No hit-rate curve: no report has per-item tables ({who}); score with "
            f"nova evaluate --items DIR to draw {them}."
        )
    return (
        f"The hit-rate curve leaves out {who}: no per-item tables; score with "
        f"nova evaluate --items DIR to draw {them}."
    )


def render_leaderboard_html(
    board: Mapping[str, Any],
    images: Mapping[str, Any] | None = None,
    *,
    left_out: Sequence[str] = (),
) -> str:
    """The leaderboard as one self-contained HTML page (inline CSS, no external URL).

    The same tables as :func:`render_leaderboard_markdown`: the warnings first ("Read
    first", as the report's page), an overview, then one per task.

    Args:
        board: :func:`build_leaderboard`'s result.
        images: ``{model name: per-item images table}``; when given, the page adds the hit
            rate against the IoU threshold with one curve per model (raters dashed),
            embedded as a PNG.
        left_out: models the curve cannot draw (:func:`curve_tables`), named beside it.

    Example:
        >>> board = {"release": "f", "models": [], "ranking": {}, "human_reference": [], "notes": []}
        >>> "<title>NOVA leaderboard</title>" in render_leaderboard_html(board)
        True
    """
    escape = html_text
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="novabench">'
        "<title>NOVA leaderboard</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:"
        "collapse;display:block;max-width:100%;overflow-x:auto}th,td{border:1px solid #ccc;"
        "padding:.25em .6em}td{text-align:right;white-space:nowrap}td:first-child{text-align:left}"
        ".note{color:#6a4a00;background:#fff6dd;padding:.4em}"
        ".warnings{border:2px solid #b25000;background:#fff3e6;padding:.4em .8em}"
        "</style></head><body>",
        "<h1>NOVA leaderboard</h1>",
        f"<p>Release fingerprint <code>{escape(str(board['release']))}</code>; values in "
        f"percent with {escape(_header_level(board))}bootstrap CIs.</p>",
    ]
    warnings = board.get("warnings") or []
    if warnings:  # before any table, as nova evaluate's page
        items = "".join(f"<li>{escape(warning)}</li>" for warning in warnings)
        parts.append(
            f'<div class="warnings" id="warnings" role="alert"><b>Read first</b><ul>{items}</ul>'
            "</div>"
        )
    overview_header, overview_rows = _overview(board)
    if len(overview_header) > 1:
        parts += [
            '<h2 id="overview">Overview</h2>',
            f"<p>{escape(_overview_lead(board))}</p>",
            _html_table(overview_header, overview_rows),
        ]
    for task in _tasks(board):
        header, rows = _task_table(board, task)
        parts += [
            f'<h2 id="{escape(task)}">{escape(task)}</h2>',
            f"<p>{escape(_ranking_line(board, task))}</p>",
        ]
        parts += [
            f'<p class="note">{escape(difference["sentence"])}</p>'
            for difference in _differing(board, task)
        ]
        parts += [
            _html_table(header, rows),
        ]
    from novabench.published import NOT_RESCORED

    published = _published_rows(board)
    if published:
        parts += [
            f'<h2 id="published">Published zero-shot results ({escape(NOT_RESCORED)})</h2>',
            "<p>Figures other runs published for the same keys; not recomputed here, and "
            "their prompts differ (the Markdown leaderboard lists each source).</p>",
            _html_table(["task", "metric", "model", "value (%)", "images", "source"], published),
        ]
    if board.get("notes"):
        parts.append("<h2>Notes</h2><ul>")
        parts += [f"<li>{escape(note)}</li>" for note in board["notes"]]
        parts.append("</ul>")
    if images:
        import base64

        from novabench.report.plots import figure_png, hit_rate_curve

        png = base64.b64encode(figure_png(hit_rate_curve(images))).decode("ascii")
        parts.append(
            '<figure><img alt="hit rate against the IoU threshold" '
            f'style="max-width:100%" src="data:image/png;base64,{png}"></figure>'
        )
    note = curve_note(left_out, len(images or {}))
    if note:
        parts.append(f'<p class="note">{escape(note)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def leaderboard_csv(board: Mapping[str, Any]) -> str:
    """The leaderboard as one wide CSV table of numbers: a row per model and rater.

    Per task a rank column, then per headline metric its value and the low and high end of
    its CI, each a plain number in percent (empty where undefined). One file rather than one
    per task, so a spreadsheet or ``pandas.read_csv`` gets every number of a model on its
    row, ready to plot.

    Example:
        >>> board = {"release": "f", "models": [], "ranking": {}, "human_reference": [], "notes": []}
        >>> leaderboard_csv(board)
        'model,data,verified,run,ci_level (%),ci_resamples\\r\\n'
    """
    header, rows = _table(board)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    # Headers hold metric keys from others' reports, the first column their model names:
    # text, never formulas. The other cells are numbers novabench formats itself.
    writer.writerow([csv_cell(title) for title in header])
    writer.writerows([csv_cell(row[0]), *row[1:]] for row in rows)
    return buffer.getvalue()
