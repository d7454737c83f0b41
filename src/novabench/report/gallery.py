"""A gallery of box overlays: a model's highest and lowest IoU, its misses and a random sample.

Each section is named by what it holds (:data:`SECTION_TITLES`): the images with the highest
best IoU, those with the lowest best IoU above 0, those with gold boxes that no predicted box
overlaps (IoU 0: missed), and a seeded random sample of the others. Picks images from the per-item ``images`` table (``best_iou``, ``n_gold_boxes``, boxes as
``[x1, y1, x2, y2]`` pixels), reads their PNGs from the release by filename, and draws gold,
rater 1, rater 2 and predicted boxes in the shared colour-blind-safe palette of
:mod:`novabench.data.render`, each in its line style (gold solid, rater 1 dotted, rater 2
dash-dotted, predicted dashed). Each :class:`GalleryItem` keeps the reference and the model's
caption so a page or a figure can show them beside the picture.
"""

from __future__ import annotations

import io
import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from PIL import Image

from novabench.data.render import (
    GOLD_COLOUR,
    GOLD_LINE_STYLE,
    PREDICTION_COLOUR,
    PREDICTION_LINE_STYLE,
    RATER_COLOURS,
    RATER_LINE_STYLES,
    LineStyle,
    draw_annotations,
    hex_colour,
)
from novabench.errors import NovaInputError
from novabench.escaping import plot_text

if TYPE_CHECKING:  # matplotlib is imported by gallery_figure only: the HTML page needs none
    from matplotlib.figure import Figure

__all__ = [
    "LEGEND",
    "LINE_STYLES",
    "SECTIONS",
    "SECTION_TITLES",
    "GalleryItem",
    "build_gallery",
    "gallery_figure",
    "select_gallery",
]

#: What each box colour means, in drawing order: (label, ``#rrggbb``).
LEGEND: tuple[tuple[str, str], ...] = (
    ("gold", hex_colour(GOLD_COLOUR)),
    ("rater 1", hex_colour(RATER_COLOURS[0])),
    ("rater 2", hex_colour(RATER_COLOURS[1])),
    ("predicted", hex_colour(PREDICTION_COLOUR)),
)
#: The line style of each legend entry (``novabench.data.render.DASH_PATTERNS`` names, which
#: matplotlib takes too): the boxes differ by pattern as well as hue, so grey prints work.
LINE_STYLES: dict[str, LineStyle] = {
    "gold": GOLD_LINE_STYLE,
    "rater 1": RATER_LINE_STYLES[0],
    "rater 2": RATER_LINE_STYLES[1],
    "predicted": PREDICTION_LINE_STYLE,
}

#: The gallery's sections in page order, each named by what it holds.
SECTIONS: tuple[str, ...] = ("highest_iou", "lowest_iou", "missed", "random")
#: What a page or figure calls each section.
SECTION_TITLES: dict[str, str] = {
    "highest_iou": "Highest IoU",
    "lowest_iou": "Lowest IoU above 0",
    "missed": "Missed: IoU 0",
    "random": "Random sample",
}


@dataclass(frozen=True)
class GalleryItem:
    """One overlay of the gallery.

    Attributes:
        section: one of :data:`SECTIONS` (its title: :data:`SECTION_TITLES`).
        filename: the release's filename.
        png: the slice with its boxes drawn, as PNG bytes.
        best_iou: the image's best IoU (None when the table has none).
        status: the localisation parse status (``missing`` when unanswered).
        caption_reference: the release's caption.
        caption_prediction: the model's caption (None when not answered).
        n_gold_boxes: the image's gold boxes (None when the table does not say).
        n_predicted_boxes: the model's boxes on the image (None when the table does not say).
    """

    section: str
    filename: str
    png: bytes
    best_iou: float | None
    status: str
    caption_reference: str
    caption_prediction: str | None
    n_gold_boxes: int | None = None
    n_predicted_boxes: int | None = None

    @property
    def outcome(self) -> str:
        """What the overlay shows in words: the best IoU, or, on a slice without a gold box,
        whether the model rightly drew nothing (its best IoU of 0 there is no miss).

        Example:
            >>> GalleryItem("random", "a.png", b"", 0.0, "no_target", "ref", None, 0, 0).outcome
            'no lesion on this slice; the model drew none (correct)'
            >>> GalleryItem("missed", "b.png", b"", 0.0, "ok", "ref", None, 1, 2).outcome
            'best IoU 0.00'
        """
        if self.n_gold_boxes == 0:
            drawn = self.n_predicted_boxes or 0
            if drawn:
                return (
                    f"no lesion on this slice; the model drew {drawn} "
                    f"box{'es' if drawn != 1 else ''} (false positive)"
                )
            if self.status == "no_target":
                return "no lesion on this slice; the model drew none (correct)"
            return f"no lesion on this slice; no box read from the answer (status {self.status})"
        return f"best IoU {'n/a' if self.best_iou is None else f'{self.best_iou:.2f}'}"


