"""Write tiny NOVA releases in exactly the official layouts, for tests across the project.

Rows are given in the shape of one row of the official ``data/nova-v1.parquet``::

    {"filename": "case0001_001.png", "case_id": "case0001", "scan_id": "001",
     "caption_text": "...", "image_path": "images/case0001_001.png", "split": "test",
     "meta": {"title": ..., "publication_date": ..., "clinical_history": ...,
              "final_diagnosis": ..., "differential_diagnosis": ...},
     "bboxes": [{"x": .., "y": .., "width": .., "height": .., "source": "gold"}, ...] or None}

``write_v1_release`` writes them as the v1 layout (parquet + ``images/``);
``write_legacy_release`` writes the same content as the older CSV layout (``captions.csv``,
``case_metadata.csv``, ``bboxes_gold.csv``, ``bboxes_raters.csv`` + ``test/``).

Override ``rows`` to inject bad values: any key may be removed, replaced or added. A row may
carry ``"_image_size": (width, height)`` to get a PNG of another size, or ``"_image": None``
to get no PNG at all (a missing image). Keys starting with ``_`` never reach the files.

The default content (``default_rows``), for ``n_cases=3``:

- ``case0001`` has 1 image, ``case0002`` 2, ``case0003`` 3 (case *k* has *k* images,
  cycling 1..3 for more cases), so 6 images;
- every image has one gold box and one box from each of ``rater1`` and ``rater2``, except
  ``case0002_002.png`` whose ``bboxes`` is null (no marked abnormality);
- the last case's final diagnosis is the placeholder ``"Final diagnosis not found."``;
- every case has the extra meta key ``differential_diagnosis``;
- captions hold commas, quotes, a newline and non-ASCII text, so exact-text round trips
  through CSV and Arrow are exercised.

Only pyarrow, PIL and numpy are needed.
"""

from __future__ import annotations

import copy
import csv
import io
import random
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

__all__ = [
    "PLACEHOLDER_DIAGNOSIS",
    "RATERS",
    "default_rows",
    "png_bytes",
    "write_legacy_release",
    "write_v1_parquet",
    "write_v1_release",
    "with_v1_provenance",
]

PLACEHOLDER_DIAGNOSIS = "Final diagnosis not found."
RATERS = ("rater1", "rater2")
FIXED_META_KEYS = ("title", "publication_date", "clinical_history", "final_diagnosis")
BOX_KEYS = ("x", "y", "width", "height")


