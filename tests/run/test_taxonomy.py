"""Pathology taxonomy: every lexicon entry has a category; hand cases; user mapping files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.lexicon.diagnoses import load_diagnosis_lexicon
from novabench.lexicon.taxonomy import (
    PATHOLOGY_CATEGORIES,
    CategoryMap,
    assign_category,
    category_table,
    load_category_map,
    pathology_category,
)


def test_every_lexicon_entry_has_exactly_one_category() -> None:
    names = [entry.name for entry in load_diagnosis_lexicon().entries]
    table = category_table()
    assert sorted(table) == sorted(names)  # none missing, none unknown (a renamed entry fails)
    assert set(table.values()) <= set(PATHOLOGY_CATEGORIES)
    for name in names:
        # Through the public function, by the canonical name itself.
        assert pathology_category(name) == table[name]
    # Every category but "other"'s catch-all role is actually used by some entry.
    assert set(table.values()) == set(PATHOLOGY_CATEGORIES)


@pytest.mark.parametrize(
    ("diagnosis", "category"),
    [
        # Whole names, synonyms, abbreviations, British spelling.
        ("Glioblastoma", "neoplastic"),
        ("GBM", "neoplastic"),
        ("Dysembryoplastic neuroepithelial tumour", "neoplastic"),
        ("Primary central nervous system lymphoma", "neoplastic"),
        ("CADASIL", "vascular"),
        ("Cavernous malformation", "vascular"),
        ("Posterior reversible encephalopathy syndrome", "vascular"),
        ("Tuberculoma", "infectious"),
        ("Cerebral toxoplasmosis", "infectious"),
        ("PML", "infectious"),  # demyelinating, but caused by JC virus
        ("Devic's disease", "inflammatory and demyelinating"),
        ("Susac syndrome", "inflammatory and demyelinating"),
        ("Primary angiitis of the central nervous system", "inflammatory and demyelinating"),
        ("Wernicke encephalopathy", "metabolic and toxic"),
        ("Osmotic demyelination syndrome", "metabolic and toxic"),
        ("X-linked adrenoleukodystrophy", "metabolic and toxic"),
        ("Radiation necrosis", "metabolic and toxic"),
        ("Chiari I malformation", "congenital and developmental"),
        ("NF-1", "congenital and developmental"),
        ("Arachnoid cyst", "congenital and developmental"),
        ("Diffuse axonal injury", "traumatic"),
        ("Epidural haematoma", "traumatic"),
        ("Creutzfeldt-Jakob disease", "degenerative"),
        ("Hypertrophic olivary degeneration", "degenerative"),
        ("Normal pressure hydrocephalus", "other"),
        # A name inside a longer text: the first affirmed mention.
        ("Nocardia brain abscess", "infectious"),
        ("Glioblastoma, IDH-wildtype, left temporal lobe", "neoplastic"),
        ("Anti-LGI1 limbic encephalitis", "inflammatory and demyelinating"),
        ("Metastasis (toxoplasmosis ruled out)", "neoplastic"),
        # Nothing the lexicon knows; placeholders.
        ("Schistosomal granuloma of the brain", "other"),
        ("Final diagnosis not found.", "other"),
    ],
)
def test_hand_cases(diagnosis: str, category: str) -> None:
    assert pathology_category(diagnosis) == category


def test_assignment_says_how_it_was_reached() -> None:
    assert assign_category("GBM").rule == "lexicon"
    mention = assign_category("Streptococcus brain abscess")
    assert (mention.entry, mention.rule) == ("brain abscess", "lexicon-mention")
    assert assign_category("Unheard-of thing").rule == "unknown"
    assert assign_category(None).rule == assign_category("  ").rule == "placeholder"
    with pytest.raises(NovaInputError, match="string"):
        pathology_category(None)  # type: ignore[arg-type]


def test_user_map_overrides_by_case_then_by_diagnosis(tmp_path: Path) -> None:
    path = tmp_path / "map.csv"
    path.write_text(
        "case_id,diagnosis,category\n"
        "case0002,,Vascular\n"  # any case
        ",Schistosomal granuloma of the brain,infectious\n"
        ",Glioblastoma,metabolic_and_toxic\n",  # "_" for spaces
        encoding="utf-8",
    )
    mapping = load_category_map(path)
    assert len(mapping) == 3
    by_case = assign_category("Glioblastoma", case_id="case0002", category_map=mapping)
    assert (by_case.category, by_case.rule) == ("vascular", "map-case")
    by_name = assign_category("glioblastoma", case_id="case0001", category_map=mapping)
    assert (by_name.category, by_name.rule) == ("metabolic and toxic", "map-diagnosis")
    assert (
        assign_category("Schistosomal granuloma of the brain", category_map=mapping).category
        == "infectious"
    )
    # Not in the map: the lexicon decides.
    assert assign_category("Tuberculoma", category_map=mapping).rule == "lexicon"


def test_user_map_json_forms(tmp_path: Path) -> None:
    nested = tmp_path / "nested.json"
    nested.write_text(
        json.dumps({"case_id": {"case0001": "traumatic"}, "diagnosis": {"X": "other"}})
    )
    rows = tmp_path / "rows.json"
    rows.write_text(
        json.dumps(
            [
                {"case_id": "case0001", "category": "traumatic"},
                {"diagnosis": "X", "category": "other"},
            ]
        )
    )
    for path in (nested, rows):
        mapping = load_category_map(path)
        assert dict(mapping.by_case) == {"case0001": "traumatic"}
        assert dict(mapping.by_diagnosis) == {"x": "other"}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "bad.csv",
            "case_id,category\ncase0001,neoplastic\ncase0002,tumours\n",
            r"line 3.*tumours",
        ),
        ("bad.csv", "case_id,category\ncase0001,neoplastic\ncase0001,vascular\n", "mapped twice"),
        ("bad.csv", "case_id,diagnosis,category\ncase0001,Glioma,neoplastic\n", "exactly one"),
        ("bad.csv", "id,category\ncase0001,neoplastic\n", "header"),
        ("bad.json", json.dumps({"diagnosis": {"Glioma": "cancer"}}), r"'Glioma'.*cancer"),
        # Counted from 1 with its id (was "entry 0"): the second entry of the list.
        (
            "bad.json",
            json.dumps(
                [{"case_id": "c0", "category": "vascular"}, {"case_id": "c1", "category": "x"}]
            ),
            r"entry 2 \(c1\).*'x'",
        ),
        ("bad.json", json.dumps([{"case_id": "c0", "category": "vascular"}, 3]), r"entry 2: each"),
        ("bad.json", "{", "not valid JSON"),
        ("bad.json", json.dumps({"cases": {}}), "expected"),
        ("bad.txt", "", r"\.csv or \.json"),
    ],
)
def test_bad_map_files_are_refused_naming_where(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NovaInputError, match=message) as error:
        load_category_map(path)
    assert str(path) in str(error.value)


def test_unknown_category_in_code_is_refused() -> None:
    with pytest.raises(NovaInputError, match="unknown category"):
        CategoryMap(by_case={"case0001": "tumour"})
