"""Corpus BLEU-4 from per-pair sufficient statistics, equal to sacrebleu's default.

Each caption pair is reduced once to a few integers (:func:`bleu_statistics`); any
resample of pairs (a bootstrap) is re-scored from their sums
(:func:`bleu_from_statistics`, :func:`bleu_from_statistics_rows`) without tokenising
again. :func:`corpus_bleu` equals ``sacrebleu.corpus_bleu(hyps, [refs]).score / 100``
(sacrebleu 2.6 defaults: ``13a`` tokeniser, case-sensitive, ``exp`` smoothing, brevity
penalty, one reference per hypothesis); see ``tests/metrics/test_text_parity.py``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from novabench.metrics.tokenizers import tokenize_13a

__all__ = [
    "BLEU_MAX_ORDER",
    "bleu_from_statistics",
    "bleu_from_statistics_rows",
    "bleu_statistics",
    "corpus_bleu",
]

BLEU_MAX_ORDER = 4


def _token_ids(
    hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]]
) -> tuple[np.ndarray, np.ndarray, int]:
    """All tokens as ids (hypotheses, then references), each list's length, the vocabulary size."""
    token_lists = [*hypotheses, *references]
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    tokens = list(itertools.chain.from_iterable(token_lists))
    vocabulary = {token: index for index, token in enumerate(dict.fromkeys(tokens))}
    ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    return ids, lengths, len(vocabulary)


_CODE_LIMIT = 1 << 61  # integer n-gram codes stay below this: no int64 overflow


def _dense(codes: np.ndarray) -> np.ndarray:
    """The same partition of equal values, renumbered 0, 1, 2, ... (order kept)."""
    return np.unique(codes, return_inverse=True)[1].reshape(-1)


def _clipped_matches(
    hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]], max_order: int
) -> np.ndarray:
    """Per pair and order, the hypothesis n-grams found in the reference, clipped to its count.

    All pairs at once, with one sort per order: each n-gram is an integer code (its
    (n-1)-gram's code times the vocabulary size plus its last token's id, renumbered
    densely only when it would grow too large), each occurrence a key ``(pair, code, side)``;
    counting equal keys gives every n-gram's count in the hypothesis and in the reference
    of its pair, and ``min`` of the two is summed per pair.

    Returns:
        An ``int64`` array of shape ``(n_pairs, max_order)``.
    """
    n_pairs = len(hypotheses)
    matches = np.zeros((n_pairs, max_order), dtype=np.int64)
    ids, lengths, base = _token_ids(hypotheses, references)
    if ids.size == 0:
        return matches
    # For every token: its caption (the hypotheses, then the references, in pair order)
    # and how many tokens of that caption follow it.
    caption = np.repeat(np.arange(2 * n_pairs), lengths)
    following = np.repeat(np.cumsum(lengths), lengths) - np.arange(ids.size) - 1
    pair, side = caption % n_pairs, (caption >= n_pairs).astype(np.int64)
    code = ids  # the code of the n-gram starting at each token (meaningful where it fits)
    for order in range(1, max_order + 1):
        if order > 1:
            if int(code.max()) >= _CODE_LIMIT // base:
                code = _dense(code)
            shift = order - 1
            extended = np.zeros(ids.size, dtype=np.int64)  # no n-gram starts there
            extended[:-shift] = code[:-shift] * base + ids[shift:]
            code = extended
        starts = following >= order - 1  # the n-gram lies inside its caption
        if not starts.any():
            break
        n_codes = int(code.max()) + 1
        if n_pairs * n_codes >= _CODE_LIMIT // 2:
            code = _dense(code)
            n_codes = int(code.max()) + 1
        keys = (pair[starts] * n_codes + code[starts]) * 2 + side[starts]
        distinct, counts = np.unique(keys, return_counts=True)
        # A (pair, n-gram) on both sides is two neighbours: hypothesis (0), then reference (1).
        on_both = np.flatnonzero((distinct[1:] >> 1) == (distinct[:-1] >> 1))
        clipped = np.minimum(counts[on_both], counts[on_both + 1])
        matches[:, order - 1] = np.bincount(
            (distinct[on_both] >> 1) // n_codes, weights=clipped, minlength=n_pairs
        ).astype(np.int64)
    return matches


