"""NIfTI volumes and lesion masks -> a release in the NOVA layout.

An in-house collection of rare cases becomes scoreable with the same toolkit: each case
lists one or more *series* (a 3-D volume, an optional lesion mask, the plane to cut and
a caption). For every series we cut 2-D slices through the lesions, window intensities
to 8 bit, resample to a square grayscale PNG (aspect kept by padding) and turn the
connected components of the mask on that slice into gold boxes in PNG pixels.

The imaging (orientation, slice choice, windowing, geometry, boxes, PNGs) is
``novabench.data.slicing``; explicit ``slice_indices`` override its slice choice. This
module drives the slicing per series and writes the release through the layout writers
(``novabench.data.layouts.v1`` / ``legacy``). The cases and their checks are
``novabench.data.ingest_cases``, the manifest reader ``novabench.data.case_manifest``
(both re-exported here).

The release is written to a temporary sibling folder and renamed at the end, so a
failure never leaves a half-written release at ``out_dir``.
"""

from __future__ import annotations

import csv
import os
import random
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from pathlib import Path
from typing import Any, Literal

import numpy as np

from novabench import checks
from novabench._files import (
    as_output_error,
    check_output_folder,
    check_output_paths,
    make_staging_folder,
    mark_output_folder,
    replace_folder,
)
from novabench.data.case_manifest import read_manifest
from novabench.data.ingest_cases import IngestCase, IngestSeries, check_case
from novabench.data.layouts import legacy as legacy_layout
from novabench.data.layouts import v1 as v1_layout
from novabench.data.layouts.rows import ImageRow, spelled_like_gold
from novabench.data.provenance import png_mark
from novabench.data.slicing import (
    PLANE_AXIS,
    PLANES,
    SliceGeometry,
    VolumeSource,
    boxes_over_no_data,
    central_slices,
    choose_slices,
    has_finite_data,
    in_plane_spacing,
    intensity_window,
    lesion_profiles,
    load_canonical,
    render_png,
    slice_boxes,
    take_slice,
)
from novabench.errors import OUT_DIR, NovaInputError
from novabench.records import BOX_FIELDS, FIXED_META_KEYS

__all__ = [
    "BOX_FIELDS",
    "IngestCase",
    "IngestSeries",
    "PLANES",
    "ingest_manifest",
    "ingest_volumes",
    "read_manifest",
    "summarize_release",
]

_RATER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def _series_caption(series: IngestSeries, *, where: str, record: str, field_name: str) -> str:
    if series.caption is not None:
        return checks.text(
            series.caption, source=where, record=record, field=f"{field_name}.caption"
        )
    if series.sequence is not None:
        sequence = checks.text(
            series.sequence, source=where, record=record, field=f"{field_name}.sequence"
        )
        return f"{series.plane.capitalize()} {sequence}."
    raise NovaInputError(
        "give a caption (or at least a sequence)",
        source=where,
        record=record,
        field=f"{field_name}.caption",
    )


