"""Export a NOVA release as a Hub-ready dataset folder (Parquet + card) or as COCO JSON.

Parquet (the default)::

    OUT/README.md                                   card, YAML header generated from the Features
    OUT/data/images/test-00000-of-0000N.parquet     one row per image, PNG bytes embedded
    OUT/data/cases/test-00000-of-00001.parquet      one row per case

``datasets.load_dataset(OUT, "images", split="test")`` (or ``"cases"``, or a Hub id after
``push_to``) reads it offline, with ``streaming=True`` too. The shards are the export
layout's (``novabench.data.layouts.export`` writes them, streaming, and reads them back);
this module adds the card, the COCO form and the push.

COCO::

    OUT/images/<filename>                 the PNGs, copied byte for byte (or written from the bytes
                                          embedded in an export that is exported again)
    OUT/annotations/gold.json             COCO detection file of the gold boxes
    OUT/annotations/raters.json           each rater's boxes, with a ``rater`` field (optional)

Both formats are written into a temporary sibling of ``OUT`` and renamed at the end: an
error midway leaves nothing at ``OUT``.

Example:
    >>> import tempfile
    >>> from novabench.data.sample import write_sample_release
    >>> release = write_sample_release(
    ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
    >>> summary = export_release(release, Path(tempfile.mkdtemp()) / "nova", progress=False)
    >>> summary.n_images, summary.n_cases, [p.as_posix() for p in summary.files][:2]
    (7, 2, ['README.md', 'data/cases/test-00000-of-00001.parquet'])
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from novabench._files import (
    OUTPUT_MARKER,
    check_output_folder,
    check_output_paths,
    make_staging_folder,
    mark_output_folder,
    replace_folder,
    write_failure_reason,
    write_text_atomic,
    writing_to,
)
from novabench._version import __version__
from novabench.citation import NOVA_ARXIV_URL, NOVA_LICENSE
from novabench.data.card import (
    ConfigSize,
    check_card_text,
    check_dataset_card,
    render_dataset_card,
    summarize_release,
)
from novabench.data.layouts import export as export_layout
from novabench.data.layouts.export import DEFAULT_MAX_SHARD_BYTES, image_source
from novabench.data.provenance import provenance_heading, provenance_notice, source_warning
from novabench.data.release import NovaRelease, read_release
from novabench.data.schema import case_features, image_features
from novabench.errors import OUT_DIR, OVERWRITE, NovaInputError, Option
from novabench.hub import hub_errors, hub_offline, require_token
from novabench.progress import progress_bar

__all__ = [
    "DEFAULT_MAX_SHARD_BYTES",
    "ExportSummary",
    "coco_document",
    "export_coco",
    "export_release",
    "push_export",
]

ExportFormat = Literal["parquet", "coco"]
CocoSource = Literal["gold", "raters"]

COCO_CATEGORY = {"id": 1, "name": "abnormality", "supercategory": "finding"}
LICENSE_URL = "https://creativecommons.org/licenses/by-nc-sa/4.0/"


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote.

    Attributes:
        out_dir: the export folder (or, for ``export_coco``, the JSON file's folder).
        fmt: ``"parquet"`` or ``"coco"``.
        n_images: image rows (or COCO images) written.
        n_cases: case rows written (parquet) or cases covered (coco).
        n_gold_boxes: gold boxes written.
        n_placeholder_diagnoses: cases whose final diagnosis is a placeholder.
        files: written files, relative to ``out_dir``, sorted.
        total_bytes: size of those files on disk.
        sizes: rows and bytes per configuration (parquet only).
        repo_url: the Hub commit URL when pushed, else None.
        warnings: what reading the release noticed (``nova info`` lists the same), recorded in
            the export: the shards' metadata and the card's "Known issues" (parquet), the
            ``info`` of the COCO files.
    """

    out_dir: Path
    fmt: str
    n_images: int
    n_cases: int
    n_gold_boxes: int
    n_placeholder_diagnoses: int
    files: tuple[Path, ...]
    total_bytes: int
    sizes: Mapping[str, ConfigSize] = field(default_factory=dict)
    repo_url: str | None = None
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for a terminal.

        Example:
            >>> ExportSummary(Path("out"), "parquet", 906, 281, 1000, 3, (Path("README.md"),), 2**20).describe()
            'exported 906 images, 281 cases, 1000 gold boxes (3 placeholder diagnoses) as parquet: 1 files, 1.0 MB at out'
            >>> ExportSummary(Path("out"), "coco", 2, 1, 2, 0, (), 0, warnings=("w",)).describe()[-59:]
            'at out; the release was read with 1 warning, recorded in it'
        """
        line = (
            f"exported {self.n_images} images, {self.n_cases} cases, {self.n_gold_boxes} gold boxes "
            f"({self.n_placeholder_diagnoses} placeholder diagnoses) as {self.fmt}: "
            f"{len(self.files)} files, {self.total_bytes / 2**20:.1f} MB at {self.out_dir}"
        )
        if self.warnings:
            count = len(self.warnings)
            line += (
                f"; the release was read with {count} warning{'s' * (count != 1)}, recorded in it"
            )
        if self.repo_url:
            line += f"; pushed to {self.repo_url}"
        return line


# --------------------------------------------------------------------------- atomic folders


def _check_destination(out: Path, release_root: Path, overwrite: bool) -> None:
    check_output_paths({OUT_DIR: out}, {"the release": release_root}, folders=(OUT_DIR,))
    check_output_folder(out, command="export", overwrite=overwrite)


def _write_atomically(out: Path, writer: Any) -> Any:
    """Run ``writer(staging_folder)`` in a temporary sibling of ``out``; rename it to ``out`` on success."""
    staging = make_staging_folder(out)
    try:
        with writing_to(out):
            result = writer(staging)
            mark_output_folder(staging, "export")
            replace_folder(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return result


def _files_under(folder: Path) -> tuple[tuple[Path, ...], int]:
    files = sorted(
        path for path in folder.rglob("*") if path.is_file() and path.name != OUTPUT_MARKER
    )
    return tuple(path.relative_to(folder) for path in files), sum(
        path.stat().st_size for path in files
    )


# --------------------------------------------------------------------------- parquet


def _preview_row(row: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if row is None else dict(row)


def _write_parquet(
    release: NovaRelease,
    staging: Path,
    *,
    max_shard_bytes: int,
    rows_per_shard: int | None,
    pretty_name: str,
    hub_id: str,
    notice: str | None,
    progress: bool,
) -> dict[str, ConfigSize]:
    written = export_layout.write(
        release,
        staging,
        max_shard_bytes=max_shard_bytes,
        rows_per_shard=rows_per_shard,
        progress=progress,
    )
    sizes = written.sizes
    features = {
        "images": image_features(release.extra_meta_keys),
        "cases": case_features(release.extra_meta_keys),
    }
    card = render_dataset_card(
        summarize_release(release),
        features,
        pretty_name=pretty_name,
        sizes_by_config=sizes,
        hub_id=hub_id,
        image_instance=_preview_row(written.first_image_row),
        case_instance=_preview_row(written.first_case_row),
        notice=notice if notice is not None else provenance_notice(release.provenance),
    )
    check_dataset_card(card, features)  # a card the Hub would misread is our bug: fail here
    (staging / "README.md").write_text(card, encoding="utf-8")
    return sizes


# --------------------------------------------------------------------------- coco


def coco_document(release: NovaRelease, *, source: CocoSource = "gold") -> dict[str, Any]:
    """The COCO detection document of a release, as a dict ready for ``json.dump``.

    Image ids run from 1 in filename order, annotation ids from 1 (pycocotools treats id 0
    as unmatched). ``bbox`` is ``[x, y, width, height]`` as in the release, ``area`` is
    ``width * height``, ``iscrowd`` 0, one category ``abnormality`` (id 1). With
    ``source="raters"`` the annotations are every rater's boxes, each with a ``rater`` field.

    Args:
        release: a release from :func:`novabench.data.release.read_release`.
        source: ``"gold"`` (consensus boxes) or ``"raters"``.

    Returns:
        ``{"info", "licenses", "images", "annotations", "categories"}``.

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> folder = write_sample_release(
        ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
        >>> release = read_release(folder)
        >>> doc = coco_document(release)
        >>> doc["images"][0]["id"], doc["annotations"][0]["id"], len(doc["annotations"])
        (1, 1, 7)
    """
    if source not in ("gold", "raters"):
        raise NovaInputError(f"source must be 'gold' or 'raters', got {source!r}", source="source")
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []

    def annotate(image_id: int, box: list[float], extra: Mapping[str, Any]) -> None:
        x, y, width, height = (float(value) for value in box)
        annotations.append(
            {
                "id": len(annotations) + 1,
                "image_id": image_id,
                "category_id": COCO_CATEGORY["id"],
                "bbox": [x, y, width, height],
                "area": width * height,
                "iscrowd": 0,
                **extra,
            }
        )

    for image_id, image in enumerate(
        sorted(release.images, key=lambda record: record.filename), start=1
    ):
        images.append(
            {
                "id": image_id,
                "file_name": image.filename,
                "width": image.width,
                "height": image.height,
                "case_id": image.case_id,
                "scan_id": image.scan_id,
                "license": 1,
            }
        )
        if source == "gold":
            for box in image.boxes:
                annotate(image_id, box, {})
        else:
            for entry in image.rater_boxes:
                for box in entry["boxes"]:
                    annotate(image_id, box, {"rater": entry["rater"]})
    info: dict[str, Any] = {
        "description": f"NOVA brain MRI benchmark, {source} boxes (evaluation only)",
        "url": NOVA_ARXIV_URL,
        "version": "1.0",
        "contributor": f"exported by novabench {__version__} from {release.layout} layout",
    }
    if release.warnings:  # what reading the release noticed travels with its boxes
        info["release_warnings"] = [source_warning(warning) for warning in release.warnings]
    notice = provenance_notice(release.provenance)
    if notice is not None:  # data novabench made must not pass for the release in COCO tools
        info.update(
            description=f"{provenance_heading(release.provenance)}: {notice} ({source} boxes)",
            url="",
            provenance=dict(release.provenance or {}),
        )
    return {
        "info": info,
        "licenses": [{"id": 1, "name": NOVA_LICENSE, "url": LICENSE_URL}],
        "images": images,
        "annotations": annotations,
        "categories": [dict(COCO_CATEGORY)],
    }


def _dump_json(document: Mapping[str, Any], path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        json.dump(document, handle, ensure_ascii=False)


def export_coco(
    release_dir: str | Path,
    out_json: str | Path,
    *,
    source: CocoSource = "gold",
    overwrite: bool = False,
) -> Path:
    """Write the boxes of a release as one COCO detection JSON file that pycocotools loads.

    Args:
        release_dir: the release folder (v1 or legacy layout, or a ``nova export`` folder).
        out_json: the JSON file to write (its folder is created).
        source: ``"gold"`` boxes, or ``"raters"`` (every rater's boxes with a ``rater`` field).
        overwrite: replace an existing file.

    Returns:
        ``out_json`` as a Path. ``file_name`` of each image is the release filename.

    Raises:
        NovaInputError: a bad release, or ``out_json`` exists and ``overwrite`` is False.

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> release = write_sample_release(
        ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
        >>> path = export_coco(release, Path(tempfile.mkdtemp()) / "gold.json")
        >>> from pycocotools.coco import COCO
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()):
        ...     coco = COCO(str(path))
        >>> len(coco.getImgIds()), len(coco.getAnnIds())
        (7, 7)
    """
    out = Path(out_json)
    check_output_paths({"out_json": out}, {"the release": release_dir})
    if out.exists() and not _is_our_coco(out):  # said first: overwrite would not help
        only_ours: tuple[str | Option, ...] = ("; ", OVERWRITE, " replaces only such a file")
        raise NovaInputError(
            ("is not a COCO file novabench exported", *(only_ours if overwrite else ()))
            + (": choose another path or remove it yourself",),
            source=str(out),
        )
    if out.exists() and not overwrite:
        raise NovaInputError(
            ("already exists; pass ", OVERWRITE, " to replace it"), source=str(out)
        )
    document = coco_document(read_release(release_dir), source=source)
    return write_text_atomic(out, json.dumps(document, ensure_ascii=False))


def _is_our_coco(path: Path) -> bool:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    info = document.get("info") if isinstance(document, dict) else None
    contributor = info.get("contributor") if isinstance(info, dict) else None
    return isinstance(contributor, str) and contributor.startswith("exported by novabench")


def _write_coco_folder(
    release: NovaRelease, staging: Path, *, include_raters: bool, progress: bool
) -> None:
    image_dir = staging / "images"
    image_dir.mkdir()
    for image in progress_bar(release.images, desc="copy images", unit="img", enabled=progress):
        try:
            if image.image_path is not None:
                shutil.copyfile(image.image_path, image_dir / image.filename)
            else:  # read from a `nova export` folder: the PNG is embedded
                (image_dir / image.filename).write_bytes(image.read_bytes())
        except OSError as error:
            written = error.filename2 if error.filename2 is not None else error.filename
            if write_failure_reason(error) and (
                written is None or str(written).startswith(str(staging))
            ):
                raise  # the copy could not be written: the caller names OUT, not the image
            raise NovaInputError(
                f"cannot copy the image: {error}",
                source=image_source(release, image),
                record=image.filename,
                field="image",
            ) from error
    annotations = staging / "annotations"
    annotations.mkdir()
    _dump_json(coco_document(release, source="gold"), annotations / "gold.json")
    if include_raters:
        _dump_json(coco_document(release, source="raters"), annotations / "raters.json")


# --------------------------------------------------------------------------- push


def _hub_offline() -> bool:
    return hub_offline()


#: What a push refused before any work says it left: nothing, and how to get the export.
_NOTHING_WRITTEN = (
    "; nothing was written (without the push the export is written locally, for a later "
    "`hf upload`)"
)


def _check_can_push(repo_id: str) -> None:
    """Refuse a push that cannot work (offline mode, no token) before any work is done."""
    if _hub_offline():
        raise NovaInputError(
            "cannot push: the Hugging Face Hub is in offline mode (HF_HUB_OFFLINE=1); unset it, "
            "log in with `hf auth login` and run again" + _NOTHING_WRITTEN,
            source=repo_id,
            field="push_to",
        )
    try:
        require_token(repo_id, field="push_to")
    except NovaInputError as error:
        raise NovaInputError(
            str(error.message) + _NOTHING_WRITTEN, source=error.source, field=error.field
        ) from None


def push_export(out_dir: str | Path, repo_id: str, *, private: bool = False) -> str:
    """Upload an export folder to a Hub dataset repository (created if missing).

    The upload is one commit: it either lands whole or not at all.

    Args:
        out_dir: a folder written by :func:`export_release`.
        repo_id: ``"user/name"`` of the dataset repository.
        private: create the repository private (an existing repository keeps its visibility).

    Returns:
        The URL of the upload commit.

    Raises:
        NovaInputError: offline mode, no token, an unreachable Hub, refused credentials
            (401/403), an unknown repository (404) or a bad repo id; one line naming the
            repository and what to do, saying that the local export is complete.

    Example:
        >>> push_export("build/nova-export", "me/nova")  # doctest: +SKIP
        'https://huggingface.co/datasets/me/nova/commit/...'
    """
    _check_can_push(repo_id)
    from huggingface_hub import HfApi

    folder = Path(out_dir)
    api = HfApi()
    with hub_errors(
        repo_id,
        action="push failed",
        then=f"no files were uploaded; the local export at {folder} is complete, upload it later "
        f"with `hf upload {repo_id} {folder} --repo-type dataset`",
        field="push_to",
    ):
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=folder,
            repo_id=repo_id,
            repo_type="dataset",
            ignore_patterns=[OUTPUT_MARKER],
            commit_message=f"NOVA export by novabench {__version__}",
        )
    return str(getattr(commit, "commit_url", commit))


# --------------------------------------------------------------------------- entry point


def export_release(
    release_dir: str | Path,
    out_dir: str | Path,
    *,
    fmt: ExportFormat = "parquet",
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    rows_per_shard: int | None = None,
    overwrite: bool = False,
    push_to: str | None = None,
    private: bool = False,
    include_raters: bool = False,
    pretty_name: str = "NOVA",
    card_notice: str | None = None,
    card_hub_id: str | None = None,
    progress: bool = True,
) -> ExportSummary:
    """Export a release folder as a Hub-ready Parquet dataset (default) or a COCO folder.

    Args:
        release_dir: the release (official v1 or legacy layout, a sample / ingest output, or
            a folder written by ``nova export``, e.g. a Hub download).
        out_dir: the folder to create; written atomically (nothing appears there on error).
        fmt: ``"parquet"`` (shards + card, loadable by ``datasets.load_dataset``) or
            ``"coco"`` (``images/`` + ``annotations/gold.json``).
        max_shard_bytes: upper bound of one image shard's data size (a single larger row
            still gets its own shard).
        rows_per_shard: optional upper bound of rows per image shard.
        overwrite: replace an existing ``out_dir`` (only once the new export is complete), if
            it is empty or an earlier export (its ``.novabench-output.json`` says so).
        push_to: a Hub dataset id (``"user/name"``) to upload the parquet export to.
        private: create the Hub repository private.
        include_raters: COCO only: also write ``annotations/raters.json``.
        pretty_name: dataset name in the card.
        card_notice: a paragraph quoted under the card's title. By default, data made by
            ``nova sample`` or ``nova ingest`` (recorded in its parquet metadata) gets a
            notice saying so, and the official release none; ``""`` suppresses it.
        card_hub_id: the id the card's usage snippets load (default: ``push_to``, else
            ``"./<out folder name>"``, a path relative to the folder's parent).
        progress: show progress bars (on a terminal; see novabench.progress).

    Returns:
        An :class:`ExportSummary`; ``.describe()`` is a one-line report.

    Raises:
        NovaInputError: bad release, bad arguments, ``out_dir`` exists, or the push failed.

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> release = write_sample_release(
        ...     Path(tempfile.mkdtemp()) / "nova", n_cases=2, progress=False)
        >>> out = Path(tempfile.mkdtemp()) / "nova"
        >>> _ = export_release(release, out, progress=False)
        >>> import datasets
        >>> ds = datasets.load_dataset(str(out), "images", split="test")
        >>> ds.num_rows, ds[0]["filename"], ds.features["boxes"]
        (7, 'case0001_001.png', List(List(Value('float64'))))
    """
    if fmt not in ("parquet", "coco"):
        raise NovaInputError(f"format must be 'parquet' or 'coco', got {fmt!r}", source="fmt")
    check_card_text(pretty_name, field="pretty_name")
    if card_notice is not None:
        check_card_text(card_notice, field="card_notice", one_line=False)
    if card_hub_id is not None:
        check_card_text(card_hub_id, field="card_hub_id")
    if max_shard_bytes <= 0:
        raise NovaInputError(f"must be positive, got {max_shard_bytes}", source="max_shard_bytes")
    if rows_per_shard is not None and rows_per_shard <= 0:
        raise NovaInputError(f"must be positive, got {rows_per_shard}", source="rows_per_shard")
    if push_to is not None and fmt != "parquet":
        raise NovaInputError("only the parquet format can be pushed to the Hub", source="push_to")
    out = Path(out_dir).expanduser()
    release_root = Path(release_dir).expanduser()
    _check_destination(out, release_root, overwrite)
    if push_to is not None:
        _check_can_push(push_to)  # fail before minutes of work, not after
    release = read_release(release_root)

    sizes: dict[str, ConfigSize] = {}

    def write(staging: Path) -> None:
        if fmt == "parquet":
            sizes.update(
                _write_parquet(
                    release,
                    staging,
                    max_shard_bytes=max_shard_bytes,
                    rows_per_shard=rows_per_shard,
                    pretty_name=pretty_name,
                    hub_id=card_hub_id or push_to or f"./{out.name}",
                    notice=card_notice,
                    progress=progress,
                )
            )
        else:
            _write_coco_folder(release, staging, include_raters=include_raters, progress=progress)

    _write_atomically(out, write)
    files, total_bytes = _files_under(out)
    summary = ExportSummary(
        out_dir=out,
        fmt=fmt,
        n_images=release.n_images,
        n_cases=release.n_cases,
        n_gold_boxes=release.n_gold_boxes,
        n_placeholder_diagnoses=release.n_placeholder_diagnoses,
        files=files,
        total_bytes=total_bytes,
        sizes=sizes,
        warnings=tuple(release.warnings),
    )
    if push_to is not None:
        url = push_export(out, push_to, private=private)
        summary = dataclasses.replace(summary, repo_url=url)
    return summary