def select_gallery(images: pd.DataFrame, n: int = 4, *, seed: int = 0) -> dict[str, list[str]]:
    """Filenames of each gallery section (:data:`SECTIONS`), ``n`` each at most.

    Among the images with gold boxes (a missing best IoU counts as 0): ``highest_iou``, the
    highest best IoU above 0; ``lowest_iou``, the lowest above 0 not already shown;
    ``missed``, best IoU 0 (no predicted box overlaps a gold box), first by filename. Ties
    by filename. ``random``: a seeded sample of every image not already shown. No image
    appears twice; a section with nothing to hold is empty.

    Example:
        >>> table = pd.DataFrame({"filename": ["a.png", "b.png", "c.png", "d.png", "e.png"],
        ...     "best_iou": [0.9, 0.1, 0.5, 0.0, 0.0], "n_gold_boxes": [1, 1, 1, 1, 0]})
        >>> select_gallery(table, n=1, seed=0)
        {'highest_iou': ['a.png'], 'lowest_iou': ['b.png'], 'missed': ['d.png'], 'random': ['e.png']}
    """
    if n < 0:
        raise NovaInputError(f"the gallery size must be >= 0, got {n}", field="n")
    missing = [c for c in ("filename", "best_iou", "n_gold_boxes") if c not in images.columns]
    if missing:
        raise NovaInputError(
            f"the images table lacks the column(s) {', '.join(missing)}", field=missing[0]
        )
    with_gold = images[images["n_gold_boxes"].fillna(0).astype(int) > 0]
    ranked = with_gold.assign(_iou=with_gold["best_iou"].astype(float).fillna(0.0))
    overlapping = ranked[ranked["_iou"] > 0]
    highest = overlapping.sort_values(["_iou", "filename"], ascending=[False, True])
    highest_names = [str(f) for f in highest["filename"].head(n)]
    lowest = overlapping.sort_values(["_iou", "filename"], ascending=[True, True])
    lowest_names = [str(f) for f in lowest["filename"] if f not in highest_names][:n]
    missed_names = sorted(str(f) for f in ranked.loc[ranked["_iou"] <= 0, "filename"])[:n]
    shown = set(highest_names) | set(lowest_names) | set(missed_names)
    rest = sorted(str(f) for f in images["filename"] if f not in shown)
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(rest), size=min(n, len(rest)), replace=False) if rest else ()
    return {
        "highest_iou": highest_names,
        "lowest_iou": lowest_names,
        "missed": missed_names,
        "random": [rest[i] for i in sorted(int(i) for i in chosen)],
    }


def _xywh(boxes: Any) -> list[list[float]]:
    """Table boxes ``[x1, y1, x2, y2]`` as the drawing's ``[x, y, w, h]``; null is no box."""
    if boxes is None or (isinstance(boxes, float) and np.isnan(boxes)):
        return []
    return [
        [float(x1), float(y1), float(x2) - float(x1), float(y2) - float(y1)]
        for x1, y1, x2, y2 in boxes
    ]


def _image_records(release: Any) -> Mapping[str, Any]:
    if isinstance(release, (str, os.PathLike)):
        from novabench.data.release import read_release

        release = read_release(release)
    return {image.filename: image for image in release.images}


def _optional_text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return str(value)


