"""The report as one self-contained HTML page: tables, plots and box overlays, offline.

Everything is inline: CSS in a ``<style>`` element, plots and overlays as base64 PNG
``data:`` URLs; the page names no external URL, so it opens from a mail attachment or a
USB stick. Every piece of text from the report or the release is HTML-escaped.

Sections shown depend on what the report holds: the headline tables, coverage and the
parse-status plot always; breakdown bars when ``report["breakdowns"]`` exists; the human
reference when ``report["human_reference"]`` exists; the hit-rate curve, the best-IoU
distribution and the gallery when the per-item tables are given (or ``report["items"]``
points at them), else a line saying they need ``nova evaluate --items``.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench.escaping import html_text
from novabench.report.render import (
    HEADLINE_KEYS,
    NO_INTERVALS,
    TASK_ORDER,
    coverage_phrase,
    few_resamples_line,
    meteor_fallback_line,
    model_name,
    settings_lines,
    without_intervals,
)
from novabench.tasks import tasks_where

if TYPE_CHECKING:
    from novabench.data.render import LineStyle

__all__ = ["render_comparison_html", "render_html", "write_html"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
/* a wide table scrolls inside the page instead of widening it */
table { display: block; max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.lead { font-size: 1.1em; } .note { color: #6a4a00; background: #fff6dd; padding: 0.4em; }
figure { margin: 1em 0; } img.plot { max-width: 100%; }
.gallery { display: grid; grid-template-columns: 1fr 1.4fr; gap: 0.8em 1.2em; }
.gallery img { width: 100%; max-width: 24em; image-rendering: pixelated; }
.legend span { display: inline-block; margin-right: 1em; }
nav.toc ul { margin: 0.3em 0; padding-left: 1.4em; columns: 2; }
.swatch { vertical-align: middle; margin-right: 0.3em; background: #000; }
"""


def _heading(anchor: str, title: str) -> str:
    """A section heading the table of contents links to (``anchor``: its fragment id)."""
    return f'<h2 id="{anchor}">{_text(title)}</h2>'


def _table_of_contents(parts: list[str]) -> str:
    """Links to every section heading among ``parts`` (in-page fragments: no request)."""
    import re

    links = [
        f'<li><a href="#{anchor}">{title}</a></li>'
        for part in parts
        for anchor, title in re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', part)
    ]
    return '<nav class="toc"><b>Contents</b><ul>' + "".join(links) + "</ul></nav>"


def _text(value: Any) -> str:
    return html_text(value)


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


def _headline_section(report: Mapping[str, Any]) -> list[str]:
    from novabench.report.render import _coverage_lines, _unread_lines

    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    intervals = not without_intervals(report)
    parts = [
        _heading("headline", "Headline numbers"),
        "<table><tr><th>task</th><th>metric</th><th>value (%)</th>"
        + (f"<th>{level}% CI</th></tr>" if intervals else "</tr>"),
    ]
    if not intervals:
        parts.insert(1, f"<p>Values in percent; {_text(NO_INTERVALS)}.</p>")
    few = few_resamples_line(report)
    if few:
        parts.insert(1, f"<p><strong>{_text(few)}</strong></p>")
    meteor = meteor_fallback_line(report)
    if meteor:
        parts.insert(1, f"<p><strong>{_text(meteor)}</strong></p>")
    # First under the heading: answers that were not read at all.
    parts[1:1] = [f"<p><strong>{_text(line)}</strong></p>" for line in _unread_lines(report)]
    for task in TASK_ORDER:
        task_report = report["tasks"].get(task)
        if task_report is None:
            continue
        for key in HEADLINE_KEYS[task]:
            if key in task_report["metrics"]:
                interval = task_report.get("confidence_intervals", {}).get(key)
                parts.append(
                    f"<tr><td>{_text(task)}</td><td>{_text(key)}</td>"
                    f'<td class="num">{_percent(task_report["metrics"][key])}</td>'
                    + (f"<td>{_text(_interval(interval))}</td></tr>" if intervals else "</tr>")
                )
    parts.append("</table>")
    parts.append(_heading("coverage", "Coverage") + "<ul>")
    parts += [f"<li>{_text(line)}</li>" for line in _coverage_lines(report)]
    parts.append("</ul>")
    settings = settings_lines(report)
    if settings:
        parts.append(_heading("settings", "Settings") + "<ul>")
        parts += [f"<li>{_text(line)}</li>" for line in settings]
        parts.append("</ul>")
    return parts