def _volume_name(source: VolumeSource) -> str:
    """A volume as errors name it: its file, or the kind of in-memory image."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return f"the in-memory {type(source).__name__}"


def _source_key(source: VolumeSource) -> tuple[str, Any]:
    """Identity of a volume within one case: the same file or image object is read once."""
    if isinstance(source, (str, os.PathLike)):
        return ("path", os.fspath(source))
    return ("object", id(source))  # objects stay alive while their case is processed


def _cached(cache: dict[Any, Any], key: Any, compute: Any) -> Any:
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def _mask_array(
    source: VolumeSource,
    volume_image: Any,
    cache: dict[Any, Any],
    *,
    where: str,
    record: str,
    field_name: str,
) -> np.ndarray:
    mask_image = _cached(
        cache,
        ("image", _source_key(source)),
        lambda: load_canonical(source, where=where, record=record, field_name=field_name),
    )
    if tuple(mask_image.shape) != tuple(volume_image.shape):
        raise NovaInputError(
            f"mask shape {tuple(mask_image.shape)} differs from the volume shape {tuple(volume_image.shape)}",
            source=where,
            record=record,
            field=field_name,
        )
    if not np.allclose(mask_image.affine, volume_image.affine, atol=1e-3):
        raise NovaInputError(
            "mask affine differs from the volume affine (not the same voxel grid)",
            source=where,
            record=record,
            field=field_name,
        )
    return _cached(
        cache, ("mask", _source_key(source)), lambda: np.asanyarray(mask_image.dataobj) > 0
    )


def _ingest_series(
    series: IngestSeries,
    *,
    case_id: str,
    first_scan: int,
    index: int,
    images_dir: Path,
    slices_per_lesion: int,
    image_size: int,
    window_percentiles: tuple[float, float],
    where: str,
    cache: dict[Any, Any],
    mark: str | None = None,
) -> list[ImageRow]:
    record = f"case {case_id!r}"
    field_name = f"series[{index}]"
    if series.plane not in PLANES:
        raise NovaInputError(
            f"plane must be one of {PLANES}, got {series.plane!r}",
            source=where,
            record=record,
            field=f"{field_name}.plane",
        )
    caption = _series_caption(series, where=where, record=record, field_name=field_name)
    volume_key = _source_key(series.volume)
    volume_image = _cached(
        cache,
        ("image", volume_key),
        lambda: load_canonical(
            series.volume, where=where, record=record, field_name=f"{field_name}.volume"
        ),
    )
    mask = None
    if series.mask is not None:
        mask = _mask_array(
            series.mask,
            volume_image,
            cache,
            where=where,
            record=record,
            field_name=f"{field_name}.mask",
        )
    rater_masks: dict[str, np.ndarray] = {}
    for rater, source in series.rater_masks.items():
        if not isinstance(rater, str) or not _RATER.match(rater) or spelled_like_gold(rater):
            raise NovaInputError(
                f"rater name {rater!r} must be letters, digits, '_' or '-', and not 'gold' "
                "in any case (the release could not tell it from the gold boxes)",
                source=where,
                record=record,
                field=f"{field_name}.rater_masks",
            )
        rater_masks[rater] = _mask_array(
            source,
            volume_image,
            cache,
            where=where,
            record=record,
            field_name=f"{field_name}.rater_masks.{rater}",
        )
    axis = PLANE_AXIS[series.plane]
    length = volume_image.shape[axis]
    if series.slice_indices is not None:
        indices_field = f"{field_name}.slice_indices"
        if isinstance(series.slice_indices, (str, bytes, Mapping)) or not isinstance(
            series.slice_indices, (Sequence, np.ndarray)
        ):
            raise NovaInputError(
                f"must be a list of slice numbers, got {type(series.slice_indices).__name__}",
                source=where,
                record=record,
                field=indices_field,
            )
        slices = [  # True is no slice number, nor is 2.0 or "2"
            checks.integer(i, source=where, record=record, field=f"{indices_field}[{n}]")
            for n, i in enumerate(series.slice_indices)
        ]
        bad = [i for i in slices if not 0 <= i < length]
        if bad or not slices or len(set(slices)) != len(slices):
            raise NovaInputError(
                f"slice indices must be distinct, within 0..{length - 1}, got {list(series.slice_indices)}",
                source=where,
                record=record,
                field=f"{field_name}.slice_indices",
            )
    else:
        profiles = (
            _cached(
                cache,
                ("profiles", _source_key(series.mask), axis),
                lambda: lesion_profiles(mask, axis),
            )
            if mask is not None
            else []
        )
        wanted = (
            series.n_slices
            if series.n_slices is not None
            else slices_per_lesion * max(len(profiles), 1)
        )
        wanted = checks.positive_int(  # `true` is no count, though Python calls it 1
            wanted, source=where, record=record, field=f"{field_name}.n_slices"
        )
        if profiles:
            slices = choose_slices(
                profiles, wanted, where=where, record=record, field_name=f"{field_name}.n_slices"
            )
        else:
            slices = central_slices(length, wanted)
    volume = _cached(
        cache, ("voxels", volume_key), lambda: np.asarray(volume_image.get_fdata(dtype=np.float32))
    )
    window = _cached(
        cache, ("window", volume_key), lambda: intensity_window(volume, window_percentiles)
    )
    spacing = in_plane_spacing(volume_image.header.get_zooms()[:3], axis)
    images: list[ImageRow] = []
    for offset, slice_index in enumerate(slices):
        scan_number = first_scan + offset
        if scan_number > 999:
            raise NovaInputError(
                "more than 999 images in one case", source=where, record=record, field=field_name
            )
        pixels = take_slice(volume, axis, slice_index)
        where_slice = f"slice {slice_index} ({series.plane}) of {_volume_name(series.volume)}"
        if not has_finite_data(pixels):
            raise NovaInputError(
                f"{where_slice} has no finite voxel (all NaN or infinite): it would be a black image",
                source=where,
                record=record,
                field=f"{field_name}.volume",
            )
        geometry = SliceGeometry.fit(pixels.shape[0], pixels.shape[1], spacing, image_size)
        filename = f"{case_id}_{scan_number:03d}.png"
        render_png(pixels, geometry, window, images_dir / filename, mark=mark)
        boxes: list[tuple[str, list[float]]] = []
        if mask is not None:
            mask_slice = take_slice(mask, axis, slice_index)
            over_nothing = boxes_over_no_data(mask_slice, pixels, geometry)
            if over_nothing:
                raise NovaInputError(
                    f"gold box {over_nothing[0]} on {where_slice} lies over no data "
                    "(only NaN or infinite voxels under the lesion mask)",
                    source=where,
                    record=record,
                    field=f"{field_name}.mask",
                )
            boxes.extend(("gold", box) for box in slice_boxes(mask_slice, geometry))
        for rater in sorted(rater_masks):
            rater_slice = take_slice(rater_masks[rater], axis, slice_index)
            boxes.extend((rater, box) for box in slice_boxes(rater_slice, geometry))
        images.append(ImageRow(filename, case_id, f"{scan_number:03d}", caption, boxes))
    return images


# --------------------------------------------------------------------------- release


def _case_texts(case: IngestCase) -> dict[str, str]:
    """The case's metadata strings only: cases may carry whole volumes, never keep those."""
    return {**{key: getattr(case, key) for key in FIXED_META_KEYS}, **dict(case.extras)}


