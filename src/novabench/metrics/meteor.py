"""METEOR per caption pair, equal to nltk's ``meteor_score``, and which variant runs here.

:func:`meteor_scores` equals nltk's ``meteor_score`` per pair on the tokens of
:func:`~novabench.metrics.tokenizers.tokenize_meteor`. Variant ``"wordnet"`` (the
captioning key ``METEOR``) calls nltk's ``meteor_score`` with the WordNet 3.0 corpus for
the full exact + stem + synonym matching, and refuses without it; variant
``"exact+stem"`` (the key ``METEOR-exact+stem``) is our implementation of nltk's exact +
Porter-stem matching, alignment and formula, so it never imports nltk (whose import alone
takes about 2 s). The caller chooses; :func:`resolve_meteor_setting` turns ``"auto"`` into
the variant this machine can run (:func:`meteor_variant`). Parity:
``tests/metrics/test_text_parity.py`` and ``tests/metrics/test_meteor_variants.py``.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Sequence
from typing import Literal

import numpy as np

from novabench.metrics.porter import porter_stem
from novabench.metrics.tokenizers import tokenize_meteor

__all__ = [
    "METEOR_ALPHA",
    "METEOR_BETA",
    "METEOR_GAMMA",
    "METEOR_SETTINGS",
    "NO_SYNONYMS",
    "WORDNET_INSTALL",
    "WORDNET_VERSION",
    "meteor",
    "meteor_alignment",
    "meteor_fallback_note",
    "meteor_scores",
    "meteor_variant",
    "nltk_version",
    "resolve_meteor_setting",
    "wordnet_problem",
]


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