def _human_section(report: Mapping[str, Any]) -> list[str]:
    human = (report.get("human_reference") or {}).get("localization")
    if not human:
        return []
    parts = [_heading("human-reference", "Human reference (localisation)")]
    if human.get("available") is False:
        reason = human.get("reason", "the release has no rater boxes")
        return parts + [f'<p class="note">No human reference: {_text(reason)}</p>']
    from novabench.report.human_reference import comparison_rows

    compared = comparison_rows(human)
    keys = [k for k in HEADLINE_KEYS["localization"] if any(k in row for _, row in compared)]
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    parts.append(
        "<p>The release's raters scored with the model's metric on the same images; values "
        + (
            f"in percent with {level}% bootstrap CIs, as in the headline table.</p>"
            if not without_intervals(report)
            else f"in percent ({_text(NO_INTERVALS)}).</p>"
        )
    )
    parts.append(
        "<table><tr><th>who</th>" + "".join(f"<th>{_text(k)} (%)</th>" for k in keys) + "</tr>"
    )
    task = report["tasks"].get("localization", {})
    model = task.get("metrics")
    rows = ([(model_name(report), model, task.get("confidence_intervals"))] if model else []) + [
        (name, row, row.get("confidence_intervals")) for name, row in compared
    ]
    for name, row, intervals in rows:
        cells = "".join(
            f'<td class="num">{_percent(row.get(k))}'
            f"{_interval_suffix((intervals or {}).get(k), row.get(k))}</td>"
            for k in keys
        )
        parts.append(f"<tr><td>{_text(name)}</td>{cells}</tr>")
    parts.append("</table>")
    notes = human.get("notes") or []
    return parts + (["<ul>", *(f"<li>{_text(n)}</li>" for n in notes), "</ul>"] if notes else [])


def _published_section(report: Mapping[str, Any]) -> list[str]:
    """The published zero-shot figures of the report's metrics, marked as not re-scored."""
    from novabench.published import NOT_RESCORED, published_rows, published_sources

    rows = published_rows(report)
    if not rows:
        return []
    header = ["task", "metric", "model", "value (%)", "images", "source"]
    parts = [
        _heading("published", f"Published zero-shot results ({NOT_RESCORED})"),
        "<p>Figures other runs published for the same keys; they are not recomputed here and "
        "their prompts differ from this run's (see each source).</p>",
        "<table><tr>" + "".join(f"<th>{_text(h)}</th>" for h in header) + "</tr>",
    ]
    for row in rows:
        cells = "".join(
            f'<td class="num">{_text(cell)}</td>' if column in (3, 4) else f"<td>{_text(cell)}</td>"
            for column, cell in enumerate(row)
        )
        parts.append(f"<tr>{cells}</tr>")
    parts.append("</table><ul>")
    parts += [
        f"<li>{_text(source.title)}: {_text(source.reference)}; {_text(source.protocol)}; "
        f"{_text(source.note)}.</li>"
        for source in published_sources().values()
    ]
    return parts + ["</ul>"]


def _interval_suffix(interval: Any, value: Any) -> str:
    """The text " [low, high]" after a value that has an interval; "" otherwise."""
    text = _interval(interval)
    return f" {text}" if text and _percent(value) != "n/a" else ""


def _figure(figure: Any, alt: str) -> str:
    from novabench.report.plots import figure_png

    return f"<figure>{_png(figure_png(figure), alt)}</figure>"


def _breakdown_section(report: Mapping[str, Any]) -> list[str]:
    from novabench.report.plots import breakdown_figure

    if (report.get("breakdown_settings") or {}).get("computed") is False:
        return [
            _heading("breakdowns", "Breakdowns"),
            '<p class="note">Not computed (<code>--no-breakdowns</code>).</p>',
        ]
    breakdowns = report.get("breakdowns") or {}
    parts: list[str] = []
    for task in TASK_ORDER:
        for dimension, rows in (breakdowns.get(task) or {}).items():
            if rows:
                figure = breakdown_figure(report, task, dimension=dimension)
                parts.append(_figure(figure, f"{task} by {dimension}"))
    return ([_heading("breakdowns", "Breakdowns")] + parts) if parts else []


