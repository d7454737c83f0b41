"""The bad-input table: every kind of bad file or option a user could plausibly hand `nova`.

Each row builds its inputs in a fresh folder and runs the command in-process through
``novabench.cli.main``. Every row must end the same way: exit code 2, exactly one line on
stderr naming the record and the field (the row lists the substrings), no traceback,
nothing half-written (no new file anywhere, temporary ones included) and every file that
existed before byte-identical afterwards (the shared release and the row's own folder are
hashed before and after).
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest

from novabench._files import mark_output_folder
from novabench.cli import main
from tests.release_factory import (
    default_rows,
    png_bytes,
    write_legacy_release,
    write_v1_release,
)

IMAGE = "case0001_001.png"
GOOD_IMAGE_LINE = {"filename": IMAGE, "boxes": [[1, 2, 3, 4]]}


@dataclass(frozen=True)
class Shared:
    """Inputs built once for every row (read-only: hashed around every row)."""

    root: Path
    release: Path
    legacy: Path
    volume: Path
    mask: Path
    predictions: Path


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    root = tmp_path_factory.mktemp("shared")
    release = write_v1_release(root / "release", n_cases=2, image_size=(32, 32))
    legacy = write_legacy_release(root / "legacy", n_cases=2, image_size=(32, 32))
    volume = np.zeros((16, 16, 6), dtype=np.float32)
    volume[2:14, 2:14, :] = 100.0
    mask = np.zeros(volume.shape, dtype=np.uint8)
    mask[5:9, 5:9, 2:4] = 1
    nib.save(nib.Nifti1Image(volume, np.eye(4)), root / "t1.nii.gz")
    nib.save(nib.Nifti1Image(mask, np.eye(4)), root / "mask.nii.gz")
    predictions = root / "pred.jsonl"
    predictions.write_text(json.dumps(GOOD_IMAGE_LINE) + "\n", encoding="utf-8")
    return Shared(root, release, legacy, root / "t1.nii.gz", root / "mask.nii.gz", predictions)


# --------------------------------------------------------------------------- builders


def _lines(folder: Path, *lines: object, name: str = "pred.jsonl") -> Path:
    """A predictions file: str lines as given, bytes raw, anything else as JSON."""
    path = folder / name
    data = b""
    for line in lines:
        if isinstance(line, bytes):
            data += line
        elif isinstance(line, str):
            data += line.encode("utf-8")
        else:
            data += json.dumps(line).encode("utf-8") + b"\n"
    path.write_bytes(data)
    return path


def _evaluate(shared: Shared, predictions: Path, folder: Path) -> list[str]:
    return [
        "evaluate",
        "--data",
        str(shared.release),
        "--predictions",
        str(predictions),
        "--out",
        str(folder / "report.json"),
        "--bootstrap",
        "0",
    ]


def _bad_prediction(*lines: object) -> Callable[[Path, Shared], list[str]]:
    return lambda folder, shared: _evaluate(shared, _lines(folder, *lines), folder)


def _release(rows_edit: Callable[[list[dict]], object]) -> Callable[[Path, Shared], list[str]]:
    def build(folder: Path, shared: Shared) -> list[str]:
        rows = default_rows(n_cases=2, image_size=(32, 32))
        rows_edit(rows)
        return ["info", str(write_v1_release(folder / "rel", rows))]

    return build


def _set(row: int, key: str, value: object) -> Callable[[list[dict]], None]:
    def edit(rows: list[dict]) -> None:
        rows[row][key] = value

    return edit


def _set_box(row: int, key: str, value: object) -> Callable[[list[dict]], None]:
    def edit(rows: list[dict]) -> None:
        rows[row]["bboxes"][0][key] = value

    return edit


def _manifest(
    cases: object, *, name: str = "cases.json", raw: bytes | None = None
) -> Callable[[Path, Shared], list[str]]:
    def build(folder: Path, shared: Shared) -> list[str]:
        path = folder / name
        text = raw
        if text is None:
            document = cases(shared) if callable(cases) else cases
            if name.endswith(".jsonl"):
                text = b"".join(json.dumps(case).encode() + b"\n" for case in document)
            else:
                text = json.dumps(document).encode()
        path.write_bytes(text)
        return ["ingest", str(path), str(folder / "out"), "--quiet"]

    return build


def _case(shared: Shared, **series: object) -> dict:
    return {
        "title": "T",
        "clinical_history": "H",
        "final_diagnosis": "D",
        "series": [
            {
                "volume": str(shared.volume),
                "mask": str(shared.mask),
                "caption": "Axial T1.",
                **series,
            }
        ],
    }


def _legacy_edit(name: str, edit: Callable[[str], str | bytes]) -> Callable[[Path, Shared], list]:
    def build(folder: Path, shared: Shared) -> list[str]:
        copy = shutil.copytree(shared.legacy, folder / "legacy")
        text = (copy / name).read_text(encoding="utf-8")
        changed = edit(text)
        if isinstance(changed, str):
            changed = changed.encode("utf-8")
        (copy / name).write_bytes(changed)
        return ["info", str(copy)]

    return build


def _export_into(relative: str, *extra: str) -> Callable[[Path, Shared], list[str]]:
    def build(folder: Path, shared: Shared) -> list[str]:
        release = shutil.copytree(shared.release, folder / "rel")
        return ["export", str(release), str(folder / relative), "-q", *extra]

    return build


def _export_over_user_folder(folder: Path, shared: Shared) -> list[str]:
    mine = folder / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work", encoding="utf-8")
    return ["export", str(shared.release), str(mine), "-q", "--overwrite"]


def _export_over_a_sample(folder: Path, shared: Shared) -> list[str]:
    sampled = shutil.copytree(shared.release, folder / "sampled")
    mark_output_folder(sampled, "sample")
    return ["export", str(shared.release), str(sampled), "-q", "--overwrite"]


def _export_through_link(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    (folder / "link").symlink_to(release / "images")
    return ["export", str(release), str(folder / "link"), "-q", "--overwrite"]


def _ingest_into_volume_folder(folder: Path, shared: Shared) -> list[str]:
    volumes = folder / "volumes"
    volumes.mkdir()
    shutil.copy(shared.volume, volumes / "t1.nii.gz")
    shutil.copy(shared.mask, volumes / "mask.nii.gz")
    mark_output_folder(volumes, "ingest")  # even a folder ingest wrote: it holds the inputs
    manifest = folder / "cases.json"
    case = {
        "title": "T",
        "clinical_history": "H",
        "final_diagnosis": "D",
        "series": [{"volume": "volumes/t1.nii.gz", "mask": "volumes/mask.nii.gz"}],
    }
    manifest.write_text(json.dumps([case]), encoding="utf-8")
    return ["ingest", str(manifest), str(volumes), "--overwrite", "--quiet"]


def _ingest_onto_manifest(folder: Path, shared: Shared) -> list[str]:
    manifest = folder / "cases.json"
    manifest.write_text(json.dumps([_case(shared)]), encoding="utf-8")
    return ["ingest", str(manifest), str(manifest), "--overwrite", "--quiet"]


def _shards(folder: Path) -> tuple[Path, Path]:
    first = _lines(folder, GOOD_IMAGE_LINE, name="a.jsonl")
    second = _lines(folder, {"filename": "case0002_001.png", "boxes": []}, name="b.jsonl")
    for path in (first, second):
        path.with_name(path.name + ".manifest.json").write_text(
            json.dumps({"model": "m"}), encoding="utf-8"
        )
    return first, second


def _run_onto_a_parse_output(folder: Path, shared: Shared) -> list[str]:
    """A `nova run --out` naming the output of `nova parse` (user13): mixed box conventions."""
    raw, parsed = folder / "raw.jsonl", folder / "parsed.jsonl"
    run = [*_RUN, "--no-progress"]
    run = [value.format(release=shared.release) for value in run]
    assert main([*run, "--out", str(raw), "--limit", "1"]) == 0
    assert main(["parse", str(raw), "--data", str(shared.release), "--out", str(parsed)]) == 0
    return [*run, "--out", str(parsed)]


def _merge_onto_manifest(folder: Path, shared: Shared) -> list[str]:
    first, second = _shards(folder)
    out = first.with_name(first.name + ".manifest.json")
    return ["merge", str(first), str(second), "--out", str(out), "--force"]


def _merge_onto_input(folder: Path, shared: Shared) -> list[str]:
    first, second = _shards(folder)
    return ["merge", str(first), str(second), "--out", str(first), "--force"]


def _merge_onto_notes(folder: Path, shared: Shared) -> list[str]:
    first, second = _shards(folder)
    (folder / "notes.txt").write_text("my notes", encoding="utf-8")
    return ["merge", str(first), str(second), "--out", str(folder / "notes.txt"), "--force"]


def _merge_existing(folder: Path, shared: Shared) -> list[str]:
    first, second = _shards(folder)
    out = _lines(folder, GOOD_IMAGE_LINE, name="all.jsonl")
    return ["merge", str(first), str(second), "--out", str(out)]


def _merge_bad_shard(folder: Path, shared: Shared) -> list[str]:
    first = _lines(folder, GOOD_IMAGE_LINE, name="a.jsonl")
    second = _lines(
        folder, b'{"filename": "case0002_001.png", "raw_boxes": "\xff"}\n', name="b.jsonl"
    )
    return ["merge", str(first), str(second), "--out", str(folder / "all.jsonl")]


def _merge_mixed_models(folder: Path, shared: Shared) -> list[str]:
    first, second = _shards(folder)
    second.with_name(second.name + ".manifest.json").write_text(
        json.dumps({"model": "other"}), encoding="utf-8"
    )
    return ["merge", str(first), str(second), "--out", str(folder / "all.jsonl")]


def _parse_onto_raw(folder: Path, shared: Shared) -> list[str]:
    raw = _lines(folder, {"filename": IMAGE, "raw_boxes": "[1, 2, 3, 4]"}, name="raw.jsonl")
    return ["parse", str(raw), "--data", str(shared.release), "--out", str(raw), "--force"]


def _parse_existing(folder: Path, shared: Shared) -> list[str]:
    raw = _lines(folder, {"filename": IMAGE, "raw_boxes": "[1, 2, 3, 4]"}, name="raw.jsonl")
    out = _lines(folder, GOOD_IMAGE_LINE, name="parsed.jsonl")
    (folder / "parsed.jsonl.tmp").write_text("a file of the user's", encoding="utf-8")
    return ["parse", str(raw), "--data", str(shared.release), "--out", str(out)]


def _parse_into_release(folder: Path, shared: Shared) -> list[str]:
    raw = _lines(folder, {"filename": IMAGE, "raw_boxes": "[1, 2, 3, 4]"}, name="raw.jsonl")
    release = shutil.copytree(shared.release, folder / "rel")
    return ["parse", str(raw), "--data", str(release), "--out", str(release / "p.jsonl")]


def _parse_bad_raw(folder: Path, shared: Shared) -> list[str]:
    raw = _lines(folder, GOOD_IMAGE_LINE, b'{"filename": "case0002_001.png", "raw_boxes": 7}\n')
    return ["parse", str(raw), "--data", str(shared.release), "--out", str(folder / "p.jsonl")]


def _evaluate_onto_predictions(folder: Path, shared: Shared) -> list[str]:
    predictions = _lines(folder, GOOD_IMAGE_LINE)
    args = _evaluate(shared, predictions, folder)
    return [*args[:-3], str(predictions), *args[-2:]]


def _evaluate_markdown_onto_report(folder: Path, shared: Shared) -> list[str]:
    args = _evaluate(shared, shared.predictions, folder)
    return [*args, "--markdown", str(folder / "report.json")]


def _evaluate_onto_predictions_manifest(folder: Path, shared: Shared) -> list[str]:
    args = _evaluate(shared, shared.predictions, folder)
    return [*args, "--markdown", str(shared.predictions) + ".manifest.json"]


def _evaluate_a_manifest(folder: Path, shared: Shared) -> list[str]:
    from novabench.run.predictions import RunManifest

    RunManifest(model="m").write(folder / "run.jsonl")  # writes run.jsonl.manifest.json only
    return _evaluate(shared, folder / "run.jsonl.manifest.json", folder)


def _evaluate_into_release(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    args = _evaluate(shared, shared.predictions, folder)
    args[args.index("--data") + 1] = str(release)
    args[args.index("--out") + 1] = str(release / "report.json")
    return args


def _evaluate_judge_cache_file(folder: Path, shared: Shared) -> list[str]:
    (folder / "cache").write_text("not a folder", encoding="utf-8")
    args = _evaluate(shared, shared.predictions, folder)
    return [
        *args,
        "--judge-endpoint",
        "http://127.0.0.1:9/v1",
        "--judge-model",
        "m",
        "--judge-cache",
        str(folder / "cache"),
    ]


def _evaluate_over_notes(folder: Path, shared: Shared) -> list[str]:
    (folder / "report.json").write_text('{"my": "results"}', encoding="utf-8")
    return _evaluate(shared, shared.predictions, folder)


def _evaluate_markdown_over_notes(folder: Path, shared: Shared) -> list[str]:
    (folder / "paper.md").write_text("# My paper draft", encoding="utf-8")
    return [*_evaluate(shared, shared.predictions, folder), "--markdown", str(folder / "paper.md")]


def _compare_onto_input(folder: Path, shared: Shared) -> list[str]:
    b = _lines(folder, GOOD_IMAGE_LINE, name="b.jsonl")
    return [
        "compare",
        "--data",
        str(shared.release),
        "--a",
        str(shared.predictions),
        "--b",
        str(b),
        "--out",
        str(b),
    ]


def _under_notes(*argv: str) -> Callable[[Path, Shared], list[str]]:
    """A command whose output ({out}) sits under notes.txt, a file of the user's."""

    def build(folder: Path, shared: Shared) -> list[str]:
        (folder / "notes.txt").write_text("my notes", encoding="utf-8")
        raw = _lines(folder, {"filename": IMAGE, "raw_boxes": "[1, 2, 3, 4]"}, name="raw.jsonl")
        out = str(folder / "notes.txt" / "sub" / "out")
        return [
            value.format(
                release=shared.release, folder=folder, pred=shared.predictions, raw=raw, out=out
            )
            for value in argv
        ]

    return build


