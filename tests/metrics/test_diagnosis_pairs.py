"""Agreement floors of the lexicon matcher on the hand-judged diagnosis pairs.

The pairs (``tests/data/diagnosis_pairs*.tsv``) were judged by the paper's lenient rules
without running the matcher; ``scripts/measure_matcher.py`` prints the full table. The
floors sit a little below the figures measured when the matcher last changed, so a
regression fails here; raise them when the matcher improves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from novabench.metrics.diagnosis import LexiconDiagnosisMatcher
from tests.scripts import load_script

measure_matcher = load_script("measure_matcher")

_DATA = Path(__file__).resolve().parents[1] / "data"

# (file, overall agreement floor, false-accept ceiling, per-category agreement floor or None)
# Measured (issue 20): diagnosis_pairs 99.5 % (747 pairs), 0/292 false accepts, every
# category >= 97 %; with the rare-disease lexicon (650 entries) 99.8 % of 888 pairs, 0/351;
# held-out 98.2 % (167 pairs), 0/60 false accepts, every category >= 90 %;
# held-out 2 (365 pairs of rare diseases, written before the issue-20 changes) 77.5 %, 5/185
# false accepts, eponyms 30.8 % and synonyms 38.9 % the weakest; held-out 3 (92 pairs, written
# after them) 70.7 %, 2/51 false accepts, too few pairs per category for a per-category floor.
# With the 650-entry lexicon, measured by the lead (its author saw none of the held-out
# files): held-out 2 86.0 %, 2/185; held-out 3 80.4 %, 1/51; held-out 4 (382 pairs, sealed:
# written by someone who read no code or lexicon, measured once after the lexicon was frozen)
# 79.8 %, 0/189 false accepts (66.0 %, 1/189 with the 405-entry lexicon); synonyms 45.9 %.
# Lexicon 4 (issue 20, 867 entries, merged diseases split, general rules), tuned on all five
# files, which are development sets from then on: 99.9 % (0/351), 98.8 % (0/60), 100 %
# (0/185), 100 % (0/51), 100 % (0/189); the proxies pairs (150, written before the matcher
# ran on them: 85.3 %, 2/54 at first) 99.3 %, 0/52.
# Held-out 5 (356 pairs, 153 related-but-different; sealed: written by someone who read no
# code or lexicon, measured once by the lead on lexicon 3 and once on lexicon 4): 65.7 % ->
# 68.8 %, 1/153 false accepts either way; synonyms 27.4 % -> 37.9 %, eponyms 22.2 %,
# abbreviations 34.4 %. What a lexicon reaches on rare diseases it was not written for.
# Lexicon 5 (issue 20, 944 entries, rules for model-style answers; held-out 5 a development
# set): 99.9 % (0/351), 99.4 % (0/60), 100 % (0/185), 100 % (0/51), 100 % (0/189), proxies
# 99.3 % (0/52), held-out 5 68.8 % -> 92.1 %, 1/153 -> 0/153 false accepts. Held-out m6 (170
# model-style answers on brain MRI rare diseases, written before the lexicon-5 changes and
# measured only before and after them): 98.2 %, 1/55 false accepts, before and after alike.
# Held-out 6 (329 model-style answers to rare-disease cases, 166 related-but-different;
# sealed: written by someone who read no code or lexicon, measured once by the lead on
# lexicon 4 and once on lexicon 5): 86.0 % -> 87.5 %, 0/166 false accepts either way;
# synonyms 65.5 % -> 70.9 %, abbreviations 65.2 % -> 69.6 %, specificity 78.9 %. Tuning on
# held-out 5 (68.8 % -> 92.1 %) carried over to unseen answers as 1.5 points.
# Lexicon 6 (issue 20, 1055 entries: the rare-disease vocabulary family by family, "X, given
# Y", a choice between alternatives; held-out 6 a development set): 99.9 % (0/351), 99.4 %
# (0/60), 100 % (0/185), 100 % (0/51), 100 % (0/189), proxies 99.3 % -> 100 % (0/52), held-out
# 5 92.1 % -> 97.8 % (0/153; its misses guided the head and neck entries), m6 98.2 % -> 99.4 % (1/55), held-out 6 87.5 % -> 96.0 % (0/166).
# m7 (678 model-style answers over the families, 194 different, written by the lexicon-6
# author before any lexicon-6 change, then tuned on): 93.1 %, 2/194 false accepts on lexicon
# 5 -> 97.9 %, 0/194.
# Held-out 7 (325 model-style answers over 129 rare-disease references none of the earlier
# files names, 141 related-but-different; sealed: written by someone who read no code or
# lexicon, measured once by the lead on lexicon 5 and once on lexicon 6): 76.0 % -> 79.4 %,
# 1/141 false accepts either way; synonyms 41.5 % -> 47.7 %, abbreviations 58.3 % -> 66.7 %,
# clauses 64.7 % -> 67.6 %. Lexicon 6's own pre-change set (m7, 93.1 % -> 97.9 %) carried over
# to unseen answers as 3.4 points: a lexicon is far from the 97 % target on answers it was
# not written for.
FLOORS = [
    ("diagnosis_pairs.tsv", 0.995, 0.003, 0.97),
    ("diagnosis_pairs_heldout.tsv", 0.98, 0.0, 0.9),
    ("diagnosis_pairs_heldout2.tsv", 0.99, 0.006, 0.95),
    ("diagnosis_pairs_heldout3.tsv", 0.98, 0.0, None),
    ("diagnosis_pairs_heldout4.tsv", 0.99, 0.006, None),
    ("diagnosis_pairs_proxies.tsv", 0.98, 0.0, None),
    ("diagnosis_pairs_heldout5.tsv", 0.975, 0.0, None),
    ("diagnosis_pairs_heldout_m6.tsv", 0.98, 0.02, None),
    ("diagnosis_pairs_heldout6.tsv", 0.95, 0.0, None),
    ("diagnosis_pairs_m7.tsv", 0.975, 0.0, None),
    ("diagnosis_pairs_heldout7.tsv", 0.79, 0.008, None),
]


@pytest.fixture(scope="module")
def matcher() -> LexiconDiagnosisMatcher:
    return LexiconDiagnosisMatcher()


@pytest.mark.parametrize(("filename", "agreement", "false_accepts", "per_category"), FLOORS)
def test_matcher_agrees_with_the_judged_pairs(
    matcher: LexiconDiagnosisMatcher,
    filename: str,
    agreement: float,
    false_accepts: float,
    per_category: float | None,
) -> None:
    pairs = measure_matcher.read_pairs(_DATA / filename)
    by_category, overall, errors = measure_matcher.measure(pairs, matcher)
    shown = "\n".join(
        f"[{p.category}] expected {p.expected}: {p.reference!r} vs {p.prediction!r}"
        for p, _ in errors
    )
    assert overall.agreement >= agreement, shown
    assert overall.false_accept_rate <= false_accepts, shown
    if per_category is not None:
        for name, result in by_category.items():
            assert result.agreement >= per_category, (name, shown)


def test_the_pairs_cover_every_category_in_both_verdicts() -> None:
    pairs = measure_matcher.read_pairs(_DATA / "diagnosis_pairs.tsv")
    categories = {p.category for p in pairs}
    assert categories == {
        "abbreviation",
        "clause",
        "different",
        "eponym",
        "location",
        "negation",
        "specificity",
        "spelling",
        "synonym",
        "vague",
    }
    assert len(pairs) >= 600
    assert sum(not p.expected for p in pairs) >= 200


def test_read_pairs_refuses_a_malformed_row(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text(
        "category\treference\tprediction\texpected\nsynonym\tGBM\tglioblastoma\tyes\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="row 2"):
        measure_matcher.read_pairs(path)