def _gallery_section(items: Any, release: Any, n: int, seed: int) -> list[str]:
    if n <= 0:
        return []
    from novabench.report.gallery import LEGEND, LINE_STYLES, build_gallery

    legend = "".join(
        f"<span>{_swatch(colour, LINE_STYLES[label])}{_text(label)}</span>"
        for label, colour in LEGEND
    )
    parts = [
        _heading("gallery", "Gallery"),
        f'<p class="legend">{legend}</p>',
        '<div class="gallery">',
    ]
    for item in build_gallery(items["images"], release, n, seed=seed):
        iou = "n/a" if item.best_iou is None else f"{item.best_iou:.2f}"
        prediction = "(no caption)" if item.caption_prediction is None else item.caption_prediction
        parts.append(
            f'<div class="shot">{_png(item.png, item.filename, "overlay")}</div>'
            f"<div><b>{_text(item.section)}</b>: {_text(item.filename)}, best IoU {iou}, "
            f"status {_text(item.status)}<p><i>reference</i>: {_text(item.caption_reference)}</p>"
            f"<p><i>model</i>: {_text(prediction)}</p></div>"
        )
    return parts + ["</div>"]


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

    Args:
        report: the report dict (``evaluate_predictions``), with ``breakdowns``,
            ``human_reference`` and ``items`` when scored with per-item tables.
        items: the per-item tables (an ``ItemTables`` or ``{"images": df, "cases": df}``);
            None: read from ``report["items"]`` (paths relative to ``report_path``) if both
            are there, else the per-item sections say they need ``--items``.
        release: the release (``NovaRelease`` or folder) whose images the gallery shows;
            None: ``report["data"]["path"]``.
        report_path: where the report JSON is (resolves ``report["items"]``).
        gallery_size: images per gallery section (best, worst, random).
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
    answered_only = report.get("answered_only")
    lead = (
        f"Model <b>{_text(model)}</b> on <code>{_text(data.get('path', '?'))}</code> "
        f"({_text(data.get('n_images', '?'))} images, {_text(data.get('n_cases', '?'))} cases, "
        f"release fingerprint {_text(data.get('fingerprint', '?'))}); "
        f"novabench {_text(report.get('toolkit', {}).get('version', '?'))}, "
        f"{_text(report.get('created_at', ''))}."
    )
    if answered_only:
        lead = "<b>Answered items only.</b> " + lead
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="novabench">',
        f"<title>NOVA report: {_text(model)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>NOVA evaluation report: {_text(model)}</h1>",
        f'<p class="lead">{lead}</p>',
    ]
    parts += _headline_section(report)  # its coverage list carries every task's notes
    from novabench.report.plots import best_iou_histogram, hit_rate_curve, parse_status_figure

    parts += [
        _heading("parse-status", "Parse status"),
        _figure(parse_status_figure(report), "parse status mix"),
    ]
    parts += _human_section(report)
    parts += _published_section(report)
    parts += _breakdown_section(report)
    if items is None:
        parts.append(
            '<p class="note">The hit-rate curve, the best-IoU distribution and the gallery '
            "need the per-item tables: score with <code>nova evaluate ... --items DIR</code>.</p>"
        )
    else:
        tables = _item_tables(items)
        if any(task in report["tasks"] for task in tasks_where(lambda spec: spec.hit_rate_curve)):
            images = {model: tables["images"]}
            parts += [
                _heading("localisation", "Localisation"),
                _figure(hit_rate_curve(images), "hit rate against the IoU threshold"),
                _figure(best_iou_histogram(images), "distribution of the best IoU"),
            ]
        source = release if release is not None else data.get("path")
        if isinstance(source, str) and report_path is not None and not Path(source).is_absolute():
            source = str(Path(report_path).parent / source)  # a shared report's relative path
        parts += _gallery_section(tables, source, gallery_size, seed)
    parts.append("</body></html>")
    body = parts.index(f'<p class="lead">{lead}</p>') + 1
    parts.insert(body, _table_of_contents(parts))
    return "\n".join(parts) + "\n"


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
        comparison_settings_lines,
        identical_answers_lines,
    )

    names = {side: model_name(comparison[side]) for side in ("a", "b")}
    level = int(round(100 * comparison.get("bootstrap", {}).get("confidence", 0.95)))
    data = comparison["a"].get("data", {})
    identical = identical_answers_lines(comparison)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="novabench">',
        f"<title>NOVA comparison: {_text(names['a'])} vs {_text(names['b'])}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>NOVA comparison: {_text(names['a'])} (A) vs {_text(names['b'])} (B)</h1>",
        f'<p class="lead">A: <b>{_text(names["a"])}</b>, B: <b>{_text(names["b"])}</b>, on '
        f"<code>{_text(data.get('path', '?'))}</code>; paired bootstrap (the same items drawn "
        "for both models).</p>",
        *(f'<p class="note">Note: {_text(line)}.</p>' for line in identical),
        f"<table><tr><th>task</th><th>metric</th><th>{_text(names['a'])} (%)</th>"
        f"<th>{_text(names['b'])} (%)</th><th>A - B</th><th>{level}% CI of A - B</th>"
        "<th>p</th></tr>",
    ]
    for task, key, row in _comparison_rows(comparison):
        low, high = row["ci"]
        parts.append(
            f"<tr><td>{_text(task)}</td><td>{_text(key)}</td>"
            f'<td class="num">{_percent(row["a"])}</td><td class="num">{_percent(row["b"])}</td>'
            f'<td class="num">{_signed(row["difference"])}</td>'
            f"<td>[{_signed(low)}, {_signed(high)}]</td>"
            f'<td class="num">{_p_value(row["p_value"])}</td></tr>'
        )
    parts.append("</table>")
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
    ]
    if items:
        parts += ["<ul>", *(f"<li>{_text(item)}</li>" for item in items), "</ul>"]
    settings = comparison_settings_lines(comparison)
    if settings:
        parts += ["<h2>Settings</h2>", "<ul>", *(f"<li>{_text(line)}</li>" for line in settings)]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
