"""The floor detector on phantoms whose answer is known by construction."""

from __future__ import annotations

import numpy as np
import pytest

from novabench.run.detector import DetectorSettings, detect_anomalies, head_mask


def phantom(
    size: int = 160, lesion: tuple[int, int, int] | None = None, lesion_value: float = 160.0
) -> np.ndarray:
    """A left-right symmetric elliptical 'brain' (value 80) with an optional disc lesion (row, col, radius)."""
    yy, xx = np.mgrid[:size, :size]
    centre = size / 2
    image = (
        (((yy - centre) / (0.42 * size)) ** 2 + ((xx - centre) / (0.34 * size)) ** 2) <= 1
    ) * 80.0
    if lesion is not None:
        row, col, radius = lesion
        image[(yy - row) ** 2 + (xx - col) ** 2 <= radius**2] = lesion_value
    return image


def test_symmetric_brain_without_lesion_gives_nothing() -> None:
    assert detect_anomalies(phantom()) == []


def test_blank_image_gives_nothing() -> None:
    assert detect_anomalies(np.zeros((64, 64))) == []


@pytest.mark.parametrize(
    ("lesion", "value", "signal"),
    [((60, 55, 8), 160.0, "hyperintense"), ((95, 105, 9), 20.0, "hypointense")],
)
def test_lesion_is_found_where_it_was_put(
    lesion: tuple[int, int, int], value: float, signal: str
) -> None:
    row, col, radius = lesion
    found = detect_anomalies(phantom(lesion=lesion, lesion_value=value))
    assert found, "the lesion was missed"
    best = found[0]
    x, y, w, h = best.box
    assert x <= col <= x + w and y <= row <= y + h
    # The box hugs the disc: within a few pixels of its true extent (2 * radius + 1).
    assert abs(w - (2 * radius + 1)) <= 6 and abs(h - (2 * radius + 1)) <= 6
    assert best.signal == signal


def test_detections_are_sorted_and_capped() -> None:
    image = phantom(lesion=(60, 55, 10))
    yy, xx = np.mgrid[:160, :160]
    image[(yy - 100) ** 2 + (xx - 100) ** 2 <= 16] = 160.0  # a second, smaller lesion
    found = detect_anomalies(image, DetectorSettings(max_detections=1))
    assert len(found) == 1
    both = detect_anomalies(image)
    assert [d.score for d in both] == sorted((d.score for d in both), reverse=True)
    assert both[0].area > both[-1].area


def test_head_mask_excludes_the_rim() -> None:
    mask = head_mask(phantom())
    assert mask[80, 80] and not mask[0, 0]
    edge_col = int(80 - 0.34 * 160) + 1  # just inside the ellipse's left edge
    assert not mask[80, edge_col]
