"""score_captioning / prepare_captioning: keyword F1 arithmetic and the paper's modality split,
BinaryF1 (abnormal F1) by hand and against sklearn, exclude, bad input, bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu

from novabench.errors import NovaInputError
from novabench.metrics import captioning
from novabench.metrics.caption_pairs import random_caption_pairs
from novabench.metrics.captioning import (
    METRIC_NAMES,
    PAPER_MODALITY_TERMS,
    binary_f1,
    keyword_f1,
    paper_keyword_split,
    prepare_captioning,
    score_captioning,
)
from novabench.metrics.keywords import CaptionKeywords, default_keyword_extractor
from tests.lazy_import import LazyModule

# Imported by the first test that reads them (tests/lazy_import.py): nltk and scikit-learn
# cost a worker 1.5 CPU s at collection.
rouge_scorer = LazyModule("rouge_score.rouge_scorer")
sklearn_metrics = LazyModule("sklearn.metrics")

NO_BERT = ("BERTScore-F1",)


class TableExtractor:
    """A keyword extractor that looks captions up in a table: keyword arithmetic without the lexicon."""

    def __init__(self, table: dict[str, tuple[set[str], set[str], bool | None]]) -> None:
        self.table = table

    def __call__(self, caption: str) -> CaptionKeywords:
        modality, clinical, abnormal = self.table[caption]
        return CaptionKeywords(frozenset(modality), frozenset(clinical), abnormal)


# Reference / prediction keyword sets of three pairs (clinical family):
#   pair 0: R {lesion, left, thalamus}   P {lesion, right, thalamus}  TP 2 FP 1 FN 1 -> F1 4/6 = 0.6667
#   pair 1: R {cyst}                      P {cyst, oedema, pons, left} TP 1 FP 3 FN 0 -> F1 2/5 = 0.4
#   pair 2: R {}                          P {}                         excluded
# sample = (4/6 + 2/5) / 2 = 0.5333...;  micro = 2*3 / (2*3 + 4 + 1) = 6/11 = 0.5454...
# Modality: pair 0 R {axial, t2w} P {axial}: TP 1 FP 0 FN 1 -> 2/3; pair 1 R {} P {flair}: 0;
# pair 2 R {} P {}: excluded.  sample = (2/3 + 0)/2 = 1/3; micro = 2 / (2 + 1 + 1) = 0.5
TABLE = {
    "r0": ({"axial", "t2w"}, {"lesion", "left", "thalamus"}, True),
    "p0": ({"axial"}, {"lesion", "right", "thalamus"}, True),
    "r1": (set(), {"cyst"}, True),
    "p1": ({"flair"}, {"cyst", "oedema", "pons", "left"}, True),
    "r2": (set(), set(), False),
    "p2": (set(), set(), None),
}


def score_table(averaging: str) -> dict:
    return score_captioning(
        ["p0", "p1", "p2"],
        ["r0", "r1", "r2"],
        exclude=("BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1"),
        keyword_extractor=TableExtractor(TABLE),
        keyword_averaging=averaging,
    )


def test_keyword_f1_sample_average_by_hand():
    result = score_table("sample")
    assert result["ClinicalF1-lexicon"] == pytest.approx((4 / 6 + 2 / 5) / 2)
    assert result["ModalityF1-lexicon"] == pytest.approx((2 / 3 + 0) / 2)
    # Every modality keyword here is one of the ten.
    assert result["SequencePlaneF1"] == result["ModalityF1-lexicon"]
    assert result["n_pairs_without_clinical_keywords"] == 1
    assert result["n_pairs_without_modality_keywords"] == 1
    assert result["keyword_averaging"] == "sample"


def test_keyword_f1_micro_average_by_hand():
    result = score_table("micro")
    assert result["ClinicalF1-lexicon"] == pytest.approx(6 / 11)
    assert result["ModalityF1-lexicon"] == pytest.approx(0.5)
    assert result["keyword_averaging"] == "micro"


def test_keyword_f1_is_nan_when_no_pair_has_keywords():
    assert math.isnan(keyword_f1(np.zeros((3, 3), dtype=int)))
    assert math.isnan(keyword_f1(np.zeros((3, 3), dtype=int), "micro"))


def test_binary_f1_by_hand_with_an_undecided_prediction_and_reference():
    # TABLE pairs (reference, prediction): (abnormal, abnormal), (abnormal, abnormal),
    # (normal, undecided).
    # Abnormal is the positive class: TP 2, FP 0, FN 0 -> 1. The undecided prediction of a normal
    # reference costs nothing (it is not a positive); the old macro average gave 0.5 here.
    result = score_table("sample")
    assert result["BinaryF1-lexicon"] == 1.0
    assert result["n_pairs_without_reference_label"] == 0
    assert result["n_predictions_without_label"] == 1
    # An undecided prediction of an abnormal reference is a false negative: TP 1, FN 1 -> 2/3.
    assert binary_f1(np.array([1, 1]), np.array([1, -1])) == pytest.approx(2 / 3)
    # A left-out (undecided) reference: only the kept pair counts.
    assert binary_f1(np.array([1, -1]), np.array([1, 0])) == 1.0
    # Normal predicted abnormal: TP 1, FP 1, FN 0 -> 2/3; abnormal predicted normal: TP 0 -> 0.
    assert binary_f1(np.array([1, 0]), np.array([1, 1])) == pytest.approx(2 / 3)
    assert binary_f1(np.array([1, 0]), np.array([0, 0])) == 0.0


@pytest.mark.parametrize(
    ("references", "predictions"),
    [
        ([-1, -1], [1, 0]),  # no reference has a label: nothing to score
        ([0, 0, -1], [0, -1, 1]),  # no abnormal reference or prediction among kept pairs: 0/0
        ([], []),
    ],
)
def test_binary_f1_is_nan_without_a_kept_pair_or_without_any_positive(references, predictions):
    assert math.isnan(binary_f1(np.array(references, dtype=int), np.array(predictions, dtype=int)))


def test_binary_f1_one_stray_normal_among_906_abnormal_references_moves_it_by_a_hair():
    # 905 abnormal references and one normal, all predictions abnormal: TP 905, FP 1 -> 1810/1811.
    references = np.array([1] * 905 + [0])
    predictions = np.ones(906, dtype=int)
    assert binary_f1(references, predictions) == pytest.approx(1810 / 1811)
    assert 1 - binary_f1(references, predictions) < 0.001  # a macro average would give about 0.5


# 100 draws in the fast suite; all 500 (the first 100 again, then more) under `make test-slow`.
@pytest.mark.parametrize("n_draws", [100, pytest.param(500, marks=pytest.mark.slow)])
def test_binary_f1_matches_sklearn_positive_class_f1_on_random_labels(n_draws: int) -> None:
    rng = np.random.default_rng(0)
    names = {0: "normal", 1: "abnormal", -1: "normal"}  # an undecided prediction is not a positive
    for _ in range(n_draws):
        size = int(rng.integers(1, 15))
        references = rng.choice([0, 1, -1], size=size, p=rng.dirichlet([1, 1, 1]))
        predictions = rng.choice([0, 1, -1], size=size, p=rng.dirichlet([1, 1, 1]))
        kept = references != -1
        ours = binary_f1(references, predictions)
        if not kept.any():
            assert math.isnan(ours)
            continue
        y_true = [names[label] for label in references[kept]]
        y_pred = [names[label] for label in predictions[kept]]
        expected = sklearn_metrics.f1_score(
            y_true,
            y_pred,
            labels=["normal", "abnormal"],
            pos_label="abnormal",
            average="binary",
            zero_division=np.nan,
        )
        if math.isnan(expected):
            assert math.isnan(ours)
        else:
            assert ours == pytest.approx(expected, abs=1e-15)


def test_paper_modality_split_by_hand():
    # Reference: axial ADC map after contrast, a cyst. Prediction: axial SWI, a cyst.
    # ModalityF1 (the ten terms): R {axial} P {axial} -> 1.
    # ClinicalF1 (the rest, sequences outside the ten included):
    #   R {cyst, adc, contrast} P {cyst, swi}: TP 1, FP 1, FN 2 -> 2 / 5.
    # SequencePlaneF1: R {axial, adc, contrast} P {axial, swi} -> 2 / 5.
    table = {
        "r": ({"axial", "adc", "contrast"}, {"cyst"}, True),
        "p": ({"axial", "swi"}, {"cyst"}, True),
    }
    result = score_captioning(
        ["p"],
        ["r"],
        exclude=("BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1"),
        keyword_extractor=TableExtractor(table),
    )
    assert result["ModalityF1-lexicon"] == 1.0
    assert result["ClinicalF1-lexicon"] == pytest.approx(2 / 5)
    assert result["SequencePlaneF1"] == pytest.approx(2 / 5)
    assert result["n_pairs_without_sequence_plane_keywords"] == 0


def test_paper_modality_terms_are_the_ten_and_an_llm_style_extractor_keeps_t1_and_weighted():
    assert PAPER_MODALITY_TERMS == {
        "flair", "axial", "sagittal", "t1", "t2", "coronal", "dwi", "t1w", "t2w", "weighted"
    }  # fmt: skip
    keywords = CaptionKeywords(frozenset({"t1", "weighted", "mprage"}), frozenset(), None)
    split = paper_keyword_split(keywords)
    assert split["modality"] == {"t1", "weighted"}
    assert split["clinical"] == {"mprage"}


def test_lexicon_modality_terms_map_onto_the_paper_set():
    # The lexicon folds T1/T1WI/MPRAGE into t1w etc.: its forms of the ten are inside the set.
    result = score_captioning(
        ["Axial DWI: restricted diffusion."],
        ["Axial ADC map: restricted diffusion."],
        exclude=("BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1"),
    )
    assert result["ModalityF1-lexicon"] == pytest.approx(2 / 3)  # R {axial} P {axial, dwi}
    # R {restricted diffusion, adc} P {restricted diffusion}
    assert result["ClinicalF1-lexicon"] == pytest.approx(2 / 3)
    assert result["SequencePlaneF1"] == pytest.approx(2 / 4)  # R {axial, adc} P {axial, dwi}


def test_full_result_keys_and_parity_with_reference_libraries():
    predictions, references = random_caption_pairs(60, seed=3)
    result = score_captioning(predictions, references, exclude=NO_BERT, meteor="exact+stem")
    assert set(result) == {
        "BLEU-4", "ROUGE-L", "METEOR-exact+stem", "ClinicalF1-lexicon", "ModalityF1-lexicon",
        "BinaryF1-lexicon", "SequencePlaneF1",
        "n_captions", "METEOR_variant", "keyword_averaging", "keyword_extractor", "keyword_source",
        "n_pairs_without_clinical_keywords",
        "n_pairs_without_modality_keywords", "n_pairs_without_sequence_plane_keywords",
        "n_pairs_without_reference_label", "n_predictions_without_label",
    }  # fmt: skip
    assert result["n_captions"] == 60
    assert result["keyword_extractor"] == "lexicon (offline, nova-keyword-lexicon-5)"
    assert result["BLEU-4"] == pytest.approx(
        sacrebleu.corpus_bleu(predictions, [references]).score / 100, abs=1e-9
    )
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    rouge = [scorer.score(r, p)["rougeL"].fmeasure for p, r in zip(predictions, references)]
    assert result["ROUGE-L"] == pytest.approx(float(np.mean(rouge)), abs=1e-12)
    # Keyword F1s from the extractor's sets, by the textbook formula: per pair
    # 2 |P & R| / (|P| + |R|), pairs with no keyword on either side left out, then averaged.
    extract = default_keyword_extractor()
    pairs = [(extract(p), extract(r)) for p, r in zip(predictions, references)]
    # The paper's split: ModalityF1 on its ten terms only, ClinicalF1 on the rest.
    splits = [(paper_keyword_split(p), paper_keyword_split(r)) for p, r in pairs]
    for name, family in (("ClinicalF1-lexicon", "clinical"), ("ModalityF1-lexicon", "modality")):
        sets = [(p[family], r[family]) for p, r in splits]
        scores = [2 * len(p & r) / (len(p) + len(r)) for p, r in sets if p or r]
        assert len(scores) > 30, name  # the random captions do carry keywords
        assert result[name] == pytest.approx(float(np.mean(scores)), abs=1e-12), name
        assert result[f"n_pairs_without_{family}_keywords"] == 60 - len(scores)
    # BinaryF1: sklearn's F1 of the abnormal class over the pairs whose reference states
    # normal/abnormal; an undecided prediction is not an abnormal one.
    labelled = [(r.abnormal, p.abnormal is True) for p, r in pairs if r.abnormal is not None]
    y_true, y_pred = [t for t, _ in labelled], [q for _, q in labelled]
    expected_binary = sklearn_metrics.f1_score(y_true, y_pred, pos_label=True, zero_division=np.nan)
    assert result["BinaryF1-lexicon"] == pytest.approx(expected_binary, abs=1e-12)
    assert result["n_pairs_without_reference_label"] == 60 - len(labelled)


@pytest.mark.parametrize("excluded", [("BLEU-4",), ("METEOR", "BERTScore-F1"), tuple(METRIC_NAMES)])
def test_exclude_leaves_metrics_absent(excluded):
    result = score_captioning(
        ["a cyst"], ["a small cyst"], exclude=(*excluded, "BERTScore-F1"), meteor="exact+stem"
    )
    for name in set(excluded) | {"BERTScore-F1"}:
        assert name not in result
    # "METEOR" in exclude leaves METEOR out in either reading; the wordnet one is not asked.
    meteor_out = {"METEOR", "METEOR-exact+stem"} if "METEOR" in excluded else {"METEOR"}
    # Without a keyword judge the keyword F1s are the lexicon's: the paper's keys never appear.
    paper_keywords = {"ClinicalF1", "ModalityF1", "BinaryF1"}
    for name in set(METRIC_NAMES) - set(excluded) - {"BERTScore-F1"} - meteor_out - paper_keywords:
        assert name in result
    assert not paper_keywords & set(result)
    assert ("METEOR_variant" in result) == ("METEOR" not in excluded)
    assert "BERTScore_hash" not in result


def test_exclude_a_single_name_as_a_string():
    assert "BERTScore-F1" not in score_captioning(["a"], ["a"], exclude="BERTScore-F1")


def test_unknown_excluded_name_lists_the_valid_ones():
    with pytest.raises(NovaInputError, match=r"'BLEU'.*valid names.*BLEU-4"):
        score_captioning(["a"], ["a"], exclude=["BLEU"])


def test_empty_prediction_scores_zero_on_overlap_metrics():
    result = score_captioning(
        ["", "   "], ["a cyst in the pons", "normal"], exclude=NO_BERT, meteor="exact+stem"
    )
    assert (
        result["BLEU-4"]
        == 0.0
        == sacrebleu.corpus_bleu(["", "   "], [["a cyst in the pons", "normal"]]).score
    )
    assert result["ROUGE-L"] == 0.0
    assert result["METEOR-exact+stem"] == 0.0
    evaluation = prepare_captioning([""], ["a cyst"], exclude=NO_BERT)
    assert evaluation.bleu_statistics[0, 0] == 0  # counted with hypothesis length 0
    assert evaluation.bleu_statistics[0, 1] == 2


@pytest.mark.parametrize(
    ("predictions", "references", "record", "field"),
    [
        (["a", "b"], ["a", None], "example 1", "references"),
        (["a", "b"], ["a", ""], "example 1", "references"),
        (["a", "b", "c"], ["a", "b", " \n\t"], "example 2", "references"),
        (["a", "b"], ["a", 3], "example 1", "references"),
        (["a", None], ["a", "b"], "example 1", "predictions"),
        ([b"a"], ["a"], "example 0", "predictions"),
    ],
)
def test_bad_captions_name_the_example_and_field(predictions, references, record, field):
    with pytest.raises(NovaInputError) as caught:
        score_captioning(predictions, references, exclude=NO_BERT)
    assert caught.value.record == record
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"predictions": ["a"], "references": ["a", "b"]}, "1 predictions but 2 references"),
        ({"predictions": "a caption", "references": ["a"]}, "list of strings"),
        (
            {"predictions": ["a"], "references": ["a"], "keyword_averaging": "macro"},
            "'sample' or 'micro'",
        ),
        (
            {"predictions": ["a"], "references": ["a"], "bertscore_batch_size": 0},
            "positive integer",
        ),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(NovaInputError, match=message):
        score_captioning(exclude=NO_BERT, **kwargs)


def test_extractor_returning_the_wrong_type_is_reported():
    with pytest.raises(NovaInputError, match="not CaptionKeywords") as caught:
        score_captioning(
            ["a"], ["b"], exclude=NO_BERT, keyword_extractor=lambda caption: {"clinical": set()}
        )
    assert caught.value.field == "references" and caught.value.record == "example 0"


def test_aggregate_on_all_indices_equals_the_full_result():
    predictions, references = random_caption_pairs(80, seed=11)
    evaluation = prepare_captioning(predictions, references, exclude=NO_BERT)
    full = score_captioning(predictions, references, exclude=NO_BERT)
    assert evaluation.aggregate(np.arange(evaluation.n_items)) == {
        name: full[name] for name in evaluation.metrics
    }
    assert evaluation.aggregate() == evaluation.aggregate(np.arange(80))


@pytest.mark.parametrize("averaging", ["sample", "micro"])
def test_resample_with_repeats_equals_scoring_the_repeated_list(averaging):
    predictions, references = random_caption_pairs(80, seed=5)
    evaluation = prepare_captioning(
        predictions, references, exclude=NO_BERT, keyword_averaging=averaging
    )
    rng = np.random.default_rng(1)
    for _ in range(3):
        indices = rng.integers(0, 80, size=80)
        assert len(set(indices.tolist())) < 80  # repeats present
        direct = score_captioning(
            [predictions[i] for i in indices],
            [references[i] for i in indices],
            exclude=NO_BERT,
            keyword_averaging=averaging,
        )
        resampled = evaluation.aggregate(indices)
        for name, value in resampled.items():
            if math.isnan(direct[name]):
                assert math.isnan(value)
            else:
                assert value == pytest.approx(direct[name], abs=1e-12), name


def test_evaluation_missing_the_statistics_of_a_listed_metric_says_so() -> None:
    # A hand-built evaluation that lists ROUGE-L without its per-pair scores fails clearly
    # (it used to fail with "'NoneType' object is not subscriptable").
    evaluation = captioning.CaptioningEvaluation(
        n_items=1, metrics=("ROUGE-L",), keyword_averaging="sample"
    )
    with pytest.raises(
        RuntimeError, match="ROUGE-L is in metrics but its per-pair statistics are missing"
    ):
        evaluation.aggregate()
    evaluation.rouge_l = np.array([0.5])
    assert evaluation.aggregate() == {"ROUGE-L": 0.5}


def test_no_caption_pair_at_all_gives_nan_like_the_other_tasks():
    from novabench.metrics.diagnosis import score_diagnosis
    from novabench.metrics.localization import score_localization

    result = score_captioning([], [], exclude=["BERTScore-F1"], meteor="exact+stem")
    assert result["n_captions"] == 0
    assert all(
        math.isnan(result[name])
        for name in (
            "BLEU-4",
            "ROUGE-L",
            "METEOR-exact+stem",
            "ClinicalF1-lexicon",
            "ModalityF1-lexicon",
            "BinaryF1-lexicon",
            "SequencePlaneF1",
        )
    )
    assert math.isnan(score_diagnosis([], [])["top1-lexicon"])
    with pytest.warns(UserWarning):  # no gold box at all
        assert math.isnan(score_localization([], [])["COCO-AP@30"])
    # An empty resample of a non-empty evaluation is NaN too, not a crash.
    evaluation = captioning.prepare_captioning(["a"], ["a"], exclude=["BERTScore-F1"])
    assert math.isnan(evaluation.aggregate(np.array([], dtype=int))["ROUGE-L"])


def test_per_pair_keyword_f1_of_a_partial_match() -> None:
    # Modality keywords: prediction {axial, flair}, reference {axial, t2}: one shared,
    # one extra, one missed -> F1 = 2 * 1 / (2 * 1 + 1 + 1) = 0.5 by hand.
    evaluation = prepare_captioning(
        ["Axial FLAIR image."], ["Axial T2 image."], exclude=["BERTScore-F1", "METEOR"]
    )
    assert evaluation.per_pair()["ModalityF1-lexicon"] == [0.5]


def test_excluding_a_paper_keyword_key_leaves_out_its_lexicon_reading_too():
    result = score_captioning(
        ["Axial T2: a cyst."], ["Axial T2: a small cyst."], exclude=["ClinicalF1", "BERTScore-F1"]
    )
    assert "ClinicalF1-lexicon" not in result and "ClinicalF1" not in result
    assert "ModalityF1-lexicon" in result and "BinaryF1-lexicon" in result
    only_lexicon = score_captioning(
        ["Axial T2: a cyst."], ["Axial T2: a cyst."], exclude=["ModalityF1-lexicon", "BERTScore-F1"]
    )
    assert "ModalityF1-lexicon" not in only_lexicon and "ClinicalF1-lexicon" in only_lexicon
    assert only_lexicon["keyword_source"] == "extractor"
