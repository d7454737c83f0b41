"""Vocabulary of the synthetic sample: rare neurological pathologies, regions, sequences.

Each pathology says where its lesions typically sit, what they look like on each
sequence, a few clinical-history phrases and typical differential diagnoses, so the
sample's captions, histories and diagnoses are coherent with the lesion actually drawn.
The text is our own summary of textbook descriptions, written for demonstration data only.

The pathologies are a data file, ``novabench/resources/sample_pathologies.json``, read and
checked by :func:`read_pathologies` when this module is imported (:data:`PATHOLOGIES`);
the regions and sequences they name are defined here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from importlib import resources
from typing import Any, TypedDict

from novabench import checks
from novabench.errors import NovaInputError

__all__ = [
    "ENHANCEMENTS",
    "PATHOLOGIES",
    "PATHOLOGY_RESOURCE",
    "REGIONS",
    "SEQUENCES",
    "SHAPES",
    "SIGNALS",
    "MriSequence",
    "Pathology",
    "Region",
    "read_pathologies",
]


@dataclass(frozen=True)
class Region:
    """An anatomical site: caption wording and its centre in MNI space (mm, right hemisphere).

    Example:
        >>> REGIONS["thalamus"].plural
        'thalami'
    """

    name: str
    plural: str
    mni_right: tuple[float, float, float]
    midline: bool = False


REGIONS: dict[str, Region] = {
    region.name: region
    for region in (
        Region("frontal lobe", "frontal lobes", (30, 28, 28)),
        Region("parietal lobe", "parietal lobes", (34, -50, 40)),
        Region("temporal lobe", "temporal lobes", (44, -16, -14)),
        Region("medial temporal lobe", "medial temporal lobes", (28, -20, -16)),
        Region("occipital lobe", "occipital lobes", (22, -80, 8)),
        Region("periventricular white matter", "periventricular white matter", (24, -12, 24)),
        Region("centrum semiovale", "centrum semiovale", (26, -20, 36)),
        Region("basal ganglia", "basal ganglia", (22, 4, 2)),
        Region("thalamus", "thalami", (12, -18, 6)),
        Region("cerebellar hemisphere", "cerebellar hemispheres", (24, -62, -34)),
        Region("dentate nucleus", "dentate nuclei", (14, -56, -32)),
        Region("pons", "pons", (0, -28, -30), midline=True),
        Region("medulla oblongata", "medulla oblongata", (0, -40, -48), midline=True),
        Region(
            "splenium of the corpus callosum",
            "splenium of the corpus callosum",
            (0, -36, 14),
            midline=True,
        ),
    )
}


@dataclass(frozen=True)
class MriSequence:
    """An MRI sequence as captions name it, and the contrast the sample renders for it.

    Example:
        >>> SEQUENCES["flair"].wording
        'FLAIR'
    """

    key: str
    wording: str
    contrast: str  # "t1", "t1c", "t2", "flair" or "dwi": how the template is transformed


SEQUENCES: dict[str, MriSequence] = {
    s.key: s
    for s in (
        MriSequence("t1", "T1-weighted", "t1"),
        MriSequence("t1c", "T1-weighted post-contrast", "t1c"),
        MriSequence("t2", "T2-weighted", "t2"),
        MriSequence("flair", "FLAIR", "flair"),
        MriSequence("dwi", "diffusion-weighted (DWI)", "dwi"),
    )
}


@dataclass(frozen=True)
class Pathology:
    """A rare pathology and how its lesions look.

    Attributes:
        name: final diagnosis wording.
        regions: typical sites (keys of ``REGIONS``).
        shape: ``"ovoid"``, ``"round"`` or ``"lobulated"``.
        radius_mm: (min, max) radius of a lesion.
        t2: ``"hyperintense"`` or ``"hypointense"`` on T2/FLAIR.
        t1: ``"hypointense"`` or ``"hyperintense"`` on T1.
        enhancement: ``"none"``, ``"ring"``, ``"solid"`` or ``"incomplete ring"``.
        restricted_diffusion: bright on DWI.
        bilateral: lesions are symmetric in both hemispheres.
        age: (min, max) patient age in years.
        histories: clinical-history phrases (after "<age>-year-old <sex> with ").
        finding: a phrase appended to captions (may be empty).
        differentials: typical differential diagnoses.

    Example:
        >>> any(p.name == "Susac syndrome" for p in PATHOLOGIES)
        True
    """

    name: str
    regions: tuple[str, ...]
    shape: str
    radius_mm: tuple[float, float]
    t2: str
    t1: str
    enhancement: str
    restricted_diffusion: bool
    bilateral: bool
    age: tuple[int, int]
    histories: tuple[str, ...]
    finding: str
    differentials: tuple[str, ...]


#: The values the sample knows how to draw (``novabench.data.sample``).
SHAPES = ("ovoid", "round", "lobulated")
SIGNALS = ("hyperintense", "hypointense")
ENHANCEMENTS = ("none", "ring", "solid", "incomplete ring")

#: The pathologies' data file, under ``novabench/resources/``.
PATHOLOGY_RESOURCE = "sample_pathologies.json"


class _Where(TypedDict):
    """Where a value sits, for :class:`NovaInputError`: the file and the entry."""

    source: str
    record: str


def _choice(value: Any, allowed: tuple[str, ...], where: _Where, field: str) -> str:
    if value not in allowed:
        raise NovaInputError(
            f"must be one of {', '.join(allowed)}, got {value!r}", **where, field=field
        )
    return str(value)


def _texts(value: Any, where: _Where, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise NovaInputError("expected a non-empty list of strings", **where, field=field)
    return tuple(checks.text(item, **where, field=f"{field}[{i}]") for i, item in enumerate(value))


def _range(value: Any, where: _Where, field: str, convert: Callable[..., Any]) -> tuple[Any, Any]:
    if not isinstance(value, list) or len(value) != 2:
        raise NovaInputError(f"expected [min, max], got {value!r}", **where, field=field)
    low, high = (convert(item, **where, field=f"{field}[{i}]") for i, item in enumerate(value))
    if low > high:
        raise NovaInputError(f"min {low} is above max {high}", **where, field=field)
    return low, high


def _pathology(entry: Any, where: _Where) -> Pathology:
    """One entry of the data file as a :class:`Pathology`, every field checked."""
    if not isinstance(entry, Mapping):
        raise NovaInputError(f"expected an object, got {type(entry).__name__}", **where)
    names = [field.name for field in fields(Pathology)]
    for name in names:
        if name not in entry:
            raise NovaInputError("missing", **where, field=name)
    for name in entry:
        if name not in names:
            raise NovaInputError(f"unknown field; known: {', '.join(names)}", **where, field=name)
    regions = _texts(entry["regions"], where, "regions")
    for i, region in enumerate(regions):
        _choice(region, tuple(REGIONS), where, f"regions[{i}]")
    radius = _range(entry["radius_mm"], where, "radius_mm", checks.number)
    if radius[0] <= 0:
        raise NovaInputError(f"must be positive, got {radius[0]}", **where, field="radius_mm[0]")
    age = _range(entry["age"], where, "age", functools.partial(checks.integer, minimum=0))
    for flag in ("restricted_diffusion", "bilateral"):
        if not isinstance(entry[flag], bool):
            raise NovaInputError(
                f"expected true or false, got {entry[flag]!r}", **where, field=flag
            )
    return Pathology(
        name=checks.text(entry["name"], **where, field="name"),
        regions=regions,
        shape=_choice(entry["shape"], SHAPES, where, "shape"),
        radius_mm=radius,
        t2=_choice(entry["t2"], SIGNALS, where, "t2"),
        t1=_choice(entry["t1"], SIGNALS, where, "t1"),
        enhancement=_choice(entry["enhancement"], ENHANCEMENTS, where, "enhancement"),
        restricted_diffusion=entry["restricted_diffusion"],
        bilateral=entry["bilateral"],
        age=age,
        histories=_texts(entry["histories"], where, "histories"),
        finding=checks.text(entry["finding"], **where, field="finding", allow_blank=True),
        differentials=_texts(entry["differentials"], where, "differentials"),
    )


def read_pathologies(
    text: str, *, source: str = f"novabench/resources/{PATHOLOGY_RESOURCE}"
) -> tuple[Pathology, ...]:
    """The pathologies of a data file like ``sample_pathologies.json``, each entry checked.

    The file is a JSON object whose ``"pathologies"`` is a list of objects with exactly
    the fields of :class:`Pathology` (lists for the tuples); regions must be keys of
    :data:`REGIONS`, and shape, signals and enhancement values the sample can draw.

    Args:
        text: the file's text.
        source: the file's name, for error messages.

    Returns:
        The pathologies in file order (the sample's draws depend on that order).

    Raises:
        NovaInputError: invalid JSON, or an entry with a missing, unknown or bad field
            (the message names the entry, by position and name, and the field).

    Example:
        >>> read_pathologies('{"pathologies": []}')
        ()
        >>> read_pathologies('{"pathologies": [{"name": "Susac syndrome"}]}', source="mine.json")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: mine.json, entry 1 (Susac syndrome), field 'regions': missing
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise NovaInputError(
            f"not valid JSON: {error.msg}", source=source, record=f"line {error.lineno}"
        ) from None
    entries = document.get("pathologies") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise NovaInputError("expected an object with a list", source=source, field="pathologies")
    pathologies: list[Pathology] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries, start=1):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        name = name.strip() if isinstance(name, str) else ""
        record = f"entry {index}" + (f" ({name})" if name else "")
        pathology = _pathology(entry, _Where(source=source, record=record))
        if pathology.name in seen:
            raise NovaInputError(
                "a second entry of that name", source=source, record=record, field="name"
            )
        seen.add(pathology.name)
        pathologies.append(pathology)
    return tuple(pathologies)


PATHOLOGIES: tuple[Pathology, ...] = read_pathologies(
    resources.files("novabench")
    .joinpath("resources")
    .joinpath(PATHOLOGY_RESOURCE)
    .read_text(encoding="utf-8")
)