# A file name of 246 bytes: the file system takes 255, the temporary name adds 22.
_LONG_NAME = "r" * 241 + ".json"


def _option(*argv: str) -> Callable[[Path, Shared], list[str]]:
    def build(folder: Path, shared: Shared) -> list[str]:
        return [
            value.format(release=shared.release, folder=folder, pred=shared.predictions)
            for value in argv
        ]

    return build


_RUN = ("run", "--data", "{release}", "--task", "localization", "--baseline", "floor")
_EVALUATE = ("evaluate", "--data", "{release}", "--predictions", "{pred}", "--bootstrap", "0")
_RUN_OUT = ("--out", "{folder}/raw.jsonl", "--no-progress")


def _run_option(*extra: str) -> Callable[[Path, Shared], list[str]]:
    return _option(*_RUN, *_RUN_OUT, *extra)


def _eval_option(*extra: str) -> Callable[[Path, Shared], list[str]]:
    return _option(
        "evaluate", "--data", "{release}", "--predictions", "{pred}", "--out", "{folder}/r.json",
        *extra,
    )  # fmt: skip


def _exported(info_argv: list[str]) -> list[str]:
    """The export of the release an ``info`` row reads, into a new folder beside it."""
    release = Path(info_argv[1])
    return ["export", str(release), str(release.parent / "exported"), "-q"]


