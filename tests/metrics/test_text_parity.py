"""Parity of our BLEU-4 / ROUGE-L / METEOR with sacrebleu, rouge_score and nltk on random captions."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from novabench.metrics import meteor as meteor_module
from novabench.metrics import text
from novabench.metrics.bleu import bleu_from_statistics_rows, bleu_statistics
from novabench.metrics.caption_pairs import CAPTION_WORDS, random_caption_pairs
from tests.lazy_import import LazyModule

# Imported by the first test that reads them (tests/lazy_import.py): nltk costs a worker
# 1.5 CPU s at collection.
nltk_meteor = LazyModule("nltk.translate.meteor_score")
rouge_scorer = LazyModule("rouge_score.rouge_scorer")

N_PAIRS = 300


@pytest.fixture(scope="module")
def pairs() -> tuple[list[str], list[str]]:
    return random_caption_pairs(N_PAIRS, seed=7)


def test_generator_covers_the_tricky_inputs(pairs):
    predictions, references = pairs
    joined = " ".join(predictions + references)
    assert "" in predictions
    for needle in ("-", "3.5", "œdème", "&amp;", "<skipped>", "FLAIR"):
        assert needle in joined
    vocabulary = set(CAPTION_WORDS)
    case_changed = [w for p in predictions for w in p.split() if w not in vocabulary]
    assert any(w.isupper() for w in case_changed) and any(w.istitle() for w in case_changed)
    assert any(prediction.isspace() for prediction in predictions)
    assert any("\n" in reference for reference in references)


def test_13a_tokens_match_sacrebleu(pairs):
    reference_tokenizer = Tokenizer13a()
    tricky = [
        "a.,b",
        "3.5,2",
        "1-2-3",
        "x.y",
        "end.",
        ",start",
        "a..b",
        "U.S.A.",
        "10-15mm",
        "T2*-w",
    ]
    for caption in [*pairs[0], *pairs[1], *tricky]:
        assert list(text.tokenize_13a(caption)) == reference_tokenizer(caption.rstrip()).split(), (
            caption
        )


def test_corpus_bleu_matches_sacrebleu(pairs):
    predictions, references = pairs
    expected = sacrebleu.corpus_bleu(predictions, [references]).score / 100
    assert 0 < expected < 1
    assert text.corpus_bleu(predictions, references) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 17])
def test_corpus_bleu_matches_sacrebleu_on_small_corpora(pairs, size):
    # Small corpora reach sacrebleu's special branches: no match at all, an
    # n-gram order with no hypothesis n-gram, smoothing, empty hypotheses.
    predictions, references = pairs
    rng = random.Random(size)
    for _ in range(40):
        chosen = rng.sample(range(N_PAIRS), size)
        hyps = [predictions[i] for i in chosen]
        refs = [references[i] for i in chosen]
        expected = sacrebleu.corpus_bleu(hyps, [refs]).score / 100
        assert text.corpus_bleu(hyps, refs) == pytest.approx(expected, abs=1e-9), (hyps, refs)


def test_bleu_special_cases_match_sacrebleu():
    cases = [
        ([""], ["a lesion"]),  # empty hypothesis: brevity penalty 0
        (["cyst"], ["a lesion"]),  # no match at all
        (["a b"], ["a b"]),  # no 3-grams: score 0
        (["a b c d"], ["a b c d"]),  # perfect
        (["a b c d e f"], ["a b c"]),  # longer than the reference: no brevity penalty
        (["a x b y"], ["a b a b"]),  # only unigram matches: exp smoothing on three orders
    ]
    for hyps, refs in cases:
        expected = sacrebleu.corpus_bleu(hyps, [refs]).score / 100
        assert text.corpus_bleu(hyps, refs) == pytest.approx(expected, abs=1e-12), (hyps, refs)


def test_bleu_of_identical_captions_is_exactly_one_where_sacrebleu_rounds_past_100():
    caption = (
        "An ill-defined T2 hyperintense lesion in the left frontal lobe with mild mass effect."
    )
    # sacrebleu's own rounding: 100 plus an ulp, which a fraction in [0, 1] must not copy.
    assert sacrebleu.corpus_bleu([caption], [[caption]]).score > 100
    assert text.corpus_bleu([caption], [caption]) == 1.0
    statistics = bleu_statistics([caption], [caption]).sum(axis=0)
    assert bleu_from_statistics_rows(np.stack([statistics, statistics])).tolist() == [1.0, 1.0]


def test_bleu_statistics_sum_like_sacrebleu(pairs):
    predictions, references = pairs
    reference_score = sacrebleu.corpus_bleu(predictions, [references])
    summed = text.bleu_statistics(predictions, references).sum(axis=0)
    assert summed[0] == reference_score.sys_len
    assert summed[1] == reference_score.ref_len
    assert summed[2:6].tolist() == list(reference_score.counts)
    assert summed[6:10].tolist() == list(reference_score.totals)


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_l_matches_rouge_score_per_pair(pairs, use_stemmer):
    predictions, references = pairs
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)
    expected = [scorer.score(r, p)["rougeL"].fmeasure for p, r in zip(predictions, references)]
    ours = text.rouge_l_scores(predictions, references, use_stemmer=use_stemmer)
    assert ours.tolist() == expected  # exact, pair by pair
    assert text.rouge_l_f1(predictions, references, use_stemmer=use_stemmer) == pytest.approx(
        float(np.mean(expected)), abs=1e-12
    )


def test_bit_parallel_lcs_matches_the_dynamic_programme():
    def lcs_table(first, second):
        previous = [0] * (len(second) + 1)
        for a in first:
            current = [0]
            for j, b in enumerate(second):
                current.append(previous[j] + 1 if a == b else max(previous[j + 1], current[j]))
            previous = current
        return previous[-1]

    rng = random.Random(3)
    for _ in range(300):
        first = [rng.choice("abcde") for _ in range(rng.randint(0, 70))]
        second = [rng.choice("abcdef") for _ in range(rng.randint(0, 70))]
        assert text.lcs_length(first, second) == lcs_table(first, second)


def test_meteor_matches_nltk_with_the_same_stand_in_wordnet(pairs):
    predictions, references = pairs
    expected = [
        nltk_meteor.meteor_score(
            [text.tokenize_meteor(r)], text.tokenize_meteor(p), wordnet=text.NO_SYNONYMS
        )
        for p, r in zip(predictions, references)
    ]
    ours = text.meteor_scores(predictions, references, variant="exact+stem")
    assert ours.tolist() == expected
    assert text.meteor(predictions, references, variant="exact+stem") == pytest.approx(
        np.mean(expected), abs=1e-12
    )
    assert max(expected) > 0.5  # the pairs do overlap: the comparison is not all zeros


# Words that collide only after Porter stemming, and a few repeated function words.
_METEOR_WORDS = (
    "lesion lesions enhancing enhanced enhancement enhance hyperintense hyperintensity "
    "mass masses cyst cystic the the a of in left right frontal lobe lobes infarct "
    "infarcts infarction restricted restriction diffusion diffuse t2 flair 3 5 mm"
).split()


def _meteor_token_pairs(seed: int, n_pairs: int) -> list[tuple[list[str], list[str]]]:
    """Reference and hypothesis token lists that reach every branch of the alignment."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n_pairs):
        reference = [rng.choice(_METEOR_WORDS) for _ in range(rng.randint(1, 25))]
        roll = rng.random()
        if roll < 0.05:
            hypothesis = []  # empty prediction
        elif roll < 0.08:
            hypothesis, reference = reference, []  # empty reference
        elif roll < 0.13:
            hypothesis = list(reference)  # identical
        elif roll < 0.25:
            hypothesis = rng.sample(reference, len(reference))  # reordered
        elif roll < 0.32:
            hypothesis, reference = [rng.choice(_METEOR_WORDS)], [rng.choice(_METEOR_WORDS)]
        else:  # an edited copy: words dropped, repeated, swapped for their stem relatives
            hypothesis = []
            for word in reference:
                action = rng.random()
                if action < 0.15:
                    continue
                hypothesis.append(rng.choice(_METEOR_WORDS) if action < 0.4 else word)
                if action > 0.9:
                    hypothesis.append(word)
        pairs.append((hypothesis, reference))
    return pairs


