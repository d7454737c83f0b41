"""NOVA as a Hugging Face ``datasets`` dataset: ``NovaBuilder`` and ``load_nova``.

NOVA is an evaluation-only benchmark: about 900 brain MRI images of 281 rare pathologies
with captions, clinical histories, final diagnoses and expert boxes (Eurorad teaching
cases). It must never be used to train or fine-tune a model.

- Paper: NeurIPS 2025 Datasets and Benchmarks track, arXiv 2505.14064 (title and BibTeX:
  ``novabench.citation.NOVA_BIBTEX``, the one citation every face uses).
- Homepage: https://huggingface.co/datasets/c-i-ber/Nova
- License of the data: CC BY-NC-SA 4.0.

Loading scripts are gone from ``datasets`` (>= 4), so the builder is used as a class:
``NovaBuilder(config_name="cases", data_dir=RELEASE).download_and_prepare()``; or simply
``load_nova(RELEASE)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import yaml

from novabench._files import writing_to
from novabench.citation import NOVA_BIBTEX, NOVA_HUB_ID, NOVA_LICENSE
from novabench.data.release import (
    NovaRelease,
    _front_matter,
    detect_layout,
    iter_case_rows,
    iter_image_rows,
    read_release,
)
from novabench.data.schema import case_features, image_features
from novabench.errors import NovaInputError, warn_at_caller
from novabench.hub import hub_errors, hub_offline, looks_like_path

__all__ = [
    "CITATION",
    "CONFIG_NAMES",
    "HOMEPAGE",
    "LICENSE",
    "NovaBuilder",
    "NovaReleaseWarning",
    "load_nova",
    "warn_release_warnings",
]

# One citation source for every face (card, metric, builder): novabench.citation.
HOMEPAGE = f"https://huggingface.co/datasets/{NOVA_HUB_ID}"
LICENSE = NOVA_LICENSE
CONFIG_NAMES = ("images", "cases")
CITATION = NOVA_BIBTEX
DESCRIPTION = (
    "NOVA: an evaluation-only benchmark of brain MRI images of rare pathologies for anomaly "
    "localisation, captioning and diagnostic reasoning. Never train on it."
)


class NovaBuilder(datasets.GeneratorBasedBuilder):
    """Builds NOVA from a local release folder (official v1 or legacy layout).

    Configurations: ``images`` (default, one row per image) and ``cases`` (one row per
    case, images in scan order); one split, ``test``. The release is read and validated
    when the builder is created (``novabench.data.release.read_release``); its extra meta
    keys become extra string columns. Images are embedded as PNG bytes, so the prepared
    cache keeps working after the release folder moves; the cache is keyed on the release
    content (``NovaRelease.fingerprint``), so an edited release is rebuilt, never served stale.

    Evaluation only: NOVA must not be used for training. License CC BY-NC-SA 4.0.
    Cite arXiv 2505.14064 (``CITATION``).

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> release = write_sample_release(
        ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
        >>> builder = NovaBuilder(config_name="cases", data_dir=str(release), cache_dir=tempfile.mkdtemp())
        >>> builder.download_and_prepare()
        >>> builder.as_dataset(split="test")["filenames"][1][:2]
        ['case0002_001.png', 'case0002_002.png']
    """

    # 1.1.0: boxes float64 (were float32). The prepared cache is keyed on the release's
    # fingerprint and this version: a cache prepared with float32 boxes is not served.
    VERSION = datasets.Version("1.1.0")
    BUILDER_CONFIGS = [
        datasets.BuilderConfig(name="images", version=VERSION, description="One row per image."),
        datasets.BuilderConfig(
            name="cases", version=VERSION, description="One row per case, images in order."
        ),
    ]
    DEFAULT_CONFIG_NAME = "images"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        data_dir = kwargs.get("data_dir")
        if data_dir is None:
            raise NovaInputError(
                "NovaBuilder needs the release folder: NovaBuilder(data_dir='/path/to/Nova')",
                source="NovaBuilder",
                field="data_dir",
            )
        config_name = kwargs.get("config_name") or (args[2] if len(args) > 2 else None)
        if config_name is not None and config_name not in CONFIG_NAMES:
            raise NovaInputError(
                f"unknown configuration {config_name!r}; choose one of {', '.join(CONFIG_NAMES)}",
                source="NovaBuilder",
                field="config_name",
            )
        self.release: NovaRelease = read_release(data_dir)
        warn_release_warnings(self.release.warnings, self.release.root)
        kwargs["data_dir"] = str(self.release.root)
        kwargs.setdefault("dataset_name", "nova")
        kwargs.setdefault("hash", self.release.fingerprint())
        super().__init__(*args, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        extra = self.release.extra_meta_keys
        features = case_features(extra) if self.config.name == "cases" else image_features(extra)
        return datasets.DatasetInfo(
            description=DESCRIPTION,
            features=features,
            homepage=HOMEPAGE,
            license=LICENSE,
            citation=CITATION,
        )

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={})]

    def _generate_examples(self) -> Any:
        # Boxes are made Python floats here, as Arrow stores them (float64: the release's
        # values to the bit), so a streamed row equals the prepared one exactly.
        if self.config.name == "cases":
            for row in iter_case_rows(self.release):
                row["boxes"] = [_float64(boxes) for boxes in row["boxes"]]
                yield row["case_id"], row
        else:
            for row in iter_image_rows(self.release, embed_images=True):
                row["boxes"] = _float64(row["boxes"])
                for entry in row["rater_boxes"]:
                    entry["boxes"] = _float64(entry["boxes"])
                yield row["filename"], row


class NovaReleaseWarning(UserWarning):
    """What reading a release noticed (``NovaRelease.warnings``), told to a Python user."""


#: Warnings a message quotes; the rest are counted (``read_release(...).warnings`` has all).
_WARNINGS_SHOWN = 5


def warn_release_warnings(found: list[str], root: str | os.PathLike[str]) -> str | None:
    """Tell the reading warnings of a release as one :class:`NovaReleaseWarning`, as ``nova``
    commands print them; nothing when there are none.

    Args:
        found: the release's warnings (``NovaRelease.warnings``).
        root: the release folder, named in the message.

    Returns:
        The message warned, or None.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = warn_release_warnings(["captions.csv, line 3: empty caption"], "/data/Nova")
        >>> print(caught[0].message)
        reading the NOVA release /data/Nova gave 1 warning: captions.csv, line 3: empty caption
        >>> warn_release_warnings([], "/data/Nova") is None
        True
    """
    if not found:
        return None
    shown = "; ".join(found[:_WARNINGS_SHOWN])
    more = len(found) - _WARNINGS_SHOWN
    rest = f"; and {more} more (read_release(...).warnings lists them all)" if more > 0 else ""
    plural = "s" if len(found) != 1 else ""
    message = f"reading the NOVA release {root} gave {len(found)} warning{plural}: {shown}{rest}"
    warn_at_caller(message, NovaReleaseWarning)  # the line calling load_nova / NovaBuilder
    return message


def _export_recorded_warnings(folder: Path) -> list[str]:
    """The warnings a ``nova export`` recorded of its source release (first image shard),
    and one when its boxes are stored as float32 (an export written before float64)."""
    import pyarrow.parquet as pq

    from novabench.data.layouts.export import (
        float32_box_columns,
        float32_box_warning,
        image_shards,
    )
    from novabench.data.provenance import recorded_warnings

    shards = image_shards(folder)
    if not shards:
        return []  # load_dataset names what is missing
    schema = pq.read_schema(shards[0])
    source = shards[0].relative_to(folder).as_posix()
    found = recorded_warnings(schema.metadata, source)
    narrow = float32_box_warning(float32_box_columns(schema), source)
    return [*found, narrow] if narrow else found


def _float64(boxes: list[list[float]]) -> list[list[float]]:
    return [np.asarray(box, dtype=np.float64).tolist() for box in boxes]


def _export_config_names(folder: Path) -> list[str]:
    header = yaml.safe_load(_front_matter(folder / "README.md")) or {}
    return [
        entry.get("config_name", "default")
        for entry in header.get("configs", [])
        if isinstance(entry, dict)
    ]


def _download(repo_id: str) -> Path:
    """A local snapshot of a Hub dataset repository, or a NovaInputError saying what to do."""
    from huggingface_hub import snapshot_download

    how = (
        "or download the release once (e.g. `hf download c-i-ber/Nova --repo-type dataset "
        "--local-dir /path/to/Nova`) and point at the folder: load_nova('/path/to/Nova')"
    )
    if hub_offline():
        # snapshot_download would serve a cached copy; say plainly when there is none.
        try:
            return Path(snapshot_download(repo_id, repo_type="dataset"))
        except (OSError, ValueError) as error:
            raise NovaInputError(
                "cannot fetch the dataset from the Hub (HF_HUB_OFFLINE is set) and it is not in "
                f"the local cache; unset HF_HUB_OFFLINE to download it, {how}",
                source=repo_id,
            ) from error
    with hub_errors(repo_id, action="cannot fetch the dataset from the Hub", then=how):
        snapshot = snapshot_download(repo_id, repo_type="dataset")
    return Path(snapshot)


def load_nova(
    source: str | os.PathLike[str],
    config: str = "images",
    split: str | None = "test",
    *,
    streaming: bool = False,
    cache_dir: str | None = None,
) -> Any:
    """Load NOVA as a ``datasets`` dataset from a release folder, an export or the Hub.

    Args:
        source: a local release folder (official v1 or legacy layout), a folder written by
            ``nova export``, or a Hub dataset id ``owner/name`` (downloaded with
            ``huggingface_hub.snapshot_download`` and then read the same way; from the
            local cache only when ``HF_HUB_OFFLINE=1``). A missing path that reads as a
            path (see :func:`novabench.hub.looks_like_path`) is an error, never a Hub id.
        config: ``"images"`` (one row per image) or ``"cases"`` (one row per case).
        split: ``"test"`` (the only split); None returns the ``DatasetDict``.
        streaming: return an ``IterableDataset`` that reads rows lazily.
        cache_dir: where prepared Arrow files go (default: the ``datasets`` cache).

    Returns:
        A ``Dataset`` (or ``IterableDataset`` when streaming; a dict of them when
        ``split`` is None). Rows match ``novabench.data.schema``.

    Raises:
        NovaInputError: unknown configuration, no such folder, not a NOVA folder, or a Hub
            id that cannot be fetched (one line saying why and how to use a local copy).

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> folder = write_sample_release(
        ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, layout="legacy", progress=False)
        >>> test = load_nova(folder, cache_dir=tempfile.mkdtemp())
        >>> test.num_rows, test[0]["filename"], test[0]["image"].size
        (7, 'case0001_001.png', (480, 480))
    """
    if config not in CONFIG_NAMES:
        raise NovaInputError(
            f"unknown configuration {config!r}; choose one of {', '.join(CONFIG_NAMES)}",
            source="load_nova",
            field="config",
        )
    text = os.fspath(source)
    folder = Path(text).expanduser()
    if not folder.exists():
        if looks_like_path(text):
            raise NovaInputError(
                "no such folder (a Hub dataset id has the form owner/name)", source=text
            )
        folder = _download(text)
    # A cache folder that cannot be written (permission, read-only, full) is one error
    # naming it; an input that cannot be read passes unchanged (see writing_to).
    cache = Path(cache_dir if cache_dir is not None else datasets.config.HF_DATASETS_CACHE)
    if detect_layout(folder) == "export":
        available = _export_config_names(folder)
        if config not in available:
            raise NovaInputError(
                f"configuration {config!r} is not in this export (it has: {', '.join(available) or 'none'})",
                source=str(folder / "README.md"),
                field="configs",
            )
        warn_release_warnings(_export_recorded_warnings(folder), folder)
        with writing_to(cache.expanduser()):
            return datasets.load_dataset(
                str(folder), config, split=split, streaming=streaming, cache_dir=cache_dir
            )
    with writing_to(cache.expanduser()):
        builder = NovaBuilder(config_name=config, data_dir=str(folder), cache_dir=cache_dir)
        if streaming:
            return builder.as_streaming_dataset(split=split)
        builder.download_and_prepare()
        return builder.as_dataset(split=split)