@functools.cache
@functools.cache  # two rows use it: made once per process
def _png_bomb_bytes() -> bytes:
    """A 20,000 x 20,000 black PNG (400 MB of pixels, 1.7 MB of file) that PIL opens.

    Written chunk by chunk, its rows deflated at level 1 in blocks of 500 (0.5 CPU s;
    PIL's own optimised save took 1.7 s and 400 MB of memory for the same image).
    """
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    side = 20_000
    deflate = zlib.compressobj(1)
    rows = bytes((side + 1) * 500)  # each row: filter type 0, then black grey pixels
    pixels = b"".join([*(deflate.compress(rows) for _ in range(side // 500)), deflate.flush()])
    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)  # 8-bit greyscale
    signature = b"\x89PNG\r\n\x1a\n"
    return signature + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _png_bomb(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    (release / "images" / IMAGE).write_bytes(_png_bomb_bytes())
    return ["info", str(release)]


def _with_image_path(folder: Path, shared: Shared, image_path: str) -> list[str]:
    """The shared release with the image path of IMAGE's row rewritten in the parquet."""
    import pyarrow.parquet as pq

    release = shutil.copytree(shared.release, folder / "rel")
    parquet = release / "data" / "nova-v1.parquet"
    table = pq.read_table(parquet)
    paths = [
        image_path if name == IMAGE else path
        for name, path in zip(
            table.column("filename").to_pylist(),
            table.column("image_path").to_pylist(),
            strict=True,
        )
    ]
    column = table.schema.get_field_index("image_path")
    pq.write_table(table.set_column(column, "image_path", [paths]), parquet)
    return ["info", str(release)]


def _fifo_image(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    (release / "images" / IMAGE).unlink()
    os.mkfifo(release / "images" / IMAGE)  # reading it would wait for a writer forever
    return ["info", str(release)]


def _broken_png(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    (release / "images" / IMAGE).write_bytes(png_bytes((32, 32))[:40])
    return ["info", str(release)]


def _png_bad_crc(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    data = bytearray(png_bytes((32, 32)))
    data[-13] ^= 0x01  # the last byte of the IDAT chunk's CRC
    (release / "images" / IMAGE).write_bytes(bytes(data))
    return ["info", str(release)]


def _png_empty(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    (release / "images" / IMAGE).write_bytes(b"")
    return ["info", str(release)]


def _not_parquet(folder: Path, shared: Shared) -> list[str]:
    release = shutil.copytree(shared.release, folder / "rel")
    (release / "data" / "nova-v1.parquet").write_bytes(b"PAR1 this is not parquet")
    return ["info", str(release)]


def _empty_release(folder: Path, shared: Shared) -> list[str]:
    release = write_v1_release(folder / "rel", default_rows(n_cases=1, image_size=(32, 32)))
    import pyarrow.parquet as pq

    table = pq.read_table(release / "data" / "nova-v1.parquet")
    pq.write_table(table.slice(0, 0), release / "data" / "nova-v1.parquet")
    return ["info", str(release)]


def _nan_volume(folder: Path, shared: Shared) -> list[str]:
    volume = np.full((16, 16, 6), np.nan, dtype=np.float32)
    nib.save(nib.Nifti1Image(volume, np.eye(4)), folder / "nan.nii.gz")
    manifest = folder / "cases.json"
    case = _case(shared, volume=str(folder / "nan.nii.gz"))
    manifest.write_text(json.dumps([case]), encoding="utf-8")
    return ["ingest", str(manifest), str(folder / "out"), "--quiet"]


def _garbage_volume(folder: Path, shared: Shared) -> list[str]:
    (folder / "v.nii.gz").write_bytes(b"not a nifti volume")
    manifest = folder / "cases.json"
    manifest.write_text(json.dumps([_case(shared, volume="v.nii.gz")]), encoding="utf-8")
    return ["ingest", str(manifest), str(folder / "out"), "--quiet"]


def _string_bboxes(folder: Path, shared: Shared) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    release = shutil.copytree(shared.release, folder / "rel")
    path = release / "data" / "nova-v1.parquet"
    table = pq.read_table(path)
    texts = [json.dumps(value) for value in table.column("bboxes").to_pylist()]
    index = table.schema.get_field_index("bboxes")
    table = table.set_column(index, "bboxes", pa.array(texts, pa.string()))
    pq.write_table(table, path)
    return ["info", str(release)]


def _too_many_rows(folder: Path, shared: Shared) -> list[str]:
    """A small file (the shared release's rows repeated, dictionary-encoded) of 150,000 rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    release = shutil.copytree(shared.release, folder / "rel")
    path = release / "data" / "nova-v1.parquet"
    table = pq.read_table(path)
    copies = pa.array(np.arange(150_000) % table.num_rows)
    pq.write_table(table.take(copies), path)
    return ["info", str(release)]


def _export_existing(folder: Path, shared: Shared) -> list[str]:
    earlier = folder / "out"
    earlier.mkdir()
    (earlier / "README.md").write_text("an earlier export", encoding="utf-8")
    mark_output_folder(earlier, "export")
    return ["export", str(shared.release), str(earlier), "-q"]


def _deep(depth: int) -> bytes:
    return (
        b'{"filename": "' + IMAGE.encode() + b'", "boxes": ' + b"[" * depth + b"]" * depth + b"}\n"
    )


@dataclass(frozen=True)
class Row:
    kind: str
    build: Callable[[Path, Shared], list[str]]
    expect: tuple[str, ...]


# An integer of more digits than Python converts (4300 by default) in a box coordinate.
_HUGE_INTEGER_LINE = (
    b'{"filename": "' + IMAGE.encode() + b'", "boxes": [[1, 2, 3, ' + b"7" * 5000 + b"]]}\n"
)


ROWS: list[Row] = [
    # ------------------------------------------------------------------ release reader
    Row("box width negative", _release(_set_box(0, "width", -5.0)), (IMAGE, "width")),
    Row("box x NaN", _release(_set_box(0, "x", float("nan"))), (IMAGE, "bboxes[0]")),
    Row("box x infinite", _release(_set_box(0, "y", float("inf"))), (IMAGE, "bboxes[0]")),
    Row(
        "image path leaves the release",
        _release(_set(0, "image_path", "../../outside.png")),
        (IMAGE, "image_path"),
    ),
    Row(
        "image path with a NUL byte",
        lambda folder, shared: _with_image_path(folder, shared, "images/case0001\x00_001.png"),
        (IMAGE, "image_path", "NUL character"),
    ),
    Row("image a named pipe", _fifo_image, (IMAGE, "image_path", "named pipe (FIFO)")),
    Row(
        "5000-digit integer in a prediction",
        _bad_prediction(_HUGE_INTEGER_LINE),
        ("pred.jsonl", "line 1", "5000 digits at column 54"),
    ),
    Row("scan id off pattern", _release(_set(0, "scan_id", "1")), (IMAGE, "scan_id")),
    Row(
        "filename off pattern", _release(_set(0, "filename", "scan.png")), ("scan.png", "filename")
    ),
    Row(
        "case id disagrees with filename",
        _release(_set(0, "case_id", "case0009")),
        (IMAGE, "case_id"),
    ),
    Row(
        "duplicate filename",
        _release(lambda rows: rows.append(dict(rows[0], bboxes=None))),
        (IMAGE, "filename"),
    ),
    Row("image missing", _release(_set(0, "_image", None)), (IMAGE, "image")),
    Row("PNG decompression bomb", _png_bomb, (IMAGE, "image")),
    Row("PNG truncated", _broken_png, (IMAGE, "image")),
    Row("PNG with a wrong CRC", _png_bad_crc, (IMAGE, "image_path", "IDAT", "wrong CRC")),
    Row("PNG of zero bytes", _png_empty, (IMAGE, "image_path", "empty")),
    Row("export of a PNG bomb", lambda f, s: _exported(_png_bomb(f, s)), (IMAGE, "image")),
    Row(
        "export of a negative box",
        lambda f, s: _exported(_release(_set_box(0, "height", -1.0))(f, s)),
        (IMAGE, "height"),
    ),
    Row(
        "coco export of a missing image",
        lambda f, s: [*_exported(_release(_set(0, "_image", None))(f, s)), "--format", "coco"],
        (IMAGE, "image"),
    ),
    Row("parquet not parquet", _not_parquet, ("nova-v1.parquet",)),
    Row("release with no images", _empty_release, ("rel", "no images")),
    Row("bboxes column of strings", _string_bboxes, ("nova-v1.parquet", "'bboxes'", "string")),
    Row("150,000 rows", _too_many_rows, ("data/nova-v1.parquet", "150,000 rows", "100,000")),
    Row("release folder missing", _option("info", "{folder}/nowhere"), ("nowhere",)),
    Row("release is a file", _option("info", "{pred}"), ("pred.jsonl",)),
    Row(
        "legacy CSV not UTF-8",
        _legacy_edit(
            "captions.csv", lambda text: text.encode("utf-8").replace(b"\xc3\xb8", b"\xf8")
        ),
        ("captions.csv", "line", "UTF-8"),
    ),
    Row(
        "legacy box 400 digits",
        _legacy_edit(
            "bboxes_gold.csv",
            lambda text: text.replace(text.splitlines()[1].split(",")[2], "9" * 400, 1),
        ),
        ("bboxes_gold.csv", "line 2", IMAGE, "'y'", "finite"),
    ),
    Row(
        "legacy box not a number",
        _legacy_edit(
            "bboxes_gold.csv",
            lambda text: text.replace(text.splitlines()[1].split(",")[2], "wide", 1),
        ),
        ("bboxes_gold.csv", "line 2", IMAGE, "'y'", "not a number"),
    ),
    # ------------------------------------------------------------------ predictions
    Row(
        "predictions not UTF-8",
        _bad_prediction(GOOD_IMAGE_LINE, b'{"filename": "case0002_001.png", "caption": "\xe9"}\n'),
        ("pred.jsonl", "line 2", "not UTF-8"),
    ),
    Row(
        "predictions torn JSON",
        _bad_prediction(GOOD_IMAGE_LINE, '{"filename": "case0002_001.png", "boxes": [[1,\n'),
        ("pred.jsonl", "line 2", "JSON"),
    ),
    Row(
        "predictions unknown image",
        _bad_prediction({"filename": "case0999_001.png", "boxes": []}),
        ("line 1", "case0999_001.png", "filename"),
    ),
    Row(
        "predictions duplicate",
        _bad_prediction(GOOD_IMAGE_LINE, GOOD_IMAGE_LINE),
        ("line 2", IMAGE, "filename"),
    ),
    Row(
        "boxes a string",
        _bad_prediction({"filename": IMAGE, "boxes": "[[1, 2, 3, 4]]"}),
        ("line 1", "'boxes'"),
    ),
    Row(
        "box of three numbers",
        _bad_prediction({"filename": IMAGE, "boxes": [[1, 2, 3]]}),
        ("line 1", "boxes[0]"),
    ),
    Row(
        "box value NaN token",
        _bad_prediction('{"filename": "case0001_001.png", "boxes": [[1, 2, NaN, 4]]}\n'),
        ("line 1", "boxes[0][2]", "finite"),
    ),
    Row(
        "box value true",
        _bad_prediction({"filename": IMAGE, "boxes": [[1, 2, True, 4]]}),
        ("line 1", "boxes[0][2]", "bool"),
    ),
    Row(
        "box value 400 digits",
        _bad_prediction(
            '{"filename": "case0001_001.png", "boxes": [[1, 2, ' + "9" * 400 + ", 4]]}\n"
        ),
        ("line 1", "boxes[0][2]", "too large"),
    ),
    Row(
        "box value numeric string",
        _bad_prediction({"filename": IMAGE, "boxes": [[1, 2, "3", 4]]}),
        ("line 1", "boxes[0][2]"),
    ),
    Row(
        "predicted box width negative",
        _bad_prediction({"filename": IMAGE, "boxes": [[1, 2, -3, 4]]}),
        ("line 1", "boxes[0]", "negative"),
    ),
    Row(
        "scores count",
        _bad_prediction({"filename": IMAGE, "boxes": [[1, 2, 3, 4]], "scores": [0.5, 0.2]}),
        ("line 1", "'scores'"),
    ),
    Row(
        "input_size huge",
        _bad_prediction({"filename": IMAGE, "raw_boxes": "[]", "input_size": [1e308, 1e308]}),
        ("line 1", "input_size"),
    ),
    Row(
        "input_size zero",
        _bad_prediction({"filename": IMAGE, "raw_boxes": "[]", "input_size": [0, 32]}),
        ("line 1", "input_size"),
    ),
    Row(
        "input_size booleans",
        _bad_prediction({"filename": IMAGE, "raw_boxes": "[]", "input_size": [True, True]}),
        ("line 1", "input_size"),
    ),
    Row(
        "caption a number",
        _bad_prediction({"filename": IMAGE, "caption": 12}),
        ("line 1", "'caption'"),
    ),
    Row(
        "diagnoses a string",
        _bad_prediction({"case_id": "case0001", "diagnoses": "glioma"}),
        ("line 1", "'diagnoses'"),
    ),
    Row(
        "caption with a lone surrogate",
        _bad_prediction({"filename": IMAGE, "caption": "\ud800 axial T2"}),
        ("pred.jsonl, line 1 (case0001_001.png), field 'caption': lone surrogate U+D800 at",),
    ),
    Row(
        "diagnosis with a lone surrogate",
        _bad_prediction({"case_id": "case0001", "diagnoses": ["glioma", "\udc00 abscess"]}),
        ("pred.jsonl, line 1 (case0001), field 'diagnoses[1]': lone surrogate U+DC00 at",),
    ),
    Row(
        "model name with a lone surrogate",
        _bad_prediction({**GOOD_IMAGE_LINE, "model": "qwen\udfff"}),
        ("line 1", "field 'model': lone surrogate U+DFFF"),
    ),
    Row(
        "parse status with a lone surrogate",
        _bad_prediction({**GOOD_IMAGE_LINE, "parse_status": "ok\ud834"}),
        ("line 1", "field 'parse_status': lone surrogate U+D834"),
    ),
    Row(
        "input_size beside parsed boxes",
        _bad_prediction({"filename": IMAGE, "boxes": [[3, 4, 10, 8]], "input_size": [64, 64]}),
        ("pred.jsonl, line 1 (case0001_001.png), field 'input_size'", "only to a raw answer"),
    ),
    Row(
        "caption null",
        _bad_prediction({"filename": IMAGE, "caption": None}),
        ("pred.jsonl, line 1 (case0001_001.png), field 'caption': is null",),
    ),
    Row(
        "diagnoses null",
        _bad_prediction({"case_id": "case0001", "diagnoses": None}),
        ("line 1 (case0001), field 'diagnoses': is null",),
    ),
    Row(
        "box area past the largest float",
        _bad_prediction({"filename": IMAGE, "boxes": [[1, 2, 1e308, 150]]}),
        ("line 1 (case0001_001.png), field 'boxes[0]': too large",),
    ),
    Row("line a JSON list", _bad_prediction([1, 2]), ("line 1", "JSON object")),
    Row("JSON nested 100000 deep", _bad_prediction(_deep(100_000)), ("line 1", "nested")),
    Row(
        "unknown key",
        _bad_prediction({"filename": IMAGE, "boxes": [], "boxez": []}),
        ("line 1", "boxez"),
    ),
    Row(
        "predictions manifest not UTF-8",
        lambda folder, shared: (
            (folder / "pred.jsonl.manifest.json").write_bytes(b'{"model": "\xff"}'),
            _evaluate(shared, _lines(folder, GOOD_IMAGE_LINE), folder),
        )[1],
        ("pred.jsonl.manifest.json", "line 1", "not UTF-8"),
    ),
    Row(
        "predictions file missing",
        _option(
            "evaluate",
            "--data",
            "{release}",
            "--predictions",
            "{folder}/none.jsonl",
            "--out",
            "{folder}/r.json",
        ),
        ("none.jsonl", "no such"),
    ),  # fmt: skip
    Row("parse raw answer a number", _parse_bad_raw, ("line 2", "raw_boxes")),
    # ------------------------------------------------------------------ outputs vs inputs
    Row(
        "export into the release images",
        _export_into("rel/images", "--overwrite"),
        ("sits inside the release",),
    ),
    Row(
        "export into the release data",
        _export_into("rel/data", "--overwrite"),
        ("sits inside the release",),
    ),
    Row("export onto the release", _export_into("rel", "--overwrite"), ("is an input",)),
    Row(
        "export over the release's parent",
        _export_into(".", "--overwrite"),
        ("contains the release",),
    ),
    Row("export through a link into the release", _export_through_link, ("the release",)),
    Row("export over a user's folder", _export_over_user_folder, ("not written by `nova export`",)),
    Row("export over a sample", _export_over_a_sample, ("written by `nova sample`",)),
    Row("export onto an existing folder", _export_existing, ("already exists", "--overwrite")),
    Row(
        "ingest into the folder of its volumes",
        _ingest_into_volume_folder,
        ("contains a source volume",),
    ),
    Row("ingest onto its manifest", _ingest_onto_manifest, ("the manifest",)),
    Row(
        "run --out a parse output",
        _run_onto_a_parse_output,
        ("parsed.jsonl: is a `nova parse` output", "raw.jsonl), then parse it again"),
    ),
    Row("merge onto a shard's manifest", _merge_onto_manifest, ("the manifest of a shard",)),
    Row("merge onto a shard", _merge_onto_input, ("is an input",)),
    Row("merge --force over a user's file", _merge_onto_notes, ("not a predictions file",)),
    Row("merge onto an existing file", _merge_existing, ("exists already", "--force")),
    Row("merge a shard not UTF-8", _merge_bad_shard, ("b.jsonl", "line 1", "not UTF-8")),
    Row("merge shards of two models", _merge_mixed_models, ("b.jsonl.manifest.json", "model")),
    Row("parse onto its raw file", _parse_onto_raw, ("is an input",)),
    Row("parse onto an existing file", _parse_existing, ("exists already",)),
    Row("parse into the release", _parse_into_release, ("sits inside the release",)),
    Row("evaluate onto its predictions", _evaluate_onto_predictions, ("is an input",)),
    Row(
        "evaluate markdown onto the report",
        _evaluate_markdown_onto_report,
        ("--markdown", "also the --out"),
    ),
    Row(
        "evaluate onto a predictions manifest",
        _evaluate_onto_predictions_manifest,
        ("the manifest of",),
    ),
    Row("evaluate into the release", _evaluate_into_release, ("sits inside the release",)),
    Row(
        "a run manifest given as predictions",
        _evaluate_a_manifest,
        ("this is a run manifest", "line 1"),
    ),
    Row(
        "a predictions file given to leaderboard",
        lambda folder, shared: ["leaderboard", str(shared.predictions)],
        ("predictions", "nova evaluate first"),
    ),
    Row("compare onto an input", _compare_onto_input, ("is an input",)),
    Row(
        "run appending to the release parquet",
        _option(*_RUN, "--out", "{release}/data/nova-v1.parquet", "--no-progress"),
        ("--out", "sits inside the release"),
    ),
    Row("evaluate over a user's file", _evaluate_over_notes, ("--out", "not a report")),
    # Without --out only the table is printed: what would write beside a report is refused.
    *(
        Row(
            f"evaluate {flag} without --out",
            _option(*_EVALUATE, *argv),
            (f"field '{flag}'", "give --out too", "prints the table and writes nothing"),
        )
        for flag, argv in (
            ("--markdown", ("--markdown", "{folder}/r.md")),
            ("--html", ("--html", "{folder}/r.html")),
            ("--items", ("--items", "{folder}/items")),
            ("--force", ("--force",)),
        )
    ),
    # ------------------------------------------------------------------ outputs never writable
    Row(
        "evaluate --out under a file",
        _under_notes(*_EVALUATE, "--out", "{out}.json"),
        ("cannot write", "notes.txt/sub/out.json: ", "notes.txt is a file, not a folder"),
    ),
    Row(
        "evaluate --items under a file",
        _under_notes(*_EVALUATE, "--out", "{folder}/r.json", "--items", "{out}"),
        ("cannot write", "notes.txt/sub/out: ", "notes.txt is a file, not a folder"),
    ),
    Row(
        "evaluate --html name too long",
        _option(*_EVALUATE, "--out", "{folder}/r.json", "--html", "{folder}/" + _LONG_NAME),
        ("cannot write", _LONG_NAME, "its name is too long: 246 bytes, at most 233 here"),
    ),
    Row(
        "evaluate --items folder name too long",
        _option(*_EVALUATE, "--out", "{folder}/r.json", "--items", "{folder}/" + "i" * 256),
        # the folder is written through a staging sibling 29 bytes longer: 226 at most
        ("cannot write", "i" * 256 + ": its name is too long: 256 bytes, at most 226 here"),
    ),
    Row(
        "compare --markdown under a file",
        _under_notes(
            "compare",
            "--data",
            "{release}",
            "--a",
            "{pred}",
            "--b",
            "{pred}",
            "--out",
            "{folder}/c.json",
            "--markdown",
            "{out}.md",
        ),
        ("cannot write", "notes.txt/sub/out.md: ", "is a file, not a folder"),
    ),
    Row(
        "leaderboard --csv under a file",
        _under_notes("leaderboard", "{pred}", "--csv", "{out}.csv"),
        ("cannot write", "notes.txt/sub/out.csv: ", "is a file, not a folder"),
    ),
    Row(
        "parse --out under a file",
        _under_notes("parse", "{raw}", "--data", "{release}", "--out", "{out}.jsonl"),
        ("cannot write", "notes.txt/sub/out.jsonl: ", "is a file, not a folder"),
    ),
    Row(
        "run --out under a file",
        _under_notes(*_RUN, "--out", "{out}.jsonl", "--no-progress"),
        ("cannot write", "notes.txt/sub/out.jsonl: ", "is a file, not a folder"),
    ),
    Row(
        "merge --out name too long",
        lambda folder, shared: [
            "merge",
            *map(str, _shards(folder)),
            "--out",
            str(folder / _LONG_NAME),
        ],
        ("cannot write", "its name is too long"),
    ),
    Row(
        "export into a folder under a file",
        _under_notes("export", "{release}", "{out}", "-q"),
        ("cannot write", "notes.txt/sub/out: ", "is a file, not a folder"),
    ),
    Row(
        "evaluate markdown over a user's file",
        _evaluate_markdown_over_notes,
        ("--markdown", "not a report"),
    ),
    # ------------------------------------------------------------------ ingest manifests
    Row(
        "manifest not UTF-8",
        _manifest(None, raw=b'[{"title": "caf\xe9"}]'),
        ("cases.json", "line 1", "not UTF-8"),
    ),
    Row(
        "JSONL manifest error names its line",
        _manifest(None, name="cases.jsonl", raw=b'{"title": "a"}\n\n{"title": \n'),
        ("cases.jsonl", "line 3", "JSON"),
    ),
    Row(
        "JSONL manifest separator inside a string",
        _manifest(None, name="cases.jsonl", raw='{"title": "a\u2028b"}\n{"title": }\n'.encode()),
        ("cases.jsonl", "line 2"),
    ),
    Row("n_slices true", _manifest(lambda s: [_case(s, n_slices=True)]), ("case #1", "n_slices")),
    Row("n_slices zero", _manifest(lambda s: [_case(s, n_slices=0)]), ("case #1", "n_slices")),
    Row(
        "slice index a string",
        _manifest(lambda s: [_case(s, slice_indices=["2"])]),
        ("case #1", "slice_indices[0]"),
    ),
    Row(
        "unknown case key",
        _manifest(lambda s: [{**_case(s), "diagnosis": "x"}]),
        ("case #1", "diagnosis"),
    ),
    Row(
        "case id off pattern",
        _manifest(lambda s: [{**_case(s), "case_id": "patient1"}]),
        ("case_id",),
    ),
    Row(
        "volume missing",
        _manifest(lambda s: [_case(s, volume="nowhere.nii.gz")]),
        ("case", "series[0].volume"),
    ),
    Row("volume not NIfTI", _garbage_volume, ("series[0].volume",)),
    Row("volume all NaN", _nan_volume, ("case", "series[0]")),
    Row(
        "manifest is a folder",
        _option("ingest", "{folder}", "{folder}/out", "--quiet"),
        ("folder",),
    ),
    # ------------------------------------------------------------------ options
    Row("--timeout nan", _run_option("--timeout", "nan"), ("--timeout", "finite")),
    Row("--timeout 0", _run_option("--timeout", "0"), ("--timeout", "positive")),
    Row("--temperature inf", _run_option("--temperature", "inf"), ("--temperature", "finite")),
    Row("--batch-size 0", _run_option("--batch-size", "0"), ("--batch-size", "positive")),
    Row("--max-concurrency -1", _run_option("--max-concurrency", "-1"), ("--max-concurrency",)),
    Row("--limit 0", _run_option("--limit", "0"), ("--limit", "positive")),
    Row("--max-retries -1", _run_option("--max-retries", "-1"), ("--max-retries",)),
    Row(
        "--max-shard-mb inf",
        _option("export", "{release}", "{folder}/out", "--max-shard-mb", "inf"),
        ("--max-shard-mb", "finite"),
    ),
    Row(
        "--max-shard-mb 0",
        _option("export", "{release}", "{folder}/out", "--max-shard-mb", "0"),
        ("--max-shard-mb", "positive"),
    ),
    Row("--bootstrap -1", _eval_option("--bootstrap", "-1"), ("--bootstrap",)),
    Row("--confidence nan", _eval_option("--confidence", "nan"), ("--confidence", "finite")),
    Row("--seed text", _eval_option("--seed", "one"), ("--seed", "integer")),
    Row(
        "leaderboard --confidence nan",
        _option("leaderboard", "{pred}", "--confidence", "nan"),
        ("--confidence", "finite"),
    ),
    Row("--judge-cache is a file", _evaluate_judge_cache_file, ("--judge-cache", "cache")),
    Row(
        "--judge-cache inside the release",
        _option(
            "evaluate",
            "--data",
            "{release}",
            "--predictions",
            "{pred}",
            "--out",
            "{folder}/r.json",
            "--judge-endpoint",
            "http://127.0.0.1:9/v1",
            "--judge-model",
            "m",
            "--judge-cache",
            "{release}/.cache",
        ),
        ("--judge-cache", "sits inside the release"),
    ),  # fmt: skip
    Row(
        "export --pretty-name blank",
        _option("export", "{release}", "{folder}/out", "-q", "--pretty-name", " "),
        ("--pretty-name", "is blank"),
    ),
    Row(
        "export --pretty-name of two lines",
        _option("export", "{release}", "{folder}/out", "-q", "--pretty-name", "NOVA\n---"),
        ("--pretty-name", "one line", "U+000A"),
    ),
    Row(
        "export --pretty-name not UTF-8",  # what Python makes of argv byte 0x85 under UTF-8
        _option("export", "{release}", "{folder}/out", "-q", "--pretty-name", "NOVA\udc85"),
        ("--pretty-name", "not UTF-8", "character 5"),
    ),
    Row("sample --cases 0", _option("sample", "{folder}/s", "--cases", "0"), ("--cases",)),
    Row(
        "ingest --image-size 0",
        _option("ingest", "{pred}", "{folder}/out", "--image-size", "0"),
        ("--image-size",),
    ),
]


def _tree(*folders: Path) -> dict[str, str]:
    """SHA-256 of every file (and the target of every link) under the folders."""
    digests = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink():
                digests[str(path)] = "link:" + os.readlink(path)
            elif path.is_file():
                digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                digests[str(path)] = "folder"
    return digests


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 60
    assert len({row.kind for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{n:02d}-{row.kind}" for n, row in enumerate(ROWS)])
def test_bad_input_is_one_line_exit_2_and_nothing_changes(
    row: Row,
    shared: Shared,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "case"
    folder.mkdir()
    argv = row.build(folder, shared)
    capsys.readouterr()
    before = _tree(tmp_path, shared.root)

    code = main(argv)

    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert lines[0].startswith(f"nova {argv[0]}: error: "), lines[0]
    for expected in row.expect:
        assert expected in lines[0], (expected, lines[0])
    assert _tree(tmp_path, shared.root) == before


# --------------------------------------------------------------------------- what stays allowed


def test_a_report_is_replaced_by_the_next_run_only_with_force(
    shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*_evaluate(shared, shared.predictions, tmp_path), "--markdown", str(tmp_path / "r.md")]
    assert main(argv) == 0
    first = (tmp_path / "report.json").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(argv) == 2  # our own report: kept unless the user says to replace it
    assert "pass --force to replace it" in capsys.readouterr().err
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == first
    assert main([*argv, "--force"]) == 0  # our own report and Markdown: replaced
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8")).keys() == (
        json.loads(first).keys()
    )


def test_a_byte_order_mark_is_accepted_everywhere(
    shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bom = b"\xef\xbb\xbf"
    predictions = _lines(tmp_path, bom + json.dumps(GOOD_IMAGE_LINE).encode() + b"\n")
    assert main(_evaluate(shared, predictions, tmp_path)) == 0
    (tmp_path / "pred.jsonl.manifest.json").write_bytes(bom + b'{"model": "m"}')
    assert main([*_evaluate(shared, predictions, tmp_path), "--force"]) == 0
    legacy = shutil.copytree(shared.legacy, tmp_path / "legacy")
    (legacy / "captions.csv").write_bytes(bom + (legacy / "captions.csv").read_bytes())
    assert main(["info", str(legacy)]) == 0
    from novabench.data.ingest import read_manifest

    for name in ("cases.json", "cases.jsonl"):
        text = json.dumps([_case(shared)] if name.endswith(".json") else _case(shared))
        (tmp_path / name).write_bytes(bom + text.encode())
        assert [case.case_id for case in read_manifest(tmp_path / name)] == ["case0001"]


def test_an_unexpected_error_is_one_line_naming_a_bug(
    shared: Shared, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import novabench.data.release as release  # `nova info` imports read_release from here

    def explode(*args: object, **kwargs: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(release, "read_release", explode)
    assert main(["info", str(shared.release)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "internal error: KeyError" in err and "bug" in err and "--debug" in err
    assert main(["--debug", "info", str(shared.release)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("nova info: internal")


def test_a_closed_pipe_ends_quietly(shared: Shared, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    errors = io.StringIO()
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    monkeypatch.setattr(sys, "stderr", errors)
    assert main(["info", str(shared.release)]) == 141
    assert errors.getvalue() == ""


def test_a_real_closed_pipe_leaves_no_traceback(shared: Shared) -> None:
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "novabench.cli", "info", str(shared.release)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before a byte is written, as after `head -1`
    err = process.stderr.read().decode()
    process.wait()
    assert err == "" and process.returncode == 141


# --------------------------------------------------------------------------- metric faces

_BOX = [1.0, 2.0, 3.0, 4.0]
FACE_ROWS = [
    # (kind, task, predictions, references, substrings both faces must name)
    ("numeric string coordinate", "localization", [{"boxes": [["1", 2, 3, 4]]}], [{"boxes": [_BOX]}], ("example 0", "boxes[0]")),  # noqa: E501
    ("boolean coordinate", "localization", [{"boxes": [[1, 2, True, 4]]}], [{"boxes": [_BOX]}], ("example 0", "boxes[0]")),  # noqa: E501
    ("NaN coordinate", "localization", [{"boxes": [_BOX]}, {"boxes": [[1, float("nan"), 3, 4]]}], [{"boxes": [_BOX]}] * 2, ("example 1", "boxes[0]")),  # noqa: E501
    ("boxes a string", "localization", [{"boxes": "[[1, 2, 3, 4]]"}], [{"boxes": [_BOX]}], ("example 0", "boxes")),  # noqa: E501
    ("None caption prediction", "captioning", [None], ["Axial FLAIR."], ("example 0", "predictions")),  # noqa: E501
    ("None caption reference", "captioning", ["Axial FLAIR."], [None], ("example 0", "references")),  # noqa: E501
    ("blank caption reference", "captioning", ["Axial FLAIR."], ["  "], ("example 0", "references")),  # noqa: E501
    ("None diagnosis reference", "diagnosis", [["glioma"]], [None], ("example 0", "reference")),  # noqa: E501
    ("diagnoses a dict", "diagnosis", [{"most_likely": "glioma"}], ["Glioma"], ("example 0", "predictions")),  # noqa: E501
    ("diagnosis not text", "diagnosis", [["glioma", 3]], ["Glioma"], ("example 0", "predictions[1]")),  # noqa: E501
]  # fmt: skip


def _plain(task: str, predictions: list, references: list) -> object:
    if task == "localization":
        from novabench.metrics.localization import score_localization

        return score_localization(predictions, references)
    if task == "captioning":
        from novabench.metrics.captioning import score_captioning

        return score_captioning(predictions, references, exclude=("BERTScore-F1",))
    from novabench.metrics.diagnosis import score_diagnosis

    return score_diagnosis(predictions, references)


def _face(task: str, predictions: list, references: list) -> object:
    """The evaluate module's input layer (what `add_batch`/`compute` run before Arrow)."""
    from novabench.metrics.evaluate_adapter import normalize_predictions, normalize_references

    return normalize_predictions(task, predictions), normalize_references(task, references)


@pytest.mark.parametrize(
    ("task", "predictions", "references", "expect"),
    [
        (
            "captioning",
            ["Axial T1 \ud800."],
            ["Axial T1."],
            "example 1 (0-based index 0), field 'predictions'",
        ),
        (
            "captioning",
            ["Axial T1."],
            [{"caption": "x\udfff"}],
            "example 1 (0-based index 0), field 'references'",
        ),
        ("diagnosis", [["glioma", "\udc80"]], ["Glioma"], "field 'predictions[1]'"),
    ],
)
def test_the_evaluate_face_refuses_a_lone_surrogate_before_arrow_does(
    task: str, predictions: list, references: list, expect: str
) -> None:
    # Arrow cannot encode a lone surrogate: it used to end in a UnicodeEncodeError.
    from novabench.errors import NovaInputError

    with pytest.raises(NovaInputError, match="lone surrogate U\\+D[89A-F][0-9A-F]{2}") as raised:
        _face(task, predictions, references)
    assert expect in str(raised.value) and "\n" not in str(raised.value)


def _counted_from_one(match: re.Match[str]) -> str:
    """``example N`` of the Python functions as the evaluate face words it."""
    index = int(match.group(1))
    return f"example {index + 1} (0-based index {index})"


@pytest.mark.parametrize(
    ("kind", "task", "predictions", "references", "expect"),
    FACE_ROWS,
    ids=[row[0] for row in FACE_ROWS],
)
def test_both_metric_faces_refuse_alike(
    kind: str, task: str, predictions: list, references: list, expect: tuple[str, ...]
) -> None:
    from novabench.errors import NovaInputError

    for face in (_plain, _face):
        with pytest.raises(NovaInputError) as raised:
            face(task, predictions, references)
        message = str(raised.value)
        assert "\n" not in message
        for expected in expect:
            if face is _face:  # the evaluate face counts examples from 1 and gives the index
                expected = re.sub(r"^example (\d+)", _counted_from_one, expected)
            assert expected in message, (face.__name__, expected, message)


# --------------------------------------------------------------------------- a full disk

# Every command that writes, and the output its message must name (relative to the row's
# folder; one of several when the command writes several, whichever comes first). The release and predictions are written first, without a limit.
FULL_DISK_ROWS = [
    ("sample", lambda f, s, raw, report: ["sample", f"{f}/s", "--cases", "2", "-q"], "s"),
    ("ingest", lambda f, s, raw, report: ["ingest", _ingest_manifest(f, s), f"{f}/ing", "-q"], "ing"),  # noqa: E501
    ("export", lambda f, s, raw, report: ["export", str(s.release), f"{f}/exp", "-q"], "exp"),
    ("export coco", lambda f, s, raw, report: ["export", str(s.release), f"{f}/coco", "-q", "--format", "coco"], "coco"),  # noqa: E501
    ("run", lambda f, s, raw, report: [*_FULL_RUN, "--out", f"{f}/run.jsonl"], ("run.jsonl", "run.jsonl.manifest.json")),  # noqa: E501
    ("parse", lambda f, s, raw, report: ["parse", raw, "--data", str(s.release), "--out", f"{f}/p.jsonl"], "p.jsonl"),  # noqa: E501
    ("merge", lambda f, s, raw, report: ["merge", raw, "--out", f"{f}/m.jsonl"], "m.jsonl"),
    ("evaluate", lambda f, s, raw, report: [*_full_evaluate(s, raw), "--out", f"{f}/r.json", "--items", f"{f}/items", "--markdown", f"{f}/r.md", "--html", f"{f}/r.html"], ("r.json", "items/images.parquet", "r.md", "r.html")),  # noqa: E501
    ("space build", lambda f, s, raw, report: ["space", "build", "explorer", f"{f}/space", "--wheel", _tiny_wheel(f)], "space"),  # noqa: E501
    ("leaderboard", lambda f, s, raw, report: ["leaderboard", report, "--html", f"{f}/b.html"], "b.html"),  # noqa: E501
]  # fmt: skip
_FULL_RUN = ("run", "--data", "", "--task", "all", "--baseline", "floor", "--no-progress")
# Well below what any of these outputs needs, well above nothing (the limit is per file).
_FILE_SIZE_LIMIT = 300


def _full_evaluate(shared: Shared, raw: str) -> list[str]:
    return [
        "evaluate",
        "--data",
        str(shared.release),
        "--predictions",
        raw,
        "--bootstrap",
        "0",
        "--exclude",
        "BERTScore-F1",
    ]


def _ingest_manifest(folder: Path, shared: Shared) -> str:
    path = folder / "cases.json"
    path.write_text(json.dumps([_case(shared)]), encoding="utf-8")
    return str(path)


def _tiny_wheel(folder: Path) -> str:
    """A wheel holding only METADATA: all that `nova space build --wheel` reads of it."""
    import zipfile

    wheel = folder / "novabench-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("novabench-0.1.0.dist-info/METADATA", "Name: novabench\nVersion: 0.1.0\n")
    return str(wheel)


def _limited_to(size: int) -> Callable[[], None]:
    def limit() -> None:  # in the child: a write past `size` bytes fails with EFBIG
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


@pytest.fixture(scope="module")
def full_disk_inputs(shared: Shared, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A raw run of the shared release and its report, written with no limit."""
    folder = tmp_path_factory.mktemp("full-disk-inputs")
    raw, report = folder / "raw.jsonl", folder / "report.json"
    run = [*_FULL_RUN, "--out", str(raw)]
    run[run.index("--data") + 1] = str(shared.release)
    assert main(run) == 0
    assert main([*_full_evaluate(shared, str(raw)), "--out", str(report)]) == 0
    return str(raw), str(report)


# A child process per row, several seconds each: the rest run with the slow tests.
_FULL_DISK_FAST = ("parse", "export coco")


@pytest.mark.parametrize(
    ("command", "build", "output"),
    [
        pytest.param(*row, id=row[0], marks=() if row[0] in _FULL_DISK_FAST else pytest.mark.slow)
        for row in FULL_DISK_ROWS
    ],
)
def test_a_full_disk_names_the_output_in_one_line(
    command: str,
    build: Callable[..., list[str]],
    output: str | tuple[str, ...],
    shared: Shared,
    full_disk_inputs: tuple[str, str],
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    raw, report = full_disk_inputs
    argv = build(tmp_path, shared, raw, report)
    if "--data" in argv and argv[argv.index("--data") + 1] == "":
        argv[argv.index("--data") + 1] = str(shared.release)
    before = _tree(tmp_path, shared.root, Path(raw).parent)
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    finished = subprocess.run(
        [sys.executable, "-m", "novabench.cli", *argv],
        preexec_fn=_limited_to(_FILE_SIZE_LIMIT),
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    lines = finished.stderr.strip().splitlines()
    assert finished.returncode == 2, finished.stderr
    assert len(lines) == 1 and "Traceback" not in finished.stderr, finished.stderr
    named = [tmp_path / name for name in ((output,) if isinstance(output, str) else output)]
    assert any(
        lines[0].startswith(f"nova {argv[0]}: error: cannot write {path}: ") for path in named
    ), lines[0]
    assert lines[0].endswith("(file size limit)"), lines[0]
    after = _tree(tmp_path, shared.root, Path(raw).parent)
    if command == "run":  # a run keeps each answer as it arrives: rerunning resumes
        after = {path: digest for path, digest in after.items() if "run.jsonl" not in path}
    assert after == before


@pytest.mark.parametrize(
    ("number", "reason"),
    [
        (errno.ENOSPC, "no space left on the device"),
        (errno.EDQUOT, "the disk quota is exceeded"),
        (errno.EROFS, "the file system is read-only"),
        (errno.EACCES, "permission denied"),
        # What only the write tells: a folder taking no new file (/proc), a name too long
        # where the check before scoring could not know the limit.
        (errno.ENOENT, "its folder takes no new file (no such file or directory)"),
        (errno.ENAMETOOLONG, "its name is too long for the file system"),
    ],
)
def test_a_report_that_cannot_be_written_is_named_with_its_cause(
    number: int,
    reason: str,
    shared: Shared,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(source: object, target: object) -> None:  # what the kernel says at the rename
        raise OSError(number, os.strerror(number), str(source))

    argv = [*_evaluate(shared, shared.predictions, tmp_path), "--exclude", "BERTScore-F1"]
    capsys.readouterr()
    before = _tree(tmp_path, shared.root)
    monkeypatch.setattr(os, "replace", refuse)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"nova evaluate: error: cannot write {tmp_path / 'report.json'}: {reason}\n"
    assert _tree(tmp_path, shared.root) == before


def _pid_of_an_ended_process() -> int:
    """The id of a process that has ended: it names no process now, as after `kill -9` of a
    writer."""
    import subprocess
    import sys

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid


@pytest.mark.parametrize("command", ["export", "ingest"])
def test_what_a_killed_replacement_left_is_removed_when_obsolete_else_named(
    command: str, shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A writer killed while replacing OUT left `.out.replaced-<random>` (the previous OUT,
    # maybe its only copy) or a retired copy it had not finished removing; nothing said so.
    dead_pid = _pid_of_an_ended_process()
    out = tmp_path / "out"
    # Killed after the new OUT was in place, while removing the previous one: obsolete.
    superseded = tmp_path / f".out.superseded-{dead_pid}-0a1b2c3d"
    # Killed between moving the previous OUT aside and moving the new one in: OUT is gone.
    replaced = tmp_path / f".out.replaced-{dead_pid}-4e5f6a7b"
    # Named by novabench before this change (no process id): named too, never removed.
    earlier = tmp_path / ".out.replaced-9f8e7d6c"
    for left in (superseded, replaced, earlier):
        left.mkdir()
        (left / "notes.txt").write_text("the previous out", encoding="utf-8")
    argv = {
        "export": ["export", str(shared.release), str(out), "-q"],
        "ingest": ["ingest", _ingest_manifest(tmp_path, shared), str(out), "-q"],
    }[command]
    capsys.readouterr()

    assert main(argv) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "interrupted" in line]
    assert sorted(err) == sorted([  # in the order of the names, which hold a process id
        f"nova: {earlier} may hold a previous {out}, moved aside by an interrupted run of an "
        "earlier novabench; remove it if you do not need it",
        f"nova: {replaced} holds the {out} that process {dead_pid} was replacing when it was "
        "interrupted; rename it back to out to keep it, or remove it",
        f"nova: removed {superseded}, left by an interrupted run for {out} (process "
        f"{dead_pid} has ended), the previous version its finished replacement made obsolete",
    ])  # fmt: skip
    assert not superseded.exists() and out.is_dir()
    assert (replaced / "notes.txt").read_text(encoding="utf-8") == "the previous out"

    # Replacing OUT again leaves nothing of its own beside it; the old copy is still named.
    assert main([*argv, "--overwrite"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "interrupted" in line]
    assert sorted(err) == sorted([
        f"nova: {earlier} may hold a previous {out}, moved aside by an interrupted run of an "
        "earlier novabench; remove it if you do not need it",
        f"nova: {replaced} holds the {out} that process {dead_pid} was replacing when it was "
        "interrupted; a newer one is in place: remove it if you do not need it",
    ])  # fmt: skip
    for left in (replaced, earlier):
        assert (left / "notes.txt").read_text(encoding="utf-8") == "the previous out"
    assert {path.name for path in tmp_path.iterdir()} - {"cases.json"} == {
        "out",
        replaced.name,
        earlier.name,
    }


def test_a_failed_move_into_place_puts_the_previous_folder_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novabench._files import make_staging_folder, replace_folder

    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old", encoding="utf-8")
    staging = make_staging_folder(out)
    (staging / "new.txt").write_text("new", encoding="utf-8")
    rename = Path.rename

    def failing(self: Path, target: Path) -> Path:
        if self == staging:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(OSError):
        replace_folder(staging, out)
    monkeypatch.undo()
    assert (out / "old.txt").read_text(encoding="utf-8") == "old"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["out", staging.name])


@pytest.mark.parametrize("command", ["export", "sample", "ingest"])
def test_a_killed_run_s_staging_folder_is_removed_by_the_next_run(
    command: str, shared: Shared, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead_pid = _pid_of_an_ended_process()
    out = tmp_path / "out"
    stale = tmp_path / f".out.partial-{dead_pid}-k2j9x1"
    (stale / "images").mkdir(parents=True)
    (stale / "images" / IMAGE).write_bytes(png_bytes((32, 32)))
    running = tmp_path / f".out.partial-{os.getppid()}-a8b7c6"  # a writer still alive
    someone_elses = tmp_path / f".other.partial-{dead_pid}-q1w2e3"
    unknown_owner = tmp_path / ".out.partial-zz9y8x7w"  # named before owners were recorded
    for kept in (running, someone_elses, unknown_owner):
        kept.mkdir()
        (kept / "notes.txt").write_text("kept", encoding="utf-8")
    argv = {
        "export": ["export", str(shared.release), str(out), "-q"],
        "sample": ["sample", str(out), "--cases", "1", "-q"],
        "ingest": ["ingest", _ingest_manifest(tmp_path, shared), str(out), "-q"],
    }[command]
    capsys.readouterr()

    assert main(argv) == 0

    err = capsys.readouterr().err.strip().splitlines()
    assert not stale.exists() and out.is_dir()
    assert [line for line in err if "interrupted" in line] == [
        f"nova: removed {stale}, left by an interrupted run for {out} "
        f"(process {dead_pid} has ended)"
    ]
    for kept in (running, someone_elses, unknown_owner):
        assert (kept / "notes.txt").read_text(encoding="utf-8") == "kept"
    leftovers = {path.name for path in tmp_path.iterdir()} - {
        "out",
        "cases.json",
        running.name,
        someone_elses.name,
        unknown_owner.name,
    }
    assert leftovers == set()


def test_an_output_that_can_never_be_written_is_refused_before_scoring(
    shared: Shared,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import novabench.report.scoring as scoring

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("scored before the outputs were checked")

    monkeypatch.setattr(scoring, "score_predictions", never)
    (tmp_path / "notes.txt").write_text("my notes", encoding="utf-8")
    argv = _evaluate(shared, shared.predictions, tmp_path)
    argv[argv.index("--out") + 1] = str(tmp_path / "notes.txt" / "report.json")
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"nova evaluate: error: cannot write {tmp_path}/notes.txt/report.json: "
        f"{tmp_path}/notes.txt is a file, not a folder\n"
    )


def test_a_folder_this_process_may_not_write_is_refused_before_scoring(
    shared: Shared,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import novabench.report.scoring as scoring

    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access

    def access(path: object, mode: int, **kwargs: object) -> bool:
        # chmod does not stop root (these tests may run as root): the folder says no here.
        return False if Path(str(path)) == locked else real_access(path, mode, **kwargs)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("scored before the outputs were checked")

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(scoring, "score_predictions", never)
    argv = [*_evaluate(shared, shared.predictions, tmp_path), "--markdown", f"{locked}/r/r.md"]
    capsys.readouterr()
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"nova evaluate: error: cannot write {locked}/r/r.md: permission denied ({locked})\n"
    )