# Seed 0 in the fast suite; seeds 1-5 search further under `make test-slow` (suite28).
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(1, 6))]
)
def test_meteor_matches_nltk_on_tokens_with_repeats_reorders_and_stem_relatives(seed):
    from nltk.stem.porter import PorterStemmer

    stemmer = PorterStemmer()
    pairs = _meteor_token_pairs(seed, 400)
    predictions = [" ".join(hypothesis) for hypothesis, _ in pairs]
    references = [" ".join(reference) for _, reference in pairs]
    expected = [
        nltk_meteor.meteor_score([reference], hypothesis, stemmer=stemmer, wordnet=text.NO_SYNONYMS)
        for hypothesis, reference in pairs
    ]
    assert text.meteor_scores(predictions, references, variant="exact+stem").tolist() == expected
    # The cases the generator is meant to reach are there.
    assert 0.0 in expected and max(expected) > 0.99
    assert any(
        0 < score < 0.99 and sorted(h) == sorted(r) for score, (h, r) in zip(expected, pairs) if h
    )  # reordered words: full match, several chunks


def test_meteor_alignment_is_nltks_greedy_one():
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import align_words

    for hypothesis, reference in _meteor_token_pairs(11, 300):
        hypothesis = [w.upper() if i % 3 == 0 else w for i, w in enumerate(hypothesis)]
        expected, _, _ = align_words(
            hypothesis, reference, stemmer=PorterStemmer(), wordnet=text.NO_SYNONYMS
        )
        assert text.meteor_alignment(hypothesis, reference) == expected, (hypothesis, reference)


