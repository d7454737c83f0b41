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
