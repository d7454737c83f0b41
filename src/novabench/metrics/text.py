"""Overlap metrics for captions: BLEU-4, ROUGE-L and METEOR, with their tokenisers.

BLEU-4 and ROUGE-L are implemented here (not called through their libraries) so
that each caption pair is reduced once to a few numbers -- its *sufficient
statistics* -- and any resample of pairs (a bootstrap) is re-scored from those
numbers without tokenising again. The implementations are checked for parity
with the reference libraries in ``tests/metrics/test_text_parity.py``:

- :func:`corpus_bleu` equals ``sacrebleu.corpus_bleu(hyps, [refs]).score / 100``
  (sacrebleu 2.6 defaults: ``13a`` tokeniser, case-sensitive, ``exp``
  smoothing, brevity penalty, one reference per hypothesis).
- :func:`rouge_l_f1` equals ``RougeScorer(["rougeL"], use_stemmer=...)``'s
  F-measure from ``rouge_score`` (its default tokeniser); its stemmer is
  :func:`novabench.metrics.porter.porter_stem`, equal to nltk's ``PorterStemmer``
  (``tests/metrics/test_porter.py``).
- :func:`meteor` equals nltk's ``meteor_score`` per pair on the tokens of
  :func:`tokenize_meteor`. Variant ``"wordnet"`` (the captioning key ``METEOR``) calls
  nltk's ``meteor_score`` with the WordNet 3.0 corpus for the full exact + stem + synonym
  matching, and refuses without it; variant ``"exact+stem"`` (the key
  ``METEOR-exact+stem``) is our implementation of nltk's exact + Porter-stem matching,
  alignment and formula, so it never imports nltk (whose import alone takes about 2 s).
  The caller chooses; :func:`resolve_meteor_setting` turns ``"auto"`` into the variant
  this machine can run (:func:`meteor_variant`).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from novabench.metrics.porter import porter_stem

__all__ = [
    "BLEU_MAX_ORDER",
    "METEOR_ALPHA",
    "METEOR_BETA",
    "METEOR_GAMMA",
    "METEOR_SETTINGS",
    "WORDNET_INSTALL",
    "WORDNET_VERSION",
    "bleu_from_statistics",
    "bleu_from_statistics_rows",
    "bleu_statistics",
    "corpus_bleu",
    "lcs_length",
    "meteor",
    "meteor_alignment",
    "meteor_fallback_note",
    "meteor_scores",
    "meteor_variant",
    "nltk_version",
    "resolve_meteor_setting",
    "rouge_l_f1",
    "rouge_l_scores",
    "tokenize_13a",
    "tokenize_meteor",
    "tokenize_rouge",
    "wordnet_problem",
]

BLEU_MAX_ORDER = 4

# --------------------------------------------------------------------------- #
# Tokenisers
# --------------------------------------------------------------------------- #

# mteval-v13a splits off every ASCII symbol except apostrophe, hyphen, period
# and comma; those three follow context rules below.
_13A_SYMBOLS = '!"#$%&()*+/:;<=>?@[\\]^_`{|}~'
_13A_SYMBOL_SET = frozenset(_13A_SYMBOLS)
# The three context rules of mteval-v13a, applied in this order with
# consuming (not look-around) matches as the Perl original does, so runs such
# as "a.,b" split the same way: a period or comma after a non-digit, a period
# or comma before a non-digit, a hyphen after a digit. re.ASCII: mteval's
# digits are 0-9 only.
_13A_CONTEXT_RULES = (
    (re.compile(r"(\D)([.,])", re.ASCII), r"\1 \2 "),
    (re.compile(r"([.,])(\D)", re.ASCII), r" \1 \2"),
    (re.compile(r"(\d)(-)", re.ASCII), r"\1 \2 "),
)
# A period or comma next to a digit or to another period or comma: only then can the two
# period-and-comma rules do anything but put spaces around every one of them. (Written
# to start with the mark, which the regex engine can skip to.)
_13A_MARK_IN_CONTEXT = re.compile(r"[.,](?<=[0-9.,][.,])|[.,](?=[0-9])")
# The hyphen rule with the same result and no group to copy: a digit before a hyphen is
# never the end of an earlier match (that would be a hyphen), so look-behind finds the
# same hyphens the consuming match does.
_13A_HYPHEN_AFTER_DIGIT = re.compile(r"-(?<=[0-9]-)")


@functools.lru_cache(maxsize=1 << 16)
def tokenize_13a(text: str) -> tuple[str, ...]:
    """Tokenise like sacrebleu's default ``13a`` tokeniser (mteval-v13a, used by WMT).

    Trailing whitespace is dropped, ``<skipped>`` markers and hyphenated line
    breaks removed, the four HTML entities ``&quot; &amp; &lt; &gt;`` decoded,
    ASCII symbols split off, periods and commas split off unless inside a
    number, and a hyphen split off after a digit. Case is kept.

    Args:
        text: one caption.

    Returns:
        The tokens.

    Example:
        >>> tokenize_13a("T2-weighted image: 3.5 cm lesion, (left).")
        ('T2', '-', 'weighted', 'image', ':', '3.5', 'cm', 'lesion', ',', '(', 'left', ')', '.')
    """
    line = text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, character in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
            line = line.replace(entity, character)
    line = f" {line} "
    for symbol in _13A_SYMBOL_SET.intersection(line):  # each symbol is replaced on its own
        line = line.replace(symbol, f" {symbol} ")
    period_comma_left, period_comma_right, _ = _13A_CONTEXT_RULES
    if "." in line or "," in line:
        if _13A_MARK_IN_CONTEXT.search(line) is None:
            # Every mark has a non-digit, non-mark on both sides: both rules match each
            # one, adding only spaces around it (the tokens are the same).
            line = line.replace(".", " . ").replace(",", " , ")
        else:
            for rule, replacement in (period_comma_left, period_comma_right):
                line = rule.sub(replacement, line)
    if "-" in line:
        line = _13A_HYPHEN_AFTER_DIGIT.sub(" - ", line)
    return tuple(line.split())


_ROUGE_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
# For ASCII text (lowercased), both word rules keep the runs of [a-z0-9]: one translate of
# every other ASCII character to a space, then a split, finds them without a regex.
_ASCII_NON_ALPHANUMERIC_TO_SPACE = str.maketrans(
    {code: " " for code in range(128) if not chr(code).isalnum() or chr(code).isupper()}
)


@functools.lru_cache(maxsize=1 << 16)
def tokenize_rouge(text: str, use_stemmer: bool = False) -> tuple[str, ...]:
    """Tokenise like ``rouge_score``'s default tokeniser.

    Lowercase, every run of characters outside ``[a-z0-9]`` becomes a
    separator (so accented letters and other scripts separate words and are
    dropped); with ``use_stemmer`` tokens longer than three characters are
    reduced by the Porter stemmer (:func:`~novabench.metrics.porter.porter_stem`,
    equal to nltk's, which ``rouge_score`` uses).

    Args:
        text: one caption.
        use_stemmer: apply the Porter stemmer to tokens of four or more characters.

    Returns:
        The tokens.

    Example:
        >>> tokenize_rouge("Ring-enhancing Lesions, 12mm (Café)")
        ('ring', 'enhancing', 'lesions', '12mm', 'caf')
        >>> tokenize_rouge("Ring-enhancing Lesions", use_stemmer=True)
        ('ring', 'enhanc', 'lesion')
    """
    lowered = text.lower()
    if lowered.isascii():
        tokens = lowered.translate(_ASCII_NON_ALPHANUMERIC_TO_SPACE).split()
    else:
        tokens = _ROUGE_NON_ALPHANUMERIC.sub(" ", lowered).split()
    if use_stemmer:
        tokens = [porter_stem(token) if len(token) > 3 else token for token in tokens]
    return tuple(tokens)


_METEOR_WORD = re.compile(r"[^\W_]+")


def tokenize_meteor(text: str) -> list[str]:
    """Tokenise a caption for METEOR: lowercase, then runs of Unicode letters and digits.

    The regex is ``[^\\W_]+`` applied to ``text.lower()``: every character that
    is not a letter or digit (punctuation, hyphens, underscores, spaces)
    separates words, so ``"T2-weighted"`` gives ``["t2", "weighted"]`` and
    ``"3.5"`` gives ``["3", "5"]``.

    Args:
        text: one caption.

    Returns:
        The tokens.

    Example:
        >>> tokenize_meteor("Axial T2-weighted: Œdème, 3.5 cm")
        ['axial', 't2', 'weighted', 'œdème', '3', '5', 'cm']
    """
    lowered = text.lower()
    if lowered.isascii():  # ASCII letters and digits are exactly [a-z0-9] once lowercased
        return lowered.translate(_ASCII_NON_ALPHANUMERIC_TO_SPACE).split()
    return _METEOR_WORD.findall(lowered)


# --------------------------------------------------------------------------- #
# BLEU
# --------------------------------------------------------------------------- #


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
    hypotheses are shorter than the references (0 when they are empty).

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
    return brevity_penalty * math.exp(log_precision_sum / max_order) / 100.0


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
    scores[scored] = brevity_penalty * geometric_mean / 100.0
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


# --------------------------------------------------------------------------- #
# ROUGE-L
# --------------------------------------------------------------------------- #


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


# --------------------------------------------------------------------------- #
# METEOR
# --------------------------------------------------------------------------- #


class _NoSynonyms:
    """A stand-in for nltk's WordNet reader that knows no synsets.

    nltk's METEOR then runs its own exact and Porter-stem stages unchanged and
    its synonym stage matches nothing.
    """

    def synsets(self, *args: object, **kwargs: object) -> list:  # noqa: D102 - mirrors nltk
        return []


NO_SYNONYMS = _NoSynonyms()


@functools.lru_cache(maxsize=1)
def _wordnet_reader() -> object | None:
    """nltk's WordNet reader when the corpus is installed locally, else None (never downloads)."""
    try:
        from nltk.corpus import wordnet

        wordnet.synsets("brain")  # the first use loads the corpus, or raises LookupError
    except (LookupError, ImportError):  # the corpus, or nltk itself (an optional extra), missing
        return None
    return wordnet


def _nltk_data_paths() -> list[str]:
    """The folders nltk searches for data, without importing nltk when it is not loaded yet.

    Once nltk is imported its own ``nltk.data.path`` (which callers may extend) is used;
    before that, the list nltk builds at import: ``$NLTK_DATA``, ``~/nltk_data``, then
    the usual folders under ``sys.prefix`` and the system's (Windows: ``%APPDATA%`` too).
    """
    loaded = sys.modules.get("nltk.data")
    if loaded is not None:
        return [str(folder) for folder in getattr(loaded, "path", [])]
    paths = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        paths.append(os.path.expanduser("~/nltk_data"))
    prefix = [
        os.path.join(sys.prefix, *parts)
        for parts in (("nltk_data",), ("share", "nltk_data"), ("lib", "nltk_data"))
    ]
    if os.name == "nt":
        system = [
            os.path.join(os.environ.get("APPDATA", "C:\\"), "nltk_data"),
            r"C:\nltk_data",
            r"D:\nltk_data",
            r"E:\nltk_data",
        ]
    else:
        system = [
            "/usr/share/nltk_data",
            "/usr/local/share/nltk_data",
            "/usr/lib/nltk_data",
            "/usr/local/lib/nltk_data",
        ]
    return paths + prefix + system


def _wordnet_files_present() -> bool:
    """Whether some nltk data folder holds ``corpora/wordnet`` or ``corpora/wordnet.zip``."""
    for folder in _nltk_data_paths():
        corpora = os.path.join(folder, "corpora")
        if os.path.isdir(os.path.join(corpora, "wordnet")) or os.path.isfile(
            os.path.join(corpora, "wordnet.zip")
        ):
            return True
    return False


def meteor_variant() -> Literal["wordnet", "exact+stem"]:
    """Which METEOR matching stages will run on this machine.

    ``"wordnet"`` when nltk finds the WordNet 3.0 corpus (exact, stem and synonym
    matching; see :func:`wordnet_problem`), ``"exact+stem"`` otherwise. Scores of the two
    variants are not comparable: results carry this string as ``METEOR_variant``.

    Without WordNet files in any of nltk's data folders the answer is given from the
    file system alone (no nltk import, no corpus load); with them, nltk confirms by
    loading the corpus, which METEOR then needs anyway.

    Returns:
        ``"wordnet"`` or ``"exact+stem"``.

    Example:
        >>> meteor_variant() in ("wordnet", "exact+stem")
        True
    """
    return "wordnet" if wordnet_problem() is None else "exact+stem"


def nltk_version() -> str:
    """The installed nltk's version ("not installed" without it), read without importing nltk.

    Recorded beside ``METEOR`` (``METEOR_nltk``), which nltk's own code computes.

    Example:
        >>> isinstance(nltk_version(), str)
        True
    """
    from importlib import metadata

    try:
        return metadata.version("nltk")
    except metadata.PackageNotFoundError:
        return "not installed"


#: The WordNet ``METEOR`` means: the corpus nltk's downloader installs as ``wordnet``.
WORDNET_VERSION = "3.0"


def wordnet_problem() -> str | None:
    """Why ``METEOR`` (nltk's, with WordNet 3.0 synonyms) cannot run here; None when it can.

    Another WordNet under nltk's ``corpora/wordnet`` (3.1, an Open English WordNet) has
    other synonym sets, so another METEOR: it is a problem too, not a quiet substitute.

    Returns:
        None, or the reason in a few words.

    Example:
        >>> wordnet_problem() is None or "WordNet" in wordnet_problem()
        True
    """
    if not _wordnet_files_present():
        return "the nltk WordNet corpus is not installed"
    reader = _wordnet_reader()
    if reader is None:
        return "the nltk WordNet corpus is not installed (or nltk itself is not)"
    version = getattr(reader, "get_version", lambda: None)()
    if version != WORDNET_VERSION:
        return f"the WordNet corpus nltk finds is version {version}, not {WORDNET_VERSION}"
    return None


#: The readings of METEOR a caller may ask for: ``"wordnet"`` (nltk's full METEOR, the key
#: ``METEOR``), ``"exact+stem"`` (exact and Porter-stem matches only, its own key) and
#: ``"auto"`` (the first when the corpus is installed, else the second, said in a note).
METEOR_SETTINGS: tuple[str, ...] = ("auto", "wordnet", "exact+stem")

#: How to get the corpus, for the messages that say it is missing.
WORDNET_INSTALL = "install it with `python -m nltk.downloader wordnet`"


def resolve_meteor_setting(
    setting: str = "auto", *, option: str = "meteor"
) -> Literal["wordnet", "exact+stem"]:
    """The METEOR variant a setting asks for on this machine, or a one-line refusal.

    ``"wordnet"`` refuses when the corpus is missing (never a quietly different number);
    ``"exact+stem"`` is always available; ``"auto"`` is ``"wordnet"`` when nltk finds the
    corpus, else ``"exact+stem"`` (callers say so: :func:`meteor_fallback_note`).

    Args:
        setting: one of :data:`METEOR_SETTINGS`.
        option: how the caller's user spells the option, for the messages
            (``"meteor"`` in Python, ``"--meteor"`` on the command line).

    Returns:
        ``"wordnet"`` or ``"exact+stem"``.

    Raises:
        NovaInputError: an unknown setting, or ``"wordnet"`` without the corpus.

    Example:
        >>> resolve_meteor_setting("exact+stem")
        'exact+stem'
        >>> resolve_meteor_setting("auto") == meteor_variant()
        True
        >>> resolve_meteor_setting("synonyms")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'meteor': must be one of auto, wordnet, exact+stem, got 'synonyms'
    """
    from novabench.errors import NovaInputError

    if setting not in METEOR_SETTINGS:
        raise NovaInputError(
            f"must be one of {', '.join(METEOR_SETTINGS)}, got {setting!r}", field=option
        )
    available = meteor_variant()
    if setting == "auto":
        return available
    if setting == "wordnet" and available != "wordnet":
        raise NovaInputError(
            f"METEOR needs nltk's WordNet {WORDNET_VERSION} corpus, but {wordnet_problem()}: "
            f"{WORDNET_INSTALL}, or choose {_spelled(option, 'exact+stem')} (scored as "
            "METEOR-exact+stem, exact and stem matches only), or "
            + ("--exclude METEOR" if option.startswith("--") else 'exclude=["METEOR"]'),
            field=option,
        )
    return "exact+stem" if setting == "exact+stem" else "wordnet"


def meteor_fallback_note(*, option: str = "meteor") -> str:
    """What a report says when ``"auto"`` found no WordNet corpus and scored exact+stem.

    Example:
        >>> meteor_fallback_note(option="--meteor").split(",")[0][:20]
        'METEOR not computed:'
    """
    return (
        f"METEOR not computed: {wordnet_problem() or 'WordNet unavailable'}, so "
        "METEOR-exact+stem (exact and stem matches only, usually lower than METEOR and not "
        f"comparable with it) is given instead; {WORDNET_INSTALL}, or choose "
        f"{_spelled(option, 'exact+stem')} to ask for it"
    )


def _spelled(option: str, value: str) -> str:
    """An option with its value as the user types it: ``--meteor x`` or ``meteor="x"``."""
    return f"{option} {value}" if option.startswith("--") else f'{option}="{value}"'


class _PorterStemmer:
    """:func:`~novabench.metrics.porter.porter_stem` behind nltk's ``StemmerI`` interface."""

    def stem(self, word: str) -> str:
        return porter_stem(word)


#: nltk's METEOR defaults: precision's weight in Fmean, and the shape and weight of the
#: fragmentation penalty.
METEOR_ALPHA = 0.9
METEOR_BETA = 3.0
METEOR_GAMMA = 0.5


def _pair_equal_words(hypothesis: Sequence[str], reference: Sequence[str]) -> list[tuple[int, int]]:
    """Greedy one-to-one pairs ``(i, j)`` of equal words, in nltk's order.

    From the last hypothesis word backwards, each takes the last reference position
    holding the same word that no later hypothesis word took already.
    """
    free_positions: dict[str, list[int]] = {}
    for j, word in enumerate(reference):
        free_positions.setdefault(word, []).append(j)
    pairs = []
    for i in range(len(hypothesis) - 1, -1, -1):
        positions = free_positions.get(hypothesis[i])
        if positions:
            pairs.append((i, positions.pop()))
    return pairs


def meteor_alignment(hypothesis: Sequence[str], reference: Sequence[str]) -> list[tuple[int, int]]:
    """The exact + Porter-stem word alignment of nltk's METEOR, sorted by hypothesis position.

    Tokens are lowercased (nltk's default ``preprocess``). Stage 1 pairs equal words;
    stage 2 pairs the words left over whose Porter stems are equal. Each stage is greedy as in nltk's ``meteor_score``: from the last
    hypothesis word backwards, a word takes the last free reference position it
    matches. (nltk's third stage, WordNet synonyms, is not run here.)

    Args:
        hypothesis: hypothesis tokens.
        reference: reference tokens.

    Returns:
        ``(hypothesis_position, reference_position)`` pairs, by hypothesis position.

    Example:
        >>> meteor_alignment(["Lesions", "in", "the", "left"], ["left", "lesion", "in", "the"])
        [(0, 1), (1, 2), (2, 3), (3, 0)]
    """
    hypothesis = [word.lower() for word in hypothesis]
    reference = [word.lower() for word in reference]
    exact = _pair_equal_words(hypothesis, reference)
    taken_hypothesis = {i for i, _ in exact}
    taken_reference = {j for _, j in exact}
    left_hypothesis = [i for i in range(len(hypothesis)) if i not in taken_hypothesis]
    left_reference = [j for j in range(len(reference)) if j not in taken_reference]
    stemmed = _pair_equal_words(
        [porter_stem(hypothesis[i]) for i in left_hypothesis],
        [porter_stem(reference[j]) for j in left_reference],
    )
    by_stem = [(left_hypothesis[a], left_reference[b]) for a, b in stemmed]
    return sorted(exact + by_stem)


def _count_chunks(alignment: Sequence[tuple[int, int]]) -> int:
    """Runs of pairs contiguous on both sides (at least 1, as nltk counts an empty alignment)."""
    return 1 + sum(
        1
        for (i, j), (next_i, next_j) in zip(alignment, alignment[1:])
        if next_i != i + 1 or next_j != j + 1
    )


def _meteor_exact_stem(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    """nltk's ``single_meteor_score`` with no synonyms, same float operations in the same order."""
    if not hypothesis or not reference:
        return 0.0  # nltk divides by the empty side's length and returns 0
    alignment = meteor_alignment(hypothesis, reference)
    matches = len(alignment)
    if matches == 0:
        return 0.0  # nltk divides 0 by 0 in the harmonic mean and returns 0
    precision = float(matches) / len(hypothesis)
    recall = float(matches) / len(reference)
    fmean = (precision * recall) / (METEOR_ALPHA * precision + (1 - METEOR_ALPHA) * recall)
    fragmentation = float(_count_chunks(alignment)) / matches
    penalty = METEOR_GAMMA * fragmentation**METEOR_BETA
    return (1 - penalty) * fmean


def meteor_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    variant: Literal["wordnet", "exact+stem"] = "wordnet",
) -> np.ndarray:
    """Per-pair METEOR, equal to nltk's ``meteor_score`` on :func:`tokenize_meteor` tokens.

    nltk's defaults are kept (alpha 0.9, beta 3, gamma 0.5, Porter stemmer):
    with ``m`` aligned words (:func:`meteor_alignment`) in ``c`` chunks,
    ``P = m / len(prediction)``, ``R = m / len(reference)``,
    ``Fmean = P * R / (alpha * P + (1 - alpha) * R)`` and the score is
    ``(1 - gamma * (c / m) ** beta) * Fmean``. An empty prediction or reference, or a
    pair with no aligned word, scores 0 (nltk's rule).

    ``"exact+stem"`` is computed here without importing nltk; ``"wordnet"`` (the default:
    nltk's METEOR as it is, the matching evaluate's ``meteor`` uses) calls nltk's
    ``meteor_score`` (with our Porter stemmer, which gives nltk's stems) for its synonym
    stage. Nothing switches by itself: a missing corpus is an error, never the other variant.

    Args:
        predictions: predicted captions.
        references: reference captions.
        variant: ``"wordnet"`` (needs the corpus installed) or ``"exact+stem"``.

    Returns:
        A float array of shape ``(n_pairs,)``.

    Raises:
        NovaInputError: an unknown variant, or ``"wordnet"`` without the corpus.

    Example:
        3 of 3 words aligned in 1 chunk: Fmean 1, penalty 0.5 * (1/3) ** 3:

        >>> meteor_scores(["an enhancing lesion"], ["an enhancing lesion"], variant="exact+stem").round(4).tolist()
        [0.9815]
    """
    if variant not in ("wordnet", "exact+stem"):
        from novabench.errors import NovaInputError

        raise NovaInputError(f"must be 'wordnet' or 'exact+stem', got {variant!r}", field="variant")
    if variant == "exact+stem":
        return np.array(
            [
                _meteor_exact_stem(tokenize_meteor(prediction), tokenize_meteor(reference))
                for prediction, reference in zip(predictions, references)
            ],
            dtype=np.float64,
        )
    resolve_meteor_setting("wordnet", option="variant")  # refuses when the corpus is missing
    reader = _wordnet_reader()
    from nltk.translate.meteor_score import meteor_score

    stemmer = _PorterStemmer()
    return np.array(
        [
            meteor_score(
                [tokenize_meteor(reference)],
                tokenize_meteor(prediction),
                stemmer=stemmer,
                wordnet=reader,
            )
            for prediction, reference in zip(predictions, references)
        ],
        dtype=np.float64,
    )


def meteor(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    variant: Literal["wordnet", "exact+stem"] = "wordnet",
) -> float:
    """Mean over pairs of :func:`meteor_scores`.

    Args:
        predictions: predicted captions.
        references: reference captions.
        variant: see :func:`meteor_scores`.

    Returns:
        Mean METEOR in [0, 1] (NaN for no pairs).

    Example:
        >>> round(meteor(["an enhancing lesion", ""], ["an enhancing lesion", "a cyst"], variant="exact+stem"), 4)
        0.4907
    """
    scores = meteor_scores(predictions, references, variant=variant)
    return float(scores.mean()) if scores.size else math.nan
