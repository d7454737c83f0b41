"""The gallery: which images it shows, and that the boxes are drawn where the table says."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from novabench.data.release import read_release
from novabench.data.render import GOLD_COLOUR, PREDICTION_COLOUR, RATER_COLOURS
from novabench.errors import NovaInputError
from novabench.report.gallery import LEGEND, build_gallery, gallery_figure, select_gallery
from tests.report.contract_tables import image_row, images_table


def test_sections_hold_the_extremes_and_never_repeat_an_image() -> None:
    ious = [0.1, 0.9, 0.5, 0.0, 0.7, 0.3, 0.8, 0.2, 0.6, 0.0, 0.0]
    table = images_table(ious)
    chosen = select_gallery(table, n=2, seed=1)
    by_name = dict(zip(table["filename"], ious))
    assert [by_name[f] for f in chosen["highest_iou"]] == [0.9, 0.8]
    assert [by_name[f] for f in chosen["lowest_iou"]] == [0.1, 0.2]
    assert [by_name[f] for f in chosen["missed"]] == [0.0, 0.0]
    assert chosen["missed"] == sorted(chosen["missed"])  # the first misses by filename
    assert len(chosen["random"]) == 2
    everything = [name for names in chosen.values() for name in names]
    assert len(set(everything)) == 8
    assert select_gallery(table, n=2, seed=1) == chosen  # seeded
    samples = {tuple(select_gallery(table, n=2, seed=s)["random"]) for s in range(10)}
    assert len(samples) > 1  # the seed matters


def test_small_tables_give_short_sections() -> None:
    chosen = select_gallery(images_table([0.4, 0.6]), n=4)
    assert chosen == {
        "highest_iou": ["case0001_002.png", "case0001_001.png"],
        "lowest_iou": [],
        "missed": [],
        "random": [],
    }


def test_an_iou_of_0_is_a_miss_never_a_highest_iou() -> None:
    # Every image missed (the old gallery called two of these "best").
    chosen = select_gallery(images_table([0.0, 0.0, 0.0]), n=2)
    assert chosen["highest_iou"] == [] and chosen["lowest_iou"] == []
    assert chosen["missed"] == ["case0001_001.png", "case0001_002.png"]
    assert chosen["random"] == ["case0001_003.png"]


def test_images_without_gold_are_never_ranked_or_missed() -> None:
    table = pd.DataFrame(
        [image_row("case0001_001.png", 0.0, gold=()), image_row("case0001_002.png", 0.2)]
    )
    chosen = select_gallery(table, n=1, seed=0)
    assert chosen["highest_iou"] == ["case0001_002.png"] and chosen["lowest_iou"] == []
    assert chosen["missed"] == [] and chosen["random"] == ["case0001_001.png"]


def _sample_table(sample_release) -> tuple[pd.DataFrame, object]:
    release = read_release(sample_release)
    rows = []
    for index, image in enumerate(release.images[:4]):
        row = image_row(
            image.filename,
            0.2 * index,
            width=image.width,
            height=image.height,
            gold=((10, 10, 40, 40),),
            predicted=((50, 50, 90, 80),),
        )
        row["rater_1_boxes_xyxy"] = [[100.0, 100.0, 130.0, 140.0]]
        row["rater_2_boxes_xyxy"] = [[10.0, 100.0, 60.0, 140.0]]
        rows.append(row)
    return pd.DataFrame(rows), release


def test_overlays_draw_each_box_in_its_legend_colour(sample_release) -> None:
    table, release = _sample_table(sample_release)
    items = build_gallery(table, release, n=1, seed=0)
    # best IoU 0.0, 0.2, 0.4, 0.6 (_sample_table): 0.6 highest, 0.2 lowest above 0, 0.0 missed
    assert [(item.section, round(item.best_iou, 6)) for item in items] == [
        ("highest_iou", 0.6),
        ("lowest_iou", 0.2),
        ("missed", 0.0),
        ("random", 0.4),
    ]
    best = items[0]
    assert best.filename == table.loc[table["best_iou"].idxmax(), "filename"]
    pixels = np.asarray(Image.open(io.BytesIO(best.png)).convert("RGB"))
    assert tuple(pixels[10, 25]) == GOLD_COLOUR  # top edge of gold [10, 10, 40, 40]
    assert tuple(pixels[50, 50]) == PREDICTION_COLOUR  # top-left corner of [50, 50, 90, 80]
    assert tuple(pixels[100, 100]) == RATER_COLOURS[0]
    assert tuple(pixels[100, 10]) == RATER_COLOURS[1]
    assert best.caption_reference.startswith("Axial FLAIR")
    assert best.caption_prediction == "Axial FLAIR: a lesion."
    assert [label for label, _ in LEGEND] == ["gold", "rater 1", "rater 2", "predicted"]


def _top_edge(pixels: np.ndarray, x0: int, x1: int, y: int, colour: tuple) -> str:
    """The top edge of a box as '#' (its colour) and '.' (anything else), left to right."""
    return "".join("#" if tuple(pixels[y, x]) == colour else "." for x in range(x0, x1))


def test_each_layer_has_its_own_line_style_so_greyscale_still_tells_them_apart(
    sample_release,
) -> None:
    table, release = _sample_table(sample_release)
    best = build_gallery(table, release, n=1, seed=0)[0]
    pixels = np.asarray(Image.open(io.BytesIO(best.png)).convert("RGB"))
    # Patterns start at each box's top-left corner (the design: gold solid, predicted
    # dashed 6 on / 3 off, rater 1 dotted 2/2, rater 2 dash-dot 6/2/2/2).
    assert _top_edge(pixels, 10, 28, 10, GOLD_COLOUR) == "#" * 18
    assert _top_edge(pixels, 50, 68, 50, PREDICTION_COLOUR) == "######...######..."
    assert _top_edge(pixels, 100, 112, 100, RATER_COLOURS[0]) == "##..##..##.."
    assert _top_edge(pixels, 10, 34, 100, RATER_COLOURS[1]) == "######..##..######..##.."


def test_palette_is_okabe_ito_with_four_distinct_hues_and_no_near_pair() -> None:
    okabe_ito = {
        "orange": (230, 159, 0),
        "sky blue": (86, 180, 233),
        "bluish green": (0, 158, 115),
        "yellow": (240, 228, 66),
        "blue": (0, 114, 178),
        "vermillion": (213, 94, 0),
        "reddish purple": (204, 121, 167),
        "black": (0, 0, 0),
    }
    name_of = {rgb: name for name, rgb in okabe_ito.items()}
    layers = [GOLD_COLOUR, RATER_COLOURS[0], RATER_COLOURS[1], PREDICTION_COLOUR]
    names = [name_of[tuple(c)] for c in layers]  # KeyError: not an Okabe-Ito colour
    assert len(set(names)) == 4
    # The pairs that read alike (the finding: orange rater beside a vermillion model).
    for near in ({"orange", "vermillion"}, {"blue", "sky blue"}):
        assert not near <= set(names)
    assert [hex_code for _, hex_code in LEGEND] == [
        "#{:02x}{:02x}{:02x}".format(*c) for c in layers
    ]


def test_html_legend_draws_each_line_style(sample_release, tmp_path) -> None:
    from novabench.report.html import _gallery_section

    table, release = _sample_table(sample_release)
    (gallery,) = _gallery_section({"images": table}, release, 1, 0)
    legend = next(p for p in gallery.body if "legend" in p)
    lines = re.findall(r'<line [^>]*stroke="(#[0-9a-f]{6})"([^>]*)/>', legend)
    assert [colour for colour, _ in lines] == [colour for _, colour in LEGEND]
    dashes = [re.search(r'stroke-dasharray="([^"]*)"', rest) for _, rest in lines]
    assert [d.group(1) if d else "solid" for d in dashes] == ["solid", "2 2", "6 2 2 2", "6 3"]


def test_release_given_as_a_folder_works_too(sample_release) -> None:
    table, _ = _sample_table(sample_release)
    assert len(build_gallery(table, sample_release, n=1)) == 4


def test_an_image_missing_from_the_release_is_named(sample_release) -> None:
    table = images_table([0.5])
    table.loc[0, "filename"] = "case9999_001.png"
    with pytest.raises(NovaInputError, match="case9999_001.png"):
        build_gallery(table, sample_release, n=1)


def test_figure_shows_every_item_with_both_captions(sample_release) -> None:
    table, release = _sample_table(sample_release)
    figure = gallery_figure(build_gallery(table, release, n=1))
    texts = [t.get_text() for axes in figure.axes for t in axes.texts]
    assert len(texts) == 4 and all("reference:" in t and "model:" in t for t in texts)
    titles = [axes.get_title() for axes in figure.axes if axes.get_title()]
    assert [title.split(":")[0] for title in titles] == [
        "Highest IoU",
        "Lowest IoU above 0",
        "Missed",
        "Random sample",
    ]
    assert [t.get_text() for t in figure.legends[0].get_texts()] == [name for name, _ in LEGEND]
    styles = [handle.get_linestyle() for handle in figure.legends[0].legend_handles]
    assert styles == ["-", ":", "-.", "--"]  # gold, rater 1, rater 2, predicted


def test_a_slice_without_gold_where_the_model_says_no_target_reads_as_correct(
    sample_release, tmp_path
) -> None:
    from novabench.report.html import _gallery_section

    release = read_release(sample_release)
    first, second = release.images[:2]
    rows = [
        image_row(first.filename, 0.0, gold=(), predicted=None, status="no_target"),
        image_row(second.filename, 0.0, gold=((10, 10, 40, 40),), predicted=((50, 50, 90, 80),)),
    ]
    table = pd.DataFrame(rows)
    items = {item.filename: item for item in build_gallery(table, release, n=1, seed=0)}
    quiet = items[first.filename]
    assert quiet.section == "random"  # never in "missed": there was nothing to find
    assert quiet.outcome == "no lesion on this slice; the model drew none (correct)"
    assert items[second.filename].section == "missed"
    assert items[second.filename].outcome == "best IoU 0.00"
    (gallery,) = _gallery_section({"images": table}, release, 1, 0)
    text = "".join(gallery.body)
    assert f"{first.filename}, no lesion on this slice; the model drew none (correct)" in text
    assert f"{first.filename}, best IoU" not in text
    titles = [a.get_title() for a in gallery_figure(list(items.values())).axes if a.get_title()]
    assert any("the model drew none (correct)" in title for title in titles)


def test_boxes_drawn_on_a_slice_without_gold_are_called_false_positives(sample_release) -> None:
    release = read_release(sample_release)
    image = release.images[0]
    row = image_row(image.filename, 0.0, gold=(), predicted=((5, 5, 20, 20), (30, 30, 40, 40)))
    (item,) = build_gallery(pd.DataFrame([row]), release, n=1, seed=0)
    assert item.outcome == "no lesion on this slice; the model drew 2 boxes (false positive)"
