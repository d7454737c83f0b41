"""Captioning behaviours that the mutation check (scripts/mutation_check.py) found unpinned.

Each test names the behaviour; expected numbers are worked out by hand beside them, or are the
slow reference path of the same module (aggregate on one resample) against the fast one.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pytest

from novabench.errors import NovaInputError
from novabench.metrics.caption_pairs import random_caption_pairs
from novabench.metrics.captioning import (
    prepare_captioning,
    score_captioning,
    settle_scoring_options,
)
from novabench.metrics.keywords import CaptionKeywords
from tests.metrics.test_meteor_variants import with_wordnet, without_wordnet  # noqa: F401

NOT_KEYWORDS = ("BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1")


def keywords(modality: set[str], clinical: set[str], abnormal: bool | None) -> CaptionKeywords:
    return CaptionKeywords(frozenset(modality), frozenset(clinical), abnormal)


# What a keyword judge reads in each caption (both captions of a pair in one request).
JUDGED = {
    "Axial FLAIR: hyperintense lesion of the left thalamus.": keywords(
        {"axial", "flair"}, {"hyperintense", "lesion", "thalamus", "left"}, True
    ),
    "Axial FLAIR image showing a thalamic lesion.": keywords(
        {"axial", "flair"}, {"lesion", "thalamus"}, True
    ),
    "Sagittal T1: normal pituitary.": keywords({"sagittal", "t1"}, {"pituitary"}, False),
    "Coronal T2: cyst in the pituitary.": keywords({"coronal", "t2"}, {"pituitary", "cyst"}, True),
}


class TableJudge:
    """A keyword judge answering from a table (the request/parse path has its own tests)."""

    description = "table judge"

    def __init__(self, answer: dict[str, CaptionKeywords]) -> None:
        self.answer = answer
        self.seen: list[tuple[str, str]] = []

    def extract_pairs(
        self, pairs: Sequence[tuple[str, str]], *, labels: Sequence[str] | None = None
    ) -> list[tuple[CaptionKeywords, CaptionKeywords]]:
        self.seen = list(pairs)
        return [
            (self.answer[reference], self.answer[prediction]) for reference, prediction in pairs
        ]


def test_a_keyword_judge_reads_the_reference_first_and_the_prediction_second() -> None:
    references = [
        "Axial FLAIR: hyperintense lesion of the left thalamus.",
        "Sagittal T1: normal pituitary.",
    ]
    predictions = [
        "Axial FLAIR image showing a thalamic lesion.",
        "Coronal T2: cyst in the pituitary.",
    ]
    judge = TableJudge(JUDGED)
    result = score_captioning(predictions, references, exclude=NOT_KEYWORDS, keyword_judge=judge)
    assert judge.seen == list(zip(references, predictions))
    # Clinical: pair 0 R {hyperintense, lesion, thalamus, left} P {lesion, thalamus}: TP 2 FP 0
    # FN 2 -> 4/6; pair 1 R {pituitary} P {pituitary, cyst}: TP 1 FP 1 FN 0 -> 2/3. Mean 2/3.
    assert result["ClinicalF1"] == pytest.approx(2 / 3)
    # Modality: pair 0 equal -> 1; pair 1 {sagittal, t1} vs {coronal, t2}: 0. Mean 1/2.
    assert result["ModalityF1"] == pytest.approx(0.5)
    # Labels: pair 0 abnormal/abnormal (TP); pair 1 reference normal, prediction abnormal (FP).
    # 2TP / (2TP + FP + FN) = 2 / 3. Swapping the sides would give an FN instead: the same 2/3,
    # so the sides are also checked on the evaluation itself.
    assert result["BinaryF1"] == pytest.approx(2 / 3)
    assert result["keyword_extractor"] == "table judge"
    evaluation = prepare_captioning(
        predictions, references, exclude=NOT_KEYWORDS, keyword_judge=TableJudge(JUDGED)
    )
    assert evaluation.reference_keywords == [JUDGED[caption] for caption in references]
    assert evaluation.prediction_keywords == [JUDGED[caption] for caption in predictions]
    assert evaluation.reference_labels.tolist() == [1, 0]
    assert evaluation.prediction_labels.tolist() == [1, 1]


def test_a_judge_that_loses_a_pair_is_refused() -> None:
    class ShortJudge(TableJudge):
        def extract_pairs(self, pairs, *, labels=None):
            return super().extract_pairs(pairs, labels=labels)[:-1]

    with pytest.raises(NovaInputError, match="returned 1 results for 2 pairs"):
        score_captioning(
            ["Axial FLAIR image showing a thalamic lesion.", "Coronal T2: cyst in the pituitary."],
            [
                "Axial FLAIR: hyperintense lesion of the left thalamus.",
                "Sagittal T1: normal pituitary.",
            ],
            exclude=NOT_KEYWORDS,
            keyword_judge=ShortJudge(JUDGED),
        )


def test_a_judge_answering_plain_strings_is_refused_naming_the_pair_and_side() -> None:
    class StringJudge:
        def extract_pairs(self, pairs, *, labels=None):
            return [("lesion", "lesion") for _ in pairs]

    with pytest.raises(NovaInputError, match="returned str, not CaptionKeywords") as info:
        score_captioning(
            ["a lesion"], ["a lesion"], exclude=NOT_KEYWORDS, keyword_judge=StringJudge()
        )
    assert info.value.record == "example 0"
    assert info.value.field == "references"


def test_a_judge_without_extract_pairs_or_beside_an_extractor_is_refused() -> None:
    with pytest.raises(NovaInputError, match="extract_pairs"):
        score_captioning(["a"], ["a"], exclude=NOT_KEYWORDS, keyword_judge=object())
    with pytest.raises(NovaInputError, match="either a keyword extractor or a keyword judge"):
        score_captioning(
            ["a"],
            ["a"],
            exclude=NOT_KEYWORDS,
            keyword_judge=TableJudge(JUDGED),
            keyword_extractor=lambda caption: keywords(set(), set(), None),
        )


def test_keyword_averaging_is_reported_only_when_a_keyword_f1_ran() -> None:
    binary_only = score_captioning(
        ["Axial T2: cyst."],
        ["Axial T2: a cyst."],
        exclude=[*NOT_KEYWORDS, "ClinicalF1", "ModalityF1", "SequencePlaneF1"],
    )
    assert "BinaryF1-lexicon" in binary_only and "keyword_averaging" not in binary_only
    clinical_only = score_captioning(
        ["Axial T2: cyst."],
        ["Axial T2: a cyst."],
        exclude=[*NOT_KEYWORDS, "ModalityF1", "SequencePlaneF1", "BinaryF1"],
        keyword_averaging="micro",
    )
    assert clinical_only["keyword_averaging"] == "micro"


def test_a_breakdown_group_drawing_few_of_many_pairs_scores_as_on_its_own() -> None:
    # A group of 6 pairs among 80 (a breakdown's resamples draw from a few pairs only): the
    # fast path counts over the drawn pairs alone; each row must equal aggregate() on it.
    predictions, references = random_caption_pairs(80, seed=21)
    evaluation = prepare_captioning(predictions, references, exclude=["BERTScore-F1"])
    group = np.array([3, 17, 18, 40, 41, 77])
    rows = np.random.default_rng(2).choice(group, size=(25, len(group)))
    many = evaluation.aggregate_resamples(rows)
    for row, drawn in enumerate(rows):
        one = evaluation.aggregate(drawn)
        for name, value in one.items():
            assert np.isnan(value) if np.isnan(many[name][row]) else value == many[name][row], name


def test_a_single_resample_of_many_pairs_adds_keyword_f1s_left_to_right() -> None:
    # One resample alone (a single row) must give the bits of aggregate() on it: numpy's
    # pairwise summation would add 240 per-pair F1s in another order.
    predictions, references = random_caption_pairs(240, seed=8)
    evaluation = prepare_captioning(
        predictions, references, exclude=["BERTScore-F1", "BLEU-4", "ROUGE-L", "METEOR"]
    )
    rng = np.random.default_rng(5)
    for _ in range(4):
        drawn = rng.integers(0, 240, size=240)
        one = evaluation.aggregate(drawn)
        many = evaluation.aggregate_resamples(drawn[None, :])
        for name in ("ClinicalF1-lexicon", "ModalityF1-lexicon", "SequencePlaneF1"):
            assert many[name].tolist() == [one[name]], name


def test_bleu_of_a_resample_stays_exact_past_float32_integers() -> None:
    # A looping model repeats one sentence 1,001 times (13a tokens: 11 per repetition, 11,011
    # in all); a resample drawing that answer 2,001 times sums 22,033,011 hypothesis tokens,
    # odd and above 2**24, where float32 cannot hold every integer. The fast path must still
    # give aggregate()'s BLEU (integer sums) bit for bit.
    sentence = "Axial FLAIR: hyperintense lesion in the left thalamus, no oedema."
    looping = " ".join([sentence] * 1001)
    evaluation = prepare_captioning(
        [looping],
        ["Axial FLAIR: hyperintense lesion of the left thalamus."],
        exclude=NOT_KEYWORDS[1:],
    )
    drawn = np.zeros(2001, dtype=np.int64)
    hypothesis_tokens = int(evaluation.bleu_statistics[0].max()) * len(drawn)
    assert hypothesis_tokens > 2**24 and hypothesis_tokens % 2 == 1
    one = evaluation.aggregate(drawn)["BLEU-4"]
    assert evaluation.aggregate_resamples(drawn[None, :])["BLEU-4"].tolist() == [one]


def test_auto_meteor_without_wordnet_warns_at_the_callers_line(without_wordnet) -> None:  # noqa: F811
    with pytest.warns(UserWarning, match="METEOR not computed") as caught:
        result = score_captioning(
            ["Axial T2: cyst."], ["Axial T2: a cyst."], exclude=["BERTScore-F1"]
        )
    assert [warning.filename for warning in caught] == [__file__]
    assert result["METEOR_variant"] == "exact+stem"
    assert "METEOR_nltk" not in result  # nltk's version is recorded only when nltk scored it


def test_asking_for_exact_stem_is_not_warned_about(without_wordnet) -> None:  # noqa: F811
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = score_captioning(
            ["Axial T2: cyst."],
            ["Axial T2: a cyst."],
            exclude=["BERTScore-F1"],
            meteor="exact+stem",
        )
    assert result["METEOR_variant"] == "exact+stem"


def test_auto_meteor_with_wordnet_records_nltk_and_warns_nothing(with_wordnet) -> None:  # noqa: F811
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = score_captioning(
            ["Axial T2: cyst."], ["Axial T2: a cyst."], exclude=["BERTScore-F1"]
        )
    assert result["METEOR_variant"] == "wordnet"
    assert "METEOR_nltk" in result


@pytest.mark.parametrize("averaging", ["sample", "micro"])
def test_a_resample_with_nothing_to_score_is_nan_without_a_numpy_warning(averaging) -> None:
    # Pair 1 has no modality keyword on either side (skipped) and two normal labels (no
    # positive): a resample drawing only it has no ModalityF1 and no BinaryF1. That is NaN,
    # said by the score itself; a 0/0 RuntimeWarning from numpy would tell the user nothing.
    table = {
        **JUDGED,
        "Normal pituitary.": keywords(set(), {"pituitary"}, False),
    }
    references = ["Axial FLAIR: hyperintense lesion of the left thalamus.", "Normal pituitary."]
    predictions = ["Axial FLAIR image showing a thalamic lesion.", "Normal pituitary."]
    evaluation = prepare_captioning(
        predictions,
        references,
        exclude=NOT_KEYWORDS,
        keyword_judge=TableJudge(table),
        keyword_averaging=averaging,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        many = evaluation.aggregate_resamples(np.array([[1, 1], [0, 1]]))
    # Row 0: pair 1 twice. Row 1: pair 0's modality {axial, flair} on both sides (F1 1, pair
    # 1 skipped); labels abnormal/abnormal and normal/normal: TP 1, FP 0, FN 0 -> 1.
    assert np.isnan(many["ModalityF1"][0]) and many["ModalityF1"][1] == 1.0
    assert np.isnan(many["BinaryF1"][0]) and many["BinaryF1"][1] == 1.0
    # Clinical: pair 1 {pituitary} on both sides, F1 1, in either averaging.
    assert many["ClinicalF1"][0] == 1.0


def test_per_pair_keyword_f1_counts_two_true_positives_and_two_misses() -> None:
    # Clinical keywords: reference {hyperintense, lesion, thalamus, left}, prediction {lesion,
    # thalamus}: TP 2, FP 0, FN 2, so 2TP / (2TP + FP + FN) = 4 / 6. Modality {axial, flair}
    # on both sides: TP 2 -> 4 / 4.
    evaluation = prepare_captioning(
        ["Axial FLAIR image showing a thalamic lesion."],
        ["Axial FLAIR: hyperintense lesion of the left thalamus."],
        exclude=NOT_KEYWORDS,
        keyword_judge=TableJudge(JUDGED),
    )
    values = evaluation.per_pair()
    assert values["ClinicalF1"] == [pytest.approx(4 / 6)]
    assert values["ModalityF1"] == [1.0]


def test_a_subset_keeps_the_keywords_of_its_own_pairs_in_its_order() -> None:
    references = [
        "Axial FLAIR: hyperintense lesion of the left thalamus.",
        "Sagittal T1: normal pituitary.",
        "Coronal T2: cyst in the pituitary.",
    ]
    predictions = [
        "Axial FLAIR image showing a thalamic lesion.",
        "Coronal T2: cyst in the pituitary.",
        "Sagittal T1: normal pituitary.",
    ]
    evaluation = prepare_captioning(
        predictions, references, exclude=NOT_KEYWORDS, keyword_judge=TableJudge(JUDGED)
    )
    group = evaluation.subset([2, 0])
    assert group.reference_keywords == [JUDGED[references[2]], JUDGED[references[0]]]
    assert group.prediction_keywords == [JUDGED[predictions[2]], JUDGED[predictions[0]]]
    # Without keyword metrics no keywords are read, in the whole or in a subset.
    keyword_metrics = ["ClinicalF1", "ModalityF1", "SequencePlaneF1", "BinaryF1"]
    rouge_only = prepare_captioning(
        predictions, references, exclude=["BLEU-4", "METEOR", "BERTScore-F1", *keyword_metrics]
    )
    assert rouge_only.reference_keywords is None
    assert rouge_only.subset([2, 0]).reference_keywords is None


def test_settling_options_checks_the_bertscore_model_without_downloading_it(monkeypatch) -> None:
    # Online, with roberta-large not in the cache: the check before any work must not start
    # a download of 1.4 GB (that happens when captions are scored, if ever).
    from novabench.metrics import bertscore

    downloads: list[str] = []
    monkeypatch.setattr(bertscore, "hub_offline", lambda: False)
    monkeypatch.setattr(bertscore, "_cached_config", lambda model: None)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", downloads.append)
    settled, _ = settle_scoring_options(
        {"exclude": ["METEOR"], "bertscore_model": "roberta-large", "bertscore_num_layers": 17}
    )
    assert downloads == []
    assert settled["bertscore_model"] == "roberta-large"


def test_an_unknown_meteor_setting_is_refused_even_with_meteor_excluded() -> None:
    # A typo is a typo whether or not METEOR runs this time: refused, never ignored.
    with pytest.raises(NovaInputError, match="wordnett"):
        settle_scoring_options({"exclude": ["METEOR", "BERTScore-F1"], "meteor": "wordnett"})
    settled, notes = settle_scoring_options(
        {"exclude": ["METEOR", "BERTScore-F1"], "meteor": "wordnet"}
    )
    assert notes == ["BERTScore-F1: not computed (--exclude)", "METEOR: not computed (--exclude)"]


def test_indices_of_the_wrong_shape_are_refused_naming_the_shape_wanted() -> None:
    evaluation = prepare_captioning(
        ["Axial T2: cyst.", "Axial T2: mass."],
        ["Axial T2: a cyst.", "Axial T2: a mass."],
        exclude=NOT_KEYWORDS,
    )
    # A resample given as rows to aggregate (which takes one), and one flat row given to
    # aggregate_resamples (which takes rows).
    with pytest.raises(NovaInputError, match=r"must be a 1-D array of pair positions"):
        evaluation.aggregate(np.array([[0, 1]]))
    with pytest.raises(
        NovaInputError, match=r"must be a 2-D array of pair positions, one resample"
    ):
        evaluation.aggregate_resamples(np.array([0, 1]))


def test_both_entry_points_batch_bertscore_alike_by_default(monkeypatch) -> None:
    # BERTScore's float32 sums depend on how sentences are padded into batches: a report
    # built through prepare_captioning and a score from score_captioning must hand BERTScore
    # the same batch size unless the user sets one, or their last digits could differ.
    from novabench.metrics import captioning

    batch_sizes: list[int] = []

    def recording_bertscore(predictions, references, *, model, num_layers, batch_size):
        batch_sizes.append(batch_size)
        return np.zeros(len(predictions)), "recorded"

    monkeypatch.setattr(captioning, "bertscore_f1_scores", recording_bertscore)
    monkeypatch.setattr(captioning, "bertscore_metric_key", lambda model, layers: "BERTScore-F1")
    only_bertscore = ["BLEU-4", "ROUGE-L", "METEOR", "ClinicalF1", "ModalityF1"]
    only_bertscore += ["SequencePlaneF1", "BinaryF1"]
    pair = (["Axial T2: cyst."], ["Axial T2: a cyst."])
    prepare_captioning(*pair, exclude=only_bertscore)
    score_captioning(*pair, exclude=only_bertscore)
    score_captioning(*pair, exclude=only_bertscore, bertscore_batch_size=5)
    assert batch_sizes[0] == batch_sizes[1] and batch_sizes[2] == 5


# Three pairs whose ROUGE-L is read off by hand (LCS-based F with equal lengths: LCS / length):
# pair 0 "a cyst" / "a cyst": 2/2 -> 1.0; pair 1 "no mass" / "a mass": LCS "mass", 1/2 -> 0.5;
# pair 2 "edema" / "a cyst": nothing in common -> 0.0 (the doctests of aggregate*).
THREE_PREDICTIONS = ["a cyst", "no mass", "edema"]
THREE_REFERENCES = ["a cyst", "a mass", "a cyst"]


def test_draw_counts_of_rows_of_0_1_2_and_3_pairs_score_each_row_as_aggregate() -> None:
    # aggregate_counts takes rows of any length in one call (a resample of whole cases holds
    # as many pairs as its cases). Rows of different lengths are scored in blocks of equal
    # length; a row of no pair is NaN in every metric (BLEU's zero statistics would otherwise
    # give 0.0), said without a numpy 0/0 warning; a row of one pair is that pair's score.
    evaluation = prepare_captioning(THREE_PREDICTIONS, THREE_REFERENCES, exclude=["BERTScore-F1"])
    counts = np.array([[0, 0, 0], [0, 1, 0], [0, 1, 1], [2, 1, 0], [1, 1, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        many = evaluation.aggregate_counts(counts)
    # Row 0: nothing; row 1: pair 1 alone, 0.5; row 2: (0.5 + 0.0) / 2; row 3: pair 0 twice
    # and pair 1, (1 + 1 + 0.5) / 3; row 4: (1 + 0.5 + 0) / 3.
    rouge = many["ROUGE-L"]
    assert np.isnan(rouge[0])
    assert rouge[1:].tolist() == [0.5, 0.25, pytest.approx(2.5 / 3), 0.5]
    for key, values in many.items():
        assert np.isnan(values[0]), key
        for row in range(1, len(counts)):
            one = evaluation.aggregate(np.repeat(np.arange(3), counts[row]))[key]
            assert (np.isnan(one) and np.isnan(values[row])) or one == values[row], (key, row)


def test_case_draw_counts_score_a_case_of_one_pair_and_a_resample_of_none() -> None:
    # Two cases: pairs 0 and 1 (case 0), pair 2 (case 1). Resamples: no case; case 1 once
    # (pair 2 alone: ROUGE-L 0.0, a score, not NaN); case 0 once ((1 + 0.5) / 2); case 1
    # three times (0.0); both cases once ((1 + 0.5 + 0) / 3).
    evaluation = prepare_captioning(THREE_PREDICTIONS, THREE_REFERENCES, exclude=["BERTScore-F1"])
    codes = np.array([0, 0, 1])
    counts = np.array([[0, 0], [0, 1], [1, 0], [0, 3], [1, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        many = evaluation.aggregate_cluster_counts(counts, codes)
    rouge = many["ROUGE-L"]
    assert np.isnan(rouge[0])
    assert rouge[1:].tolist() == [0.0, 0.75, 0.0, pytest.approx(0.5)]
    spelt = evaluation.aggregate_counts(counts[:, codes])
    for key, values in many.items():
        assert np.isnan(values[0]), key
        # Averaged metrics are summed per case (another order): equal within a few ulps.
        np.testing.assert_allclose(values[1:], spelt[key][1:], rtol=1e-13, atol=0)


def test_bleu_of_counted_and_case_draws_stays_exact_past_float32_integers() -> None:
    # As test_bleu_of_a_resample_stays_exact_past_float32_integers, through the draw counts:
    # the looping answer (11,011 hypothesis tokens) drawn 2,001 times sums 22,033,011
    # tokens, odd and between 2**24 and 2**25, where float32 rounds it to an even number.
    # Integer sums are exact in any order, so both paths must give aggregate()'s BLEU bit
    # for bit.
    sentence = "Axial FLAIR: hyperintense lesion in the left thalamus, no oedema."
    evaluation = prepare_captioning(
        [" ".join([sentence] * 1001)],
        ["Axial FLAIR: hyperintense lesion of the left thalamus."],
        exclude=NOT_KEYWORDS[1:],
    )
    hypothesis_tokens = int(evaluation.bleu_statistics[0].max()) * 2001
    assert 2**24 < hypothesis_tokens < 2**25 and hypothesis_tokens % 2 == 1
    one = evaluation.aggregate(np.zeros(2001, dtype=np.int64))["BLEU-4"]
    assert evaluation.aggregate_counts(np.array([[2001]]))["BLEU-4"].tolist() == [one]
    cases = evaluation.aggregate_cluster_counts(np.array([[2001]]), np.array([0]))
    assert cases["BLEU-4"].tolist() == [one]


def test_all_zero_draw_counts_are_nan_in_every_metric_without_a_numpy_warning() -> None:
    # No resample draws a pair (a group's cases all left out, say): nothing to score in any
    # row, so every metric of every row is NaN, with no 0/0 or log(0) warning from numpy.
    evaluation = prepare_captioning(THREE_PREDICTIONS, THREE_REFERENCES, exclude=["BERTScore-F1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        counted = evaluation.aggregate_counts(np.zeros((2, 3), dtype=np.int64))
        cases = evaluation.aggregate_cluster_counts(np.zeros((2, 2), dtype=np.int64), [0, 0, 1])
    for result in (counted, cases):
        assert result.keys() == set(evaluation.metrics)
        assert all(np.isnan(values).all() and len(values) == 2 for values in result.values())


@pytest.mark.parametrize(
    "counts",
    [
        np.array([1, 1, 1]),  # one resample given flat (1-D)
        np.array([[1, 1], [1, 1], [1, 1]]),  # 3 rows of 2 columns for 3 pairs
        np.array([[1.0, 1.0, 1.0]]),  # floats, not counts
        np.array([[2, -1, 1]]),  # a negative count
    ],
)
def test_draw_counts_of_the_wrong_shape_or_kind_are_refused_naming_the_field(counts) -> None:
    evaluation = prepare_captioning(THREE_PREDICTIONS, THREE_REFERENCES, exclude=NOT_KEYWORDS)
    with pytest.raises(NovaInputError, match="non-negative integers, 3 columns") as caught:
        evaluation.aggregate_counts(counts)
    assert caught.value.field == "counts"


def test_an_unknown_metric_name_gets_the_closest_name_and_a_model_key_the_bertscore_advice():
    with pytest.raises(NovaInputError, match=r"did you mean 'ROUGE-L'\?") as caught:
        prepare_captioning(["a cyst"], ["a cyst"], exclude=["ROUGE"])
    assert "whichever model" not in str(caught.value)
    with pytest.raises(NovaInputError, match="'BERTScore-F1' leaves BERTScore out whichever"):
        prepare_captioning(["a cyst"], ["a cyst"], exclude=["BERTScore-F1-MiniLM-L6"])


@pytest.mark.parametrize("fingerprint", [None, "ab12" * 16])
def test_a_bertscore_model_of_ones_own_scores_under_its_key_with_its_fingerprint(
    monkeypatch, tmp_path, fingerprint
) -> None:
    # A local folder "radbert" at layer 9 (bertscore_metric_key's doctest): its scores are
    # BERTScore-F1[radbert-L9], in BERTScore-F1's place among the metrics, the other names
    # unchanged. The folder's fingerprint is recorded when there is one (a folder holding
    # weights), and no key at all when there is none (a Hub id).
    from novabench.metrics import captioning

    monkeypatch.setattr(
        captioning,
        "bertscore_f1_scores",
        lambda predictions, references, **settings: (np.full(len(predictions), 0.25), "hash"),
    )
    monkeypatch.setattr(captioning, "bertscore_model_sha256", lambda hash_code: fingerprint)
    folder = tmp_path / "radbert"
    folder.mkdir()
    keyword_metrics = ["ClinicalF1", "ModalityF1", "SequencePlaneF1", "BinaryF1"]
    evaluation = prepare_captioning(
        ["a cyst", "no mass"],
        ["a cyst", "a mass"],
        exclude=["BLEU-4", *keyword_metrics],
        meteor="exact+stem",
        bertscore_model=folder,
        bertscore_num_layers=9,
    )
    assert evaluation.metrics == ("ROUGE-L", "METEOR-exact+stem", "BERTScore-F1[radbert-L9]")
    assert evaluation.aggregate()["BERTScore-F1[radbert-L9]"] == 0.25
    if fingerprint is None:
        assert "BERTScore_model_sha256" not in evaluation.info
    else:
        assert evaluation.info["BERTScore_model_sha256"] == fingerprint
