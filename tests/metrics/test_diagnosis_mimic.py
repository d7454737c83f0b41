"""A mimic of a disease is not that disease (issue 20 leftover).

"Meningioma mimic" and "mimic of meningioma" matched meningioma on main cc36a45 (checked by
running this file against it); the guards marked as such passed there too.
"""

from __future__ import annotations

import pytest

from novabench.metrics.diagnosis_matcher import LexiconDiagnosisMatcher


@pytest.fixture(scope="module")
def matcher() -> LexiconDiagnosisMatcher:
    return LexiconDiagnosisMatcher()


@pytest.mark.parametrize(
    "candidate",
    ["Meningioma mimic", "a meningioma mimic", "Mimic of meningioma", "meningioma mimics"],
)
def test_a_mimic_is_not_the_disease_it_mimics(
    matcher: LexiconDiagnosisMatcher, candidate: str
) -> None:
    assert not matcher("Meningioma", candidate)


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Dural lymphoma", "Dural lymphoma, a meningioma mimic"),
        ("Dural lymphoma", "Dural lymphoma (meningioma mimic)"),  # guard
        ("Lymphoma", "Lymphoma, a mimic of meningioma"),  # guard
        ("Lymphoma", "Lymphoma mimicking meningioma"),  # guard
        ("Meningioma", "Meningioma"),  # guard
    ],
)
def test_the_disease_named_beside_its_mimic_still_matches(
    matcher: LexiconDiagnosisMatcher, reference: str, candidate: str
) -> None:
    assert matcher(reference, candidate)