def test_meteor_by_hand_two_chunks():
    # Hypothesis "left frontal lesion", reference "lesion in left frontal lobe".
    # Exact stage, last hypothesis word first: lesion -> ref 0, frontal -> 3, left -> 2.
    # Sorted by hypothesis: (0, 2) (1, 3) (2, 0): 2 chunks. m = 3, P = 3/3, R = 3/5.
    # Fmean = P R / (0.9 P + 0.1 R) = 0.6 / 0.96 = 0.625; penalty = 0.5 (2/3)^3 = 4/27.
    # Score = (1 - 4/27) * 0.625 = 115/216.
    assert text.meteor_alignment(
        ["left", "frontal", "lesion"], ["lesion", "in", "left", "frontal", "lobe"]
    ) == [(0, 2), (1, 3), (2, 0)]
    score = text.meteor_scores(
        ["Left frontal lesion."], ["Lesion in left frontal lobe"], variant="exact+stem"
    )
    assert score.tolist() == pytest.approx([115 / 216], abs=1e-12)


def test_meteor_by_hand_stem_stage_after_exact_stage():
    # Hypothesis "lesions enhancing lesion", reference "enhanced lesion".
    # Exact: lesion (hyp 2) -> ref 1. Stem stage on what is left, hyp [lesions, enhancing]
    # (stems lesion, enhanc) against ref [enhanced] (stem enhanc): enhancing -> ref 0.
    # Alignment (1, 0) (2, 1): 1 chunk. m = 2, P = 2/3, R = 1.
    # Fmean = (2/3) / (0.9 * 2/3 + 0.1) = 20/21; penalty = 0.5 (1/2)^3 = 1/16.
    # Score = 15/16 * 20/21 = 25/28.
    score = text.meteor_scores(
        ["lesions enhancing lesion"], ["enhanced lesion"], variant="exact+stem"
    )
    assert score.tolist() == pytest.approx([25 / 28], abs=1e-12)


def test_meteor_by_hand_greedy_order_not_fewest_chunks():
    # Hypothesis "lesion cyst lesion", reference "lesion lesion cyst". nltk's greedy order:
    # hyp 2 (lesion) takes the last free lesion, ref 1; cyst -> ref 2; hyp 0 -> ref 0.
    # (0, 0) (1, 2) (2, 1): 3 chunks, although (0, 1) (1, 2) (2, 0) would make 2.
    # m = 3, P = R = 1, Fmean = 1, penalty = 0.5 (3/3)^3 = 0.5: score 0.5.
    assert text.meteor_alignment(["lesion", "cyst", "lesion"], ["lesion", "lesion", "cyst"]) == [
        (0, 0),
        (1, 2),
        (2, 1),
    ]
    score = text.meteor_scores(["lesion cyst lesion"], ["lesion lesion cyst"], variant="exact+stem")
    assert score.tolist() == pytest.approx([0.5], abs=1e-12)


def test_meteor_zero_rules():
    # Empty prediction, empty reference, blank text, no common word: 0.
    scores = text.meteor_scores(
        ["", "a lesion", "  ", "cyst"],
        ["a lesion", "", "a lesion", "a lesion"],
        variant="exact+stem",
    )
    assert scores.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert text.meteor_scores([], [], variant="exact+stem").shape == (0,)


