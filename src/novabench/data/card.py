"""The dataset card of an export: a YAML header generated from the Features, a body from a template.

The header is never typed by hand. ``configs`` and ``dataset_info`` are written by the same
``datasets`` classes that ``push_to_hub`` uses (:class:`datasets.utils.metadata.MetadataConfigs`
and :class:`datasets.info.DatasetInfosDict`) into a :class:`huggingface_hub.DatasetCardData`,
so what the Hub and ``load_dataset`` read back is exactly what the Features say. The body
comes from ``dataset_card/README.template.md`` (``${name}`` placeholders), filled with
statistics counted while the export streams the rows (:func:`summarize_release`).

Example:
    >>> import datasets
    >>> from novabench.data.schema import case_features, image_features
    >>> features = {"images": image_features(), "cases": case_features()}
    >>> card = render_dataset_card(ReleaseSummary(n_images=2, n_cases=1), features)
    >>> check_dataset_card(card, features)["license"]
    'cc-by-nc-sa-4.0'
"""

from __future__ import annotations

import io
import json
import re
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import datasets
import yaml
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from novabench._version import __version__
from novabench.citation import NOVA_BIBTEX, NOVA_LICENSE
from novabench.data.provenance import source_warning
from novabench.data.schema import extra_columns
from novabench.errors import NovaInputError
from novabench.escaping import markdown_text_with_code

if TYPE_CHECKING:
    from novabench.data.release_record import NovaRelease

__all__ = [
    "CARD_LICENSE",
    "CARD_TAGS",
    "CONFIG_NAMES",
    "ConfigSize",
    "ReleaseSummary",
    "build_card_data",
    "check_dataset_card",
    "default_template_path",
    "render_dataset_card",
    "summarize_release",
]

CONFIG_NAMES: tuple[str, str] = ("images", "cases")
DEFAULT_CONFIG = "images"
SPLIT = "test"
CARD_LICENSE = NOVA_LICENSE
CARD_TAGS: tuple[str, ...] = (
    "medical",
    "mri",
    "brain",
    "neuroradiology",
    "anomaly-detection",
    "benchmark",
    "evaluation-only",
)
TASK_CATEGORIES: tuple[str, ...] = (
    "object-detection",
    "image-to-text",
    "visual-question-answering",
    "text-generation",
)

# What each column means; extra meta keys get a generic sentence (see _describe_column).
COLUMN_DESCRIPTIONS: dict[str, str] = {
    "image": "The MRI slice, PNG bytes embedded in the Parquet file (decoded to a PIL image).",
    "filename": "Image file name, e.g. `case0183_001.png`; the join key of image predictions.",
    "case_id": "Case identifier, e.g. `case0183`; the join key of diagnosis predictions.",
    "scan_id": "Number of the slice within its case, e.g. `001`.",
    "width": "Image width in pixels, read from the PNG.",
    "height": "Image height in pixels, read from the PNG.",
    "caption": "The published figure legend of this slice (reference of the captioning task).",
    "clinical_history": "The case's clinical history as published.",
    "final_diagnosis": "The case's final diagnosis (reference of the diagnosis task); may be a placeholder.",
    "title": "Title of the teaching case.",
    "publication_date": "Publication date of the teaching case, as written in the release.",
    "boxes": "Gold (consensus) boxes, `[x, y, width, height]` in pixels, top-left origin.",
    "rater_boxes": "Each rater's own boxes: `{rater, boxes}` with boxes as in `boxes`.",
    "filenames": "File names of the case's images, ordered by scan id.",
    "captions": "Captions of the case's images, in the order of `filenames`.",
}
CASE_COLUMN_DESCRIPTIONS: dict[str, str] = {
    "boxes": "Gold boxes of each image of the case, in the order of `filenames`.",
}
TEXT_PREVIEW_CHARS = 90


