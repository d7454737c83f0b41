"""The report's plots: what each axis holds, checked against the tables it was drawn from."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

from novabench.errors import NovaInputError
from novabench.report.plots import (
    IOU_THRESHOLDS,
    best_iou_histogram,
    breakdown_figure,
    figure_png,
    hit_rate_curve,
    parse_status_figure,
)
from tests.report.contract_tables import images_table, report_dict

BEST_IOUS = [0.0, 0.12, 0.31, 0.3, 0.49, 0.5, 0.77, 0.95, 1.0]


def _line(figure, label):
    (line,) = [line for line in figure.axes[0].lines if line.get_label() == label]
    return line


def test_thresholds_run_from_five_to_ninety_five_percent() -> None:
    assert IOU_THRESHOLDS[0] == 0.05 and IOU_THRESHOLDS[-1] == 0.95 and len(IOU_THRESHOLDS) == 19
    assert 0.3 in IOU_THRESHOLDS and 0.5 in IOU_THRESHOLDS  # rounded, so these are exact


def test_curve_at_thirty_and_fifty_is_the_mean_of_the_hit_columns() -> None:
    table = images_table(BEST_IOUS)
    line = _line(hit_rate_curve({"tiny-vlm": table}), "tiny-vlm")
    x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert y[np.flatnonzero(x == 0.3)[0]] == table["hit_30"].mean()
    assert y[np.flatnonzero(x == 0.5)[0]] == table["hit_50"].mean()
    # counted by hand: 0.77, 0.95, 1.0 are >= 0.75
    assert y[np.flatnonzero(x == 0.75)[0]] == pytest.approx(3 / 9)


def test_curve_counts_only_images_with_gold_boxes() -> None:
    table = pd.concat(
        [images_table([0.6, 0.6]), images_table([0.0], gold=(), predicted=None)],
        ignore_index=True,
    )
    y = _line(hit_rate_curve(table), "model").get_ydata()
    assert list(y[:10]) == [1.0] * 10  # the image without gold would make it 2/3


def test_one_curve_per_model_and_raters_in_the_gallery_styles() -> None:
    from novabench.data.render import PREDICTION_COLOUR, RATER_COLOURS, hex_colour

    a, b = images_table(BEST_IOUS), images_table([0.9] * 9)
    figure = hit_rate_curve({"model A": a, "model B": b})
    labels = [line.get_label() for line in figure.axes[0].lines]
    assert labels == ["model A", "model B", "rater 1 vs gold", "rater 2 vs gold"]
    # As the boxes in the gallery: predicted dashed, rater 1 dotted, rater 2 dash-dot.
    rater_1, rater_2 = _line(figure, "rater 1 vs gold"), _line(figure, "rater 2 vs gold")
    assert (rater_1.get_linestyle(), rater_1.get_color()) == (":", hex_colour(RATER_COLOURS[0]))
    assert (rater_2.get_linestyle(), rater_2.get_color()) == ("-.", hex_colour(RATER_COLOURS[1]))
    model_a, model_b = _line(figure, "model A"), _line(figure, "model B")
    assert model_a.get_linestyle() == model_b.get_linestyle() == "--"
    assert model_a.get_color() == hex_colour(PREDICTION_COLOUR)
    colours = {model_a.get_color(), model_b.get_color(), rater_1.get_color(), rater_2.get_color()}
    assert len(colours) == 4 and model_a.get_marker() != model_b.get_marker()
    # every rater best IoU is 0.8 in the table: hit up to 0.8, none above
    y = _line(figure, "rater 1 vs gold").get_ydata()
    assert y[IOU_THRESHOLDS <= 0.8].tolist() == [1.0] * 16 and y[IOU_THRESHOLDS > 0.8].sum() == 0


def test_no_rater_curve_without_rater_boxes() -> None:
    table = images_table(BEST_IOUS, rater_1_best_iou=None, rater_2_best_iou=None)
    assert [line.get_label() for line in hit_rate_curve(table).axes[0].lines] == ["model"]


def test_histogram_counts_every_image_with_gold_once() -> None:
    figure = best_iou_histogram({"m": images_table(BEST_IOUS)}, bins=4)
    heights = [float(p.get_height()) for p in figure.axes[0].patches]
    # bins [0, .25) [.25, .5) [.5, .75) [.75, 1]: 0 and .12 | .31 .3 .49 | .5 | .77 .95 1.0
    assert heights == [2.0, 3.0, 1.0, 3.0]


def test_breakdown_bars_carry_values_and_intervals_in_percent() -> None:
    figure = breakdown_figure(report_dict(), "localisation")
    axes = figure.axes[0]
    heights = [float(p.get_height()) for p in axes.patches]
    assert heights == [60.0, 40.0, 0.0]  # "other" is too small: shown empty, not hidden
    labels = [t.get_text() for t in axes.get_xticklabels()]
    assert labels == ["neoplastic\n(n=12)", "vascular\n(n=8)", "other\n(n=2)"]
    assert "too small" in [t.get_text() for t in axes.texts]
    (bars,) = [c for c in axes.containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    segments = bars.lines[2][0].get_segments()
    assert [tuple(np.round(s[:, 1], 6)) for s in segments[:2]] == [(50.0, 70.0), (30.0, 40.0 + 10)]
    assert "hit@30" in axes.get_ylabel()


def test_breakdown_missing_is_an_input_error_naming_the_breakdown() -> None:
    with pytest.raises(NovaInputError, match="no diagnosis breakdown by sequence"):
        breakdown_figure(report_dict(), "diagnosis", dimension="sequence")


def test_parse_status_mix_adds_up_to_the_items() -> None:
    report = report_dict()
    axes = parse_status_figure(report).axes[0]
    widths = {c.get_label(): [float(p.get_width()) for p in c] for c in axes.containers}
    # tasks in registry order: localization, diagnosis
    assert widths == {
        "ok": [2.0, 2.0],
        "no_target": [1.0, 0.0],
        "not_json": [0.0, 1.0],
        "missing": [1.0, 1.0],
    }
    totals = np.sum(list(widths.values()), axis=0)
    assert totals.tolist() == [4.0, 4.0]  # every item once


def test_figures_become_png_without_pyplot() -> None:
    import sys

    png = figure_png(hit_rate_curve(images_table(BEST_IOUS)))
    assert png.startswith(b"\x89PNG") and len(png) > 1000
    assert (
        "matplotlib.pyplot" not in sys.modules
        or not __import__("matplotlib.pyplot").pyplot.get_fignums()
    )


def test_breakdown_labels_wrap_long_category_names() -> None:
    report = report_dict()
    rows = report["breakdowns"]["localization"]["pathology_category"]
    rows[0] = {**rows[0], "group": "inflammatory and demyelinating"}
    axes = breakdown_figure(report, "localisation").axes[0]
    first = axes.get_xticklabels()[0].get_text()
    assert first == "inflammatory\nand\ndemyelinating\n(n=12)"
    assert max(len(line) for line in first.splitlines()) <= 14


def test_caption_bars_default_to_the_tasks_rank_metric_not_its_first_headline_key() -> None:
    # Rows hold BLEU-4 (captioning's first headline key, a corpus score) and ROUGE-L (its
    # leaderboard rank metric, a mean over captions): the bars show ROUGE-L.
    rows = [
        {
            "group": "neoplastic",
            "n": 12,
            "too_small": False,
            "BLEU-4": 0.09,
            "BLEU-4_ci": [0.05, 0.12],
            "ROUGE-L": 0.3,
            "ROUGE-L_ci": [0.2, 0.4],
        },
        {
            "group": "vascular",
            "n": 8,
            "too_small": False,
            "BLEU-4": 0.07,
            "BLEU-4_ci": [0.04, 0.1],
            "ROUGE-L": 0.25,
            "ROUGE-L_ci": [0.15, 0.35],
        },
    ]
    report = {**report_dict(), "breakdowns": {"captioning": {"pathology_category": rows}}}
    axes = breakdown_figure(report, "captioning").axes[0]
    assert [round(float(p.get_height()), 6) for p in axes.patches] == [30.0, 25.0]
    assert "ROUGE-L" in axes.get_ylabel()


def test_a_long_model_name_is_cut_in_the_legend_and_leaves_the_axes_their_room() -> None:
    import warnings

    name = "org/" + "very-long-model-name-without-any-space-" * 6
    table = pd.DataFrame({"best_iou": [0.0, 0.4, 0.6], "n_gold_boxes": [1, 1, 1]})
    for figure in (hit_rate_curve({name: table}), best_iou_histogram({name: table})):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "axes sizes collapsed to zero" before
            figure_png(figure)
        (label,) = [t.get_text() for t in figure.axes[0].get_legend().get_texts()][:1]
        assert label.startswith(name[:39]) and name not in label and "\u2026" in label


def _svg_scale(svg: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """(x of threshold 0, x of 1) and (y of 0 %, y of 100 %), read from the tick labels."""
    import re

    xs = dict(
        (label, float(x))
        for x, label in re.findall(
            r'<text x="([^"]+)" y="[^"]+" text-anchor="middle">([\d.]+)</text>', svg
        )
    )
    ys = {
        label: float(y) - 4  # each label sits 4 units below its gridline
        for y, label in re.findall(
            r'<text x="[^"]+" y="([^"]+)" text-anchor="end">(\d+)%</text>', svg
        )
    }
    return (xs["0.0"], xs["1.0"]), (ys["0"], ys["100"])


def test_hit_rate_svg_draws_the_hit_rates_at_each_threshold() -> None:
    import re

    from novabench.report.plots import hit_rate_svg

    table = pd.DataFrame(
        {
            "best_iou": [0.0, 0.4, 0.6, 0.9],
            "n_gold_boxes": [1, 1, 1, 0],  # the last has no gold box: not on the curve
            "rater_1_best_iou": [0.8, 0.8, 0.2, None],
        }
    )
    svg = hit_rate_svg({"a <b> model": table}, thresholds=[0.3, 0.5])
    (x0, x1), (y0, y100) = _svg_scale(svg)
    curves = dict(re.findall(r'<polyline class="curve" data-name="([^"]+)" points="([^"]+)"', svg))
    assert list(curves) == ["a &lt;b&gt; model", "rater 1 vs gold"]  # escaped; rater 2 has none
    # By hand, over the 3 images with gold: model IoU >= 0.3: 2 of 3, >= 0.5: 1 of 3;
    # rater 1 (0.8, 0.8, 0.2): 2 of 3 at both thresholds.
    expected = {"a &lt;b&gt; model": [2 / 3, 1 / 3], "rater 1 vs gold": [2 / 3, 2 / 3]}
    for name, points in curves.items():
        pairs = [tuple(map(float, point.split(","))) for point in points.split()]
        thresholds = [(x - x0) / (x1 - x0) for x, _ in pairs]
        rates = [(y - y0) / (y100 - y0) for _, y in pairs]
        assert thresholds == pytest.approx([0.3, 0.5], abs=1e-3)
        assert rates == pytest.approx(expected[name], abs=1e-3)


def test_best_iou_svg_counts_each_models_images_with_gold_per_bin() -> None:
    import re

    from novabench.report.plots import best_iou_svg

    first = pd.DataFrame({"best_iou": [0.0, 0.1, 0.55, 0.95], "n_gold_boxes": [1, 1, 1, 1]})
    second = pd.DataFrame({"best_iou": [0.7, 0.0], "n_gold_boxes": [1, 0]})
    svg = best_iou_svg({"a": first, "b": second}, bins=4)
    bins = re.findall(r'<rect class="bin" data-name="([^"]+)" data-count="(\d+)"', svg)
    # Bins [0, .25), [.25, .5), [.5, .75), [.75, 1]: a has 2, 0, 1, 1; b (one image with
    # gold, IoU 0.7) has 0, 0, 1, 0.
    assert bins == [("a", c) for c in "2011"] + [("b", c) for c in "0010"]
    assert "a (n=4)" in svg and "b (n=1)" in svg
