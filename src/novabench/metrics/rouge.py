"""ROUGE-L F-measure per caption pair, equal to ``rouge_score``'s ``rougeL``.

:func:`rouge_l_scores` equals ``RougeScorer(["rougeL"], use_stemmer=...)``'s F-measure
with its default tokeniser (:func:`~novabench.metrics.tokenizers.tokenize_rouge`); the
stemmer is :func:`novabench.metrics.porter.porter_stem`, equal to nltk's ``PorterStemmer``
(``tests/metrics/test_porter.py``). Parity: ``tests/metrics/test_text_parity.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from novabench.metrics.tokenizers import tokenize_rouge

__all__ = ["lcs_length", "rouge_l_f1", "rouge_l_scores"]


def lcs_length(first: Sequence[str], second: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences.

    Bit-parallel (Crochemore et al., 2001; Hyyrö, 2004): the DP column over
    ``first`` is one Python integer, updated with an add, two ANDs and an OR
    per token of ``second`` -- O(len(second)) big-int operations instead of a
    len(first) x len(second) table.

    Args:
        first: tokens.
        second: tokens.

    Returns:
        The LCS length.

    Example:
        >>> lcs_length("a b c d e".split(), "a c x e".split())
        3
    """
    if len(first) < len(second):
        first, second = second, first  # the shorter one drives the loop
    positions: dict[str, int] = {}
    for index, token in enumerate(first):
        positions[token] = positions.get(token, 0) | (1 << index)
    all_ones = (1 << len(first)) - 1
    column = all_ones  # a 0 bit marks a row where the LCS grows
    for token in second:
        match = positions.get(token)
        if match:
            kept = column & match
            column = ((column + kept) | (column - kept)) & all_ones
    return len(first) - column.bit_count()


def _rouge_l_from_tokens(
    reference_tokens: Sequence[str], prediction_tokens: Sequence[str]
) -> float:
    if not reference_tokens or not prediction_tokens:
        return 0.0
    common = lcs_length(reference_tokens, prediction_tokens)
    precision = common / len(prediction_tokens)
    recall = common / len(reference_tokens)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def rouge_l_scores(
    predictions: Sequence[str], references: Sequence[str], *, use_stemmer: bool = False
) -> np.ndarray:
    """Per-pair ROUGE-L F-measure, identical to ``rouge_score``'s ``rougeL`` ``fmeasure``.

    A pair where either side has no token (after :func:`tokenize_rouge`) scores 0.

    Args:
        predictions: predicted captions.
        references: reference captions.
        use_stemmer: Porter-stem tokens of four or more characters, as ``RougeScorer(use_stemmer=True)``.

    Returns:
        A float array of shape ``(n_pairs,)``.

    Example:
        >>> rouge_l_scores(["lesion in left frontal lobe", ""], ["left frontal lobe lesion", "cyst"]).round(4).tolist()
        [0.6667, 0.0]
    """
    return np.array(
        [
            _rouge_l_from_tokens(
                tokenize_rouge(reference, use_stemmer), tokenize_rouge(prediction, use_stemmer)
            )
            for prediction, reference in zip(predictions, references)
        ],
        dtype=np.float64,
    )


def rouge_l_f1(
    predictions: Sequence[str], references: Sequence[str], *, use_stemmer: bool = False
) -> float:
    """Mean over pairs of the ROUGE-L F-measure (see :func:`rouge_l_scores`).

    Args:
        predictions: predicted captions.
        references: reference captions.
        use_stemmer: Porter-stem tokens of four or more characters.

    Returns:
        Mean ROUGE-L F1 in [0, 1] (NaN for no pairs).

    Example:
        >>> round(rouge_l_f1(["lesion in left frontal lobe", ""], ["left frontal lobe lesion", "cyst"]), 4)
        0.3333
    """
    scores = rouge_l_scores(predictions, references, use_stemmer=use_stemmer)
    return float(scores.mean()) if scores.size else math.nan
