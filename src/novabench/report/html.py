"""The report as one self-contained HTML page: tables, plots and box overlays, offline.

Everything is inline: CSS in a ``<style>`` element, plots as SVG, overlays as base64 PNG
``data:`` URLs; the page names no external URL, so it opens from a mail attachment or a
USB stick. Every piece of text from the report or the release is HTML-escaped.

The page leads with what must be read first (answers not read, tasks whose answers were
mostly unusable, a stand-in for METEOR, too few resamples), a contents list, and the NOVA
paper's measures (the registry's ``TaskSpec.paper_keys``) with their intervals, the human
reference and the published figures beside them. Every other section starts folded in a
``<details>`` (a link to it opens it): the other measures, settings, the human reference
table, the published figures, the parse-status counts, breakdown tables (bars in plain
HTML), and with the per-item tables (given, or ``report["items"]``) the hit-rate curve, the
best-IoU distribution and the gallery; without them a line says they need ``nova evaluate
--items``. Wide tables scroll inside a frame with shadows at the edges, never the page. No
script: the page reads the same where scripts are blocked.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench import registry
from novabench.escaping import html_text
from novabench.report.render import (
    HEADLINE_KEYS,
    NO_INTERVALS,
    TASK_ORDER,
    VERSUS_PAPER,
    comparison_with_paper,
    coverage_phrase,
    headline_keys,
    key_meaning_cells,
    model_name,
    resampled_unit,
    settings_lines,
    undefined_reason,
    without_intervals,
)
from novabench.tasks import tasks_where

if TYPE_CHECKING:
    from novabench.data.render import LineStyle

__all__ = ["render_comparison_html", "render_html", "write_html"]

#: The shadows at the edges of a frame that scrolls sideways: a shadow shows that there is
#: more to that side, and moves with the frame's content (no script). The report's wide
#: tables and the explorer Space's tables use this one definition.
SCROLL_SHADOWS_CSS = """background: linear-gradient(to right, #fff 30%, rgba(255, 255, 255, 0)),
    linear-gradient(to left, #fff 30%, rgba(255, 255, 255, 0)) 100% 0,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, 0.3), rgba(0, 0, 0, 0)),
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, 0.3), rgba(0, 0, 0, 0)) 100% 0;
  background-repeat: no-repeat; background-size: 3em 100%, 3em 100%, 1em 100%, 1em 100%;
  background-attachment: local, local, scroll, scroll;"""

_STYLE = (
    """
