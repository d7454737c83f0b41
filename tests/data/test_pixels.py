"""Decoding release PNGs for a model: high bit depth is windowed, never clipped."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from novabench.data.pixels import to_rgb8
from novabench.errors import NovaInputError
from novabench.records import ImageRecord


def _sixteen_bit_png(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(values.astype(np.uint16)).save(buffer, format="PNG")
    return buffer.getvalue()


RAMP = np.arange(64 * 64, dtype=np.int64).reshape(64, 64) * 16  # 0 .. 65520, 4096 levels


def test_sixteen_bit_png_is_windowed_over_its_range_not_clipped() -> None:
    with Image.open(io.BytesIO(_sixteen_bit_png(RAMP))) as image:
        assert image.mode in ("I;16", "I")
        clipped = np.asarray(image.convert("RGB"))[..., 0]
        shown = np.asarray(to_rgb8(image, source="ramp.png"))
    assert (clipped == 255).mean() > 0.9  # what PIL's plain convert hands a model
    expected = np.round((RAMP - RAMP.min()) / (RAMP.max() - RAMP.min()) * 255).astype(np.uint8)
    assert shown.shape == (64, 64, 3)
    for channel in range(3):
        np.testing.assert_array_equal(shown[..., channel], expected)
    assert (shown[..., 0] == 255).sum() == (expected == 255).sum() < 0.01 * RAMP.size


def test_twelve_bit_data_in_a_sixteen_bit_png_uses_the_full_8_bit_range() -> None:
    values = np.linspace(100, 4095, 256).reshape(16, 16).round()
    with Image.open(io.BytesIO(_sixteen_bit_png(values))) as image:
        shown = np.asarray(to_rgb8(image, source="x.png"))[..., 0]
    assert shown.min() == 0 and shown.max() == 255
    assert np.all(np.diff(shown.ravel().astype(int)) >= 0)  # order kept


def test_eight_bit_images_convert_exactly_as_before() -> None:
    gray = Image.fromarray(np.arange(256, dtype=np.uint8).reshape(16, 16))
    np.testing.assert_array_equal(
        np.asarray(to_rgb8(gray, source="g.png")), np.asarray(gray.convert("RGB"))
    )


def test_float_image_nan_is_black_and_constant_image_is_black() -> None:
    values = np.array([[np.nan, 1.0, 3.0]], dtype=np.float32)
    shown = np.asarray(to_rgb8(Image.fromarray(values, mode="F"), source="f.png"))[0, :, 0]
    assert shown.tolist() == [0, 0, 255]
    constant = Image.fromarray(np.full((2, 2), 7, dtype=np.int32))
    assert np.asarray(to_rgb8(constant, source="c.png")).max() == 0


def test_unsupported_mode_and_all_nan_are_refused_by_name() -> None:
    with pytest.raises(NovaInputError, match="mode 'CMYK'") as caught:
        to_rgb8(Image.new("CMYK", (2, 2)), source="c.png", record="case0001_001.png")
    assert caught.value.record == "case0001_001.png" and caught.value.field == "image"
    with pytest.raises(NovaInputError, match="no finite pixel"):
        to_rgb8(
            Image.fromarray(np.full((2, 2), np.nan, dtype=np.float32), mode="F"), source="n.png"
        )


def test_runner_hands_the_model_the_windowed_image() -> None:
    from novabench.run.runner import _load_image

    data = _sixteen_bit_png(RAMP)
    record = ImageRecord(
        "case0001_001.png",
        "case0001",
        "001",
        None,
        64,
        64,
        None,
        None,
        None,
        None,
        None,
        image_bytes=data,
    )
    loaded = _load_image(record)
    with Image.open(io.BytesIO(data)) as image:
        expected = to_rgb8(image, source="x")
    assert loaded.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(loaded), np.asarray(expected))


def test_draw_annotations_windows_a_sixteen_bit_slice() -> None:
    from novabench.data.render import draw_annotations

    with Image.open(io.BytesIO(_sixteen_bit_png(RAMP))) as image:
        drawn = np.asarray(draw_annotations(image, boxes=[[40, 40, 10, 10]]))
    assert drawn[5, 5, 0] < 255 and drawn[0, 0].tolist() == [0, 0, 0]
