"""Drawing NOVA annotations on a slice, for Space demos, reports and notebooks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from novabench.data.pixels import to_rgb8

__all__ = [
    "GOLD_COLOUR",
    "PREDICTION_COLOUR",
    "RATER_COLOURS",
    "draw_annotations",
    "hex_colour",
]

# One colour-blind-safe palette (Okabe & Ito, 2008) for every picture of boxes: the Spaces,
# the report's gallery and plots, notebooks. Change it here only.
GOLD_COLOUR = (0, 158, 115)  # bluish green
PREDICTION_COLOUR = (213, 94, 0)  # vermillion
RATER_COLOURS = ((230, 159, 0), (86, 180, 233), (204, 121, 167))  # orange, sky blue, purple


def hex_colour(colour: Sequence[int]) -> str:
    """An RGB triple as the ``#rrggbb`` text matplotlib and CSS take.

    Example:
        >>> hex_colour(GOLD_COLOUR)
        '#009e73'
    """
    red, green, blue = (int(v) for v in colour)
    return f"#{red:02x}{green:02x}{blue:02x}"


def draw_annotations(
    image: Image.Image,
    *,
    boxes: Sequence[Sequence[float]] = (),
    rater_boxes: Sequence[Mapping[str, Any]] = (),
    predicted_boxes: Sequence[Sequence[float]] = (),
    width: int = 2,
    rater_width: int = 1,
) -> Image.Image:
    """Return an RGB copy of ``image`` with gold, rater and predicted boxes drawn.

    Gold boxes are bluish green, each rater has its own colour (thin lines), predictions
    vermillion (the colour-blind-safe palette above). Boxes are ``[x, y, width, height]`` pixels.

    Args:
        image: the slice (8-bit modes, or high-bit-depth grayscale windowed by
            ``novabench.data.pixels.to_rgb8``).
        boxes: gold boxes.
        rater_boxes: ``[{"rater": name, "boxes": [[x, y, w, h], ...]}, ...]`` as in the dataset.
        predicted_boxes: a model's boxes.
        width: line width of gold and predicted boxes in pixels.
        rater_width: line width of rater boxes in pixels (thin by default).

    Returns:
        A new RGB image; the input is not modified.

    Example:
        >>> slice_ = Image.new("L", (64, 64))
        >>> drawn = draw_annotations(slice_, boxes=[[8, 8, 20, 20]], predicted_boxes=[[30, 30, 10, 10]])
        >>> drawn.mode, drawn.getpixel((8, 15)), drawn.getpixel((30, 35)), slice_.getpixel((8, 15))
        ('RGB', (0, 158, 115), (213, 94, 0), 0)
    """
    canvas = to_rgb8(image, source="draw_annotations")  # a 16-bit slice is windowed, not clipped
    pen = ImageDraw.Draw(canvas)
    for index, rater in enumerate(rater_boxes):
        colour = RATER_COLOURS[index % len(RATER_COLOURS)]
        for box in rater.get("boxes", []):
            pen.rectangle(_corners(box), outline=colour, width=rater_width)
    for box in boxes:
        pen.rectangle(_corners(box), outline=GOLD_COLOUR, width=width)
    for box in predicted_boxes:
        pen.rectangle(_corners(box), outline=PREDICTION_COLOUR, width=width)
    return canvas


def _corners(box: Sequence[float]) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in box)
    return (x, y, x + max(w, 0.0) - 1, y + max(h, 0.0) - 1)