def _source_files(cases: Sequence[IngestCase]) -> list[str]:
    """The files a list of cases reads: volumes, masks and rater masks given as paths."""
    files = []
    for case in cases:
        for series in case.series:
            for source in (series.volume, series.mask, *series.rater_masks.values()):
                if isinstance(source, (str, os.PathLike)):
                    files.append(os.fspath(source))
    return files


def _prepare_target(out_dir: Path, overwrite: bool, command: str, inputs: Any) -> Path:
    check_output_paths({OUT_DIR: out_dir}, inputs, folders=(OUT_DIR,))
    check_output_folder(out_dir, command=command, overwrite=overwrite)
    return make_staging_folder(out_dir)


def ingest_volumes(
    cases: Iterable[IngestCase],
    out_dir: str | os.PathLike[str],
    *,
    slices_per_lesion: int = 1,
    image_size: int = 480,
    layout: Literal["v1", "legacy"] = "v1",
    window_percentiles: tuple[float, float] = (0.5, 99.5),
    overwrite: bool = False,
    row_shuffle_seed: int | None = None,
    progress: bool = True,
    source: str = "cases",
    provenance: Mapping[str, Any] | None = None,
    command: str = "ingest",
) -> Path:
    """Cut, window and annotate NIfTI series into a release in the NOVA layout.

    Args:
        cases: the cases; may be a generator (volumes are read one series at a time).
        out_dir: release folder to create.
        slices_per_lesion: images per lesion of a series without ``n_slices``.
        image_size: side of the square PNGs (the official release uses 480).
        layout: ``"v1"`` (``data/nova-v1.parquet`` + ``images/``) or ``"legacy"``
            (``captions.csv``, ``case_metadata.csv``, ``bboxes_gold.csv``,
            ``bboxes_raters.csv`` + ``test/``).
        window_percentiles: foreground percentiles mapped to black and white.
        overwrite: replace an existing ``out_dir`` (only once the new release is complete),
            if it is empty or this same command wrote it (its ``.novabench-output.json``).
        row_shuffle_seed: if set, v1 parquet rows are shuffled with this seed, as in the
            official release whose rows are not sorted by filename.
        progress: show a tqdm progress bar.
        source: how to name the input in error messages (e.g. the manifest path).
        provenance: what made the release, stored in the v1 parquet's schema metadata
            (default ``{"origin": "nova ingest"}``); ``nova export`` turns it into the
            card's notice. CSV (legacy) files cannot carry it.
        command: the ``nova`` command writing the release, recorded in the folder so that
            ``overwrite`` replaces only a release that same command wrote.

    Returns:
        The release folder.

    Raises:
        NovaInputError: a missing or unreadable volume, a mask on another grid, an empty
            field, a bad plane or slice request; nothing is left at ``out_dir`` then.

    Example:
        >>> import numpy as np, nibabel as nib, tempfile, pathlib
        >>> volume = np.zeros((20, 40, 10), dtype=np.float32); volume[2:18, 2:38, :] = 100
        >>> mask = np.zeros(volume.shape, dtype=np.uint8); mask[4:8, 10:14, 3:7] = 1
        >>> case = IngestCase("case0001", [IngestSeries(nib.Nifti1Image(volume, np.eye(4)),
        ...     caption="Axial T1.", mask=nib.Nifti1Image(mask, np.eye(4)))],
        ...     title="Toy", clinical_history="None.", final_diagnosis="Toy lesion")
        >>> out = ingest_volumes([case], pathlib.Path(tempfile.mkdtemp()) / "rel", progress=False)
        >>> sorted(p.name for p in (out / "images").iterdir())
        ['case0001_001.png']
    """
    if layout not in ("v1", "legacy"):
        raise NovaInputError(
            f"layout must be 'v1' or 'legacy', got {layout!r}", source=source, field="layout"
        )
    checks.positive_int(slices_per_lesion, source=source, field="slices_per_lesion")
    checks.bounded_number(image_size, minimum=8, integer=True, source=source, field="image_size")
    low, high = window_percentiles
    if not 0 <= low < high <= 100:
        raise NovaInputError(
            "window percentiles must satisfy 0 <= low < high <= 100",
            source=source,
            field="window_percentiles",
        )
    out_dir = Path(out_dir)
    listed = list(cases) if isinstance(cases, (list, tuple)) else None
    inputs = {"a source volume": _source_files(listed)} if listed is not None else {}
    staging = _prepare_target(out_dir, overwrite, command, inputs)
    # Every PNG says what made it: that survives a rewrite of the parquet or a lost sidecar.
    mark = png_mark(provenance or {"origin": "nova ingest"})
    try:
        images_dir = staging / (v1_layout.IMAGE_DIR if layout == "v1" else legacy_layout.IMAGE_DIR)
        images_dir.mkdir()
        images: list[ImageRow] = []
        case_texts: dict[str, dict[str, str]] = {}
        seen: set[str] = set()
        read: list[str] = []
        for case in _progress(cases, progress):
            check_case(case, source, seen)
            read.extend(_source_files([case]))
            next_scan = 1
            cache: dict[Any, Any] = {}  # volumes and masks shared by several series of the case
            for index, series in enumerate(case.series):
                new = _ingest_series(
                    series,
                    case_id=case.case_id,
                    first_scan=next_scan,
                    index=index,
                    images_dir=images_dir,
                    slices_per_lesion=slices_per_lesion,
                    image_size=image_size,
                    window_percentiles=(float(low), float(high)),
                    where=source,
                    cache=cache,
                    mark=mark,
                )
                images.extend(new)
                next_scan += len(new)
            case_texts[case.case_id] = _case_texts(case)
        if not case_texts:
            raise NovaInputError("no cases to ingest", source=source)
        extra_keys: list[str] = []
        for texts in case_texts.values():
            extra_keys.extend(
                key for key in texts if key not in FIXED_META_KEYS and key not in extra_keys
            )
        meta_keys = [*FIXED_META_KEYS, *extra_keys]
        metas = {
            case_id: {key: texts.get(key) for key in meta_keys}
            for case_id, texts in case_texts.items()
        }
        if layout == "v1":
            if row_shuffle_seed is not None:
                images = list(images)
                random.Random(row_shuffle_seed).shuffle(images)
            v1_layout.write(
                staging, images, metas, meta_keys, provenance or {"origin": "nova ingest"}
            )
        else:
            legacy_layout.write(
                staging, images, metas, meta_keys, provenance or {"origin": "nova ingest"}
            )
        if listed is None:  # a generator: its files are known only now, before any replacing
            check_output_paths({OUT_DIR: out_dir}, {"a source volume": read}, folders=(OUT_DIR,))
        mark_output_folder(staging, command)
        replace_folder(staging, out_dir)  # an old release is replaced only at the very end
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        failure = as_output_error(error, out_dir)  # a full disk names OUT, not a staged file
        if failure is not None and failure is not error:
            raise failure from error
        raise
    return out_dir


