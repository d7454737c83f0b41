"""A decoded release PNG as the 8-bit RGB image a model (or a drawing) is given.

NOVA's PNGs are 8-bit grayscale, but a release made elsewhere may hold 16-bit (or 32-bit
integer / float) grayscale PNGs. PIL's ``convert("RGB")`` clips those at 255, so a 16-bit
slice comes out mostly white: a model would silently see a saturated image. Here such an
image is windowed linearly from its lowest to its highest finite pixel value into 0..255
(nothing clipped); 8-bit modes convert as PIL does; anything else is refused by name.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from novabench.errors import NovaInputError

__all__ = ["EIGHT_BIT_MODES", "HIGH_BIT_DEPTH_MODES", "to_rgb8"]

#: PIL modes holding at most 8 bits per channel: ``convert("RGB")`` keeps their values.
EIGHT_BIT_MODES = frozenset({"1", "L", "LA", "P", "PA", "RGB", "RGBA"})
#: Single-channel modes with more than 8 bits (16-bit PNGs open as ``I;16`` or ``I``).
HIGH_BIT_DEPTH_MODES = frozenset({"I", "I;16", "I;16B", "I;16L", "I;16N", "F"})


def to_rgb8(image: Image.Image, *, source: str, record: str | None = None) -> Image.Image:
    """The 8-bit RGB form of a decoded image; high bit depth is windowed, never clipped.

    Args:
        image: a decoded PIL image (e.g. ``Image.open`` of a release PNG).
        source: the file (or folder embedding it), for errors.
        record: the image's filename, for errors.

    Returns:
        A new RGB image. For a high-bit-depth grayscale image, its lowest finite value maps
        to 0 and its highest to 255 (a constant image is black; NaN is black).

    Raises:
        NovaInputError: an image mode this cannot show faithfully, or no finite pixel.

    Example:
        >>> sixteen_bit = Image.fromarray(np.array([[0, 1000, 4000]], dtype=np.uint16))
        >>> sixteen_bit.mode, np.asarray(sixteen_bit.convert("RGB"))[0, :, 0].tolist()
        ('I;16', [0, 255, 255])
        >>> np.asarray(to_rgb8(sixteen_bit, source="x.png"))[0, :, 0].tolist()
        [0, 64, 255]
    """
    if image.mode in EIGHT_BIT_MODES:
        return image.convert("RGB")
    where = dict(source=source, record=record, field="image")
    if image.mode not in HIGH_BIT_DEPTH_MODES:
        raise NovaInputError(
            f"image mode {image.mode!r} is not supported (expected 8-bit grayscale/RGB or "
            "high-bit-depth grayscale)",
            **where,
        )
    values = np.asarray(image, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise NovaInputError(f"the {image.mode} image has no finite pixel value", **where)
    low, high = float(finite.min()), float(finite.max())
    scaled = (values - low) / (high - low) if high > low else np.zeros_like(values)
    scaled = np.clip(np.nan_to_num(scaled, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
    eight_bit = np.round(scaled * 255.0).astype(np.uint8)
    return Image.fromarray(eight_bit).convert("RGB")  # uint8 2-D: mode L
