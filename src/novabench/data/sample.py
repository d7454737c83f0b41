"""A deterministic synthetic NOVA release built from the MNI ICBM152 2009a T1 template.

The real images cannot be redistributed or downloaded here, so tests, the demo and users
without the data use this sample. Each case copies the template (a real brain MRI
volume shipped in nilearn's wheel), draws one lesion (or a symmetric pair) of a rare
pathology from ``novabench.data.vocabulary`` into it, renders the sequences the case
shows (T1, T1 post-contrast, T2, FLAIR, DWI) and hands everything to
``novabench.data.ingest.ingest_volumes``: the same code path a user's own volumes take.
Captions describe the lesion actually drawn (side, region, signal, enhancement, size),
in the plane and sequence actually rendered.

Two simulated raters delineate each lesion slightly differently (threshold and a voxel
shift, seeded) and sometimes miss a small lesion. A few images are cut at a level away
from the lesion and have null boxes. One case has the placeholder diagnosis
"Final diagnosis not found.". Images per case follow the real release's distribution;
``n_cases=281`` reproduces it exactly (281 cases, 906 images).

The same ``seed`` gives byte-identical files.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from novabench import checks
from novabench.data.ingest import IngestCase, IngestSeries, ingest_volumes
from novabench.data.vocabulary import PATHOLOGIES, REGIONS, SEQUENCES, Pathology
from novabench.errors import NovaError

__all__ = [
    "IMAGES_PER_CASE",
    "PLACEHOLDER_DIAGNOSIS",
    "SAMPLE_RATERS",
    "find_mni_template",
    "images_per_case",
    "write_sample_release",
]

#: Images per case in the public release: {images: number of cases} (281 cases, 906 images).
IMAGES_PER_CASE: dict[int, int] = {
    1: 70,
    2: 62,
    3: 54,
    4: 30,
    5: 23,
    6: 16,
    7: 11,
    8: 7,
    9: 3,
    10: 2,
    11: 2,
    17: 1,
}
PLACEHOLDER_DIAGNOSIS = "Final diagnosis not found."
SAMPLE_RATERS: tuple[str, ...] = ("rater1", "rater2")
TEMPLATE_FILE = "mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz"
_FIRST_DATE = dt.date(2015, 7, 1)
_DATE_SPAN_DAYS = (dt.date(2024, 12, 31) - _FIRST_DATE).days
# Share of cases (among those with >= 2 images) that get one image away from the lesion.
_NULL_IMAGE_RATE = 0.12
# A rater misses a lesion of radius below this (mm) with probability _MISS_RATE.
_SMALL_RADIUS_MM = 6.0
_MISS_RATE = 0.3


def find_mni_template() -> Path:
    """Path of the MNI ICBM152 2009a T1 template inside the installed nilearn wheel.

    nilearn is located without being imported (importing it is slow and pulls sklearn).

    Returns:
        Path of the ``.nii.gz`` template.

    Raises:
        NovaError: nilearn is not installed or its wheel lacks the template.

    Example:
        >>> find_mni_template().name
        'mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz'
    """
    spec = importlib.util.find_spec("nilearn")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "datasets" / "data" / TEMPLATE_FILE
        if candidate.is_file():
            return candidate
    raise NovaError(
        "the sample release needs the MNI152 template shipped with nilearn: "
        "pip install 'novabench[sample]' (nilearn, nibabel, scipy)"
        + ("" if spec is None else f"; nilearn found at {locations} but without {TEMPLATE_FILE}")
    )


def images_per_case(n_cases: int, seed: int = 0) -> list[int]:
    """Images per case for ``n_cases`` cases, drawn from the real release's distribution.

    Every full block of 281 cases is the real multiset of counts, shuffled; the
    remainder is drawn without replacement from it. So ``n_cases=281`` gives exactly
    906 images.

    Args:
        n_cases: number of cases (>= 1).
        seed: random seed.

    Returns:
        One count per case.

    Example:
        >>> sum(images_per_case(281))
        906
        >>> len(images_per_case(5, seed=1))
        5
    """
    n_cases = checks.positive_int(n_cases, field="n_cases")  # True is no count
    seed = checks.integer(seed, minimum=0, field="seed")
    population = np.array([count for count, cases in IMAGES_PER_CASE.items() for _ in range(cases)])
    rng = np.random.default_rng([seed, 281])
    blocks = [rng.permutation(population) for _ in range(n_cases // population.size)]
    remainder = n_cases % population.size
    if remainder:
        blocks.append(rng.choice(population, size=remainder, replace=False))
    return [int(count) for count in np.concatenate(blocks)]


# --------------------------------------------------------------------------- template


@dataclass(frozen=True)
class _Template:
    t1: np.ndarray  # float32, cropped to the brain with a margin
    brain: np.ndarray  # bool
    affine: np.ndarray  # of the cropped grid


@functools.lru_cache(maxsize=1)
def _template() -> _Template:
    import nibabel as nib

    image = nib.as_closest_canonical(nib.load(str(find_mni_template())))
    t1 = np.asarray(image.get_fdata(dtype=np.float32))
    brain = t1 > 5.0
    margin = 6
    starts, stops = [], []
    for axis in range(3):
        present = np.flatnonzero(brain.any(axis=tuple(a for a in range(3) if a != axis)))
        starts.append(max(int(present[0]) - margin, 0))
        stops.append(min(int(present[-1]) + margin + 1, t1.shape[axis]))
    crop = tuple(slice(a, b) for a, b in zip(starts, stops))
    affine = image.affine.copy()
    affine[:3, 3] = image.affine[:3, :3] @ np.array(starts) + image.affine[:3, 3]
    return _Template(np.ascontiguousarray(t1[crop]), np.ascontiguousarray(brain[crop]), affine)


@functools.lru_cache(maxsize=8)
def _base_contrast(contrast: str) -> np.ndarray:
    """The lesion-free template in one contrast, computed once per process (read-only)."""
    volume = _contrast(_template(), contrast)
    volume.flags.writeable = False
    return volume


def _contrast(template: _Template, contrast: str) -> np.ndarray:
    """Template T1 rendered as another sequence (a rough, monotone intensity mapping)."""
    t1 = template.t1
    if contrast in ("t1", "t1c"):
        return t1.copy()
    t2 = np.where(template.brain, 255.0 - 0.9 * t1, 0.0).astype(np.float32)  # CSF bright, WM dark
    if contrast == "t2":
        return t2
    if contrast == "flair":  # T2 with the CSF signal nulled
        return (t2 / (1.0 + np.exp(-(t1 - 100.0) / 10.0))).astype(np.float32)
    if contrast == "dwi":  # low tissue contrast
        return np.where(template.brain, 110.0 + 0.25 * (t2 - 110.0), 0.0).astype(np.float32)
    raise ValueError(contrast)


# --------------------------------------------------------------------------- lesions


@dataclass(frozen=True)
class _Lesion:
    """One synthetic lesion: voxel centre and a shape as a normalised distance field."""

    centre: np.ndarray  # voxel coordinates (float)
    radius: float  # mm (the template is 1 mm isotropic)
    shape: str
    rotation: np.ndarray
    axes: np.ndarray  # semi-axes as multiples of radius
    lobes: np.ndarray  # lobulated: (k, 3) offsets in radii
    lobe_radii: np.ndarray

    def distance(
        self, shape: tuple[int, ...], shift: np.ndarray | None = None
    ) -> tuple[tuple[slice, ...], np.ndarray]:
        """Normalised distance (<= 1 inside) on the lesion's bounding region of the grid."""
        centre = self.centre + (0 if shift is None else shift)
        reach = int(np.ceil(self.radius * 1.6)) + 2
        region = tuple(
            slice(max(int(round(c)) - reach, 0), min(int(round(c)) + reach + 1, size))
            for c, size in zip(centre, shape)
        )
        grids = np.meshgrid(
            *(np.arange(s.start, s.stop, dtype=np.float32) for s in region), indexing="ij"
        )
        offset = np.stack([g - c for g, c in zip(grids, centre)], axis=-1) / self.radius
        if self.shape == "lobulated":
            distances = [
                np.linalg.norm(offset - lobe, axis=-1) / r
                for lobe, r in zip(self.lobes, self.lobe_radii)
            ]
            return region, np.minimum.reduce(distances)
        local = offset @ self.rotation
        return region, np.sqrt(((local / self.axes) ** 2).sum(axis=-1))


