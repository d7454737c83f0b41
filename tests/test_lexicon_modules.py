"""The lexicon package: normalisation, statements and the lexicon each in a module; old paths kept."""

from __future__ import annotations

from novabench.lexicon import diagnoses, normalization, statements

# Every public name novabench.lexicon.diagnoses had before the split, and its owner now.
MOVED = {
    "normalize_diagnosis": normalization,
    "diagnosis_aliases": normalization,
    "read_diagnosis": statements,
    "DiagnosisReading": statements,
}
STAYED = ["DiagnosisEntry", "DiagnosisLexicon", "LEXICON_VERSION", "load_diagnosis_lexicon"]


def test_moved_names_are_the_owning_modules_objects():
    for name, owner in MOVED.items():
        assert name in owner.__all__, name
        assert getattr(diagnoses, name) is getattr(owner, name), name


def test_diagnoses_still_exports_every_name_it_had():
    assert sorted(diagnoses.__all__) == sorted([*MOVED, *STAYED])


def test_the_lexicon_uses_the_same_normalisation_as_its_users():
    # "Devic's disease" is a synonym in the table; the statement reader affirms it
    # and the lexicon finds it by the normalised text.
    reading = statements.read_diagnosis("Devic's disease, toxoplasmosis ruled out")
    entry = diagnoses.load_diagnosis_lexicon().lookup(reading.affirmed)
    assert entry is not None and entry.name == "neuromyelitis optica spectrum disorder"
    assert reading.negated == ("toxoplasmosis ruled out",)