def build_gallery(
    images: pd.DataFrame,
    release: Any,
    n: int = 4,
    *,
    seed: int = 0,
) -> list[GalleryItem]:
    """The overlays of :func:`select_gallery`'s images, in section order.

    Args:
        images: the per-item images table (contract columns: ``filename``, ``best_iou``,
            ``n_gold_boxes``, ``gold_boxes_xyxy``, ``rater_1_boxes_xyxy``,
            ``rater_2_boxes_xyxy``, ``predicted_boxes_xyxy`` (an older table's ``gold_boxes``...
            are read as these), ``localization_status``, ``caption_reference``,
            ``caption_prediction``).
        release: a :class:`novabench.data.release.NovaRelease` or its folder.
        n: images per section.
        seed: seed of the random sample.

    Raises:
        NovaInputError: a chosen filename is not in the release.

    Example:
        >>> import tempfile, pathlib
        >>> from novabench.data.sample import write_sample_release
        >>> from novabench.data.release import read_release
        >>> release = read_release(write_sample_release(
        ...     pathlib.Path(tempfile.mkdtemp()) / "nova", n_cases=1, progress=False))
        >>> first = release.images[0]
        >>> table = pd.DataFrame([{"filename": first.filename, "best_iou": 0.0,
        ...     "n_gold_boxes": 1, "gold_boxes_xyxy": [[10, 10, 40, 40]],
        ...     "rater_1_boxes_xyxy": None, "rater_2_boxes_xyxy": None,
        ...     "predicted_boxes_xyxy": None, "localization_status": "missing",
        ...     "caption_reference": "A lesion.", "caption_prediction": None}])
        >>> [(item.section, item.png[:4]) for item in build_gallery(table, release, n=1)]
        [('missed', b'\\x89PNG')]
    """
    from novabench.report.items import with_box_columns_named

    records = _image_records(release)
    images = with_box_columns_named(images)
    rows = {str(row["filename"]): row for row in images.to_dict("records")}
    items = []
    for section, filenames in select_gallery(images, n, seed=seed).items():
        for filename in filenames:
            record = records.get(filename)
            if record is None:
                raise NovaInputError(
                    "the images table names an image the release does not have",
                    record=filename,
                    field="filename",
                )
            row = rows[filename]
            raters = [
                {"rater": name, "boxes": _xywh(row.get(column))}
                for name, column in (
                    ("rater 1", "rater_1_boxes_xyxy"),
                    ("rater 2", "rater_2_boxes_xyxy"),
                )
            ]
            with Image.open(io.BytesIO(record.read_bytes())) as picture:
                drawn = draw_annotations(
                    picture,
                    boxes=_xywh(row.get("gold_boxes_xyxy")),
                    rater_boxes=raters,
                    predicted_boxes=_xywh(row.get("predicted_boxes_xyxy")),
                    rater_width=2,  # a dotted line one pixel wide is too faint to read
                    line_styles=True,
                )
            buffer = io.BytesIO()
            # Level 3 makes files as small as the default 6 on these slices, 2-3x faster.
            drawn.save(buffer, format="PNG", compress_level=3)
            best_iou = row.get("best_iou")
            items.append(
                GalleryItem(
                    section=section,
                    filename=filename,
                    png=buffer.getvalue(),
                    best_iou=None if _optional_text(best_iou) is None else float(best_iou),
                    status=str(row.get("localization_status") or "missing"),
                    caption_reference=str(row.get("caption_reference") or record.caption or ""),
                    caption_prediction=_optional_text(row.get("caption_prediction")),
                    n_gold_boxes=len(_xywh(row.get("gold_boxes_xyxy"))),
                    n_predicted_boxes=len(_xywh(row.get("predicted_boxes_xyxy"))),
                )
            )
    return items


def gallery_figure(items: Sequence[GalleryItem], *, wrap: int = 60) -> Figure:
    """The gallery as one figure (for notebooks and papers): a row per image, captions beside.

    Example:
        >>> import numpy as np
        >>> buffer = io.BytesIO(); Image.new("RGB", (8, 8)).save(buffer, format="PNG")
        >>> item = GalleryItem("highest_iou", "a.png", buffer.getvalue(), 0.5, "ok", "ref", None)
        >>> [text.get_text() for text in gallery_figure([item]).legends[0].get_texts()]
        ['gold', 'rater 1', 'rater 2', 'predicted']
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    figure = Figure(figsize=(9.0, 2.6 * max(1, len(items)) + 0.4), layout="constrained")
    FigureCanvasAgg(figure)
    grid = figure.add_gridspec(max(1, len(items)), 2, width_ratios=[1, 1.6])
    for index, item in enumerate(items):
        picture = figure.add_subplot(grid[index, 0])
        with Image.open(io.BytesIO(item.png)) as image:
            picture.imshow(np.asarray(image.convert("RGB")))
        picture.set_axis_off()
        picture.set_title(
            plot_text(
                f"{SECTION_TITLES.get(item.section, item.section)}: {item.filename} "
                f"({item.outcome})"
            ),
            fontsize="small",
        )
        text = figure.add_subplot(grid[index, 1])
        text.set_axis_off()
        prediction = item.caption_prediction if item.caption_prediction is not None else "(none)"
        body = (
            "reference: "
            + textwrap.fill(plot_text(item.caption_reference), wrap)
            + "\n\nmodel: "
            + textwrap.fill(plot_text(prediction), wrap)
        )
        text.text(0.0, 1.0, body, va="top", ha="left", fontsize="small", wrap=True)
    handles = [
        Line2D([0], [0], color=colour, linewidth=2, linestyle=LINE_STYLES[label])
        for label, colour in LEGEND
    ]
    figure.legend(handles, [label for label, _ in LEGEND], loc="outside upper center", ncols=4)
    return figure