@dataclass(frozen=True)
class ConfigSize:
    """Sizes of one configuration's ``test`` split in an export.

    Attributes:
        num_examples: rows written.
        num_bytes: size of the rows as Arrow data in memory (what ``datasets`` calls num_bytes).
        download_size: size of the Parquet files on disk.
    """

    num_examples: int
    num_bytes: int = 0
    download_size: int = 0


@dataclass(frozen=True)
class ReleaseSummary:
    """Counts that the card prints, all computed from the exported rows.

    Example:
        >>> ReleaseSummary(n_images=2, n_cases=1).images_per_case_text()
        'none'
    """

    n_images: int
    n_cases: int
    n_gold_boxes: int = 0
    n_rater_boxes: int = 0
    raters: tuple[str, ...] = ()
    n_images_without_gold: int = 0
    n_placeholder_diagnoses: int = 0
    images_per_case: Mapping[int, int] = field(default_factory=dict)
    image_sizes: Mapping[tuple[int, int], int] = field(default_factory=dict)
    extra_meta_keys: tuple[str, ...] = ()
    source_layout: str = "unknown"
    warnings: tuple[str, ...] = ()  # what reading the release noticed, in its own words

    def known_issues_text(self) -> str:
        """The card's "Known issues": the warnings of the exported release, as Markdown.

        Example:
            >>> print(ReleaseSummary(n_images=1, n_cases=1, source_layout="v1").known_issues_text())
            `novabench` read the release this export was made from (layout v1) without a warning.
            >>> print(ReleaseSummary(n_images=1, n_cases=1, source_layout="legacy",
            ...                      warnings=("captions.csv, line 3: empty caption",)).known_issues_text())
            Reading the release this export was made from (layout legacy) gave 1 warning. The export keeps the data as the release has it; `nova info` on the export repeats the warning (the shards' `novabench.release_warnings` metadata records it).
            <BLANKLINE>
            - captions.csv, line 3: empty caption
        """
        if not self.warnings:
            return (
                f"`novabench` read the release this export was made from (layout "
                f"{self.source_layout}) without a warning."
            )
        count = len(self.warnings)
        plural = "s" if count != 1 else ""
        lines = [
            f"Reading the release this export was made from (layout {self.source_layout}) gave "
            f"{count} warning{plural}. The export keeps the data as the release has it; "
            f"`nova info` on the export repeats the warning{plural} (the shards' "
            f"`novabench.release_warnings` metadata records {'them' if plural else 'it'}).",
            "",
        ]
        lines += [f"- {markdown_text_with_code(warning)}" for warning in self.warnings]
        return "\n".join(lines)

    def images_per_case_text(self) -> str:
        """``"1: 70, 2: 62"``: number of images per case, then how many cases have it.

        Example:
            >>> ReleaseSummary(n_images=3, n_cases=2, images_per_case={2: 1, 1: 1}).images_per_case_text()
            '1: 1, 2: 1'
        """
        if not self.images_per_case:
            return "none"
        return ", ".join(f"{size}: {count}" for size, count in sorted(self.images_per_case.items()))

    def image_sizes_text(self) -> str:
        """``"480x480: 906"``, most frequent size first.

        Example:
            >>> ReleaseSummary(n_images=3, n_cases=1, image_sizes={(480, 480): 3}).image_sizes_text()
            '480x480: 3'
        """
        if not self.image_sizes:
            return "none"
        ordered = sorted(self.image_sizes.items(), key=lambda item: (-item[1], item[0]))
        return ", ".join(f"{w}x{h}: {count}" for (w, h), count in ordered)


