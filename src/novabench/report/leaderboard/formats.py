"""The board as Markdown, terminal text, a self-contained HTML page and CSV.

Each output says the same in its own markup: the warnings before any table, the overview,
one table per task with its ranking line, the published figures, then the notes; every
untrusted text is escaped for its format. :func:`curve_tables` and :func:`curve_note` give
the hit-rate curve the HTML page draws.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from typing import Any

from novabench.escaping import csv_cell, html_text, markdown_code_span, markdown_text, visible_text
from novabench.report.items import read_item_tables
from novabench.report.leaderboard.cells import _differing, _header_level, _tasks
from novabench.report.leaderboard.ranking import (
    _DIFFERENT_ITEMS,
    _NOT_COMPARABLE,
    _ONE_MODEL,
    _READINGS_DIFFER,
)
from novabench.report.leaderboard.settings import (
    _CURVE_TASKS,
    RANK_METRICS,
)
from novabench.report.leaderboard.tables import (
    _as_report,
    _overview,
    _published_rows,
    _table,
    _task_table,
    _undefined_lines,
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
        undefined = _undefined_lines(board, task)  # why a cell reads n/a, under its table
        lines += ["", *(f"- {markdown_text(line)}" for line in undefined)] if undefined else []
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
        lines += [_plain(line) for line in _undefined_lines(board, task)]
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
            *(f'<p class="note">{escape(line)}</p>' for line in _undefined_lines(board, task)),
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
