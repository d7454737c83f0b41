"""The report's plots: hit rate against the IoU threshold, breakdown bars, best IoU, parse statuses.

Every ``*_figure``/``*_curve``/``*_histogram`` function builds and returns a
:class:`matplotlib.figure.Figure` of its own (Agg canvas, no ``pyplot`` state, safe in servers
and threads); :func:`figure_png` turns one into PNG bytes. The HTML page draws the two
localisation plots as inline SVG instead (:func:`hit_rate_svg`, :func:`best_iou_svg`: the same
numbers, colours and line styles, no matplotlib import and no rasterising, text that stays
sharp and searchable); matplotlib is imported only when a Figure is built.
Inputs are the per-item tables (``images``: one row per image with ``best_iou``,
``n_gold_boxes``, ``rater_1_best_iou``, ``rater_2_best_iou``) and the report dict (its
``tasks[...]["coverage"]`` and ``breakdowns``), as ``novabench.report.items`` writes them.

Localisation curves are over the images WITH gold boxes, as the report's ``hit@30`` /
``hit@50``: at threshold t, the share of those images whose best IoU is >= t.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from novabench import registry
from novabench.data.render import (
    DASH_PATTERNS,
    GOLD_COLOUR,
    PREDICTION_COLOUR,
    PREDICTION_LINE_STYLE,
    RATER_COLOURS,
    RATER_LINE_STYLES,
    hex_colour,
)
from novabench.errors import NovaInputError
from novabench.escaping import html_text, plot_text
from novabench.tasks import behaviour

if TYPE_CHECKING:  # imported when a Figure is built: the HTML page needs no matplotlib
    from matplotlib.figure import Figure

__all__ = [
    "IOU_THRESHOLDS",
    "best_iou_histogram",
    "best_iou_svg",
    "breakdown_figure",
    "figure_png",
    "hit_rate_curve",
    "hit_rate_svg",
    "hit_rates",
    "parse_status_figure",
]

#: The IoU thresholds of the hit-rate curve: 0.05, 0.10, ..., 0.95 (rounded, so 0.3 is 0.3).
IOU_THRESHOLDS: np.ndarray = np.round(np.arange(0.05, 0.951, 0.05), 2)

# Model curves: the gallery's model colour first, then Okabe-Ito hues no box layer uses
# (gold and raters keep theirs), each with its own marker; all in the model's line style.
_MODEL_COLOURS = (hex_colour(PREDICTION_COLOUR), "#0072b2", "#000000", "#e69f00")
_MODEL_MARKERS = ("o", "s", "^", "D")
# Parse statuses that mean the same everywhere keep one colour; the others take the rest.
_STATUS_COLOURS = {
    "ok": hex_colour(GOLD_COLOUR),
    "ok_out_of_image": "#f0e442",
    "model error": "#000000",
    "missing": "#bbbbbb",
}
_OTHER_STATUS_COLOURS = ("#d55e00", "#0072b2", "#cc79a7", "#e69f00", "#56b4e9")
# Human reference curves: (column of the images table, label, colour, line style), as the
# raters' boxes in the gallery.
_HUMAN_CURVES = (
    ("rater_1_best_iou", "rater 1 vs gold", hex_colour(RATER_COLOURS[0]), RATER_LINE_STYLES[0]),
    ("rater_2_best_iou", "rater 2 vs gold", hex_colour(RATER_COLOURS[1]), RATER_LINE_STYLES[1]),
)


def figure_png(figure: Figure, *, dpi: int = 100) -> bytes:
    """The figure as PNG bytes.

    Example:
        >>> from matplotlib.figure import Figure
        >>> figure_png(Figure(figsize=(1, 1)))[:8]
        b'\\x89PNG\\r\\n\\x1a\\n'
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


#: Longest model name a legend shows in full; a longer one is cut with an ellipsis (the page
#: and the report name it in full), since a wide legend squeezes the axes to nothing.
LEGEND_NAME_CHARS = 40


