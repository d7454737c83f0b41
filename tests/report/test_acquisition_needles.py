"""parse_acquisition searches a pattern only where one of its words stands; the same groups.

``novabench.report.breakdowns`` keeps, per sequence, contrast and plane pattern, words of
which every match holds one (``_NEEDLES``) and skips the search where none stands. Each case
here holds that shortcut to the plain rule (every pattern searched), on every spelling the
patterns know and on seeded random captions made of their fragments.
"""

from __future__ import annotations

import random

import pytest

from novabench.report import breakdowns
from novabench.report.breakdowns import parse_acquisition

# Every alternative of every pattern, spelt in each way the pattern allows.
SPELLINGS = {
    "FLAIR": [
        "flair",
        "fluid-attenuated inversion recovery",
        "fluid attenuated inversion recovery",
    ],
    "DWI/ADC": [
        "dwi",
        "adc",
        "diffusion",
        "diffusion-weighted",
        "diffusion weighted",
        "apparent diffusion coefficient",
        "b1000",
        "b 1000",
    ],
    "SWI/GRE": [
        "swi",
        "swan",
        "susceptibility",
        "susceptibility-weighted",
        "susceptibility weighted",
        "gre",
        "gradient-echo",
        "gradient echo",
        "t2*",
        "t2 *",
        "t2-star",
        "t2 star",
        "t2*-weighted",
        "t2 * weighted",
    ],
    "T1": [
        "t1",
        "t1w",
        "t1wi",
        "t1-weighted",
        "t1 weighted",
        "t1weighted",
        "mprage",
        "mp-rage",
        "mp rage",
        "spgr",
        "bravo",
    ],
    "T2": ["t2", "t2w", "t2wi", "t2-weighted", "t2 weighted", "t2weighted"],
    "PD": ["pd", "pdw", "pd-weighted", "pd weighted", "proton density", "proton-density"],
    "STIR": ["stir"],
    "MRA": ["mra", "mr angiography", "time-of-flight", "time of flight", "tof"],
    "perfusion": [
        "perfusion",
        "dsc",
        "dce",
        "asl",
        "arterial spin labeling",
        "arterial spin labelling",
    ],
    "contrast": [
        "contrast",
        "gadolinium",
        "gd",
        "post-gad",
        "postgad",
        "post gad",
        "enhanced",
        "c+",
        "+c",
        "post-contrast",
        "postcontrast",
        "post contrast",
        "t1+c",
        "t1 + c",
        "t1c",
    ],
    "axial": ["axial", "transverse", "transaxial"],
    "coronal": ["coronal"],
    "sagittal": ["sagittal"],
}

PATTERNS = {
    **dict(breakdowns._SEQUENCE_PATTERNS),
    "contrast": breakdowns._CONTRAST,
    **dict(breakdowns._PLANE_PATTERNS),
}


def plain_parse_acquisition(caption: str | None) -> tuple[str | None, str | None]:
    """parse_acquisition as written before the shortcut: every pattern searched."""
    if not caption:
        return None, None
    text = caption.lower()
    sequences = {label for label, pattern in breakdowns._SEQUENCE_PATTERNS if pattern.search(text)}
    if "FLAIR" in sequences:
        sequences.discard("T2")
    if breakdowns._CONTRAST.search(text) and (not sequences or "T1" in sequences):
        sequences.discard("T1")
        sequences.add("T1 with contrast")
    planes = {label for label, pattern in breakdowns._PLANE_PATTERNS if pattern.search(text)}
    return breakdowns._one(sequences), breakdowns._one(planes)


def test_every_pattern_has_its_words() -> None:
    assert set(breakdowns._NEEDLES) == set(PATTERNS) == set(SPELLINGS)


@pytest.mark.parametrize("label", sorted(SPELLINGS))
def test_every_spelling_matches_and_holds_one_of_its_words(label: str) -> None:
    for spelling in SPELLINGS[label]:
        for caption in (spelling, f"Image: {spelling}.", f"the {spelling} image (x)"):
            assert PATTERNS[label].search(caption), (label, caption)
            assert any(needle in caption for needle in breakdowns._NEEDLES[label]), caption


def random_captions(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    fragments = [spelling for spellings in SPELLINGS.values() for spelling in spellings]
    fragments += [
        "lesion",
        "of",
        "the",
        "left",
        "t10",
        "level",
        "a",
        "1000",
        "+",
        "*",
        "-",
        "image",
        "shows",
        "enhancement",
        "gadget",
        "swirl",
        "tofu",
        "pdf",
    ]
    captions = []
    for _ in range(count):
        words = rng.choices(fragments, k=rng.randint(0, 8))
        separators = [rng.choice([" ", "", ", ", "-", "/", " (", ") "]) for _ in words]
        text = "".join(w + s for w, s in zip(words, separators))
        captions.append(text.upper() if rng.random() < 0.2 else text)
    return captions


@pytest.mark.parametrize("seed", range(3))
def test_parse_acquisition_equals_the_plain_rule(seed: int) -> None:
    for caption in random_captions(seed, 3000):
        assert parse_acquisition(caption) == plain_parse_acquisition(caption), caption


def test_a_caption_without_any_word_is_not_searched(monkeypatch) -> None:
    searched: list[str] = []

    class Spy:
        def __init__(self, pattern):
            self.pattern = pattern

        def search(self, text):
            searched.append(text)
            return self.pattern.search(text)

    spied = tuple((label, Spy(pattern)) for label, pattern in breakdowns._SEQUENCE_PATTERNS)
    monkeypatch.setattr(breakdowns, "_SEQUENCE_PATTERNS", spied)
    assert parse_acquisition("A lesion of the left thalamus.") == (None, None)
    assert searched == []
    assert parse_acquisition("Axial FLAIR") == ("FLAIR", "axial")
    assert searched == ["axial flair"]  # FLAIR's search only
