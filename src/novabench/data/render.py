"""Drawing NOVA annotations on a slice, for Space demos, reports and notebooks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from PIL import Image, ImageDraw

from novabench.data.pixels import to_rgb8

__all__ = [
    "COLOUR_NAMES",
    "DASH_PATTERNS",
    "GOLD_COLOUR",
    "GOLD_LINE_STYLE",
    "PREDICTION_COLOUR",
    "PREDICTION_LINE_STYLE",
    "RATER_COLOURS",
    "RATER_LINE_STYLES",
    "colour_name",
    "draw_annotations",
    "hex_colour",
]

# One colour-blind-safe palette (Okabe & Ito, 2008) for every picture of boxes: the Spaces,
# the report's gallery and plots, notebooks. Change it here only. Four clearly distinct hues
# (orange is left out: beside vermillion it reads as the same colour), each layer also with
# its own line style so a greyscale print still tells them apart.
GOLD_COLOUR = (0, 158, 115)  # bluish green
PREDICTION_COLOUR = (213, 94, 0)  # vermillion
RATER_COLOURS = ((86, 180, 233), (204, 121, 167), (240, 228, 66))  # sky blue, purple, yellow
#: The word a help text or legend uses for each colour: what a reader sees, which is not
#: always the palette's own name (its vermillion reads as orange on screen). Texts take the
#: word from here, never write it out, so that a new colour cannot leave an old word behind.
COLOUR_NAMES: dict[tuple[int, int, int], str] = {
    GOLD_COLOUR: "green",
    PREDICTION_COLOUR: "orange",
    RATER_COLOURS[0]: "sky blue",
    RATER_COLOURS[1]: "pink",
    RATER_COLOURS[2]: "yellow",
}
LineStyle = Literal["solid", "dashed", "dotted", "dashdot"]
GOLD_LINE_STYLE: LineStyle = "solid"
PREDICTION_LINE_STYLE: LineStyle = "dashed"
RATER_LINE_STYLES: tuple[LineStyle, ...] = ("dotted", "dashdot", "dashed")
#: Each line style as on/off run lengths in pixels (matplotlib takes the names as they are).
DASH_PATTERNS: dict[LineStyle, tuple[int, ...]] = {
    "solid": (),
    "dashed": (6, 3),
    "dotted": (2, 2),
    "dashdot": (6, 2, 2, 2),
}


def hex_colour(colour: Sequence[int]) -> str:
    """An RGB triple as the ``#rrggbb`` text matplotlib and CSS take.

    Example:
        >>> hex_colour(GOLD_COLOUR)
        '#009e73'
    """
    red, green, blue = (int(v) for v in colour)
    return f"#{red:02x}{green:02x}{blue:02x}"


def colour_name(colour: Sequence[int]) -> str:
    """The word for one of the palette's colours, as help texts and legends write it.

    Raises:
        KeyError: ``colour`` is not in the palette (a text would have no word for it).

    Example:
        >>> colour_name(PREDICTION_COLOUR), colour_name(GOLD_COLOUR)
        ('orange', 'green')
    """
    red, green, blue = (int(v) for v in colour)
    return COLOUR_NAMES[(red, green, blue)]


def draw_annotations(
    image: Image.Image,
    *,
    boxes: Sequence[Sequence[float]] = (),
    rater_boxes: Sequence[Mapping[str, Any]] = (),
    predicted_boxes: Sequence[Sequence[float]] = (),
    width: int = 2,
    rater_width: int = 1,
    line_styles: bool = False,
) -> Image.Image:
    """Return an RGB copy of ``image`` with gold, rater and predicted boxes drawn.

    Gold boxes are bluish green, each rater has its own colour (thin lines), predictions
    vermillion (the colour-blind-safe palette above). Boxes are ``[x, y, width, height]`` pixels.
    With ``line_styles`` each layer is also drawn in its line style (gold solid, predictions
    dashed, rater 1 dotted, rater 2 dash-dotted), for pictures that may be printed in grey.

    Args:
        image: the slice (8-bit modes, or high-bit-depth grayscale windowed by
            ``novabench.data.pixels.to_rgb8``).
        boxes: gold boxes.
        rater_boxes: ``[{"rater": name, "boxes": [[x, y, w, h], ...]}, ...]`` as in the dataset.
        predicted_boxes: a model's boxes.
        width: line width of gold and predicted boxes in pixels.
        rater_width: line width of rater boxes in pixels (thin by default).
        line_styles: draw each layer in its line style (``DASH_PATTERNS``), not all solid.

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

    def pattern(style: LineStyle) -> tuple[int, ...]:
        return DASH_PATTERNS[style] if line_styles else ()

    for index, rater in enumerate(rater_boxes):
        colour = RATER_COLOURS[index % len(RATER_COLOURS)]
        dashes = pattern(RATER_LINE_STYLES[index % len(RATER_LINE_STYLES)])
        for box in rater.get("boxes", []):
            _rectangle(pen, _corners(box), colour, rater_width, dashes)
    for box in boxes:
        _rectangle(pen, _corners(box), GOLD_COLOUR, width, pattern(GOLD_LINE_STYLE))
    for box in predicted_boxes:
        _rectangle(pen, _corners(box), PREDICTION_COLOUR, width, pattern(PREDICTION_LINE_STYLE))
    return canvas


def _rectangle(
    pen: ImageDraw.ImageDraw,
    corners: tuple[float, float, float, float],
    colour: tuple[int, int, int],
    width: int,
    dashes: Sequence[int],
) -> None:
    """A rectangle outline (inward ``width``), solid or in ``dashes`` around its edge."""
    x0, y0, x1, y1 = (int(round(v)) for v in corners)
    if not dashes or x1 - x0 < 2 * width or y1 - y0 < 2 * width:
        pen.rectangle(corners, outline=colour, width=width)  # too small to show a pattern
        return
    on = [index % 2 == 0 for index, run in enumerate(dashes) for _ in range(run)]
    inner = width - 1
    # The pattern runs clockwise from the top-left corner, continuing across corners.
    edges = (
        (x1 - x0 + 1, lambda a, b: (x0 + a, y0, x0 + b, y0 + inner)),  # top, left to right
        (y1 - y0 + 1, lambda a, b: (x1 - inner, y0 + a, x1, y0 + b)),  # right, downwards
        (x1 - x0 + 1, lambda a, b: (x1 - b, y1 - inner, x1 - a, y1)),  # bottom, leftwards
        (y1 - y0 + 1, lambda a, b: (x0, y1 - b, x0 + inner, y1 - a)),  # left, upwards
    )
    phase = 0
    for length, segment in edges:
        start = None
        for offset in range(length + 1):
            drawn = offset < length and on[(phase + offset) % len(on)]
            if drawn and start is None:
                start = offset
            elif not drawn and start is not None:
                pen.rectangle(segment(start, offset - 1), fill=colour)
                start = None
        phase += length


def _corners(box: Sequence[float]) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in box)
    return (x, y, x + max(w, 0.0) - 1, y + max(h, 0.0) - 1)