def _make_lesion(
    rng: np.random.Generator, centre: np.ndarray, radius: float, shape: str
) -> _Lesion:
    rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    axes = np.ones(3) if shape == "round" else np.array([1.0, *rng.uniform(0.6, 0.95, size=2)])
    count = 4
    directions = rng.normal(size=(count, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    lobes = directions * rng.uniform(0.3, 0.55, size=(count, 1))
    return _Lesion(centre, radius, shape, rotation, axes, lobes, rng.uniform(0.5, 0.75, size=count))


def _lesion_value(
    pathology: Pathology,
    contrast: str,
    distance: np.ndarray,
    rng: np.random.Generator,
    local: np.ndarray,
) -> np.ndarray:
    """Target intensity of lesion voxels on one contrast (the template's 0..255 scale)."""
    if contrast in ("t2", "flair"):
        base = np.full(distance.shape, 225.0 if pathology.t2 == "hyperintense" else 25.0)
    elif contrast == "dwi":
        base = np.full(distance.shape, 235.0)
    else:
        base = np.full(distance.shape, 255.0 if pathology.t1 == "hyperintense" else 85.0)
        if contrast == "t1c" and pathology.enhancement != "none":
            rim = distance >= 0.72
            if pathology.enhancement == "solid":
                base[:] = 250.0
            else:
                if pathology.enhancement == "incomplete ring":
                    rim &= local[..., 0] > -0.25  # open on one side
                base = np.where(rim, 250.0, 60.0)
    return base + rng.normal(0.0, 6.0, size=distance.shape)


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class _Placement:
    region: str
    side: str | None  # "left", "right", or None for midline
    bilateral: bool
    lesions: tuple[_Lesion, ...]


def _place(pathology: Pathology, rng: np.random.Generator, template: _Template) -> _Placement:
    region = REGIONS[pathology.regions[int(rng.integers(len(pathology.regions)))]]
    inverse = np.linalg.inv(template.affine)
    radius = float(rng.uniform(*pathology.radius_mm))
    jitter = rng.uniform(-3.0, 3.0, size=3)
    bilateral = pathology.bilateral and not region.midline
    side = None if region.midline else ("right" if rng.random() < 0.5 else "left")
    centres_mm = []
    x, y, z = np.array(region.mni_right) + jitter
    if region.midline:
        centres_mm.append((0.0, y, z))
    elif bilateral:
        centres_mm += [(abs(x), y, z), (-abs(x), y, z)]
    else:
        centres_mm.append(
            (abs(x) if side == "right" else -abs(x), y, z)
        )  # RAS: +x is the patient's right
    first = _make_lesion(
        rng, (inverse @ np.array([*centres_mm[0], 1.0]))[:3], radius, pathology.shape
    )
    lesions = [first]
    if bilateral:  # mirror image of the first lesion
        mirror = np.diag([-1.0, 1.0, 1.0])
        centre = (inverse @ np.array([*centres_mm[1], 1.0]))[:3]
        lesions.append(
            _Lesion(
                centre,
                radius,
                first.shape,
                mirror @ first.rotation,
                first.axes,
                first.lobes @ mirror,
                first.lobe_radii,
            )
        )
    return _Placement(region.name, None if bilateral else side, bilateral, tuple(lesions))


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _caption(
    pathology: Pathology, placement: _Placement, sequence_key: str, plane: str, diameter_mm: int
) -> str:
    sequence = SEQUENCES[sequence_key]
    shape = pathology.shape
    if sequence_key in ("t2", "flair"):
        look = f"{shape} {pathology.t2}"
    elif sequence_key == "dwi":
        look = f"{shape} {pathology.t2}"  # described with its diffusion restriction below
    elif sequence_key == "t1c":
        look = {
            "none": f"non-enhancing {shape} {pathology.t1}",
            "solid": f"homogeneously enhancing {shape}",
            "ring": f"ring-enhancing {shape}",
            "incomplete ring": f"incompletely ring-enhancing {shape}",
        }[pathology.enhancement]
    else:
        look = f"{shape} {pathology.t1}"
    region = REGIONS[placement.region]
    if placement.bilateral:
        what = f"bilateral symmetric {look} lesions in the {region.plural}"
    else:
        where = f"{placement.side} {region.name}" if placement.side else region.name
        what = f"{_article(look)} {look} lesion in the {where}"
    if sequence_key == "dwi":
        what += " with restricted diffusion"
    size = f", measuring about {diameter_mm} mm" + (" each" if placement.bilateral else "")
    # A finding about enhancement is only visible post-contrast; other findings are read on T2/FLAIR.
    shows_finding = (
        sequence_key == "t1c" if "enhanc" in pathology.finding else sequence_key in ("t2", "flair")
    )
    tail = f", {pathology.finding}" if pathology.finding and shows_finding else ""
    return f"{plane.capitalize()} {sequence.wording} image shows {what}{size}{tail}."


def _spoken_with_vowel(age: int) -> bool:
    """'an 8-year-old', 'an 11-year-old', 'an 80-year-old', but 'a 1-year-old'."""
    return str(age).startswith("8") or age in (11, 18)


def _normal_caption(sequence_key: str, relation: str) -> str:
    return f"Axial {SEQUENCES[sequence_key].wording} image at a level {relation} the lesion shows no focal abnormality."


def _case(
    number: int,
    n_images: int,
    seed: int,
    pathology: Pathology,
    *,
    placeholder: bool,
    null_image: bool,
) -> IngestCase:
    import nibabel as nib

    rng = np.random.default_rng([seed, number])
    template = _template()
    placement = _place(pathology, rng, template)
    grid = template.t1.shape
    gold = np.zeros(grid, dtype=np.uint8)
    raters = {name: np.zeros(grid, dtype=np.uint8) for name in SAMPLE_RATERS}
    sequences = ["flair", "t2", "t1", "t1c"] + (["dwi"] if pathology.restricted_diffusion else [])
    contrasts: dict[str, np.ndarray] = {}
    fields = []
    for lesion in placement.lesions:
        region, distance = lesion.distance(grid)
        inside = (distance <= 1.0) & template.brain[region]
        gold[region] |= inside.astype(np.uint8)
        alpha = np.clip((1.15 - distance) / 0.3, 0.0, 1.0) * template.brain[region]
        offset = (
            np.stack(np.meshgrid(*(np.arange(s.start, s.stop) for s in region), indexing="ij"), -1)
            - lesion.centre
        )
        fields.append((region, distance, alpha, (offset / lesion.radius) @ lesion.rotation))
        for name in SAMPLE_RATERS:
            if lesion.radius < _SMALL_RADIUS_MM and rng.random() < _MISS_RATE:
                continue  # this rater overlooked the small lesion
            shift = rng.integers(-1, 2, size=3).astype(np.float64)
            rater_region, rater_distance = lesion.distance(grid, shift)
            threshold = 1.0 + rng.uniform(-0.12, 0.18)
            raters[name][rater_region] |= (
                (rater_distance <= threshold) & template.brain[rater_region]
            ).astype(np.uint8)
    texture = np.random.default_rng([seed, number, 1])
    for key in sequences:
        volume = _base_contrast(SEQUENCES[key].contrast).copy()
        for region, distance, alpha, local in fields:
            target = _lesion_value(pathology, SEQUENCES[key].contrast, distance, texture, local)
            volume[region] = np.clip(volume[region] * (1.0 - alpha) + target * alpha, 0.0, 255.0)
        contrasts[key] = volume

    def image(array: np.ndarray) -> Any:
        return nib.Nifti1Image(array, template.affine)

    gold_image = image(gold)
    rater_images = {name: image(mask) for name, mask in raters.items()}
    volume_images = {key: image(array) for key, array in contrasts.items()}
    planes = ["axial", "coronal"] + ([] if placement.bilateral else ["sagittal"])
    combos = [(s, p) for s in sequences for p in planes]
    keys = rng.random(len(combos)) * np.array([0.5 if p == "axial" else 1.0 for _, p in combos])
    ordered = [combos[i] for i in np.argsort(keys, kind="stable")]
    n_lesion_images = n_images - 1 if null_image else n_images
    specs = [ordered[i % len(ordered)] for i in range(n_lesion_images)]
    counts: dict[tuple[str, str], int] = {}
    for spec in specs:
        counts[spec] = counts.get(spec, 0) + 1
    diameter = int(
        round(2 * placement.lesions[0].radius * float(np.mean(placement.lesions[0].axes)))
    )
    series = [
        IngestSeries(
            volume_images[key],
            plane=plane,
            caption=_caption(pathology, placement, key, plane, diameter),
            mask=gold_image,
            rater_masks=rater_images,
            n_slices=count,
        )
        for (key, plane), count in counts.items()
    ]
    if null_image:
        # numpy types any() over some axes as "scalar or array"; over 2 of 3 axes it is a 1-D array
        z_profile = cast(np.ndarray, gold.any(axis=(0, 1)))
        present = np.flatnonzero(z_profile)
        brain_z = np.flatnonzero(template.brain.any(axis=(0, 1)))
        middle = (brain_z[0] + brain_z[-1]) // 2
        below = present.mean() > middle
        level = int(present[0] - 22) if below else int(present[-1] + 22)
        level = int(np.clip(level, brain_z[0] + 15, brain_z[-1] - 15))
        if z_profile[level]:  # cannot happen for lesions of this size; keep the null promise anyway
            level = int(present[0] - 1) if present[0] > 0 else int(present[-1] + 1)
        key = "flair" if rng.random() < 0.5 else "t2"
        series.append(
            IngestSeries(
                volume_images[key],
                plane="axial",
                caption=_normal_caption(key, "below" if below else "above"),
                mask=gold_image,
                rater_masks=rater_images,
                slice_indices=[level],
            )
        )
    age = int(rng.integers(pathology.age[0], pathology.age[1] + 1))
    sex = (
        ("girl" if rng.random() < 0.5 else "boy")
        if age < 16
        else ("woman" if rng.random() < 0.5 else "man")
    )
    history = pathology.histories[int(rng.integers(len(pathology.histories)))]
    case_id = f"case{number:04d}"
    date = _FIRST_DATE + dt.timedelta(days=int(rng.integers(_DATE_SPAN_DAYS + 1)))
    return IngestCase(
        case_id=case_id,
        series=series,
        title=pathology.name,
        clinical_history=f"{'An' if _spoken_with_vowel(age) else 'A'} {age}-year-old {sex} with {history}.",
        final_diagnosis=PLACEHOLDER_DIAGNOSIS if placeholder else pathology.name,
        publication_date=date.strftime("%d.%m.%Y"),
        extras={
            "differential_diagnosis": "; ".join(pathology.differentials),
            "link": f"https://example.org/nova-sample/{case_id}",
        },
    )


def _cases(n_cases: int, seed: int) -> Iterator[IngestCase]:
    counts = images_per_case(n_cases, seed)
    rng = np.random.default_rng([seed, 0])
    order = [int(i) for i in rng.permutation(len(PATHOLOGIES))]
    placeholder_case = int(rng.integers(n_cases)) + 1 if n_cases >= 2 else 0
    multi = [i for i, count in enumerate(counts) if count >= 2]
    null_cases = {i for i in multi if rng.random() < _NULL_IMAGE_RATE}
    if multi and not null_cases:
        null_cases.add(multi[0])
    for index, count in enumerate(counts):
        pathology = PATHOLOGIES[order[index % len(order)]]
        yield _case(
            index + 1,
            count,
            seed,
            pathology,
            placeholder=index + 1 == placeholder_case,
            null_image=index in null_cases,
        )


def write_sample_release(
    out_dir: str | os.PathLike[str],
    *,
    n_cases: int = 12,
    seed: int = 0,
    layout: Literal["v1", "legacy"] = "v1",
    overwrite: bool = False,
    progress: bool = True,
) -> Path:
    """Write the synthetic sample release (see the module docstring) in the official layout.

    Args:
        out_dir: release folder to create.
        n_cases: number of cases; 281 gives the real release's 906 images.
        seed: random seed; the same seed gives byte-identical files.
        layout: ``"v1"`` (parquet + ``images/``) or ``"legacy"`` (CSVs + ``test/``).
        overwrite: replace an existing ``out_dir`` that ``nova sample`` wrote (or an empty one).
        progress: show a tqdm progress bar.

    Returns:
        The release folder.

    Example:
        >>> import tempfile, pathlib
        >>> out = write_sample_release(pathlib.Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
        >>> (out / "data" / "nova-v1.parquet").is_file()
        True
    """
    seed = checks.integer(seed, minimum=0, field="seed")
    total = len(images_per_case(n_cases, seed))
    cases = _cases(n_cases, seed)
    return ingest_volumes(
        _Sized(cases, total),
        out_dir,
        layout=layout,
        overwrite=overwrite,
        row_shuffle_seed=seed,  # the official parquet is not sorted by filename either
        progress=progress,
        source="sample release",
        provenance={"origin": "nova sample", "cases": n_cases, "seed": seed},
        command="sample",
    )


class _Sized:
    """A generator with a known length, so the progress bar shows a total."""

    def __init__(self, items: Iterator[IngestCase], length: int) -> None:
        self._items, self._length = items, length

    def __iter__(self) -> Iterator[IngestCase]:
        return self._items

    def __len__(self) -> int:
        return self._length