body { font-family: system-ui, sans-serif; margin: 2em auto; padding: 0 1em; max-width: 70em;
  color: #222; overflow-wrap: anywhere; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 1.6em; }
summary h2 { display: inline; border: none; }
summary { cursor: pointer; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
summary .fold { color: #555; font-size: 0.9em; } details[open] .fold { display: none; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; overflow-wrap: normal; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
/* A wide table scrolls inside its frame, never the page. */
.wide { max-width: 100%; overflow-x: auto;
  """
    + SCROLL_SHADOWS_CSS
    + """ }
/* A folded section's link target sits inside its <details>, so following the link opens
   it (browsers open a closed <details> holding the target); the margin keeps its heading
   in view. */
.target { scroll-margin-top: 7em; }
.lead { font-size: 1.1em; } .note { color: #6a4a00; background: #fff6dd; padding: 0.4em; }
.warnings { border: 2px solid #b35c00; background: #fff3e0; padding: 0.2em 1em; }
.warnings li { margin: 0.3em 0; }
.stand-in { font-size: 0.85em; color: #6a4a00; }
figure { margin: 1em 0; } img.plot, svg.plot { max-width: 100%; height: auto; }
.gallery { display: grid; grid-template-columns: 1fr 1.4fr; gap: 0.8em 1.2em; }
.gallery > * { min-width: 0; }
.gallery h3 { grid-column: 1 / -1; margin: 0.8em 0 0; }
.gallery img { width: 100%; max-width: 24em; image-rendering: pixelated; }
.legend span { display: inline-block; margin-right: 1em; }
nav.toc ul { margin: 0.3em 0; padding-left: 1.4em; columns: 2; }
.swatch { vertical-align: middle; margin-right: 0.3em; background: #000; }
.bar { position: relative; width: 12em; height: 1em; background: #eee; }
.bar .fill { position: absolute; left: 0; top: 0; bottom: 0; background: #009e73; }
.bar .ci { position: absolute; top: 45%; height: 10%; background: #000; }
"""
)


@dataclass(frozen=True)
class _Section:
    """One part of the page: its fragment id, heading, HTML body and whether it starts folded."""

    anchor: str
    title: str
    body: list[str]
    folded: bool = False

    def html(self) -> str:
        heading = f"<h2>{_text(self.title)}</h2>"
        if not self.folded:
            return "\n".join([f'<section id="{self.anchor}">{heading}', *self.body, "</section>"])
        return "\n".join(
            [
                f'<section><details><summary>{heading} <span class="fold">(folded: click to '
                f'open)</span></summary><div class="target" id="{self.anchor}"></div>',
                *self.body,
                "</details></section>",
            ]
        )


def _table_of_contents(sections: list[_Section]) -> str:
    """Links to every section (in-page fragments: no request)."""
    links = [f'<li><a href="#{s.anchor}">{_text(s.title)}</a></li>' for s in sections]
    return '<nav class="toc"><b>Contents</b><ul>' + "".join(links) + "</ul></nav>"


def _wide(table: str) -> str:
    """A table in a frame that scrolls sideways when the table is wider than the page."""
    return f'<div class="wide" tabindex="0">{table}</div>'


def _text(value: Any) -> str:
    return html_text(value)


# A run of backticks, then the shortest text, then a run of the same length (CommonMark).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def _text_with_code(value: Any) -> str:
    """``value`` escaped as :func:`_text` does, then its `code spans` shown as ``<code>``.

    The lines of the Read-first box are worded for the terminal too, with commands in
    backticks; the spans are found after escaping, so no tag can come from the text.
    """
    return _CODE_SPAN.sub(lambda m: f"<code>{m.group(2)}</code>", _text(value))


def _png(data: bytes, alt: str, css_class: str = "plot") -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img class="{css_class}" alt="{_text(alt)}" src="data:image/png;base64,{encoded}">'


def _percent(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    return f"{100 * float(value):.1f}"


def _interval(interval: Any) -> str:
    if not interval or any(v is None or (isinstance(v, float) and v != v) for v in interval):
        return ""
    return f"[{_percent(interval[0])}, {_percent(interval[1])}]"


def _warnings(report: Mapping[str, Any]) -> str:
    """What a reader must know before reading any number, at the top of the page ("" if none)."""
    from novabench.report.render import report_first_lines

    lines = report_first_lines(report)  # the terminal's and the Markdown's order
    if not lines:
        return ""
    items = "".join(f"<li>{_text_with_code(line)}</li>" for line in lines)
    return (
        f'<div class="warnings" id="warnings" role="alert"><b>Read first</b><ul>{items}</ul></div>'
    )


def _shown_keys(spec: Any, metrics: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """The paper's keys of a task as the report holds them: ``(key shown, paper key it stands
    in for or None)``; a paper key the report lacks is shown as itself (not computed)."""
    shown: list[tuple[str, str | None]] = []
    for key in spec.paper_keys:
        other = next((o for o in spec.stand_ins(key) if o in metrics), None)
        if key not in metrics and other is not None:
            shown.append((other, key))
        else:
            shown.append((key, None))
    return shown


def _human_cell(report: Mapping[str, Any], task: str, key: str) -> str:
    """The raters' figures of one key (value and interval per comparison), or why there are none."""
    from novabench.report.human_reference import comparison_rows

    computed = report.get("human_reference")
    if not computed:
        return "not computed"
    section = computed.get(task)
    if section is None:
        return "none for this task"
    if section.get("available") is False:
        return "none in the release"
    lines = [
        f"{_text(name)}: {_percent(row[key])}"
        f"{_interval_suffix((row.get('confidence_intervals') or {}).get(key), row[key])}"
        f"{_undefined_note(task, key, row[key], name)}"
        for name, row in comparison_rows(section)
        if key in row
    ]
    return "<br>".join(lines) if lines else "not scored for this key"


def _published_cell(
    published: list[Any], task: str, key: str, stands_for: str | None = None
) -> str:
    """How many published figures the report shows for a key, their range, and where.

    Beside a stand-in, the paper key's figures are shown marked as another quantity."""
    from novabench.published import settings_caveat

    wanted = key if stands_for is None else stands_for
    shown = [result for result, _ in published if result.task == task and result.metric == wanted]
    values = [result.value for result in shown]
    if not values:
        return "none"
    low, high = min(values), max(values)
    spread = f"{low:.1f}" if len(values) == 1 else f"{low:.1f} to {high:.1f}"
    noun = "figure" if len(values) == 1 else "figures"
    cell = f'<a href="#published">{len(values)} {noun}: {spread}</a>'
    if stands_for is not None:
        cell += (
            f'<br><span class="stand-in">the paper\'s {_text(stands_for)}: not comparable '
            f"with {_text(key)}</span>"
        )
    else:
        caveats = sorted({caveat for caveat in map(settings_caveat, shown) if caveat})
        cell += "".join(f'<br><span class="stand-in">{_text(c)}</span>' for c in caveats)
    return cell


def _measure_rows(
    report: Mapping[str, Any],
    rows: list[tuple[str, str, str | None]],
    intervals: bool,
    published: list[Any] | None,
) -> list[str]:
    """Table rows (task, key, stand-in for) with value, interval, human reference, published."""
    html = []
    for task, key, stands_for in rows:
        task_report = report["tasks"][task]
        metrics = task_report["metrics"]
        name = _text(key)
        if stands_for is not None:
            name += (
                f'<br><span class="stand-in">in place of the paper\'s {_text(stands_for)}, '
                "which was not computed: another quantity</span>"
            )
        if key in metrics:
            value = f'<td class="num">{_percent(metrics[key])}{_undefined_note(task, key, metrics[key])}</td>'
            interval = task_report.get("confidence_intervals", {}).get(key)
            ci = f'<td class="num">{_text(_interval(interval))}</td>' if intervals else ""
        else:
            value = "<td>not computed</td>"
            ci = "<td></td>" if intervals else ""
        cells = [
            f"<td>{_text(task)}</td><td>{name}</td>",
            value,
            ci,
            f"<td>{_human_cell(report, task, key)}</td>",
        ]
        if published is not None:
            # Beside a stand-in the paper key's figures, marked as not comparable with it.
            cells.append(f"<td>{_published_cell(published, task, key, stands_for)}</td>")
        cells.append(f"<td>{_text(comparison_with_paper(report, task, key))}</td>")
        html.append("<tr>" + "".join(cells) + "</tr>")
    return html


def _undefined_note(task: str, key: str, value: Any, who: str = "") -> str:
    """Beside an ``n/a`` value: when the key is undefined (``registry.TaskSpec.meaning``),
    for the human-reference comparison ``who`` names ("rater 1 vs rater 2") if any."""
    why = undefined_reason(task, key, who)
    if _percent(value) != "n/a" or why is None:
        return ""
    return f'<br><span class="stand-in">undefined: {_text(why)}</span>'


def _key_meanings_section(report: Mapping[str, Any]) -> list[_Section]:
    """What each key of the tables measures, which way is better, where its definition
    comes from: one row per key shown (``registry.TaskSpec.meaning``), folded."""
    rows = []
    for task in TASK_ORDER:
        task_report = report["tasks"].get(task)
        if task_report is None:
            continue
        for key in headline_keys(task, task_report["metrics"]):
            meaning = key_meaning_cells(task, key)
            if key not in task_report["metrics"] or meaning is None:
                continue
            cells = (task, key, *meaning)
            rows.append("<tr>" + "".join(f"<td>{_text(cell)}</td>" for cell in cells) + "</tr>")
    if not rows:
        return []
    header = "".join(
        f"<th>{title}</th>"
        for title in ("task", "key", "what it measures", "better", "definition from")
    )
    table = _wide(f"<table><tr>{header}</tr>{''.join(rows)}</table>")
    return [_Section("keys", f"What the keys mean ({len(rows)})", [table], folded=True)]


def _header(report: Mapping[str, Any], intervals: bool, published: bool) -> str:
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    columns = ["task", "metric", "value (%)"]
    columns += [f"{level}% CI"] if intervals else []
    columns += ["human reference (%)"]
    columns += ["published, not re-scored (%)"] if published else []
    columns += [VERSUS_PAPER]
    return "<tr>" + "".join(f"<th>{_text(c)}</th>" for c in columns) + "</tr>"


def _headline_sections(report: Mapping[str, Any]) -> list[_Section]:
    """The paper's keys (open) and every other headline key ("More measures", folded)."""
    from novabench.published import published_beside

    intervals = not without_intervals(report)
    paper: list[tuple[str, str, str | None]] = []
    more: list[tuple[str, str, str | None]] = []
    for task in TASK_ORDER:
        task_report = report["tasks"].get(task)
        if task_report is None:
            continue
        spec = registry.TASKS[task]
        shown = _shown_keys(spec, task_report["metrics"])
        paper += [(task, key, stands_for) for key, stands_for in shown]
        taken = {key for key, _ in shown}
        more += [
            (task, key, None)
            for key in headline_keys(task, task_report["metrics"])
            if key not in taken and key in task_report["metrics"]
        ]
    note = (
        "<p>The NOVA paper's measures, in percent"
        + (
            f" with bootstrap intervals ({resampled_unit(report.get('bootstrap'))} drawn)"
            if intervals
            else f" ({_text(NO_INTERVALS)})"
        )
        + "; the human reference is the release's raters scored with the same metric on the "
        "same images; published figures come from other runs (their prompts differ).</p>"
    )
    headline_table = _wide(
        "<table>"
        + _header(report, intervals, True)
        + "".join(_measure_rows(report, paper, intervals, published_beside(report)))
        + "</table>"
    )
    sections = [_Section("headline", "Headline: the paper's measures", [note, headline_table])]
    if more:
        more_table = _wide(
            "<table>"
            + _header(report, intervals, False)
            + "".join(_measure_rows(report, more, intervals, None))
            + "</table>"
        )
        sections.append(
            _Section("more-measures", f"More measures ({len(more)})", [more_table], folded=True)
        )
    return sections


def _coverage_section(report: Mapping[str, Any]) -> list[_Section]:
    from novabench.report.render import _coverage_lines

    sections = [
        _Section(
            "coverage",
            "Coverage",
            ["<ul>", *(f"<li>{_text(line)}</li>" for line in _coverage_lines(report)), "</ul>"],
        )
    ]
    settings = settings_lines(report)
    if settings:
        body = ["<ul>", *(f"<li>{_text(line)}</li>" for line in settings), "</ul>"]
        sections.append(_Section("settings", "Settings", body, folded=True))
    return sections


def _human_section(report: Mapping[str, Any]) -> list[_Section]:
    from novabench.tasks import tasks_where

    sections = []
    for task in tasks_where(lambda spec: spec.human_reference):
        human = (report.get("human_reference") or {}).get(task)
        if human:
            sections.append(_human_task_section(report, task, human))
    return sections


def _human_task_section(report: Mapping[str, Any], task: str, human: Mapping[str, Any]) -> _Section:
    # The task's noun ("Anomaly localisation": "localisation"), as the section is titled.
    anchor = "human-reference"
    title = f"Human reference ({registry.TASKS[task].title.split()[-1]})"
    if human.get("available") is False:
        reason = human.get("reason", "the release has no rater boxes")
        return _Section(anchor, title, [f'<p class="note">No human reference: {_text(reason)}</p>'])
    from novabench.report.human_reference import comparison_rows

    compared = comparison_rows(human)
    keys = [k for k in HEADLINE_KEYS[task] if any(k in row for _, row in compared)]
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    parts = [
        "<p>The release's raters scored with the model's metric on the same images; values "
        + (
            f"in percent with {level}% bootstrap CIs, as in the headline table.</p>"
            if not without_intervals(report)
            else f"in percent ({_text(NO_INTERVALS)}).</p>"
        )
    ]
    table = [
        "<table><tr><th>who</th>" + "".join(f"<th>{_text(k)} (%)</th>" for k in keys) + "</tr>"
    ]
    section = report["tasks"].get(task, {})
    model = section.get("metrics")
    rows = ([(model_name(report), model, section.get("confidence_intervals"))] if model else []) + [
        (name, row, row.get("confidence_intervals")) for name, row in compared
    ]
    for index, (name, row, intervals) in enumerate(rows):
        who = "" if model and index == 0 else name  # the model's row: the registry's words
        cells = "".join(
            f'<td class="num">{_percent(row.get(k))}'
            f"{_interval_suffix((intervals or {}).get(k), row.get(k))}"
            f"{_undefined_note(task, k, row.get(k), who) if k in row else ''}</td>"
            for k in keys
        )
        table.append(f"<tr><td>{_text(name)}</td>{cells}</tr>")
    parts.append(_wide("".join(table) + "</table>"))
    notes = human.get("notes") or []
    parts += ["<ul>", *(f"<li>{_text(n)}</li>" for n in notes), "</ul>"] if notes else []
    return _Section(anchor, title, parts, folded=True)


def _published_section(report: Mapping[str, Any]) -> list[_Section]:
    """The published zero-shot figures of the report's metrics, marked as not re-scored."""
    from novabench.published import NOT_RESCORED, published_rows, published_sources

    rows = published_rows(report)
    if not rows:
        return []
    header = ["task", "metric", "model", "value (%)", "images", "source"]
    table = ["<table><tr>" + "".join(f"<th>{_text(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        cells = "".join(
            f'<td class="num">{_text(cell)}</td>' if column in (3, 4) else f"<td>{_text(cell)}</td>"
            for column, cell in enumerate(row)
        )
        table.append(f"<tr>{cells}</tr>")
    parts = [
        "<p>Figures other runs published for the same keys; they are not recomputed here and "
        "their prompts differ from this run's (see each source).</p>",
        _wide("".join(table) + "</table>"),
        "<ul>",
        *(
            f"<li>{_text(source.title)}: {_text(source.reference)}; {_text(source.protocol)}; "
            f"{_text(source.note)}.</li>"
            for source in published_sources().values()
        ),
        "</ul>",
    ]
    title = f"Published zero-shot results ({NOT_RESCORED})"
    return [_Section("published", title, parts, folded=True)]


def _interval_suffix(interval: Any, value: Any) -> str:
    """The text " [low, high]" after a value that has an interval; "" otherwise."""
    text = _interval(interval)
    return f" {text}" if text and _percent(value) != "n/a" else ""


def _parse_status_section(report: Mapping[str, Any]) -> list[_Section]:
    """Per task, how many items got each parse status, then model errors and missing items."""
    tasks = [task for task in TASK_ORDER if task in report["tasks"]]
    counts: dict[str, dict[str, int]] = {}
    for task in tasks:
        coverage = report["tasks"][task]["coverage"]
        statuses = dict(coverage.get("parse_status") or {})
        ordered = [s for s in registry.TASKS[task].parse_statuses if s in statuses]
        ordered += sorted(s for s in statuses if s not in ordered)  # older reports' statuses
        counts[task] = {status: int(statuses[status]) for status in ordered}
        counts[task]["model error"] = int(coverage.get("errors") or 0)
        counts[task]["missing (model errors included)"] = int(coverage.get("missing") or 0)
    columns = list(dict.fromkeys(status for row in counts.values() for status in row))
    header = "<tr><th>task</th><th>items</th>" + "".join(f"<th>{_text(c)}</th>" for c in columns)
    rows = [
        f"<tr><td>{_text(task)}</td>"
        f'<td class="num">{_text(report["tasks"][task]["coverage"].get("items", "?"))}</td>'
        + "".join(f'<td class="num">{counts[task].get(c, "")}</td>' for c in columns)
        + "</tr>"
        for task in tasks
    ]
    failures = sorted({s for task in tasks for s in registry.TASKS[task].failure_statuses})
    body = [
        "<p>Items of each task by what became of their answer; these score as no prediction: "
        f"{_text(', '.join(failures))}, model errors and missing items.</p>",
        _wide(f"<table>{header}</tr>{''.join(rows)}</table>"),
    ]
    return [_Section("parse-status", "Parse status", body, folded=True)]


def _breakdown_keys(spec: Any, rows: list[Mapping[str, Any]]) -> list[str]:
    """The keys a breakdown table shows: the task's paper keys (or their stand-ins) the rows hold,
    else its first headline key they hold."""
    keys = []
    for key in spec.paper_keys:
        for candidate in (key, *spec.stand_ins(key)):
            if candidate and any(candidate in row for row in rows):
                keys.append(candidate)
                break
    if keys:
        return keys
    held = [key for key in spec.headline_keys if any(key in row for row in rows)]
    return held[:1]


def _bar(value: Any, interval: Any) -> str:
    """A horizontal bar of a percentage with its interval as a line across it (plain HTML)."""
    if value is None:
        return ""
    width = min(100.0, max(0.0, 100 * float(value)))
    bar = f'<span class="fill" style="width:{width:.1f}%"></span>'
    if interval and all(v is not None for v in interval):
        low = min(100.0, max(0.0, 100 * float(interval[0])))
        high = min(100.0, max(low, 100 * float(interval[1])))
        bar += f'<span class="ci" style="left:{low:.1f}%;width:{high - low:.1f}%"></span>'
    return f'<div class="bar" role="img" aria-label="{_percent(value)}%">{bar}</div>'


def _breakdown_table(report: Mapping[str, Any], task: str, dimension: str, rows: list[Any]) -> str:
    keys = _breakdown_keys(registry.TASKS[task], rows)
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    header = (
        "<tr><th>group</th><th>n</th>"
        + "".join(f"<th>{_text(k)} (%) [{level}% CI]</th>" for k in keys)
        + (f"<th>{_text(keys[0])}</th>" if keys else "")
        + "</tr>"
    )
    body = []
    for row in rows:
        small = bool(row.get("too_small"))
        cells = [f"<td>{_text(row['group'])}</td>", f'<td class="num">{_text(row["n"])}</td>']
        for key in keys:
            value = row.get(key)
            text = (
                "too small"
                if small or value is None
                else _percent(value) + _interval_suffix(row.get(f"{key}_ci"), value)
            )
            why = "" if small or value is None else _undefined_note(task, key, value)
            cells.append(f'<td class="num">{_text(text)}{why}</td>')
        if keys:
            first = row.get(keys[0])
            cells.append(
                "<td>" + ("" if small else _bar(first, row.get(f"{keys[0]}_ci"))) + "</td>"
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<caption>{_text(task)} by {_text(dimension.replace('_', ' '))}</caption>"
    return _wide(f"<table>{caption}{header}{''.join(body)}</table>")


def _breakdown_section(report: Mapping[str, Any]) -> list[_Section]:
    """A table per task and dimension: each group's paper keys with intervals and a bar."""
    settings = report.get("breakdown_settings") or {}
    if settings.get("computed") is False:
        body = ['<p class="note">Not computed (<code>--no-breakdowns</code>).</p>']
        return [_Section("breakdowns", "Breakdowns", body, folded=True)]
    breakdowns = report.get("breakdowns") or {}
    parts: list[str] = []
    for task in TASK_ORDER:
        for dimension, rows in (breakdowns.get(task) or {}).items():
            if rows:
                parts.append(_breakdown_table(report, task, dimension, rows))
    if not parts:
        return []
    smallest = settings.get("min_group_size")
    if smallest:
        parts.insert(
            0, f"<p>Groups of fewer than {_text(smallest)} items are marked too small.</p>"
        )
    return [_Section("breakdowns", "Breakdowns", parts, folded=True)]


def _gallery_section(items: Any, release: Any, n: int, seed: int) -> list[_Section]:
    if n <= 0:
        return []
    from novabench.report.gallery import LEGEND, LINE_STYLES, SECTION_TITLES, build_gallery

    legend = "".join(
        f"<span>{_swatch(colour, LINE_STYLES[label])}{_text(label)}</span>"
        for label, colour in LEGEND
    )
    parts = [f'<p class="legend">{legend}</p>', '<div class="gallery">']
    section = None
    for item in build_gallery(items["images"], release, n, seed=seed):
        title = SECTION_TITLES.get(item.section, item.section)
        if item.section != section:
            section = item.section
            parts.append(f'<h3 class="gallery-section">{_text(title)}</h3>')
        prediction = "(no caption)" if item.caption_prediction is None else item.caption_prediction
        parts.append(
            f'<div class="shot">{_png(item.png, item.filename, "overlay")}</div>'
            f"<div><b>{_text(title)}</b>: {_text(item.filename)}, {_text(item.outcome)}, "
            f"status {_text(item.status)}<p><i>reference</i>: {_text(item.caption_reference)}</p>"
            f"<p><i>model</i>: {_text(prediction)}</p></div>"
        )
    return [_Section("gallery", "Gallery", parts + ["</div>"], folded=True)]


def _swatch(colour: str, style: LineStyle) -> str:
    """A short line in the box's colour and dash pattern (inline SVG: no request)."""
    from novabench.data.render import DASH_PATTERNS

    dashes = DASH_PATTERNS[style]
    dasharray = f' stroke-dasharray="{" ".join(map(str, dashes))}"' if dashes else ""
    return (
        f'<svg class="swatch" width="32" height="10" role="img" aria-label="{_text(style)}">'
        f'<line x1="0" y1="5" x2="32" y2="5" stroke="{_text(colour)}" stroke-width="3"'
        f"{dasharray}/></svg>"
    )


def _item_tables(items: Any) -> dict[str, Any]:
    if isinstance(items, Mapping):
        return dict(items)
    return {"images": items.images, "cases": items.cases}  # an ItemTables


def render_html(
    report: Mapping[str, Any],
    items: Any = None,
    release: Any = None,
    *,
    report_path: str | os.PathLike[str] | None = None,
    gallery_size: int = 4,
    seed: int = 0,
) -> str:
    """One self-contained HTML page of a report, naming the model in its title and first line.

    The page opens with what must be read first (answers not read, tasks whose answers were
    mostly unusable, METEOR's stand-in, too few resamples), a contents list, then the paper's
    measures with their intervals, the human reference and the published figures; every
    other section (more measures, settings, plots, breakdowns, the gallery) starts folded.

    Args:
        report: the report dict (``evaluate_predictions``), with ``breakdowns``,
            ``human_reference`` and ``items`` when scored with per-item tables.
        items: the per-item tables (an ``ItemTables`` or ``{"images": df, "cases": df}``);
            None: read from ``report["items"]`` (paths relative to ``report_path``) if both
            are there, else the per-item sections say they need ``--items``.
        release: the release (``NovaRelease`` or folder) whose images the gallery shows;
            None: ``report["data"]["path"]``.
        report_path: where the report JSON is (resolves ``report["items"]``).
        gallery_size: images per gallery section (highest IoU, lowest IoU above 0, missed,
            random).
        seed: seed of the gallery's random sample.

    Returns:
        The HTML text.

    Example:
        >>> report = {"toolkit": {"version": "0"}, "data": {"path": "d", "n_images": 1, "n_cases": 1},
        ...     "bootstrap": {"confidence": 0.95, "n_resamples": 0, "seed": 0},
        ...     "predictions": {"paths": ["p.jsonl"], "manifests": [{"model": "<tiny>"}]},
        ...     "tasks": {"diagnosis": {"metrics": {"top1": 1.0, "top5": 1.0}, "confidence_intervals": {},
        ...     "notes": [], "coverage": {"items": 1, "answered": 1, "missing": 0, "errors": 0,
        ...     "parse_status": {"ok": 1}}}}}
        >>> page = render_html(report)
        >>> "<title>NOVA report: &lt;tiny&gt;</title>" in page, "need the per-item tables" in page
        (True, True)
    """
    model = model_name(report)
    data = report.get("data", {})
    if items is None and report.get("items") and report_path is not None:
        from novabench.report.items import read_item_tables

        items = read_item_tables(report, report_path)
    lead = (
        f"Model <b>{_text(model)}</b> on <code>{_text(data.get('path', '?'))}</code> "
        f"({_text(data.get('n_images', '?'))} images, {_text(data.get('n_cases', '?'))} cases, "
        f"release fingerprint {_text(data.get('fingerprint', '?'))}); "
        f"novabench {_text(report.get('toolkit', {}).get('version', '?'))}, "
        f"{_text(report.get('created_at', ''))}."
    )
    sections = _headline_sections(report)
    sections += _coverage_section(report)
    sections += _human_section(report)
    sections += _published_section(report)
    sections += _parse_status_section(report)
    sections += _key_meanings_section(report)
    sections += _breakdown_section(report)
    missing_items = ""
    if items is None:
        missing_items = (
            '<p class="note">The hit-rate curve, the best-IoU distribution and the gallery '
            "need the per-item tables: score with <code>nova evaluate ... --items DIR</code>.</p>"
        )
    else:
        tables = _item_tables(items)
        if any(task in report["tasks"] for task in tasks_where(lambda spec: spec.hit_rate_curve)):
            from novabench.report.plots import best_iou_svg, hit_rate_svg

            images = {model: tables["images"]}  # drawn as SVG: no matplotlib, no rasterising
            body = [
                f"<figure>{hit_rate_svg(images)}</figure>",
                f"<figure>{best_iou_svg(images)}</figure>",
            ]
            sections.append(_Section("localisation", "Localisation", body, folded=True))
        source = release if release is not None else data.get("path")
        if isinstance(source, str) and report_path is not None and not Path(source).is_absolute():
            source = str(Path(report_path).parent / source)  # a shared report's relative path
        sections += _gallery_section(tables, source, gallery_size, seed)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="novabench">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>NOVA report: {_text(model)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>NOVA evaluation report: {_text(model)}</h1>",
        _warnings(report),  # under the title, before the lead, as in the Markdown report
        f'<p class="lead">{lead}</p>',
        _table_of_contents(sections),
        *(section.html() for section in sections),
        missing_items,
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def write_html(report: Mapping[str, Any], path: str | os.PathLike[str], **options: Any) -> Path:
    """Write :func:`render_html` to ``path`` atomically; options as :func:`render_html`'s.

    Example:
        >>> import tempfile, pathlib
        >>> report = {"data": {}, "tasks": {"diagnosis": {"metrics": {}, "coverage": {"items": 0,
        ...     "answered": 0, "missing": 0, "errors": 0, "parse_status": {"ok": 1}}}}}
        >>> write_html(report, pathlib.Path(tempfile.mkdtemp()) / "r.html").suffix
        '.html'
    """
    from novabench._files import write_text_atomic

    return write_text_atomic(path, render_html(report, **options))


def render_comparison_html(comparison: Mapping[str, Any]) -> str:
    """A ``nova compare`` result as one self-contained HTML page naming both models.

    Example:
        >>> side = lambda name: {"predictions": {"paths": [name + ".jsonl"],
        ...     "manifests": [{"model": name}]}, "data": {"path": "nova"}}
        >>> comparison = {"a": side("qwen"), "b": side("llava"), "bootstrap": {"confidence": 0.95},
        ...     "tasks": {"diagnosis": {"top1": {"a": 0.5, "b": 0.25, "difference": 0.25,
        ...     "ci": [0.0, 0.5], "p_value": 0.04}}}}
        >>> page = render_comparison_html(comparison)
        >>> "<title>NOVA comparison: qwen vs llava</title>" in page, "<th>llava (%)</th>" in page
        (True, True)
    """
    from novabench.report.render import (
        _comparison_rows,
        _p_value,
        _signed,
        _warned_notes,
        comparison_first_lines,
        comparison_settings_lines,
        metric_label,
    )

    names = {side: model_name(comparison[side]) for side in ("a", "b")}
    level = int(round(100 * comparison.get("bootstrap", {}).get("confidence", 0.95)))
    data = comparison["a"].get("data", {})
    first = comparison_first_lines(comparison)  # first, as on the report page
    warnings = (
        '<div class="warnings" id="warnings" role="alert"><b>Read first</b><ul>'
        + "".join(f"<li>{_text_with_code(line)}</li>" for line in first)
        + "</ul></div>"
        if first
        else ""
    )
    n_resamples = comparison.get("bootstrap", {}).get("n_resamples")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="novabench">',
        f"<title>NOVA comparison: {_text(names['a'])} vs {_text(names['b'])}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>NOVA comparison: {_text(names['a'])} (A) vs {_text(names['b'])} (B)</h1>",
        warnings,  # under the title, before the lead, as in the Markdown comparison
        f'<p class="lead">A: <b>{_text(names["a"])}</b>, B: <b>{_text(names["b"])}</b>, on '
        f"<code>{_text(data.get('path', '?'))}</code>; paired bootstrap (the same "
        f"{resampled_unit(comparison.get('bootstrap'))} drawn for both models).</p>",
        f'<div class="wide" tabindex="0"><table><tr><th>task</th><th>metric</th>'
        f"<th>{_text(names['a'])} (%)</th>"
        f"<th>{_text(names['b'])} (%)</th><th>A - B</th><th>{level}% CI of A - B</th>"
        "<th>p</th></tr>",
    ]
    for task, key, row in _comparison_rows(comparison):
        low, high = row["ci"]
        parts.append(
            f"<tr><td>{_text(task)}</td><td>{_text(metric_label(task, key))}</td>"
            f'<td class="num">{_percent(row["a"])}</td><td class="num">{_percent(row["b"])}</td>'
            f'<td class="num">{_signed(row["difference"])}</td>'
            f"<td>[{_signed(low)}, {_signed(high)}]</td>"
            f'<td class="num">{_text(_p_value(row["p_value"], n_resamples))}</td></tr>'
        )
    parts.append("</table></div>")
    coverage = comparison.get("coverage") or {}
    items = [
        f"{names[side]} ({side.upper()}) {task}: {coverage_phrase(counts)}"
        for task in TASK_ORDER
        for side in ("a", "b")
        if (counts := coverage.get(task, {}).get(side))
    ]
    items += [
        f"{task}: note: {note}"
        for task, notes in (comparison.get("notes") or {}).items()
        for note in notes
        if not note.startswith(_warned_notes())  # the Read first box says it
    ]
    if items:
        parts += ["<ul>", *(f"<li>{_text(item)}</li>" for item in items), "</ul>"]
    settings = comparison_settings_lines(comparison)
    if settings:
        parts += ["<h2>Settings</h2>", "<ul>", *(f"<li>{_text(line)}</li>" for line in settings)]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