def bleu_statistics(
    predictions: Sequence[str], references: Sequence[str], *, max_order: int = BLEU_MAX_ORDER
) -> np.ndarray:
    """Per-pair sufficient statistics of corpus BLEU.

    Row ``i`` holds, for pair ``i`` (13a tokens, one reference):
    ``[hypothesis_length, reference_length, matches_1..matches_N, totals_1..totals_N]``
    where ``matches_n`` counts the hypothesis n-grams found in the reference
    (each clipped to its count there) and ``totals_n`` counts all hypothesis
    n-grams. Summing rows over any multiset of pairs and passing the sum to
    :func:`bleu_from_statistics` gives the corpus BLEU of those pairs.

    Args:
        predictions: hypothesis captions (``""`` is allowed: all zeros but the reference length).
        references: one reference caption per hypothesis.
        max_order: highest n-gram order (4 for BLEU-4).

    Returns:
        An ``int64`` array of shape ``(n_pairs, 2 + 2 * max_order)``.

    Example:
        >>> bleu_statistics(["a small lesion"], ["a small cyst"]).tolist()
        [[3, 3, 2, 1, 0, 0, 3, 2, 1, 0]]
    """
    hypotheses = [tokenize_13a(prediction) for prediction in predictions]
    references_tokens = [tokenize_13a(reference) for reference in references]
    hypothesis_lengths = np.array([len(tokens) for tokens in hypotheses], dtype=np.int64)
    reference_lengths = np.array([len(tokens) for tokens in references_tokens], dtype=np.int64)
    # n tokens have n - order + 1 n-grams of an order (none when fewer than order).
    totals = np.maximum(hypothesis_lengths[:, None] - np.arange(max_order), 0)
    matches = _clipped_matches(hypotheses, references_tokens, max_order)
    return np.concatenate(
        [hypothesis_lengths[:, None], reference_lengths[:, None], matches, totals], axis=1
    ).astype(np.int64)


def bleu_from_statistics(
    summed: Sequence[int] | np.ndarray, *, max_order: int = BLEU_MAX_ORDER
) -> float:
    """Corpus BLEU, as a fraction in [0, 1], from summed :func:`bleu_statistics` rows.

    Precisions of orders with no match are smoothed by sacrebleu's ``exp``
    method (the k-th such order gets ``1 / (2**k * total)``); a corpus with no
    match at any order scores 0; an order with no hypothesis n-gram at all
    makes the score 0; the brevity penalty is ``exp(1 - r / c)`` when the
    hypotheses are shorter than the references (0 when they are empty). The value is
    sacrebleu's score divided by 100, bit for bit, except when every n-gram matches: there
    sacrebleu's rounding gives 100 plus an ulp and this gives exactly 1.

    Args:
        summed: ``[hyp_len, ref_len, matches..., totals...]`` summed over pairs.
        max_order: highest n-gram order.

    Returns:
        BLEU in [0, 1].

    Example:
        Precisions 3/4, 2/3, 1/2 and, for the unmatched 4-gram order, 1/(2 * 1);
        (0.75 * 0.6667 * 0.5 * 0.5) ** (1/4) = 0.125 ** 0.25:

        >>> round(bleu_from_statistics([4, 4, 3, 2, 1, 0, 4, 3, 2, 1]), 6)
        0.594604
    """
    hypothesis_length, reference_length = int(summed[0]), int(summed[1])
    matches = [int(value) for value in summed[2 : 2 + max_order]]
    totals = [int(value) for value in summed[2 + max_order : 2 + 2 * max_order]]
    if not any(matches):
        return 0.0
    if hypothesis_length < reference_length:
        if hypothesis_length == 0:
            return 0.0
        brevity_penalty = math.exp(1 - reference_length / hypothesis_length)
    else:
        brevity_penalty = 1.0
    # Percent precisions and this exact order of operations keep us bit-identical to sacrebleu.
    log_precision_sum = 0.0
    unmatched_orders = 0
    for order in range(max_order):
        if totals[order] == 0:
            return 0.0  # sacrebleu floors log(0) to -1e10: exp of that is 0.0.
        if matches[order] == 0:
            unmatched_orders += 1
            precision = 100.0 / (2.0**unmatched_orders * totals[order])
        else:
            precision = 100.0 * matches[order] / totals[order]
        log_precision_sum += math.log(precision)
    # Every n-gram matched gives 1 + an ulp (sacrebleu's 100.00000000000004): a fraction stays <= 1.
    return min(1.0, brevity_penalty * math.exp(log_precision_sum / max_order) / 100.0)