def test_default_variant_scoring_never_imports_nltk():
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\n"
        "from novabench.metrics import text\n"
        "p, r = ['Ring-enhancing lesions, left'], ['a ring enhancing lesion on the left']\n"
        "assert text.meteor_scores(p, r, variant='exact+stem')[0] > 0.5\n"
        "assert text.rouge_l_scores(p, r, use_stemmer=True)[0] > 0.5\n"
        "assert text.meteor(p, r, variant='exact+stem') > 0.5\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nltk'))\n"
    )
    source = Path(text.__file__).resolve().parents[2]
    path = os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")])
    output = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=path),
    )
    assert output.stdout.strip() == "[]"


def test_meteor_stem_stage_runs_without_wordnet():
    # "lesions" and "lesion" share the Porter stem: matched in the stem stage.
    # 1 match of 1 word each side: P = R = 1, Fmean = 1, one chunk:
    # penalty = 0.5 * (1/1) ** 3 = 0.5 -> 0.5.
    assert text.meteor_scores(["lesions"], ["lesion"], variant="exact+stem").tolist() == [0.5]


def test_meteor_wordnet_variant_refuses_when_the_corpus_is_missing(monkeypatch):
    from novabench.errors import NovaInputError

    # as if not installed
    monkeypatch.setattr(meteor_module, "_wordnet_files_present", lambda: False)
    with pytest.raises(NovaInputError, match="WordNet 3.0 corpus, but .* not installed"):
        text.meteor_scores(["a"], ["a"], variant="wordnet")


def test_tokenize_meteor_rule():
    assert text.tokenize_meteor("T2-weighted_FLAIR, 3.5cm ÉDÈME") == [
        "t2",
        "weighted",
        "flair",
        "3",
        "5cm",
        "édème",
    ]


class _Lemma:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synset:
    def __init__(self, *names: str) -> None:
        self._lemmas = [_Lemma(name) for name in names]

    def lemmas(self) -> list[_Lemma]:
        return self._lemmas


class _TinyWordNet:
    """A WordNet stand-in that knows one synonym pair, to exercise the 'wordnet' variant offline."""

    def synsets(self, word: str, *args: object, **kwargs: object) -> list[_Synset]:
        return [_Synset("tumour", "neoplasm")] if word in ("tumour", "neoplasm") else []

    def get_version(self) -> str:
        return "3.0"


def test_wordnet_variant_is_used_when_nltk_finds_the_corpus(monkeypatch):
    import nltk.corpus

    tiny = _TinyWordNet()
    monkeypatch.setattr(nltk.corpus, "wordnet", tiny)
    monkeypatch.setattr(meteor_module, "_wordnet_files_present", lambda: True)  # as if installed
    meteor_module._wordnet_reader.cache_clear()
    try:
        assert text.meteor_variant() == "wordnet"
        with_synonyms = text.meteor_scores(["neoplasm"], ["tumour"])
        expected = nltk_meteor.meteor_score([["tumour"]], ["neoplasm"], wordnet=tiny)
        assert (
            with_synonyms.tolist() == [expected] and expected == 0.5
        )  # matched only by the synonym stage
        assert text.meteor_scores(["neoplasm"], ["tumour"], variant="exact+stem").tolist() == [0.0]
    finally:
        monkeypatch.undo()
        meteor_module._wordnet_reader.cache_clear()


def test_the_cheap_variant_decision_equals_nltks_own_probe_here():
    # The decision reads the file system; nltk's probe loads the corpus. Same answer.
    meteor_module._wordnet_reader.cache_clear()
    try:
        probed = "wordnet" if meteor_module._wordnet_reader() is not None else "exact+stem"
        assert text.meteor_variant() == probed
        assert meteor_module._wordnet_files_present() == (probed == "wordnet")
    finally:
        meteor_module._wordnet_reader.cache_clear()


def test_nltk_data_folders_are_nltks_own_list(monkeypatch, tmp_path):
    import sys

    import nltk.data

    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    monkeypatch.delitem(sys.modules, "nltk.data")  # as before nltk is imported
    rebuilt = meteor_module._nltk_data_paths()
    assert rebuilt[0] == str(tmp_path)
    # nltk built its list at import, without our NLTK_DATA: the rest must be the same.
    assert rebuilt[1:] == [p for p in nltk.data.path if p != str(tmp_path)][: len(rebuilt) - 1]


def test_wordnet_files_in_a_data_folder_are_found(monkeypatch, tmp_path):
    (tmp_path / "corpora").mkdir()
    monkeypatch.setattr(meteor_module, "_nltk_data_paths", lambda: [str(tmp_path)])
    assert not meteor_module._wordnet_files_present()
    (tmp_path / "corpora" / "wordnet.zip").write_bytes(b"")
    assert meteor_module._wordnet_files_present()
