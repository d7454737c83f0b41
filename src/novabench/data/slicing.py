"""3-D volumes -> 2-D display slices: the imaging half of ``nova ingest``.

Loading a NIfTI volume in canonical RAS, choosing slices through the lesions, the
intensity window, fitting a slice into the square PNG, boxes from a mask slice and the
PNG itself. ``novabench.data.ingest`` drives these per series and writes the release.

Orientation and display conventions (radiological): volumes are first reoriented to
canonical RAS; axial and coronal images show the patient's right on the image left;
sagittal images show anterior on the left; superior (or anterior, for axial) is at the
top. Lesions are the 3-D connected components (26-connectivity) of ``mask > 0``; gold
boxes are the 2-D connected components (8-connectivity) of the mask on the slice.

Slice choice per series: lesions are ranked by volume; each contributes, in turn, its
slice of largest area, then further slices spread across its extent (greedy farthest
point among slices where the lesion covers at least a quarter of its largest area, then
any slice it touches), until ``n_slices`` distinct slices are chosen. A series without a
mask (or with an empty one) gives the central slices and null boxes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np

from novabench.errors import NovaInputError

__all__ = [
    "PLANES",
    "PLANE_AXIS",
    "SliceGeometry",
    "VolumeSource",
    "boxes_over_no_data",
    "central_slices",
    "choose_slices",
    "has_finite_data",
    "in_plane_spacing",
    "intensity_window",
    "lesion_profiles",
    "load_canonical",
    "render_png",
    "slice_boxes",
    "take_slice",
]

PLANES: tuple[str, ...] = ("axial", "coronal", "sagittal")
#: Voxel axis cut by each plane in canonical RAS (0: x, 1: y, 2: z).
PLANE_AXIS = {"sagittal": 0, "coronal": 1, "axial": 2}

#: A volume or mask: a NIfTI path, or an in-memory nibabel image (e.g. ``nibabel.Nifti1Image``).
VolumeSource = Union[str, "os.PathLike[str]", Any]


def load_canonical(source: VolumeSource, *, where: str, record: str, field_name: str) -> Any:
    """A nibabel image in closest-canonical (RAS) orientation, 3-D, or a NovaInputError.

    Args:
        source: a NIfTI path or an in-memory nibabel image; trailing singleton
            dimensions (``(x, y, z, 1)``) are dropped.
        where: how errors name the input (e.g. the manifest).
        record: the case, for errors.
        field_name: the series field, for errors.

    Example:
        >>> import nibabel as nib
        >>> flipped = nib.Nifti1Image(np.zeros((4, 5, 6, 1)), np.diag([-1, 1, 1, 1]))
        >>> load_canonical(flipped, where="m.json", record="case0001", field_name="volume").shape
        (4, 5, 6)
    """
    import nibabel as nib
    from nibabel.spatialimages import SpatialImage

    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise NovaInputError(
                f"volume file not found: {path}", source=where, record=record, field=field_name
            )
        try:
            loaded = nib.load(str(path))
        except Exception as error:  # nibabel raises several types for unreadable files
            raise NovaInputError(
                f"cannot read {path} as a NIfTI volume ({type(error).__name__}: {error})",
                source=where,
                record=record,
                field=field_name,
            ) from error
        if not isinstance(loaded, SpatialImage):  # e.g. a GIFTI surface or a CIFTI matrix
            raise NovaInputError(
                f"{path} is a {type(loaded).__name__}, not a volume with a voxel grid",
                source=where,
                record=record,
                field=field_name,
            )
        image = loaded
    elif hasattr(source, "affine") and hasattr(source, "dataobj"):
        image = source
    else:
        raise NovaInputError(
            f"expected a NIfTI path or a nibabel image, got {type(source).__name__}",
            source=where,
            record=record,
            field=field_name,
        )
    shape = tuple(image.shape)
    if len(shape) > 3 and all(size == 1 for size in shape[3:]):
        image = _squeeze(image)
    if len(image.shape) != 3:
        raise NovaInputError(
            f"expected a 3-D volume, got shape {tuple(image.shape)}",
            source=where,
            record=record,
            field=field_name,
        )
    try:
        return nib.as_closest_canonical(image)
    except Exception as error:
        raise NovaInputError(
            f"cannot reorient the volume to RAS ({error})",
            source=where,
            record=record,
            field=field_name,
        ) from error


def _squeeze(image: Any) -> Any:
    """Drop trailing singleton dimensions (``(x, y, z, 1)`` volumes are common)."""
    import nibabel as nib

    data = np.asanyarray(image.dataobj).reshape(image.shape[:3])
    return nib.Nifti1Image(data, image.affine)


def _to_display(plane_slice: np.ndarray) -> np.ndarray:
    """Voxel-order 2-D slice -> radiological display orientation (rows top to bottom).

    For every plane the first remaining RAS axis runs along image columns reversed
    (patient right on the left; anterior on the left for sagittal) and the second along
    rows reversed (superior, or anterior for axial, at the top).
    """
    return plane_slice[::-1, ::-1].T


def take_slice(volume: np.ndarray, axis: int, index: int) -> np.ndarray:
    """Slice ``index`` along ``axis`` of a RAS volume, in display orientation.

    Example:
        >>> take_slice(np.arange(8).reshape(2, 2, 2), 2, 0).tolist()
        [[6, 2], [4, 0]]
    """
    return _to_display(np.take(volume, index, axis=axis))


def in_plane_spacing(zooms: Sequence[float], axis: int) -> tuple[float, float]:
    """(row spacing, column spacing) in mm of display images cut along ``axis``.

    Example:
        >>> in_plane_spacing((1.0, 2.0, 3.0), axis=2)
        (2.0, 1.0)
    """
    remaining = [float(zooms[a]) for a in range(3) if a != axis]
    return remaining[1], remaining[0]


def lesion_profiles(mask: np.ndarray, axis: int) -> list[np.ndarray]:
    """Per 3-D connected lesion (largest first), its area on every slice along ``axis``.

    Example:
        >>> mask = np.zeros((4, 4, 4), dtype=bool); mask[0, 0, 1:3] = True; mask[3, 3, 3] = True
        >>> [profile.tolist() for profile in lesion_profiles(mask, axis=2)]
        [[0, 1, 1, 0], [0, 0, 0, 1]]
    """
    from scipy import ndimage

    spans = []
    for a in range(3):  # label only the bounding region of the mask: far cheaper
        present = np.flatnonzero(mask.any(axis=tuple(b for b in range(3) if b != a)))
        if present.size == 0:
            return []
        spans.append(slice(int(present[0]), int(present[-1]) + 1))
    labels, count = ndimage.label(mask[tuple(spans)], structure=np.ones((3, 3, 3), dtype=bool))
    sizes = np.bincount(labels.ravel())[1:]
    other_axes = tuple(b for b in range(3) if b != axis)
    profiles = []
    for label in sorted(range(1, count + 1), key=lambda i: (-int(sizes[i - 1]), i)):
        profile = np.zeros(mask.shape[axis], dtype=np.int64)
        profile[spans[axis]] = (labels == label).sum(axis=other_axes)
        profiles.append(profile)
    return profiles


def _spread_slices(areas: np.ndarray) -> list[int]:
    """Slices of one lesion in preference order: largest area, then spread out."""
    present = np.flatnonzero(areas > 0)
    if present.size == 0:
        return []
    best = int(np.argmax(areas))
    strong = [int(i) for i in present if areas[i] * 4 >= areas[best] and i != best]
    weak = sorted(
        (int(i) for i in present if areas[i] * 4 < areas[best]), key=lambda i: (abs(i - best), i)
    )
    chosen = [best]
    while strong:
        # farthest from every slice already chosen; ties -> larger area, then lower index
        pick = max(strong, key=lambda i: (min(abs(i - c) for c in chosen), areas[i], -i))
        chosen.append(pick)
        strong.remove(pick)
    return chosen + weak


def choose_slices(
    profiles: Sequence[np.ndarray], n_slices: int, *, where: str, record: str, field_name: str
) -> list[int]:
    """Slice numbers (sorted) following the module docstring's rule, from lesion area profiles.

    Raises:
        NovaInputError: the lesions touch fewer than ``n_slices`` slices.

    Example:
        >>> choose_slices([np.array([0, 1, 4, 3, 0])], 2, where="m.json", record="case0001",
        ...               field_name="series[0].n_slices")
        [2, 3]
    """
    preferences = [_spread_slices(profile) for profile in profiles]
    chosen: list[int] = []
    depth = 0
    while len(chosen) < n_slices and any(depth < len(p) for p in preferences):
        for preference in preferences:
            if (
                depth < len(preference)
                and preference[depth] not in chosen
                and len(chosen) < n_slices
            ):
                chosen.append(preference[depth])
        depth += 1
    if len(chosen) < n_slices:
        raise NovaInputError(
            f"{n_slices} slices requested but the lesions touch only {len(chosen)} slices along this plane",
            source=where,
            record=record,
            field=field_name,
        )
    return sorted(chosen)


def central_slices(length: int, n_slices: int) -> list[int]:
    """``n_slices`` distinct slices around the middle of an axis of ``length`` slices.

    Example:
        >>> central_slices(10, 3)
        [4, 5, 6]
    """
    middle = length // 2
    offsets = [0]
    step = 1
    while len(offsets) < min(n_slices, length):
        for candidate in (step, -step):
            if 0 <= middle + candidate < length and len(offsets) < n_slices:
                offsets.append(candidate)
        step += 1
    return sorted(middle + offset for offset in offsets)


def intensity_window(volume: np.ndarray, percentiles: tuple[float, float]) -> tuple[float, float]:
    """Robust intensity window from percentiles of the foreground (voxels above the minimum).

    NaN and infinite voxels (no data, e.g. outside a registered brain) are left out, so they
    can neither blank the window nor stretch it; ``render_png`` draws them black.

    Example:
        >>> volume = np.zeros((10, 10, 10), dtype=np.float32); volume[2:8, 2:8, 2:8] = 100
        >>> intensity_window(volume, (0.5, 99.5))
        (100.0, 101.0)
        >>> volume[0] = np.nan; volume[1] = np.inf
        >>> intensity_window(volume, (0.5, 99.5))
        (100.0, 101.0)
    """
    # A regular subsample of ~300k voxels estimates percentiles well and keeps this cheap.
    stride = max(1, round((volume.size / 300_000) ** (1 / 3)))
    sample = volume[::stride, ::stride, ::stride]
    sample = sample[np.isfinite(sample)]
    if sample.size == 0:  # no data at all: every slice is refused by has_finite_data
        return 0.0, 1.0
    floor = float(sample.min())
    foreground = sample[sample > floor]
    if foreground.size == 0:
        return floor, floor + 1.0
    low, high = (float(v) for v in np.percentile(foreground, percentiles))
    if high <= low:
        high = low + 1.0
    return low, high


@dataclass(frozen=True)
class SliceGeometry:
    """How a display slice of ``rows x cols`` voxels maps into the square PNG.

    Example:
        >>> geometry = SliceGeometry.fit(10, 20, (1.0, 1.0), image_size=40)
        >>> geometry.new_width, geometry.new_height, geometry.pad_y
        (40, 20, 10)
        >>> geometry.box(0, 0, 0, 1)
        [0.0, 10.0, 4.0, 2.0]
    """

    image_size: int
    new_width: int
    new_height: int
    pad_x: int
    pad_y: int
    scale_x: float  # PNG pixels per voxel column
    scale_y: float

    @classmethod
    def fit(
        cls, rows: int, cols: int, spacing: tuple[float, float], image_size: int
    ) -> SliceGeometry:
        """Fit a slice of ``rows x cols`` voxels of ``spacing`` mm, aspect kept, into the square."""
        height_mm, width_mm = rows * spacing[0], cols * spacing[1]
        pixels_per_mm = image_size / max(height_mm, width_mm)
        new_width = min(image_size, max(1, round(width_mm * pixels_per_mm)))
        new_height = min(image_size, max(1, round(height_mm * pixels_per_mm)))
        return cls(
            image_size,
            new_width,
            new_height,
            (image_size - new_width) // 2,
            (image_size - new_height) // 2,
            new_width / cols,
            new_height / rows,
        )

    def box(self, row0: int, row1: int, col0: int, col1: int) -> list[float]:
        """PNG box ``[x, y, w, h]`` covering voxel rows ``row0..row1`` and cols ``col0..col1``."""
        return [
            round(self.pad_x + col0 * self.scale_x, 4),
            round(self.pad_y + row0 * self.scale_y, 4),
            round((col1 - col0 + 1) * self.scale_x, 4),
            round((row1 - row0 + 1) * self.scale_y, 4),
        ]


def slice_boxes(mask_slice: np.ndarray, geometry: SliceGeometry) -> list[list[float]]:
    """Boxes of the 8-connected components of a 2-D display-oriented mask slice.

    Example:
        >>> mask = np.zeros((4, 4), dtype=bool); mask[1, 1] = mask[2, 2] = mask[0, 3] = True
        >>> slice_boxes(mask, SliceGeometry.fit(4, 4, (1.0, 1.0), image_size=4))
        [[1.0, 1.0, 2.0, 2.0], [3.0, 0.0, 1.0, 1.0]]
    """
    from scipy import ndimage

    labels, count = ndimage.label(mask_slice, structure=np.ones((3, 3), dtype=bool))
    boxes = []
    for rows, cols in ndimage.find_objects(labels)[:count]:
        boxes.append(geometry.box(rows.start, rows.stop - 1, cols.start, cols.stop - 1))
    return sorted(boxes)


def has_finite_data(pixels: np.ndarray) -> bool:
    """Whether a slice holds any finite voxel (an all-NaN/inf slice would render black).

    Example:
        >>> has_finite_data(np.array([[np.nan, np.inf]]))
        False
        >>> has_finite_data(np.array([[np.nan, 0.0]]))
        True
    """
    return bool(np.isfinite(pixels).any())


def boxes_over_no_data(
    mask_slice: np.ndarray, pixels: np.ndarray, geometry: SliceGeometry
) -> list[list[float]]:
    """Boxes (as ``slice_boxes`` gives them) of mask components lying only on non-finite voxels.

    Example:
        >>> mask = np.zeros((4, 4), dtype=bool); mask[0, 0] = mask[3, 3] = True
        >>> pixels = np.ones((4, 4)); pixels[0, 0] = np.nan
        >>> boxes_over_no_data(mask, pixels, SliceGeometry.fit(4, 4, (1.0, 1.0), image_size=4))
        [[0.0, 0.0, 1.0, 1.0]]
    """
    from scipy import ndimage

    labels, count = ndimage.label(mask_slice, structure=np.ones((3, 3), dtype=bool))
    if count == 0:
        return []
    finite = np.isfinite(pixels).ravel()
    finite_per_label = np.bincount(labels.ravel(), weights=finite, minlength=count + 1)
    empty = []
    for label, (rows, cols) in enumerate(ndimage.find_objects(labels)[:count], start=1):
        if finite_per_label[label] == 0:
            empty.append(geometry.box(rows.start, rows.stop - 1, cols.start, cols.stop - 1))
    return sorted(empty)


def render_png(
    pixels: np.ndarray,
    geometry: SliceGeometry,
    window: tuple[float, float],
    path: Path,
    *,
    mark: str | None = None,
) -> None:
    """Window a display slice to 8 bit, resample it into the padded square and save the PNG.

    ``mark`` (``novabench.data.provenance.png_mark``) is written as the PNG's ``Software``
    text, which readers of the release look for when no provenance record says what made it.

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> path = Path(tempfile.mkdtemp()) / "slice.png"
        >>> geometry = SliceGeometry.fit(4, 8, (1.0, 1.0), 16)
        >>> render_png(np.full((4, 8), 50.0), geometry, (0.0, 100.0), path)
        >>> Image.open(path).size
        (16, 16)
    """
    from PIL import Image

    low, high = window
    values = pixels.astype(np.float32)
    finite = np.isfinite(values)
    # No data (NaN, inf) is drawn black, like the padding.
    scaled = np.clip((np.where(finite, values, low) - low) / (high - low), 0.0, 1.0)
    eight_bit = np.round(scaled * 255.0).astype(np.uint8)
    resized = Image.fromarray(np.ascontiguousarray(eight_bit), mode="L").resize(
        (geometry.new_width, geometry.new_height), Image.Resampling.BICUBIC
    )
    canvas = Image.new("L", (geometry.image_size, geometry.image_size), 0)
    canvas.paste(resized, (geometry.pad_x, geometry.pad_y))
    # zlib level 3: about 4x faster than PIL's default 6 for ~8% larger files; still deterministic.
    info = None
    if mark is not None:
        from PIL import PngImagePlugin

        info = PngImagePlugin.PngInfo()
        info.add_text("Software", mark)
    canvas.save(path, format="PNG", compress_level=3, pnginfo=info)
