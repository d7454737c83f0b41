"""How image captioning is scored, broken down and ranked.

Its reference is the image's caption, required of every scored image; its judge, when one
is given, is the keyword judge; its metric takes the scoring options' ``caption_options``
(checked and settled by :func:`novabench.metrics.captioning.settle_scoring_options` before
any scoring); the leaderboard ranks it on ``ROUGE-L``, a mean over captions, and two
reports are incomparable where their BERTScore model, METEOR variant or keyword settings
differ.

Example:
    >>> BEHAVIOUR.rank_metric, BEHAVIOUR.reference_required
    ('ROUGE-L', True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novabench.tasks import ItemTablesMismatch, JudgeKind, TaskBehaviour

__all__ = [
    "BEHAVIOUR",
    "KEYWORD_METRICS",
    "item_case_ids",
    "item_mean_terms",
    "judge",
    "metric_options",
    "rank_item_values",
]

#: The metrics the keyword extractor (lexicon or judge) and its averaging decide.
KEYWORD_METRICS: tuple[str, ...] = (
    "ClinicalF1",
    "ModalityF1",
    "BinaryF1",
    "ClinicalF1-lexicon",
    "ModalityF1-lexicon",
    "BinaryF1-lexicon",
    "SequencePlaneF1",
)
_LEXICON_NOTE = (
    "the offline keyword lexicon's proxy: another quantity; the paper's need the keyword judge "
    "(nova evaluate --keyword-judge --judge-endpoint URL --judge-model NAME)"
)
_RANK_METRIC = "ROUGE-L"


def judge(options: Any) -> tuple[JudgeKind | None, Any]:
    """The keyword judge of the scoring options, if one is given.

    Example:
        >>> from types import SimpleNamespace
        >>> judge(SimpleNamespace(keyword_judge="a judge")), judge(SimpleNamespace(keyword_judge=None))
        (('keyword', 'a judge'), (None, None))
    """
    if options.keyword_judge is None:
        return None, None
    return "keyword", options.keyword_judge


def metric_options(options: Any) -> tuple[dict[str, Any], list[str]]:
    """The caption options and keyword judge of the scoring options, as the metric takes them.

    Example:
        >>> from types import SimpleNamespace
        >>> metric_options(SimpleNamespace(caption_options={"meteor": "auto"}, keyword_judge=None))
        ({'meteor': 'auto'}, [])
    """
    chosen = dict(options.caption_options)
    if options.keyword_judge is not None:
        chosen["keyword_judge"] = options.keyword_judge
    return chosen, []


def rank_item_values(
    tables: Mapping[str, Any], reading: str = _RANK_METRIC
) -> tuple[list[str], Any]:
    """Filenames and per-caption ROUGE-L of the images table, unscored captions left out.

    A caption without a value was not scored (``--answered-only``; an unanswered caption
    scored in full has its 0).

    Raises:
        ItemTablesMismatch: ``reading`` is not ROUGE-L, or the table has no ROUGE-L column.

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png"], "ROUGE-L": [0.5, None]})
        >>> keys, values = rank_item_values({"images": images}, "ROUGE-L")
        >>> keys, values.tolist()
        (['a.png'], [0.5])
    """
    images = tables["images"]
    if reading != _RANK_METRIC or _RANK_METRIC not in images.columns:
        raise ItemTablesMismatch(
            f"the images table's {_RANK_METRIC} column gives {_RANK_METRIC}, not {reading}"
            if reading != _RANK_METRIC
            else f"the images table has no {_RANK_METRIC} column"
        )
    values = images[_RANK_METRIC].astype(float)
    scored = images[values.notna()]
    return list(scored["filename"]), values[values.notna()].to_numpy()


# Per-caption scores whose mean is the headline value (BLEU-4 is a corpus statistic).
_CAPTION_MEANS = ("ROUGE-L", "METEOR", "METEOR-exact+stem")


def item_mean_terms(tables: Mapping[str, Any], key: str) -> tuple[Any, Any] | None:
    """Per scored caption (unscored ones left out; the table's order, the evaluation's) the
    terms of ``key``: its value, weight 1; None when the images table has no such column.

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png"], "ROUGE-L": [0.5, None]})
        >>> [terms.tolist() for terms in item_mean_terms({"images": images}, "ROUGE-L")]
        [[0.5], [1.0]]
        >>> item_mean_terms({"images": images}, "BLEU-4") is None
        True
    """
    import numpy as np

    images = tables["images"]
    if key not in _CAPTION_MEANS or key not in images.columns:
        return None
    values = images[key].astype(float)
    scored = values[values.notna()].to_numpy(float)
    return scored, np.ones(len(scored))


def item_case_ids(tables: Mapping[str, Any], key: str) -> list[str] | None:
    """The case id of each scored caption (the rows of :func:`item_mean_terms` for ``key``);
    None when the images table has no such column or no case ids (older tables).

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png"], "case_id": ["c1", "c2"],
        ...                        "ROUGE-L": [0.5, None]})
        >>> item_case_ids({"images": images}, "ROUGE-L")
        ['c1']
    """
    images = tables["images"]
    if key not in _CAPTION_MEANS or not {key, "case_id"} <= set(images.columns):
        return None
    return [str(case) for case in images.loc[images[key].astype(float).notna(), "case_id"]]


BEHAVIOUR = TaskBehaviour(
    task="captioning",
    reference=lambda image: image.caption,
    # The metric would name only an index: a missing caption is refused naming the image.
    reference_required=True,
    judge=judge,
    metric_options=metric_options,
    settle_metric_options="novabench.metrics.captioning:settle_scoring_options",
    baseline_answer="novabench.run.baselines:answer_captioning",
    breakdown_dimensions=("pathology_category", "sequence", "plane", "images_per_case"),
    rank_metric=_RANK_METRIC,
    rank_item_column=("images", _RANK_METRIC),
    rank_item_values=rank_item_values,
    mean_keys=_CAPTION_MEANS,
    item_mean_terms=item_mean_terms,
    item_case_ids=item_case_ids,
    comparability_settings=(
        ("BERTScore_hash", ("BERTScore-F1",)),
        ("METEOR_variant", ("METEOR", "METEOR-exact+stem")),
        ("METEOR_nltk", ("METEOR",)),
        ("keyword_extractor", KEYWORD_METRICS),
        ("keyword_averaging", KEYWORD_METRICS),
        ("answered_only", ("*",)),
    ),
    stand_in_notes=tuple(
        (key, _LEXICON_NOTE)
        for key in ("ClinicalF1-lexicon", "ModalityF1-lexicon", "BinaryF1-lexicon")
    ),
)