def _legend_name(name: str) -> str:
    """A model name for a legend: escaped, at most :data:`LEGEND_NAME_CHARS` characters."""
    text = plot_text(name)
    return text if len(text) <= LEGEND_NAME_CHARS else text[: LEGEND_NAME_CHARS - 1] + "\u2026"


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)  # an Agg canvas of its own: nothing goes through pyplot
    return figure


def hit_rates(
    best_iou: Sequence[float] | np.ndarray, thresholds: Sequence[float] | np.ndarray
) -> np.ndarray:
    """Share of the given best IoUs that are >= each threshold (NaN when there are none).

    Example:
        >>> hit_rates([0.0, 0.4, 0.6, 0.9], [0.3, 0.5]).tolist()
        [0.75, 0.5]
    """
    values = np.asarray(best_iou, dtype=float)
    limits = np.asarray(thresholds, dtype=float)
    if values.size == 0:
        return np.full(limits.shape, math.nan)
    return (values[None, :] >= limits[:, None]).mean(axis=1)


def _as_tables(images: pd.DataFrame | Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    tables = {"model": images} if isinstance(images, pd.DataFrame) else dict(images)
    if not tables:
        raise NovaInputError("no images table given", field="images")
    for name, table in tables.items():
        missing = [c for c in ("best_iou", "n_gold_boxes") if c not in table.columns]
        if missing:
            raise NovaInputError(
                f"the images table lacks the column(s) {', '.join(missing)}",
                source=str(name),
                field=missing[0],
            )
    return tables


def _with_gold(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["n_gold_boxes"].fillna(0).astype(int) > 0]


def hit_rate_curve(
    images: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    thresholds: Sequence[float] = tuple(IOU_THRESHOLDS),
    human_reference: bool = True,
) -> Figure:
    """Hit rate against the IoU threshold: a dashed curve per model, the raters dotted/dash-dot.

    Colours and line styles are those of the gallery's boxes (predicted, rater 1, rater 2).

    Args:
        images: one images table, or ``{model name: images table}`` for several models.
        thresholds: IoU thresholds (x axis); default 0.05 to 0.95 by 0.05.
        human_reference: add each rater against gold (dashed) from the first table whose
            ``rater_1_best_iou`` / ``rater_2_best_iou`` have values; omitted when none has.

    Returns:
        A figure; its axes hold one line per model (labelled with the model's name) and per
        rater, over the images with gold boxes.

    Example:
        >>> table = pd.DataFrame({"best_iou": [0.0, 0.4, 0.6], "n_gold_boxes": [1, 1, 1]})
        >>> line = hit_rate_curve({"floor": table}, thresholds=[0.3, 0.5]).axes[0].lines[0]
        >>> line.get_label(), line.get_ydata().tolist()
        ('floor', [0.6666666666666666, 0.3333333333333333])
    """
    tables = _as_tables(images)
    figure = _new_figure(6.0, 4.0)
    axes = figure.add_subplot()
    x = np.asarray(thresholds, dtype=float)
    for index, (name, table) in enumerate(tables.items()):
        rated = _with_gold(table)
        axes.plot(
            x,
            hit_rates(rated["best_iou"].astype(float), x),
            label=_legend_name(name),
            color=_MODEL_COLOURS[index % len(_MODEL_COLOURS)],
            linestyle=PREDICTION_LINE_STYLE,
            marker=_MODEL_MARKERS[index % len(_MODEL_MARKERS)],
            markersize=3,
        )
    if human_reference:
        for label, colour, style, rates in _human_curves(tables, x):
            axes.plot(x, rates, linestyle=style, label=label, color=colour)
    axes.set_xlabel("IoU threshold")
    axes.set_ylabel("hit rate (images with gold boxes)")
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(-0.02, 1.02)
    axes.grid(alpha=0.3)
    axes.set_title("Localisation: hit rate against the IoU threshold")
    axes.legend(loc="lower left", fontsize="small")
    return figure


def _human_curves(
    tables: Mapping[str, pd.DataFrame], x: np.ndarray
) -> list[tuple[str, str, str, np.ndarray]]:
    """Each rater's hit rates against gold, ``(label, colour, style, rates)``, from the first
    table whose rater column has values (the raters do not depend on the model)."""
    curves: list[tuple[str, str, str, np.ndarray]] = []
    for column, label, colour, style in _HUMAN_CURVES:
        for table in tables.values():
            if column not in table.columns:
                continue
            rated = _with_gold(table)[column].dropna()
            if len(rated):
                curves.append((label, colour, style, hit_rates(rated.astype(float), x)))
                break
    return curves


def best_iou_histogram(
    images: pd.DataFrame | Mapping[str, pd.DataFrame], *, bins: int = 20
) -> Figure:
    """The distribution of the best IoU per image with gold boxes, one outline per model.

    Example:
        >>> table = pd.DataFrame({"best_iou": [0.0, 0.0, 0.72], "n_gold_boxes": [1, 1, 1]})
        >>> axes = best_iou_histogram(table, bins=2).axes[0]
        >>> [float(patch.get_height()) for patch in axes.patches]
        [2.0, 1.0]
    """
    tables = _as_tables(images)
    figure = _new_figure(6.0, 3.5)
    axes = figure.add_subplot()
    edges = np.linspace(0.0, 1.0, bins + 1)
    several = len(tables) > 1
    for index, (name, table) in enumerate(tables.items()):
        values = _with_gold(table)["best_iou"].astype(float).to_numpy()
        counts, _ = np.histogram(values, bins=edges)
        axes.bar(
            edges[:-1],
            counts.astype(float),
            width=np.diff(edges),
            align="edge",
            label=f"{_legend_name(name)} (n={len(values)})",
            color=_MODEL_COLOURS[index % len(_MODEL_COLOURS)],
            alpha=0.45 if several else 0.8,
            edgecolor="black",
            linewidth=0.5,
        )
    axes.set_xlabel("best IoU of the image (0: no predicted box overlaps a gold box)")
    axes.set_ylabel("images with gold boxes")
    axes.set_xlim(0.0, 1.0)
    axes.set_title("Localisation: distribution of the best IoU")
    axes.legend(fontsize="small")
    return figure


def _default_metric(task: str, rows: Sequence[Mapping[str, Any]]) -> str:
    # Bars default to the task's rank metric, a mean over items that reads well per group
    # (BLEU-4, captioning's first key, is a corpus score: about 9% for a good caption).
    spec = registry.TASKS[task]
    preferred = behaviour(task).rank_metric
    for key in (preferred, *spec.headline_keys):
        if any(key in row for row in rows):
            return key
    raise NovaInputError(
        f"the {task} breakdown rows hold none of the task's headline metrics",
        field=f"breakdowns.{task}",
    )


def breakdown_figure(
    report: Mapping[str, Any],
    task: str,
    *,
    dimension: str = "pathology_category",
    metric: str | None = None,
) -> Figure:
    """Bars of one metric per group of a breakdown, with their bootstrap CIs as error bars.

    Groups under the report's minimum n (``too_small``) are shown, not hidden: an empty bar
    outline labelled "too small" at zero height.

    Args:
        report: a report with ``breakdowns[task][dimension]`` rows (``group``, ``n``,
            ``too_small``, the metric and ``<metric>_ci``).
        task: the task (any registry spelling).
        dimension: ``pathology_category``, ``sequence``, ``plane``, ...
        metric: the metric key; default the task's first headline metric the rows hold.

    Raises:
        NovaInputError: the report has no such breakdown.

    Example:
        >>> rows = [{"group": "vascular", "n": 9, "too_small": False, "top1": 0.5,
        ...          "top1_ci": [0.2, 0.8]}, {"group": "other", "n": 1, "too_small": True,
        ...          "top1": None, "top1_ci": None}]
        >>> report = {"breakdowns": {"diagnosis": {"pathology_category": rows}}}
        >>> axes = breakdown_figure(report, "diagnosis").axes[0]
        >>> [float(patch.get_height()) for patch in axes.patches]
        [50.0, 0.0]
    """
    task = registry.canonical_task(task)
    rows = report.get("breakdowns", {}).get(task, {}).get(dimension)
    if not rows:
        raise NovaInputError(
            f"the report has no {task} breakdown by {dimension} (score with --items)",
            field=f"breakdowns.{task}.{dimension}",
        )
    key = metric or _default_metric(task, rows)
    labels, heights, lows, highs, small = [], [], [], [], []
    for row in rows:
        value = row.get(key)
        interval = row.get(f"{key}_ci")
        too_small = bool(row.get("too_small")) or value is None
        # long category names wrap onto lines of their own so neighbours never overlap
        group = plot_text(row["group"])
        name = "\n".join(textwrap.wrap(group, width=14)) or group
        labels.append(f"{name}\n(n={row['n']})")
        heights.append(0.0 if too_small else 100 * float(value))
        if too_small or not interval or any(v is None for v in interval):
            lows.append(0.0)
            highs.append(0.0)
        else:
            lows.append(max(0.0, heights[-1] - 100 * float(interval[0])))
            highs.append(max(0.0, 100 * float(interval[1]) - heights[-1]))
        small.append(too_small)
    figure = _new_figure(max(4.0, 0.9 * len(rows) + 1.5), 3.8)
    axes = figure.add_subplot()
    positions = np.arange(len(rows))
    colours = ["none" if s else hex_colour(GOLD_COLOUR) for s in small]
    axes.bar(positions, heights, color=colours, edgecolor="black", linewidth=0.6)
    axes.errorbar(positions, heights, yerr=[lows, highs], fmt="none", ecolor="black", capsize=3)
    for position, too_small in zip(positions, small):
        if too_small:
            axes.text(
                float(position),
                2,
                "too small",
                ha="center",
                va="bottom",
                rotation=90,
                fontsize="small",
            )
    axes.set_xticks(positions, labels, fontsize="small")
    axes.set_ylim(0, 105)
    axes.set_ylabel(f"{key} (%)")
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    axes.set_title(f"{task}: {key} by {dimension.replace('_', ' ')} ({level}% CI)")
    return figure


def parse_status_figure(report: Mapping[str, Any]) -> Figure:
    """The mix of parse statuses per task, with missing answers and model errors, as stacked bars.

    Bar segments are counts of items: every parse status of the task's coverage, then
    ``model error`` and ``missing``.

    Example:
        >>> report = {"tasks": {"diagnosis": {"coverage": {"items": 3, "answered": 3,
        ...     "missing": 0, "errors": 0, "parse_status": {"ok": 2, "not_json": 1}}}}}
        >>> axes = parse_status_figure(report).axes[0]
        >>> [(c.get_label(), [float(p.get_width()) for p in c]) for c in axes.containers]
        [('ok', [2.0]), ('not_json', [1.0])]
    """
    tasks = [t for t in registry.TASK_NAMES if t in report.get("tasks", {})]
    if not tasks:
        raise NovaInputError("the report scores no task", field="tasks")
    segments: dict[str, list[float]] = {}
    for index, task in enumerate(tasks):
        coverage = report["tasks"][task]["coverage"]
        task_counts = dict(coverage.get("parse_status", {}))
        task_counts["model error"] = coverage.get("errors", 0)
        task_counts["missing"] = coverage.get("missing", 0)
        for status, count in task_counts.items():
            segments.setdefault(status, [0.0] * len(tasks))[index] = float(count)
    segments = {status: counts for status, counts in segments.items() if any(counts)}
    figure = _new_figure(6.5, 0.6 * len(tasks) + 1.6)
    axes = figure.add_subplot()
    left = np.zeros(len(tasks))
    others = iter(_OTHER_STATUS_COLOURS * (1 + len(segments) // len(_OTHER_STATUS_COLOURS)))
    for status, counts in segments.items():
        colour = _STATUS_COLOURS.get(status) or next(others)
        axes.barh(tasks, counts, left=left, label=status, color=colour, edgecolor="white")
        left += np.asarray(counts)
    axes.invert_yaxis()
    axes.set_xlabel("items")
    axes.set_title("Parse status of the answers")
    axes.legend(
        fontsize="small",
        ncols=min(4, max(1, len(segments))),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.3),
    )
    return figure


# The inline SVG plots of the HTML page: one coordinate system (viewBox units), the plot
# area inside these margins; values map linearly, 0 at the bottom or left edge.
_SVG_WIDTH, _SVG_HEIGHT = 600, 380
_SVG_LEFT, _SVG_RIGHT, _SVG_TOP, _SVG_BOTTOM = 64, 16, 40, 56
_SVG_PLOT_WIDTH = _SVG_WIDTH - _SVG_LEFT - _SVG_RIGHT
_SVG_PLOT_HEIGHT = _SVG_HEIGHT - _SVG_TOP - _SVG_BOTTOM


def _svg_x(fraction: float) -> float:
    return round(_SVG_LEFT + fraction * _SVG_PLOT_WIDTH, 2)


def _svg_y(fraction: float) -> float:
    return round(_SVG_TOP + (1.0 - fraction) * _SVG_PLOT_HEIGHT, 2)


def _svg_name(name: str) -> str:
    """A model name for an SVG legend: cut as :func:`_legend_name` cuts it, HTML-escaped."""
    text = str(name)
    cut = text if len(text) <= LEGEND_NAME_CHARS else text[: LEGEND_NAME_CHARS - 1] + "\u2026"
    return html_text(cut)


def _svg_dashes(style: str) -> str:
    """The dash pattern of a line style, doubled: a 2-unit-wide line needs longer dashes."""
    pattern = next((dashes for name, dashes in DASH_PATTERNS.items() if name == style), ())
    return f' stroke-dasharray="{" ".join(str(2 * n) for n in pattern)}"' if pattern else ""


def _svg_axes(
    title: str, x_label: str, y_label: str, y_ticks: Sequence[tuple[float, str]]
) -> list[str]:
    """The frame of a plot: title, grid, tick labels (x: 0 to 1 by 0.2) and axis labels."""
    parts = [
        f'<svg class="plot" viewBox="0 0 {_SVG_WIDTH} {_SVG_HEIGHT}" width="{_SVG_WIDTH}" '
        f'role="img" aria-label="{html_text(title)}" font-family="sans-serif" font-size="12">',
        f"<title>{html_text(title)}</title>",
        f'<rect x="0" y="0" width="{_SVG_WIDTH}" height="{_SVG_HEIGHT}" fill="#fff"/>',
        f'<text x="{_SVG_WIDTH / 2}" y="22" text-anchor="middle" font-size="14">'
        f"{html_text(title)}</text>",
    ]
    for fraction, label in y_ticks:
        y = _svg_y(fraction)
        parts.append(
            f'<line x1="{_SVG_LEFT}" y1="{y}" x2="{_SVG_WIDTH - _SVG_RIGHT}" y2="{y}" '
            'stroke="#ddd"/>'
            f'<text x="{_SVG_LEFT - 6}" y="{y + 4}" text-anchor="end">{html_text(label)}</text>'
        )
    for tick in range(6):
        x = _svg_x(tick / 5)
        parts.append(
            f'<line x1="{x}" y1="{_SVG_TOP}" x2="{x}" y2="{_svg_y(0.0)}" stroke="#eee"/>'
            f'<text x="{x}" y="{_svg_y(0.0) + 16}" text-anchor="middle">{tick / 5:.1f}</text>'
        )
    parts += [
        f'<rect x="{_SVG_LEFT}" y="{_SVG_TOP}" width="{_SVG_PLOT_WIDTH}" '
        f'height="{_SVG_PLOT_HEIGHT}" fill="none" stroke="#444"/>',
        f'<text x="{_SVG_LEFT + _SVG_PLOT_WIDTH / 2}" y="{_SVG_HEIGHT - 14}" '
        f'text-anchor="middle">{html_text(x_label)}</text>',
        f'<text transform="translate(16 {_SVG_TOP + _SVG_PLOT_HEIGHT / 2}) rotate(-90)" '
        f'text-anchor="middle">{html_text(y_label)}</text>',
    ]
    return parts


def _svg_legend(entries: Sequence[tuple[str, str, str, float]], *, top: bool) -> list[str]:
    """Legend rows (label, colour, line style, fill opacity: 0 draws a line sample)."""
    if not entries:
        return []
    height = 18 * len(entries) + 8
    width = 8 + 36 + 7 * max(len(label) for label, _, _, _ in entries)
    x0 = _SVG_LEFT + 8 if not top else _SVG_WIDTH - _SVG_RIGHT - 8 - width
    y0 = _svg_y(0.0) - 8 - height if not top else _SVG_TOP + 8
    parts = [
        f'<rect x="{x0}" y="{y0}" width="{width}" height="{height}" fill="#fff" '
        'fill-opacity="0.9" stroke="#ccc"/>'
    ]
    for row, (label, colour, style, opacity) in enumerate(entries):
        y = y0 + 16 + 18 * row
        sample = (
            f'<rect x="{x0 + 8}" y="{y - 9}" width="28" height="10" fill="{colour}" '
            f'fill-opacity="{opacity}" stroke="#000" stroke-width="0.5"/>'
            if opacity
            else f'<line x1="{x0 + 8}" y1="{y - 4}" x2="{x0 + 36}" y2="{y - 4}" '
            f'stroke="{colour}" stroke-width="2"{_svg_dashes(style)}/>'
        )
        parts.append(f'{sample}<text x="{x0 + 42}" y="{y}">{label}</text>')
    return parts


def hit_rate_svg(
    images: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    thresholds: Sequence[float] = tuple(IOU_THRESHOLDS),
    human_reference: bool = True,
) -> str:
    """:func:`hit_rate_curve` as inline SVG: the same curves, colours and line styles.

    Each curve is a ``<polyline class="curve">`` whose ``data-name`` is its label and whose
    points are ``x,y`` pairs in the SVG's units: x from the threshold (0 to 1 across the
    plot area), y from the hit rate (the gridlines labelled 0% and 100% mark its ends).

    Example:
        >>> table = pd.DataFrame({"best_iou": [0.0, 0.4, 0.6], "n_gold_boxes": [1, 1, 1]})
        >>> svg = hit_rate_svg({"floor": table}, thresholds=[0.3, 0.5])
        >>> svg.startswith("<svg"), 'data-name="floor"' in svg, "rater" in svg
        (True, True, False)
    """
    tables = _as_tables(images)
    x = np.asarray(thresholds, dtype=float)
    curves: list[tuple[str, str, str, np.ndarray, bool]] = []
    for index, (name, table) in enumerate(tables.items()):
        rated = _with_gold(table)
        rates = hit_rates(rated["best_iou"].astype(float), x)
        colour = _MODEL_COLOURS[index % len(_MODEL_COLOURS)]
        curves.append((_svg_name(name), colour, PREDICTION_LINE_STYLE, rates, True))
    if human_reference:
        curves += [(*curve, False) for curve in _human_curves(tables, x)]
    title = "Localisation: hit rate against the IoU threshold"
    ticks = [(t / 5, f"{20 * t}%") for t in range(6)]
    parts = _svg_axes(title, "IoU threshold", "hit rate (images with gold boxes)", ticks)
    for label, colour, line_style, rates, markers in curves:
        points = [
            (_svg_x(float(t)), _svg_y(float(r))) for t, r in zip(x, rates) if not math.isnan(r)
        ]
        text = " ".join(f"{px},{py}" for px, py in points)
        parts.append(
            f'<polyline class="curve" data-name="{label}" points="{text}" fill="none" '
            f'stroke="{colour}" stroke-width="2"{_svg_dashes(line_style)}/>'
        )
        if markers:
            parts += [f'<circle cx="{px}" cy="{py}" r="2.5" fill="{colour}"/>' for px, py in points]
    parts += _svg_legend(
        [(name, colour, dashes, 0.0) for name, colour, dashes, _, _ in curves], top=False
    )
    return "".join(parts) + "</svg>"


def _count_ticks(largest: float) -> tuple[float, list[tuple[float, str]]]:
    """The top of a count axis and its ticks: steps of 1, 2 or 5 times a power of ten."""
    step = 1.0
    while largest / step > 5:
        for factor in (2.0, 2.5, 2.0):  # 1, 2, 5, 10, 20, 50, ...
            step *= factor
            if largest / step <= 5:
                break
    top = step * max(1, math.ceil(largest / step))
    ticks = [(value / top, f"{value:g}") for value in np.arange(0.0, top + step / 2, step)]
    return top, ticks


def best_iou_svg(images: pd.DataFrame | Mapping[str, pd.DataFrame], *, bins: int = 20) -> str:
    """:func:`best_iou_histogram` as inline SVG: one bar per bin and model, counts on the y axis.

    Each bar is a ``<rect class="bin">`` with ``data-count`` (images in the bin) and
    ``data-name`` (the model).

    Example:
        >>> table = pd.DataFrame({"best_iou": [0.0, 0.0, 0.72], "n_gold_boxes": [1, 1, 1]})
        >>> svg = best_iou_svg(table, bins=2)
        >>> [part.split('"')[0] for part in svg.split('data-count="')[1:]]
        ['2', '1']
    """
    tables = _as_tables(images)
    edges = np.linspace(0.0, 1.0, bins + 1)
    several = len(tables) > 1
    histograms = []
    for index, (name, table) in enumerate(tables.items()):
        values = _with_gold(table)["best_iou"].astype(float).to_numpy()
        counts, _ = np.histogram(values, bins=edges)
        colour = _MODEL_COLOURS[index % len(_MODEL_COLOURS)]
        histograms.append((_svg_name(name), colour, counts, len(values)))
    largest = max([1, *(int(counts.max()) for _, _, counts, _ in histograms if len(counts))])
    top, ticks = _count_ticks(largest)
    title = "Localisation: distribution of the best IoU"
    x_label = "best IoU of the image (0: no predicted box overlaps a gold box)"
    parts = _svg_axes(title, x_label, "images with gold boxes", ticks)
    opacity = 0.45 if several else 0.8
    for name, colour, counts, _ in histograms:
        for low, high, count in zip(edges[:-1], edges[1:], counts):
            left, right = _svg_x(float(low)), _svg_x(float(high))
            y = _svg_y(float(count) / top)
            parts.append(
                f'<rect class="bin" data-name="{name}" data-count="{int(count)}" x="{left}" '
                f'y="{y}" width="{round(right - left, 2)}" height="{round(_svg_y(0.0) - y, 2)}" '
                f'fill="{colour}" fill-opacity="{opacity}" stroke="#000" stroke-width="0.5"/>'
            )
    entries = [(f"{name} (n={n})", colour, "solid", opacity) for name, colour, _, n in histograms]
    parts += _svg_legend(entries, top=True)
    return "".join(parts) + "</svg>"
