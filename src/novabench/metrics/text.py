"""The caption overlap metrics (BLEU-4, ROUGE-L, METEOR) and their tokenisers, in one name.

Each metric lives in its own module, as ``rouge_score`` keeps its parts:

- :mod:`novabench.metrics.tokenizers`: ``tokenize_13a`` (sacrebleu's ``13a``),
  ``tokenize_rouge`` (``rouge_score``'s default) and ``tokenize_meteor``;
- :mod:`novabench.metrics.bleu`: corpus BLEU-4 from per-pair sufficient statistics;
- :mod:`novabench.metrics.rouge`: ROUGE-L F-measure per pair;
- :mod:`novabench.metrics.meteor`: METEOR per pair (``"wordnet"`` and ``"exact+stem"``)
  and which variant this machine can run.

This module re-exports their public names, so ``from novabench.metrics import text`` and
``novabench.metrics.text.<name>`` keep working. Parity with sacrebleu, rouge_score and
nltk is tested in ``tests/metrics/test_text_parity.py``.

Example:
    >>> from novabench.metrics import text
    >>> text.corpus_bleu is corpus_bleu and text.tokenize_rouge("Ring-enhancing")
    ('ring', 'enhancing')
"""

from __future__ import annotations

from novabench.metrics.bleu import (
    BLEU_MAX_ORDER,
    bleu_from_statistics,
    bleu_from_statistics_rows,
    bleu_statistics,
    corpus_bleu,
)
from novabench.metrics.meteor import (
    METEOR_ALPHA,
    METEOR_BETA,
    METEOR_GAMMA,
    METEOR_SETTINGS,
    NO_SYNONYMS,
    WORDNET_INSTALL,
    WORDNET_VERSION,
    meteor,
    meteor_alignment,
    meteor_fallback_note,
    meteor_scores,
    meteor_variant,
    nltk_version,
    resolve_meteor_setting,
    wordnet_problem,
)
from novabench.metrics.rouge import lcs_length, rouge_l_f1, rouge_l_scores
from novabench.metrics.tokenizers import tokenize_13a, tokenize_meteor, tokenize_rouge

__all__ = [
    "BLEU_MAX_ORDER",
    "METEOR_ALPHA",
    "METEOR_BETA",
    "METEOR_GAMMA",
    "METEOR_SETTINGS",
    "NO_SYNONYMS",
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
