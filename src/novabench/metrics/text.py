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

# Star imports take each module's own __all__: a name added there is re-exported here too.
from novabench.metrics import bleu as _bleu
from novabench.metrics import meteor as _meteor
from novabench.metrics import rouge as _rouge
from novabench.metrics import tokenizers as _tokenizers
from novabench.metrics.bleu import *  # noqa: F403
from novabench.metrics.meteor import *  # noqa: F403
from novabench.metrics.rouge import *  # noqa: F403
from novabench.metrics.tokenizers import *  # noqa: F403

__all__ = sorted([*_tokenizers.__all__, *_bleu.__all__, *_rouge.__all__, *_meteor.__all__])