def _progress(cases: Iterable[IngestCase], enabled: bool) -> Iterator[IngestCase]:
    from novabench.progress import progress_bar

    total = len(cases) if isinstance(cases, Sized) else None
    yield from progress_bar(cases, total=total, desc="ingest", unit="case", enabled=enabled)


def summarize_release(root: str | os.PathLike[str]) -> str:
    """One line counting cases, images, gold boxes and null-box images of a written release.

    Reads only the tables this module writes (v1 parquet or legacy CSVs), no pixels.

    Args:
        root: release folder written by ``ingest_volumes`` (or the sample).

    Returns:
        e.g. ``"2 cases, 3 images, 4 gold boxes, 1 image without gold box"``.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "captions.csv").write_text("filename,case_id,scan_id,caption\\na_001.png,a,001,x\\n")
        >>> _ = (root / "bboxes_gold.csv").write_text("filename,x,y,width,height\\n")
        >>> summarize_release(root)
        '1 case, 1 image, 0 gold boxes, 1 image without gold box'
    """
    root = Path(root)
    parquet = root / v1_layout.PARQUET
    if parquet.is_file():
        import pyarrow.parquet as pq

        table = pq.read_table(parquet, columns=["filename", "case_id", "bboxes"]).to_pylist()
        filenames = [row["filename"] for row in table]
        case_ids = {row["case_id"] for row in table}
        gold = [
            (row["filename"])
            for row in table
            for box in row["bboxes"] or []
            if box["source"] == "gold"
        ]
    else:
        with (root / "captions.csv").open(encoding="utf-8", newline="") as handle:
            captions = list(csv.DictReader(handle))
        with (root / "bboxes_gold.csv").open(encoding="utf-8", newline="") as handle:
            gold = [row["filename"] for row in csv.DictReader(handle)]
        filenames = [row["filename"] for row in captions]
        case_ids = {row["case_id"] for row in captions}
    without = len(set(filenames) - set(gold))

    def count(number: int, singular: str, plural: str) -> str:
        return f"{number} {singular if number == 1 else plural}"

    return ", ".join(
        [
            count(len(case_ids), "case", "cases"),
            count(len(filenames), "image", "images"),
            count(len(gold), "gold box", "gold boxes"),
            count(without, "image", "images") + " without gold box",
        ]
    )


def ingest_manifest(
    manifest: str | os.PathLike[str], out_dir: str | os.PathLike[str], **options: Any
) -> Path:
    """Read a manifest (see ``read_manifest``) and ingest it with ``ingest_volumes``.

    Args:
        manifest: JSON or JSONL manifest path.
        out_dir: release folder to create.
        **options: keyword options of ``ingest_volumes``.

    Returns:
        The release folder.

    Example:
        >>> ingest_manifest("missing.json", "out")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        novabench.errors.NovaInputError: missing.json: cannot read the manifest
    """
    cases = read_manifest(manifest)
    check_output_paths(  # before minutes of slicing, not after
        {OUT_DIR: out_dir},
        {"the manifest": manifest, "a source volume": _source_files(cases)},
        folders=(OUT_DIR,),
    )
    return ingest_volumes(cases, out_dir, source=str(manifest), **options)