def summarize_release(release: NovaRelease) -> ReleaseSummary:
    """Count what the card prints from a release read by :func:`novabench.data.release.read_release`.

    Args:
        release: the validated release.

    Returns:
        Its :class:`ReleaseSummary`.

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> from novabench.data.release import read_release
        >>> folder = write_sample_release(
        ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
        >>> release = read_release(folder)
        >>> s = summarize_release(release)
        >>> s.n_images, s.n_cases, s.n_images_without_gold, s.n_placeholder_diagnoses, s.image_sizes_text()
        (7, 2, 1, 1, '480x480: 7')
    """
    return ReleaseSummary(
        n_images=release.n_images,
        n_cases=release.n_cases,
        n_gold_boxes=release.n_gold_boxes,
        n_rater_boxes=sum(
            len(entry["boxes"]) for image in release.images for entry in image.rater_boxes
        ),
        raters=release.raters,
        n_images_without_gold=release.n_images_without_gold,
        n_placeholder_diagnoses=release.n_placeholder_diagnoses,
        images_per_case=release.images_per_case,
        image_sizes=dict(Counter((image.width, image.height) for image in release.images)),
        extra_meta_keys=tuple(release.extra_meta_keys),
        source_layout=release.layout,
        warnings=tuple(source_warning(warning) for warning in release.warnings),
    )


def default_template_path() -> Path:
    """Where the card body template lives (package data, so wheels carry it).

    ``dataset_card/README.template.md`` at the project's top level links to this file.

    Example:
        >>> default_template_path().name
        'README.template.md'
    """
    return Path(__file__).resolve().parents[1] / "resources" / "dataset_card" / "README.template.md"


