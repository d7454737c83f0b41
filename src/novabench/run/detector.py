"""An unsupervised intensity-outlier detector for 2-D brain MRI slices.

The localisation floor baseline: no training, no download, no GPU. It answers
"where does this slice look unlike the rest of this brain?" in three steps:

1. a head mask (threshold, hole filling, largest component), eroded so the
   skull and scalp rim are left out;
2. two robust z-maps inside the mask, both on a lightly smoothed slice:
   intensity against the brain's median, and left-right asymmetry against the
   slice mirrored about the mask's centre column (most lesions are unilateral);
3. voxels where both z-maps agree in sign and exceed their thresholds form
   connected components; each becomes a box scored by its mean asymmetry
   contrast times the log of its area, so large, contrasted blobs rank first.

It is deliberately simple: a floor any model should beat, and a fixed point
to compare against across toolkit versions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Detection", "DetectorSettings", "detect_anomalies", "head_mask"]


@dataclass(frozen=True)
class DetectorSettings:
    """Thresholds of the detector (defaults tuned on nothing but common sense).

    Attributes:
        smoothing_sigma: Gaussian smoothing in pixels before the z-maps.
        asymmetry_z: minimum |z| of the left-right difference.
        intensity_z: minimum |z| of the intensity against the brain median.
        min_area_fraction: smallest component kept, as a fraction of the mask area.
        max_detections: boxes returned at most, best first.
        erosion_fraction: mask erosion as a fraction of the mask's equivalent radius.
    """

    smoothing_sigma: float = 2.0
    asymmetry_z: float = 3.0
    intensity_z: float = 1.5
    min_area_fraction: float = 0.002
    max_detections: int = 3
    erosion_fraction: float = 0.12


@dataclass(frozen=True)
class Detection:
    """One detected region: a pixel box ``[x, y, width, height]``, a score and its signal."""

    box: tuple[float, float, float, float]
    score: float
    signal: str  # "hyperintense" or "hypointense"
    area: int


def head_mask(image: np.ndarray, *, erosion_fraction: float = 0.12) -> np.ndarray:
    """Boolean mask of the head, eroded to stay inside the skull.

    Args:
        image: 2-D grayscale array.
        erosion_fraction: erosion depth as a fraction of the mask's equivalent radius.

    Returns:
        A boolean array of the image's shape (all False for a blank image).

    Example:
        >>> img = np.zeros((64, 64)); img[16:48, 16:48] = 100.0
        >>> mask = head_mask(img)
        >>> bool(mask[32, 32]), bool(mask[17, 17]), bool(mask[2, 2])
        (True, False, False)
    """
    from scipy import ndimage

    values = np.asarray(image, dtype=np.float64)
    top = float(np.percentile(values, 99)) if values.size else 0.0
    if top <= 0:
        return np.zeros(values.shape, dtype=bool)
    mask = ndimage.binary_fill_holes(values > max(0.1 * top, 1e-6))
    labels, count = ndimage.label(mask)
    if count == 0:
        return mask
    sizes = np.bincount(labels.ravel())[1:]
    mask = labels == (int(np.argmax(sizes)) + 1)
    radius = np.sqrt(mask.sum() / np.pi)
    depth = int(round(erosion_fraction * radius))
    if depth > 0:
        mask = ndimage.binary_erosion(mask, iterations=depth)
    return mask


def detect_anomalies(
    image: np.ndarray, settings: DetectorSettings | None = None
) -> list[Detection]:
    """Find regions of a brain slice that are intensity outliers and asymmetric.

    Args:
        image: 2-D grayscale array (any numeric type), e.g. a NOVA PNG.
        settings: thresholds; ``DetectorSettings()`` by default.

    Returns:
        Detections, highest score first (empty when nothing stands out).

    Example:
        >>> yy, xx = np.mgrid[:128, :128]
        >>> brain = (((yy - 64) / 50.0) ** 2 + ((xx - 64) / 40.0) ** 2 <= 1) * 80.0
        >>> lesion = ((yy - 50) ** 2 + (xx - 45) ** 2 <= 36) * 120.0
        >>> found = detect_anomalies(brain + lesion)
        >>> x, y, w, h = found[0].box
        >>> x <= 45 <= x + w and y <= 50 <= y + h, found[0].signal
        (True, 'hyperintense')
    """
    from scipy import ndimage

    settings = settings or DetectorSettings()
    values = np.asarray(image, dtype=np.float64)
    if values.ndim == 3:
        values = values.mean(axis=2)
    mask = head_mask(values, erosion_fraction=settings.erosion_fraction)
    if mask.sum() < 50:
        return []
    smooth = ndimage.gaussian_filter(values, settings.smoothing_sigma)

    intensity = _robust_z(smooth, mask)
    asymmetry = _robust_z(smooth - _mirror_about_mask_centre(smooth, mask), mask)

    bright = (asymmetry > settings.asymmetry_z) & (intensity > settings.intensity_z)
    dark = (asymmetry < -settings.asymmetry_z) & (intensity < -settings.intensity_z)
    min_area = max(4, int(settings.min_area_fraction * mask.sum()))
    detections: list[Detection] = []
    for signal, outliers in (("hyperintense", bright & mask), ("hypointense", dark & mask)):
        labels, count = ndimage.label(outliers)
        for index, region in enumerate(ndimage.find_objects(labels), start=1):
            if region is None:
                continue
            component = labels[region] == index
            area = int(component.sum())
            if area < min_area:
                continue
            contrast = float(np.abs(asymmetry[region][component]).mean())
            rows, cols = region
            box = (
                float(cols.start),
                float(rows.start),
                float(cols.stop - cols.start),
                float(rows.stop - rows.start),
            )
            detections.append(
                Detection(box=box, score=contrast * float(np.log1p(area)), signal=signal, area=area)
            )
    detections.sort(key=lambda d: (-d.score, d.box))
    return detections[: settings.max_detections]


def _robust_z(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    inside = values[mask]
    median = float(np.median(inside))
    spread = 1.4826 * float(np.median(np.abs(inside - median)))
    return (values - median) / (spread if spread > 1e-9 else 1.0)


def _mirror_about_mask_centre(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The slice flipped left-right about the mask's centre column."""
    columns = np.nonzero(mask.any(axis=0))[0]
    centre = (columns[0] + columns[-1]) / 2.0
    width = values.shape[1]
    source = np.clip(np.round(2 * centre - np.arange(width)).astype(int), 0, width - 1)
    return values[:, source]
