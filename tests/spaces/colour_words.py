"""Colour words and the hues they stand for, to check a text against the colour drawn.

The hue ranges are written from the usual colour wheel, not from novabench's palette, so a
check through them is independent of the table (``COLOUR_NAMES``) it checks.
"""

from __future__ import annotations

import colorsys
import re
from collections.abc import Sequence

#: Hue ranges in degrees, [low, high), of every colour word a help text might use.
HUES: dict[str, list[tuple[float, float]]] = {
    "red": [(345, 360), (0, 15)],
    "vermillion": [(10, 30)],
    "orange": [(15, 45)],
    "yellow": [(45, 70)],
    "green": [(70, 170)],
    "cyan": [(170, 200)],
    "sky blue": [(180, 230)],
    "blue": [(200, 250)],
    "purple": [(260, 300)],
    "magenta": [(290, 320)],
    "pink": [(300, 345)],
}


def hue_is(word: str, rgb: Sequence[int]) -> bool:
    """Whether the colour ``rgb`` has a hue that ``word`` names."""
    red, green, blue = (v / 255 for v in rgb)
    hue = colorsys.rgb_to_hsv(red, green, blue)[0] * 360
    return any(low <= hue < high for low, high in HUES[word])


def colour_words(text: str) -> list[str]:
    """The colour words in ``text`` (a two-word name counted once, not also as its last word)."""
    found: list[str] = []
    rest = text.casefold()
    for word in sorted(HUES, key=len, reverse=True):
        pattern = rf"\b{re.escape(word)}\b"
        if re.search(pattern, rest):
            found.append(word)
            rest = re.sub(pattern, " ", rest)
    return found