def _size_category(n_rows: int) -> str:
    """The Hub's ``size_categories`` bucket of the largest configuration."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n_rows < limit:
            return name
    return "100K<n<1M"


# Characters a one-line card field cannot hold: control characters (a line break, NUL,
# escape...), the C1 NEL and the Unicode line and paragraph separators YAML breaks lines at.
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_card_text(value: Any, *, field: str, one_line: bool = True) -> str:
    """A text the user gives the card (its name, notice or Hub id), checked before any writing.

    It must be text and UTF-8 (a command-line argument in another encoding arrives with
    lone surrogates); a one-line field must hold something and no line break or other
    control character. The generated YAML quotes whatever is left, so it always parses.

    Raises:
        NovaInputError: naming ``field`` (the option or argument that gave the text).

    Example:
        >>> check_card_text("NOVA: brain MRI {v1}", field="--pretty-name")
        'NOVA: brain MRI {v1}'
        >>> check_card_text("  ", field="--pretty-name")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: --pretty-name: is blank
    """
    if not isinstance(value, str):
        raise NovaInputError(f"must be text, got {type(value).__name__}", source=field)
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise NovaInputError(
            f"is not UTF-8 text (a byte that is no UTF-8 at character {bad.start() + 1})",
            source=field,
        )
    if one_line:
        if not value.strip():
            raise NovaInputError("is blank", source=field)
        bad = _NOT_ONE_LINE.search(value)
        if bad is not None:
            raise NovaInputError(
                f"must be one line of text; it holds the control character "
                f"U+{ord(bad.group()):04X} at character {bad.start() + 1}",
                source=field,
            )
    elif "\x00" in value:
        raise NovaInputError("holds a NUL character", source=field)
    return value


def build_card_data(
    features_by_config: Mapping[str, datasets.Features],
    sizes_by_config: Mapping[str, ConfigSize],
    *,
    pretty_name: str = "NOVA",
) -> DatasetCardData:
    """The card's YAML metadata, with ``configs`` and ``dataset_info`` written by ``datasets`` itself.

    Args:
        features_by_config: the Features of ``images`` and ``cases``.
        sizes_by_config: rows and bytes of each configuration's ``test`` split.
        pretty_name: the human-readable name shown on the Hub.

    Returns:
        A :class:`huggingface_hub.DatasetCardData`; ``str()`` of it is the YAML header.

    Example:
        >>> import datasets
        >>> feats = {"images": datasets.Features({"filename": datasets.Value("string")}),
        ...          "cases": datasets.Features({"case_id": datasets.Value("string")})}
        >>> data = build_card_data(feats, {"images": ConfigSize(3), "cases": ConfigSize(1)})
        >>> [c["config_name"] for c in data["configs"]], data["license"]
        (['cases', 'images'], 'cc-by-nc-sa-4.0')
    """
    missing = [
        name
        for name in CONFIG_NAMES
        if name not in features_by_config or name not in sizes_by_config
    ]
    if missing:
        raise NovaInputError(
            f"features and sizes are needed for every configuration; missing {missing}",
            source="features_by_config",
        )
    largest = max(sizes_by_config[name].num_examples for name in CONFIG_NAMES)
    card_data = DatasetCardData(
        pretty_name=pretty_name,
        language=["en"],
        license=CARD_LICENSE,
        annotations_creators=["expert-generated"],
        language_creators=["expert-generated"],
        multilinguality=["monolingual"],
        source_datasets=["original"],
        size_categories=[_size_category(largest)],
        task_categories=list(TASK_CATEGORIES),
        tags=list(CARD_TAGS),
    )
    MetadataConfigs(
        {
            name: {
                "data_files": [{"split": SPLIT, "path": f"data/{name}/{SPLIT}-*"}],
                **({"default": True} if name == DEFAULT_CONFIG else {}),
            }
            for name in CONFIG_NAMES
        }
    ).to_dataset_card_data(card_data)
    infos = DatasetInfosDict()
    for name in CONFIG_NAMES:
        size = sizes_by_config[name]
        splits = SplitDict()
        splits.add(SplitInfo(name=SPLIT, num_bytes=size.num_bytes, num_examples=size.num_examples))
        infos[name] = DatasetInfo(
            features=features_by_config[name],
            splits=splits,
            download_size=size.download_size,
            dataset_size=size.num_bytes,
        )
    infos.to_dataset_card_data(card_data)
    return card_data


def _feature_type(feature: Any) -> str:
    """A short readable type, e.g. ``list of list of float32``."""
    if isinstance(feature, datasets.Image):
        return "image"
    if isinstance(feature, datasets.Value):
        return feature.dtype
    if isinstance(feature, (datasets.List, datasets.LargeList)):
        return f"list of {_feature_type(feature.feature)}"
    if isinstance(feature, datasets.Sequence):  # pragma: no cover - our schema uses List
        return f"sequence of {_feature_type(feature.feature)}"
    if isinstance(feature, dict):
        inner = ", ".join(f"{key}: {_feature_type(value)}" for key, value in feature.items())
        return "{" + inner + "}"
    return type(feature).__name__


def _describe_column(name: str, config: str, extra_origin: Mapping[str, str]) -> str:
    if config == "cases" and name in CASE_COLUMN_DESCRIPTIONS:
        return CASE_COLUMN_DESCRIPTIONS[name]
    if name in extra_origin:
        return f"Extra per-case field of the release (`meta` key `{extra_origin[name]}`), kept verbatim."
    if name in COLUMN_DESCRIPTIONS:
        return COLUMN_DESCRIPTIONS[name]
    return "Extra per-case field of the release, kept verbatim."


def _fields_table(features: datasets.Features, config: str, extra_origin: Mapping[str, str]) -> str:
    lines = ["| field | type | description |", "|---|---|---|"]
    for name, feature in features.items():
        description = _describe_column(name, config, extra_origin)
        lines.append(f"| `{name}` | `{_feature_type(feature)}` | {description} |")
    return "\n".join(lines)


def _preview(value: Any) -> Any:
    """A row value shortened for the card: long texts cut, image bytes described, floats rounded."""
    if isinstance(value, str):
        return value if len(value) <= TEXT_PREVIEW_CHARS else value[: TEXT_PREVIEW_CHARS - 1] + "…"
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, Mapping):
        if isinstance(value.get("bytes"), (bytes, bytearray)):
            return _image_repr(bytes(value["bytes"]))
        return {key: _preview(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if all(isinstance(item, (int, float)) for item in value):
            return [_preview(item) for item in value]  # a box: always whole
        shown = [_preview(item) for item in value[:3]]
        return shown + ["…"] if len(value) > 3 else shown
    return value


def _image_repr(data: bytes) -> str:
    """What a decoded ``datasets.Image`` prints like, read from the image header only."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return f"<PIL.{type(image).__module__.split('.')[-1]}.{type(image).__name__} image mode={image.mode} size={image.width}x{image.height}>"