def _math_elementwise(function: Callable[[float], float], values: np.ndarray) -> np.ndarray:
    """``function`` (a :mod:`math` function) of every value, as a float64 array.

    numpy's ``log``/``exp`` may round differently from :mod:`math`'s by an ulp; calling
    the very function :func:`bleu_from_statistics` calls keeps the two bit-identical.
    """
    return np.fromiter(map(function, values.ravel().tolist()), dtype=np.float64, count=values.size)


def bleu_from_statistics_rows(summed: np.ndarray, *, max_order: int = BLEU_MAX_ORDER) -> np.ndarray:
    """:func:`bleu_from_statistics` of every row of ``summed`` at once (a bootstrap's resamples).

    Each entry equals ``bleu_from_statistics(summed[row])`` exactly: the same float
    operations in the same order, numpy for the arithmetic (IEEE, as Python's floats) and
    :mod:`math` itself for the logarithms and exponentials.

    Args:
        summed: ``(n_rows, 2 + 2 * max_order)`` summed :func:`bleu_statistics` rows, integers
            or integer-valued floats (exact below 2**53).
        max_order: highest n-gram order.

    Returns:
        A float64 array of shape ``(n_rows,)``.

    Example:
        >>> rows = np.array([[4, 4, 3, 2, 1, 0, 4, 3, 2, 1], [4, 4, 0, 0, 0, 0, 4, 3, 2, 1]])
        >>> bleu_from_statistics_rows(rows).round(6).tolist()
        [0.594604, 0.0]
    """
    summed = np.asarray(summed, dtype=np.float64)
    hypothesis_length, reference_length = summed[:, 0], summed[:, 1]
    matches = summed[:, 2 : 2 + max_order]
    totals = summed[:, 2 + max_order : 2 + 2 * max_order]
    short = hypothesis_length < reference_length
    # The rows bleu_from_statistics returns 0.0 for before taking any logarithm.
    scored = (
        (matches != 0).any(axis=1) & ~(short & (hypothesis_length == 0)) & (totals != 0).all(axis=1)
    )
    scores = np.zeros(len(summed))
    if not scored.any():
        return scores
    matches, totals = matches[scored], totals[scored]
    unmatched = matches == 0
    # The k-th unmatched order gets 100 / (2**k * total); ldexp is the exact 2**k.
    smoothed = 100.0 / (np.ldexp(1.0, np.cumsum(unmatched, axis=1)) * totals)
    precisions = np.where(unmatched, smoothed, 100.0 * matches / totals)
    logs = _math_elementwise(math.log, precisions).reshape(precisions.shape)
    log_precision_sum = np.zeros(len(precisions))
    for order in range(max_order):  # left to right, as the scalar loop adds them
        log_precision_sum = log_precision_sum + logs[:, order]
    geometric_mean = _math_elementwise(math.exp, log_precision_sum / max_order)
    brevity_penalty = np.ones(len(precisions))
    penalised = short[scored]
    if penalised.any():
        ratios = reference_length[scored][penalised] / hypothesis_length[scored][penalised]
        brevity_penalty[penalised] = _math_elementwise(math.exp, 1 - ratios)
    scores[scored] = np.minimum(1.0, brevity_penalty * geometric_mean / 100.0)
    return scores


def corpus_bleu(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU-4 as a fraction: sacrebleu 2.6's default ``corpus_bleu(...).score / 100``.

    Args:
        predictions: hypothesis captions.
        references: one reference caption per hypothesis.

    Returns:
        BLEU-4 in [0, 1].

    Example:
        >>> round(corpus_bleu(["small ring-enhancing lesion in the left thalamus ."],
        ...                   ["small ring-enhancing lesion in the right thalamus ."]), 6)
        0.594604
    """
    return bleu_from_statistics(bleu_statistics(predictions, references).sum(axis=0))