def png_bytes(
    size: tuple[int, int] = (64, 64), *, seed: int = 0, box: Sequence[float] | None = None
) -> bytes:
    """A small deterministic 8-bit grayscale PNG; ``box`` (xywh) is painted bright."""
    width, height = size
    rng = np.random.default_rng(seed)
    ramp = np.linspace(20, 90, num=width, dtype=np.float64)[None, :].repeat(height, axis=0)
    pixels = ramp + rng.integers(0, 20, size=(height, width))
    if box is not None:
        x, y, w, h = (int(round(v)) for v in box)
        pixels[max(y, 0) : max(y + h, 0), max(x, 0) : max(x + w, 0)] = 230
    buffer = io.BytesIO()
    Image.fromarray(pixels.clip(0, 255).astype(np.uint8), mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def _box(x: float, y: float, width: float, height: float, source: str) -> dict[str, Any]:
    return {"x": x, "y": y, "width": width, "height": height, "source": source}


def default_rows(
    *, n_cases: int = 3, image_size: tuple[int, int] = (480, 480)
) -> list[dict[str, Any]]:
    """The default content described in the module docstring, as v1 parquet rows.

    Boxes scale with ``image_size`` so they always lie inside the image. Coordinates are
    floats, some not exactly representable in float32 (e.g. ``x + 0.3``).
    """
    width, height = image_size
    rows: list[dict[str, Any]] = []
    for case_number in range(1, n_cases + 1):
        case_id = f"case{case_number:04d}"
        is_last = case_number == n_cases and n_cases >= 3
        meta = {
            "title": f"Rare lesion number {case_number}",
            "publication_date": f"{10 + case_number:02d}.09.2018",
            "clinical_history": f"A {30 + case_number}-year-old patient, headache; seizures “since 2 weeks”.",
            "final_diagnosis": PLACEHOLDER_DIAGNOSIS if is_last else f"Rare disease {case_number}",
            "differential_diagnosis": f"Glioma; Abscess; Lymphoma {case_number}",
        }
        for scan_number in range(1, (case_number - 1) % 3 + 2):
            filename = f"{case_id}_{scan_number:03d}.png"
            x = width * 0.25 + 3 * scan_number + 0.3
            y = height * 0.3 + 2 * (case_number % 20)  # stays inside for any number of cases
            box_w = width * 0.2
            box_h = height * 0.15 + 0.5
            bboxes: list[dict[str, Any]] | None = [
                _box(x, y, box_w, box_h, "gold"),
                _box(x - 2, y + 1, box_w + 3, box_h - 1, RATERS[0]),
                _box(x + 1.5, y - 2, box_w - 2, box_h + 2.25, RATERS[1]),
            ]
            if filename == "case0002_002.png":
                bboxes = None
            rows.append(
                {
                    "filename": filename,
                    "case_id": case_id,
                    "scan_id": f"{scan_number:03d}",
                    "caption_text": (
                        f'Axial T2-weighted image, scan {scan_number}: a "hyperintense" lesion, '
                        f"right frontal lobe (case {case_number}).\nNo mass effect – ø."
                    ),
                    "image_path": f"images/{filename}",
                    "split": "test",
                    "meta": dict(meta),
                    "bboxes": bboxes,
                }
            )
    return rows


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _arrow_schema(rows: Sequence[dict[str, Any]]) -> pa.Schema:
    """The official column types for the columns present in ``rows``, others inferred."""
    keys: list[str] = []
    for row in rows:
        keys.extend(key for key in row if key not in keys and not key.startswith("_"))
    fields: list[pa.Field] = []
    for key in keys:
        values = [row.get(key) for row in rows]
        if key == "meta":
            meta_keys: list[str] = []
            for value in values:
                if isinstance(value, dict):
                    meta_keys.extend(k for k in value if k not in meta_keys)
            fields.append(pa.field(key, pa.struct([pa.field(k, pa.string()) for k in meta_keys])))
        elif key == "bboxes":
            coordinates = [
                box.get(name)
                for value in values
                if isinstance(value, list)
                for box in value
                if isinstance(box, dict)
                for name in BOX_KEYS
            ]
            all_int = bool(coordinates) and all(_is_int(c) for c in coordinates)
            if not all(c is None or isinstance(c, (int, float)) for c in coordinates):
                number = pa.string()  # injected non-numbers: write_v1_parquet stringifies all
            else:
                number = pa.int64() if all_int else pa.float64()
            box_type = pa.struct(
                [pa.field(k, number) for k in BOX_KEYS] + [pa.field("source", pa.string())]
            )
            fields.append(pa.field(key, pa.list_(box_type)))
        elif all(value is None or isinstance(value, str) for value in values):
            fields.append(pa.field(key, pa.string()))
        else:
            fields.append(pa.field(key, pa.array(values).type))
    return pa.schema(fields)


def write_v1_parquet(
    path: Path, rows: Sequence[dict[str, Any]], *, schema: pa.Schema | None = None
) -> Path:
    """Write ``rows`` as a v1 parquet file (official types unless ``schema`` is given)."""
    clean = [{k: v for k, v in row.items() if not k.startswith("_")} for row in rows]
    schema = schema or _arrow_schema(clean)
    if (
        "bboxes" in schema.names
        and schema.field("bboxes").type.value_type.field("x").type == pa.string()
    ):
        for row in clean:
            for box in row.get("bboxes") or []:
                for name in BOX_KEYS:
                    if box.get(name) is not None:
                        box[name] = str(box[name])
    table = pa.Table.from_pylist(clean, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def _gold_box(row: dict[str, Any]) -> Sequence[float] | None:
    for box in row.get("bboxes") or []:
        if isinstance(box, dict) and box.get("source") == "gold":
            try:
                return [float(box[k]) for k in BOX_KEYS]
            except (KeyError, TypeError, ValueError):
                return None
    return None


def _write_images(
    root: Path, rows: Iterable[dict[str, Any]], folder: str | None, image_size: tuple[int, int]
) -> None:
    """One PNG per row, at ``folder/filename`` (legacy) or at the row's ``image_path`` (v1)."""
    for index, row in enumerate(rows):
        if "_image" in row and row["_image"] is None:
            continue
        relative = f"{folder}/{row['filename']}" if folder else row.get("image_path")
        if (
            not isinstance(relative, str)
            or relative.startswith("/")
            or ".." in Path(relative).parts
        ):
            continue  # a bad path is the point of such a test; never write outside the release
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        data = row.get("_image")
        if data is None:
            box = _gold_box(row)
            if box is not None and not all(np.isfinite(box)):
                box = None
            data = png_bytes(tuple(row.get("_image_size", image_size)), seed=index, box=box)
        target.write_bytes(data)


def write_v1_release(
    root: Path | str,
    rows: Sequence[dict[str, Any]] | None = None,
    *,
    n_cases: int = 3,
    image_size: tuple[int, int] = (480, 480),
    shuffle_seed: int | None = None,
    schema: pa.Schema | None = None,
) -> Path:
    """Write a release in the official v1 layout: ``data/nova-v1.parquet`` + ``images/``.

    Args:
        root: folder to write into (created).
        rows: parquet rows (see module docstring); ``default_rows(...)`` when None.
        n_cases: number of cases of the default rows.
        image_size: ``(width, height)`` of every PNG unless a row says ``_image_size``.
        shuffle_seed: when set, the parquet rows are shuffled (the real release is not
            sorted by filename), images are unchanged.
        schema: explicit Arrow schema, for tests that need odd column types.

    Returns:
        ``root`` as a Path.
    """
    root = Path(root)
    rows = copy.deepcopy(
        list(rows if rows is not None else default_rows(n_cases=n_cases, image_size=image_size))
    )
    _write_images(root, rows, None, image_size)
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rows)
    write_v1_parquet(root / "data" / "nova-v1.parquet", rows, schema=schema)
    return root


def with_v1_provenance(release: Path, folder: Path, raw: bytes) -> Path:
    """A copy of the v1 release at ``release`` (in ``folder``) whose parquet carries ``raw``
    as its novabench provenance: data novabench made, a damaged record, a foreign one."""
    copy = Path(shutil.copytree(release, folder))
    path = copy / "data" / "nova-v1.parquet"
    table = pq.read_table(path)
    metadata = {**(table.schema.metadata or {}), b"novabench.provenance": raw}
    pq.write_table(table.replace_schema_metadata(metadata), path)
    return copy


def _write_csv(path: Path, header: Sequence[str], records: Iterable[Sequence[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(records)


def write_legacy_release(
    root: Path | str,
    rows: Sequence[dict[str, Any]] | None = None,
    *,
    n_cases: int = 3,
    image_size: tuple[int, int] = (480, 480),
) -> Path:
    """Write the same content in the older CSV layout, images under ``test/``.

    ``case_metadata.csv`` gets one row per case (the first row's ``meta`` of that case),
    columns ``case_id``, the four fixed keys, then extra keys in first-seen order. Boxes
    whose source is ``gold`` go to ``bboxes_gold.csv``, the others to ``bboxes_raters.csv``.
    Numbers are written with ``repr`` so floats survive exactly.

    Returns:
        ``root`` as a Path.
    """
    root = Path(root)
    rows = copy.deepcopy(
        list(rows if rows is not None else default_rows(n_cases=n_cases, image_size=image_size))
    )
    root.mkdir(parents=True, exist_ok=True)
    _write_images(root, rows, "test", image_size)
    _write_csv(
        root / "captions.csv",
        ("filename", "case_id", "scan_id", "caption"),
        ((r["filename"], r["case_id"], r["scan_id"], r["caption_text"]) for r in rows),
    )
    meta_keys = list(FIXED_META_KEYS)
    first_meta: dict[str, dict[str, Any]] = {}
    for row in rows:
        meta = row.get("meta") or {}
        meta_keys.extend(k for k in meta if k not in meta_keys)
        first_meta.setdefault(row["case_id"], meta)
    _write_csv(
        root / "case_metadata.csv",
        ["case_id", *meta_keys],
        (
            [case_id, *(meta.get(k) or "" for k in meta_keys)]
            for case_id, meta in first_meta.items()
        ),
    )
    gold: list[list[Any]] = []
    raters: list[list[Any]] = []
    for row in rows:
        for box in row.get("bboxes") or []:
            coordinates = [repr(box[k]) for k in BOX_KEYS]
            if box.get("source") == "gold":
                gold.append([row["filename"], *coordinates])
            else:
                raters.append([row["filename"], box.get("source"), *coordinates])
    _write_csv(root / "bboxes_gold.csv", ("filename", *BOX_KEYS), gold)
    _write_csv(root / "bboxes_raters.csv", ("filename", "rater", *BOX_KEYS), raters)
    return root