def _instance_json(row: Mapping[str, Any] | None) -> str:
    """One key per line, values on one line each: readable and still valid JSON."""
    if not row:
        return "{}"
    lines = [
        f"  {json.dumps(key)}: {json.dumps(_preview(value), ensure_ascii=False)}"
        for key, value in row.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}"


def render_dataset_card(
    release_summary: ReleaseSummary,
    features_by_config: Mapping[str, datasets.Features],
    *,
    pretty_name: str = "NOVA",
    sizes_by_config: Mapping[str, ConfigSize] | None = None,
    hub_id: str = "path/to/nova-export",
    image_instance: Mapping[str, Any] | None = None,
    case_instance: Mapping[str, Any] | None = None,
    template_path: Path | str | None = None,
    notice: str | None = None,
) -> str:
    """The full ``README.md`` of an export: generated YAML header, then the templated body.

    Args:
        release_summary: counts of the exported rows (:func:`summarize_release`).
        features_by_config: Features of the ``images`` and ``cases`` configurations.
        pretty_name: dataset name shown on the Hub and in the title.
        sizes_by_config: rows and bytes per configuration; rows default to the summary's
            counts and bytes to 0 when not given.
        hub_id: what the usage snippets pass to ``load_dataset`` (a Hub id or a folder).
        image_instance: one ``images`` row to show (image bytes are described, not printed).
        case_instance: one ``cases`` row to show.
        template_path: body template; ``dataset_card/README.template.md`` by default.
        notice: a paragraph shown as a quote right under the title, e.g. to say that the
            export holds the synthetic sample and not the real release.

    Returns:
        The card text, ready to be written as ``README.md``.

    Raises:
        NovaInputError: the template is missing or names a placeholder nobody fills.

    Example:
        >>> import datasets
        >>> feats = {"images": datasets.Features({"filename": datasets.Value("string")}),
        ...          "cases": datasets.Features({"case_id": datasets.Value("string")})}
        >>> text = render_dataset_card(ReleaseSummary(n_images=3, n_cases=1), feats)
        >>> text.startswith("---\\n"), "# Dataset Card for NOVA" in text
        (True, True)
    """
    if sizes_by_config is None:
        sizes_by_config = {
            "images": ConfigSize(release_summary.n_images),
            "cases": ConfigSize(release_summary.n_cases),
        }
    card_data = build_card_data(features_by_config, sizes_by_config, pretty_name=pretty_name)
    path = Path(template_path) if template_path is not None else default_template_path()
    try:
        template = string.Template(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise NovaInputError(f"cannot read the card template: {error}", source=str(path)) from error
    s = release_summary
    extra_origin = {column: key for key, column in extra_columns(s.extra_meta_keys).items()}
    values = {
        "pretty_name": pretty_name,
        "notice": "".join(f"> {line}\n" for line in notice.strip().splitlines()) + "\n"
        if notice
        else "",
        "novabench_version": __version__,
        "source_layout": s.source_layout,
        "n_images": s.n_images,
        "n_cases": s.n_cases,
        "n_images_with_gold": s.n_images - s.n_images_without_gold,
        "n_images_without_gold": s.n_images_without_gold,
        "n_gold_boxes": s.n_gold_boxes,
        "n_rater_boxes": s.n_rater_boxes,
        "raters": ", ".join(s.raters) if s.raters else "no rater boxes",
        "image_sizes": s.image_sizes_text(),
        "n_placeholder_diagnoses": s.n_placeholder_diagnoses,
        "images_per_case": s.images_per_case_text(),
        "known_issues": s.known_issues_text(),
        "image_instance": _instance_json(image_instance),
        "case_instance": _instance_json(case_instance),
        "image_fields_table": _fields_table(features_by_config["images"], "images", extra_origin),
        "case_fields_table": _fields_table(features_by_config["cases"], "cases", extra_origin),
        "hub_id": hub_id,
        "bibtex": NOVA_BIBTEX.strip(),
    }
    try:
        body = template.substitute(values)
    except (KeyError, ValueError) as error:
        raise NovaInputError(
            f"the card template has an unknown or malformed placeholder: {error}", source=str(path)
        ) from error
    return f"---\n{card_data.to_yaml()}\n---\n\n{body}"


def check_dataset_card(
    text: str, features_by_config: Mapping[str, datasets.Features] | None = None
) -> DatasetCardData:
    """Check a card offline the way the Hub and ``load_dataset`` will read it.

    Parses the YAML header with ``huggingface_hub``, then reads ``configs`` and ``dataset_info``
    back with the ``datasets`` classes, and checks the licence, tags, a single default
    configuration and, when given, that the features equal ``features_by_config``.

    Args:
        text: the card (``README.md``) text.
        features_by_config: expected Features per configuration, or None to skip that check.

    Returns:
        The parsed :class:`huggingface_hub.DatasetCardData`.

    Raises:
        NovaInputError: naming the first key that is missing or wrong.

    Example:
        >>> check_dataset_card("no header")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: README.md, field 'YAML header': the card has no YAML metadata
    """
    source = "README.md"
    if not text.startswith("---\n"):
        raise NovaInputError("the card has no YAML metadata", source=source, field="YAML header")
    try:
        header = yaml.safe_load(text.split("---\n", 2)[1])
        # DatasetCard parses into its card_data_class, DatasetCardData; huggingface_hub types
        # .data as the base class CardData.
        card_data = cast(DatasetCardData, DatasetCard(text).data)
    except (yaml.YAMLError, ValueError, IndexError) as error:
        raise NovaInputError(
            f"the YAML header does not parse: {error}", source=source, field="YAML header"
        ) from error
    if not isinstance(header, dict):
        raise NovaInputError("the YAML header is not a mapping", source=source, field="YAML header")
    for key in (
        "license",
        "configs",
        "dataset_info",
        "pretty_name",
        "task_categories",
        "tags",
        "language",
    ):
        if not card_data.get(key):
            raise NovaInputError("required key is missing or empty", source=source, field=key)
    if card_data["license"] != CARD_LICENSE:
        raise NovaInputError(
            f"licence must be {CARD_LICENSE}, got {card_data['license']!r}",
            source=source,
            field="license",
        )
    missing_tags = sorted(set(CARD_TAGS) - set(card_data["tags"]))
    if missing_tags:
        raise NovaInputError(f"tags {missing_tags} are missing", source=source, field="tags")
    try:
        configs = MetadataConfigs.from_dataset_card_data(card_data)
        default = configs.get_default_config_name()
        infos = DatasetInfosDict.from_dataset_card_data(card_data)
    except ValueError as error:
        raise NovaInputError(str(error), source=source, field="configs") from error
    if sorted(configs) != sorted(CONFIG_NAMES) or default != DEFAULT_CONFIG:
        raise NovaInputError(
            f"configs must be {list(CONFIG_NAMES)} with default {DEFAULT_CONFIG!r}, got {sorted(configs)} "
            f"(default {default!r})",
            source=source,
            field="configs",
        )
    if sorted(infos) != sorted(CONFIG_NAMES):
        raise NovaInputError(
            f"dataset_info lists {sorted(infos)}", source=source, field="dataset_info"
        )
    for name in CONFIG_NAMES:
        info = infos[name]
        if info.splits is None or SPLIT not in info.splits:
            raise NovaInputError(
                f"no {SPLIT!r} split", source=source, record=name, field="dataset_info.splits"
            )
        if features_by_config is not None and info.features != features_by_config[name]:
            raise NovaInputError(
                "features differ from the schema",
                source=source,
                record=name,
                field="dataset_info.features",
            )
    return card_data
