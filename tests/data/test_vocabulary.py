"""The synthetic sample's pathology table: a data file, read and checked entry by entry."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from novabench.data.vocabulary import (
    PATHOLOGIES,
    PATHOLOGY_RESOURCE,
    REGIONS,
    Pathology,
    read_pathologies,
)
from novabench.errors import NovaInputError

# Two entries as the Python table before the data file wrote them (first and last).
RASMUSSEN = Pathology(
    "Rasmussen encephalitis",
    ("frontal lobe", "temporal lobe"),
    "lobulated",
    (9, 14),
    "hyperintense",
    "hypointense",
    "none",
    False,
    False,
    (5, 14),
    (
        "drug-resistant focal seizures and progressive hemiparesis",
        "epilepsia partialis continua over two years",
    ),
    "with adjacent cortical atrophy",
    (
        "Hemimegalencephaly",
        "Sturge-Weber syndrome",
        "Cortical dysplasia",
        "Herpes simplex encephalitis",
    ),
)
MELAS = Pathology(
    "MELAS",
    ("occipital lobe", "parietal lobe"),
    "lobulated",
    (10, 14),
    "hyperintense",
    "hypointense",
    "none",
    False,
    True,
    (10, 35),
    (
        "stroke-like episodes, short stature and hearing loss",
        "episodic vomiting, lactic acidosis and hemianopia",
    ),
    "not respecting vascular territories",
    ("Posterior cerebral artery infarct", "PRES", "Herpes encephalitis", "Status epilepticus"),
)


def test_the_bundled_table_is_the_one_the_sample_was_drawn_from():
    assert len(PATHOLOGIES) == 45  # 45 `_p(...)` calls in the Python table it replaces
    assert PATHOLOGIES[0] == RASMUSSEN and PATHOLOGIES[-1] == MELAS
    assert PATHOLOGIES[1].name == "Susac syndrome" and PATHOLOGIES[1].restricted_diffusion
    assert len({p.name for p in PATHOLOGIES}) == 45
    assert all(region in REGIONS for p in PATHOLOGIES for region in p.regions)


def test_the_data_file_is_a_package_resource():
    bundled = resources.files("novabench").joinpath("resources").joinpath(PATHOLOGY_RESOURCE)
    assert read_pathologies(bundled.read_text(encoding="utf-8")) == PATHOLOGIES


def _entry() -> dict:
    """A valid entry, as the data file writes one."""
    return {
        "name": "Balo concentric sclerosis",
        "regions": ["centrum semiovale", "periventricular white matter"],
        "shape": "round",
        "radius_mm": [8, 13.5],
        "t2": "hyperintense",
        "t1": "hypointense",
        "enhancement": "incomplete ring",
        "restricted_diffusion": True,
        "bilateral": False,
        "age": [20, 45],
        "histories": ["subacute hemiparesis and confusion"],
        "finding": "",
        "differentials": ["Tumefactive demyelination", "Glioblastoma"],
    }


def _document(*entries: object) -> str:
    return json.dumps({"pathologies": list(entries)})


def test_a_valid_entry_reads_with_floats_for_the_radius():
    (pathology,) = read_pathologies(_document(_entry()))
    assert pathology.radius_mm == (8.0, 13.5) and pathology.age == (20, 45)
    assert pathology.regions == ("centrum semiovale", "periventricular white matter")
    assert pathology.finding == "" and pathology.enhancement == "incomplete ring"


def _without(field: str) -> dict:
    entry = _entry()
    del entry[field]
    return entry


def _with(field: str, value: object) -> dict:
    entry = copy.deepcopy(_entry())
    entry[field] = value
    return entry


BAD_ENTRIES = [
    (_without("age"), "age", "missing"),
    (_with("colour", "grey"), "colour", "unknown field"),
    (
        _with("regions", ["frontal lobe", "cerebellopontine angle"]),
        r"regions\[1\]",
        "must be one of",
    ),
    (_with("regions", []), "regions", "expected a non-empty list"),
    (_with("regions", "frontal lobe"), "regions", "expected a non-empty list"),
    (_with("shape", "stellate"), "shape", "must be one of ovoid, round, lobulated"),
    (_with("t2", "isointense"), "t2", "must be one of"),
    (_with("enhancement", "patchy"), "enhancement", "must be one of"),
    (_with("radius_mm", [13, 8]), "radius_mm", "min 13.0 is above max 8.0"),
    (_with("radius_mm", [0, 8]), r"radius_mm\[0\]", "must be positive"),
    (_with("radius_mm", [8]), "radius_mm", r"expected \[min, max\]"),
    (_with("radius_mm", ["8", 13]), r"radius_mm\[0\]", "expected a real number"),
    (_with("radius_mm", [8, float("inf")]), r"radius_mm\[1\]", "expected a finite number"),
    (_with("age", [20.5, 45]), r"age\[0\]", "expected an integer"),
    (_with("age", [True, 45]), r"age\[0\]", "expected an integer"),
    (_with("age", [-1, 45]), r"age\[0\]", "must be >= 0"),
    (_with("bilateral", "yes"), "bilateral", "expected true or false"),
    (_with("restricted_diffusion", 1), "restricted_diffusion", "expected true or false"),
    (_with("histories", ["seizures", " "]), r"histories\[1\]", "empty text"),
    (_with("differentials", []), "differentials", "expected a non-empty list"),
    (_with("finding", None), "finding", "expected a string"),
    (_with("name", "  "), "name", "empty text"),
]


@pytest.mark.parametrize(("entry", "field", "problem"), BAD_ENTRIES)
def test_a_bad_entry_is_named_with_its_field(entry, field, problem):
    name = entry.get("name", "").strip()
    record = rf"entry 2 \({name}\)" if name else "entry 2"
    with pytest.raises(NovaInputError, match=rf"^mine\.json, {record}, field '{field}': {problem}"):
        read_pathologies(_document(_with("name", "Susac syndrome"), entry), source="mine.json")


def test_a_second_entry_of_the_same_name_is_refused():
    with pytest.raises(
        NovaInputError, match=r"entry 2 \(Balo concentric sclerosis\), field 'name'"
    ):
        read_pathologies(_document(_entry(), _entry()), source="mine.json")


def test_an_entry_that_is_not_an_object_is_named():
    with pytest.raises(NovaInputError, match=r"^mine\.json, entry 1: expected an object, got list"):
        read_pathologies(_document(["Balo concentric sclerosis"]), source="mine.json")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"pathologies": [', r"^mine\.json, line 1: not valid JSON"),
        (
            '[{"name": "MELAS"}]',
            r"^mine\.json, field 'pathologies': expected an object with a list",
        ),
        ('{"pathology": []}', r"field 'pathologies'"),
    ],
)
def test_a_file_of_another_shape_is_refused(text, expected):
    with pytest.raises(NovaInputError, match=expected):
        read_pathologies(text, source="mine.json")
