"""The PNG check that reads a release without PIL, against what ``PIL.Image.verify`` accepts.

The PNGs are the sample writer's (``write_sample_release``) plus a few kinds PIL writes
(16-bit, RGB, palette, alpha, text chunks, image data split over several IDATs); they are
corrupted with a seeded generator: a byte flipped, the file cut, a chunk dropped,
duplicated or moved, a byte flipped and the chunk's CRC repaired. Wherever our check
accepts a file, PIL accepts it with the same size; where PIL accepts what we refuse, the
file breaks one of the rules ``novabench.data.png`` documents as stricter, and each of
those rules has its own test below.
"""

from __future__ import annotations

import io
import os
import random
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from novabench.data.png import PNG_SIGNATURE, PngError, check_png
from novabench.data.release import read_release
from novabench.data.sample import write_sample_release
from novabench.data.validate import _png_size
from novabench.errors import NovaInputError

Chunk = tuple[bytes, bytes]  # (type, data)


# --------------------------------------------------------------------------- helpers


def split_chunks(data: bytes) -> list[Chunk]:
    """The chunks of a well-formed PNG (a plain reading of the format, for building mutants)."""
    chunks = []
    offset = len(PNG_SIGNATURE)
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        chunks.append((data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]))
        offset += 12 + length
    return chunks


def join_chunks(chunks: list[Chunk]) -> bytes:
    """A PNG of these chunks, each with its length and a correct CRC."""
    parts = [PNG_SIGNATURE]
    for chunk_type, body in chunks:
        crc = zlib.crc32(chunk_type + body)
        parts.append(struct.pack(">I", len(body)) + chunk_type + body + struct.pack(">I", crc))
    return b"".join(parts)


def pil_size(data: bytes) -> tuple[int, int] | None:
    """What reading a release did before: ``Image.open`` + ``verify``; None when refused."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            size, image_format = image.size, image.format
            image.verify()
    except Exception:  # PIL fails on a PNG without IDAT with an IndexError
        return None
    return size if image_format == "PNG" else None


def our_size(data: bytes) -> tuple[int, int] | None:
    try:
        width, height, _mark = _png_size(data, "x.png", {"source": "x.png"})
    except NovaInputError:
        return None
    return width, height


def _encoded(image: Image.Image, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", **options)
    return buffer.getvalue()


def _with_split_image_data(data: bytes, pieces: int) -> bytes:
    """The same PNG with its image data spread over ``pieces`` consecutive IDAT chunks."""
    chunks = split_chunks(data)
    stream = b"".join(body for chunk_type, body in chunks if chunk_type == b"IDAT")
    step = -(-len(stream) // pieces)
    split = [(b"IDAT", stream[i : i + step]) for i in range(0, len(stream), step)]
    first = next(i for i, (chunk_type, _) in enumerate(chunks) if chunk_type == b"IDAT")
    rest = [chunk for chunk in chunks[first:] if chunk[0] != b"IDAT"]
    return join_chunks([*chunks[:first], *split, *rest])


@pytest.fixture(scope="module")
def sample_pngs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The sample writer's PNGs (two cases) and PNGs of other kinds, by name."""
    folder = write_sample_release(
        tmp_path_factory.mktemp("png") / "nova", n_cases=2, seed=4, progress=False
    )
    pngs = {path.name: path.read_bytes() for path in sorted((folder / "images").glob("*.png"))}
    rng = np.random.default_rng(0)
    gray16 = Image.fromarray(rng.integers(0, 4000, (20, 30), dtype=np.uint16))
    rgb = Image.fromarray(rng.integers(0, 255, (17, 9, 3), dtype=np.uint8))
    text = _encoded(Image.new("L", (5, 7), 40), pnginfo=_text_info())
    pngs.update(
        {
            "gray16": _encoded(gray16),
            "rgb": _encoded(rgb),
            "rgba": _encoded(rgb.convert("RGBA")),
            "palette": _encoded(rgb.convert("P")),
            "bilevel": _encoded(Image.new("1", (13, 3), 1)),
            "text chunks": text,
            "split image data": _with_split_image_data(next(iter(pngs.values())), 4),
        }
    )
    return pngs


def _text_info():
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Comment", "slice 12")
    info.add_text("Software", "novabench tests", zip=True)
    return info


# --------------------------------------------------------------------------- whole files


def test_every_sample_png_passes_with_pils_size(sample_pngs) -> None:
    for name, data in sample_pngs.items():
        assert pil_size(data) is not None, name
        assert our_size(data) == pil_size(data), name


def test_the_header_is_read_as_pil_reads_it(sample_pngs) -> None:
    modes = {}
    for name, data in sample_pngs.items():
        header = check_png(data)
        with Image.open(io.BytesIO(data)) as image:
            modes[name] = (image.mode, header.bit_depth, header.colour_type)
    assert modes["gray16"][1:] == (16, 0)
    assert modes["rgb"][1:] == (8, 2) and modes["rgba"][1:] == (8, 6)
    assert modes["palette"][1:] == (8, 3) and modes["bilevel"][1:] == (1, 0)
    assert {mode for mode, *_ in modes.values()} >= {"L", "I;16", "RGB", "RGBA", "P", "1"}


# --------------------------------------------------------------------------- mutants


def _mutants(data: bytes, rng: random.Random, count: int) -> list[tuple[str, bytes, int]]:
    """(kind, mutant, first byte changed) for ``count`` seeded corruptions of ``data``.

    The kind of a byte flipped in a chunk whose CRC is then repaired names the chunk.
    """
    chunks = split_chunks(data)
    mutants = []
    for _ in range(count):
        kind = rng.choice(["flip", "truncate", "drop", "duplicate", "move", "flip, CRC fixed"])
        if kind == "flip":
            offset = rng.randrange(len(data))
            mutant = bytearray(data)
            mutant[offset] ^= 1 << rng.randrange(8)
            mutants.append((kind, bytes(mutant), offset))
        elif kind == "truncate":
            offset = rng.randrange(len(data))
            mutants.append((kind, data[:offset], offset))
        else:
            index = rng.randrange(len(chunks))
            edited = list(chunks)
            if kind == "drop":
                del edited[index]
            elif kind == "duplicate":
                edited.insert(index, chunks[index])
            elif kind == "move":
                edited.insert(rng.randrange(len(chunks)), edited.pop(index))
            else:
                chunk_type, body = chunks[index]
                if not body:
                    continue
                kind = f"{kind} in {chunk_type.decode()}"
                changed = bytearray(body)
                changed[rng.randrange(len(body))] ^= 1 << rng.randrange(8)
                edited[index] = (chunk_type, bytes(changed))
            mutant = join_chunks(edited)
            if mutant == data:
                continue
            first_change = _first_difference(mutant, data)
            mutants.append((kind, mutant, first_change))
    return mutants


def _first_difference(mutant: bytes, data: bytes) -> int:
    """The first position where ``mutant`` and ``data`` differ, ``len(data)`` when one is a
    prefix of the other. Halves the common prefix with slice comparisons (done in C): the
    byte-by-byte loop took a second of CPU over the file's mutants."""
    low, high = 0, min(len(mutant), len(data))  # mutant[:low] == data[:low] throughout
    if mutant[:high] == data[:high]:
        return len(data)
    while high - low > 1:  # the first difference lies in [low, high)
        middle = (low + high) // 2
        if mutant[:middle] == data[:middle]:
            low = middle
        else:
            high = middle
    return low


def _stricter_rule_broken(mutant: bytes) -> str | None:
    """Which rule PIL does not apply but ``novabench.data.png`` does, if ``mutant`` breaks one.

    Written apart from the implementation, from the chunk list; None when the file breaks
    none of them (then PIL must refuse it too).
    """
    try:
        chunks = split_chunks(mutant)
    except struct.error:
        return None
    types = [chunk_type for chunk_type, _ in chunks]
    if b"IEND" not in types:
        return None
    end = types.index(b"IEND")
    before_end = join_chunks(chunks[:end])
    if not mutant.startswith(before_end):
        return None  # a wrong length or CRC before IEND: no rule excuses it
    if mutant[len(before_end) : len(before_end) + 12] != join_chunks([(b"IEND", b"")])[8:]:
        return "IEND whole"  # PIL stops at IEND's type: its length and CRC go unread
    if types[0] != b"IHDR" or types[:end].count(b"IHDR") > 1:
        return "one IHDR, first"
    header = chunks[0][1]
    if len(header) == 13 and (header[10] != 0 or header[12] not in (0, 1)):
        return "IHDR compression 0, interlace 0 or 1"
    if b"IDAT" not in types[:end]:
        return "an IDAT"
    if any(not chunk_type.isalpha() for chunk_type in types[:end]):
        return "chunk types of letters"
    return None


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_corrupted_pngs_are_refused_as_pil_refuses_them(sample_pngs) -> None:
    rng = random.Random(20261203)
    outcomes: dict[str, int] = {}
    for name, data in sample_pngs.items():
        iend = len(data) - 12
        for kind, mutant, first_change in _mutants(data, rng, 60):
            ours, pils = our_size(mutant), pil_size(mutant)
            where = f"{name}: {kind} at byte {first_change}"
            if ours is not None and pils is None:
                # PIL interprets some ancillary chunks before IDAT (zTXt, iCCP...); we only
                # check their CRC, which the repaired mutant passes.
                assert kind.startswith("flip, CRC fixed in ") and kind[-4].islower(), where
                outcome = f"only we accept ({kind})"
            elif ours is not None:
                assert ours == pils, where  # same size as PIL
                outcome = "both accept"
            elif pils is None:
                outcome = "both refuse"
            else:
                rule = _stricter_rule_broken(mutant)
                assert rule is not None, f"{where}: PIL accepts it, we refuse it for no rule"
                assert kind != "flip" or first_change >= iend, where  # a CRC catches the rest
                outcome = f"only PIL accepts ({rule})"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    # The seeded mutants do reach every branch (a generator that never corrupts proves nothing).
    assert outcomes["both refuse"] > 300 and outcomes["both accept"] > 20, outcomes
    assert any(key.startswith("only PIL accepts") for key in outcomes), outcomes


def test_a_flipped_byte_anywhere_before_iend_is_refused(sample_pngs) -> None:
    data = next(iter(sample_pngs.values()))
    rng = random.Random(7)
    for offset in rng.sample(range(len(data) - 12), 400):
        mutant = bytearray(data)
        mutant[offset] ^= 1 << rng.randrange(8)
        assert our_size(bytes(mutant)) is None, offset
        assert pil_size(bytes(mutant)) is None, offset


def test_every_truncation_is_refused(sample_pngs) -> None:
    data = sample_pngs["text chunks"]
    for end in range(len(data)):
        assert our_size(data[:end]) is None, end
        if end < len(data) - 4:  # PIL does not read IEND's CRC
            assert pil_size(data[:end]) is None, end


# --------------------------------------------------------------------------- stricter rules


def _ihdr_edited(data: bytes, position: int, value: int) -> bytes:
    chunks = split_chunks(data)
    header = bytearray(chunks[0][1])
    header[position] = value
    return join_chunks([(b"IHDR", bytes(header)), *chunks[1:]])


STRICTER = {
    "IEND with a wrong CRC": (lambda d: d[:-1] + bytes([d[-1] ^ 1]), "IEND chunk at byte"),
    "IEND's CRC cut": (lambda d: d[:-3], "truncated"),
    "IEND not empty": (
        lambda d: join_chunks([*split_chunks(d)[:-1], (b"IEND", b"x")]),
        "IEND chunk at byte",
    ),
    "a chunk before IHDR": (
        lambda d: join_chunks([(b"tEXt", b"a\0b"), *split_chunks(d)]),
        "first chunk is tEXt",
    ),
    "two IHDR": (
        lambda d: join_chunks([split_chunks(d)[0], *split_chunks(d)]),
        "second IHDR",
    ),
    "IHDR compression 1": (lambda d: _ihdr_edited(d, 10, 1), "compression 1"),
    "IHDR interlace 2": (lambda d: _ihdr_edited(d, 12, 2), "interlace 2"),
    "a chunk type with a digit": (
        lambda d: join_chunks([*split_chunks(d)[:-1], (b"ab1c", b""), split_chunks(d)[-1]]),
        "not 4 letters",
    ),
}


@pytest.mark.parametrize("name", sorted(STRICTER))
def test_where_pil_is_more_lenient_the_rule_is_named(sample_pngs, name) -> None:
    build, words = STRICTER[name]
    mutant = build(sample_pngs["case0001_001.png"])
    assert pil_size(mutant) is not None  # PIL accepts it: the difference is real
    with pytest.raises(PngError, match=words):
        check_png(mutant)


def test_a_png_without_image_data_is_refused_by_name(sample_pngs) -> None:
    chunks = split_chunks(sample_pngs["case0001_001.png"])
    mutant = join_chunks([chunk for chunk in chunks if chunk[0] != b"IDAT"])
    with pytest.raises(PngError, match="no IDAT"):
        check_png(mutant)
    with pytest.raises(IndexError):  # what PIL 12 does: before, a traceback
        with Image.open(io.BytesIO(mutant)) as image:
            image.verify()


def test_trailing_bytes_after_iend_are_ignored_as_pil_ignores_them(sample_pngs) -> None:
    data = sample_pngs["gray16"] + b"\0garbage"
    assert our_size(data) == pil_size(data) == (30, 20)


def test_pixel_data_is_not_decompressed(sample_pngs) -> None:
    """A corrupt zlib stream with right CRCs passes both checks: pixels are decoded later."""
    chunks = split_chunks(sample_pngs["rgb"])
    chunks = [(t, b"not zlib" if t == b"IDAT" else body) for t, body in chunks]
    mutant = join_chunks(chunks)
    assert our_size(mutant) == pil_size(mutant) == (9, 17)


def test_the_decompression_bomb_limit_is_pils(sample_pngs, monkeypatch) -> None:
    data = sample_pngs["rgb"]  # 9 x 17 = 153 pixels
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    with pytest.warns(Image.DecompressionBombWarning):
        assert our_size(data) == (9, 17)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 70)
    with pytest.raises(NovaInputError, match="decompression bomb"):
        _png_size(data, "x.png", {"source": "x.png"})
    with pytest.raises(Image.DecompressionBombError):
        Image.open(io.BytesIO(data))


# --------------------------------------------------------------------------- the release


def test_each_image_file_is_read_once(tmp_path, monkeypatch) -> None:
    import builtins

    folder = write_sample_release(tmp_path / "nova", n_cases=3, seed=1, progress=False)
    opened_files: list[str] = []
    original_open = builtins.open

    def counted_open(file, *args, **kwargs):
        opened_files.append(Path(file).name if isinstance(file, (str, Path)) else "")
        return original_open(file, *args, **kwargs)

    def counted_os_open(file, *args, **kwargs):
        opened_files.append(Path(file).name)
        return original_os_open(file, *args, **kwargs)

    original_os_open = os.open
    monkeypatch.setattr(builtins, "open", counted_open)
    monkeypatch.setattr(io, "open", counted_open)
    monkeypatch.setattr(os, "open", counted_os_open)  # an open file descriptor is not counted twice
    decoded: list[object] = []
    monkeypatch.setattr(Image, "open", lambda *args, **kwargs: decoded.append(args))
    release = read_release(folder)
    fingerprint = release.fingerprint()
    pngs = [name for name in opened_files if name.endswith(".png")]
    assert sorted(pngs) == sorted(image.filename for image in release.images)
    assert decoded == []  # PIL is not asked to open any PNG of a good release
    monkeypatch.undo()
    assert read_release(folder).fingerprint() == fingerprint


def test_a_large_file_of_another_format_is_named_from_its_head(tmp_path) -> None:
    folder = write_sample_release(tmp_path / "nova", n_cases=1, seed=1, progress=False)
    noise = np.random.default_rng(3).integers(0, 255, (600, 600), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noise).save(buffer, format="JPEG", quality=95)
    assert len(buffer.getvalue()) > 1 << 17  # more than the head that is read
    victim = sorted((folder / "images").glob("*.png"))[0]
    victim.write_bytes(buffer.getvalue())
    with pytest.raises(NovaInputError, match="is a JPEG image, not a PNG") as caught:
        read_release(folder)
    assert victim.name in str(caught.value) and caught.value.field == "image_path"


def test_small_images_skip_pils_limit_only_below_its_default() -> None:
    """Reading a release imports PIL only for an image near PIL's limit or a non-PNG file:
    safe as long as PIL's own default limit lies above the shortcut's bound."""
    import subprocess
    import sys

    from novabench.data import validate

    script = "import PIL.Image as I; print(I.MAX_IMAGE_PIXELS)"
    default = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert default.returncode == 0, default.stderr
    assert int(default.stdout) > validate._UNDER_PIL_DEFAULT_LIMIT


def test_image_bytes_are_read_whole_even_in_short_reads() -> None:
    """Files are read unbuffered; a read that returns less than asked is read on."""
    from novabench.data.validate import _read_at_most

    class Trickle(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.stream = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            return self.stream.read(min(size, 3) if size >= 0 else 3)

    data = bytes(range(256)) * 5
    for size in (0, 1, 8, 100, len(data), len(data) + 10):
        assert _read_at_most(Trickle(data), size) == data[:size]


def test_the_reused_read_buffer_gives_each_file_whole_even_when_it_outgrows_it(tmp_path) -> None:
    """Files are read into one buffer in turn: a file larger than the buffer, one that is
    longer than its size said (it grew, or the system cannot tell: a pipe), one read in
    short pieces, and a smaller one after a larger one each come back exactly."""
    from novabench.data.validate import _FileBuffer

    class Trickle(io.RawIOBase):  # no fileno: its size is unknown, as a pipe's
        def __init__(self, data: bytes) -> None:
            self.stream = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            piece = self.stream.read(min(len(buffer), 7))
            buffer[: len(piece)] = piece
            return len(piece)

    buffer = _FileBuffer(size=16)
    large = PNG_SIGNATURE + bytes(range(256)) * 40
    small = PNG_SIGNATURE + b"tail of a small file"
    assert bytes(buffer.png_or_head(Trickle(large))) == large
    assert bytes(buffer.png_or_head(Trickle(small))) == small
    on_disk = tmp_path / "image.png"
    on_disk.write_bytes(large)
    with open(on_disk, "rb", buffering=0) as handle:
        assert bytes(buffer.png_or_head(handle)) == large
    descriptor = os.open(on_disk, os.O_RDONLY)
    try:
        assert bytes(buffer.png_of(descriptor)) == large  # larger than the buffer it had
        on_disk.write_bytes(b"GIF89a" + large)
        os.lseek(descriptor, 0, os.SEEK_SET)
        assert buffer.png_of(descriptor) is None  # not a PNG: for the long way to name
    finally:
        os.close(descriptor)
    assert bytes(buffer.png_or_head(Trickle(b"GIF89a"))) == b"GIF89a"  # shorter than a signature


@pytest.mark.parametrize("spare", [-9, -2, -1, 0, 1, 2])
def test_a_file_near_the_buffer_size_is_read_whole_and_once_when_it_fits(
    tmp_path, monkeypatch, spare: int
) -> None:
    """A file that fits the buffer with a byte to spare is read by one read (getting exactly
    the size fstat gave is its end); one that does not fit still comes back whole."""
    from novabench.data import validate
    from novabench.data.validate import _FileBuffer

    reads: list[int] = []
    real_readv = os.readv

    def counted_readv(descriptor: int, buffers) -> int:
        reads.append(descriptor)
        return real_readv(descriptor, buffers)

    monkeypatch.setattr(validate.os, "readv", counted_readv)
    buffer = _FileBuffer(size=64)
    data = PNG_SIGNATURE + bytes(range(64 + spare - len(PNG_SIGNATURE)))
    on_disk = tmp_path / "image.png"
    on_disk.write_bytes(data)
    descriptor = os.open(on_disk, os.O_RDONLY)
    try:
        assert bytes(buffer.png_of(descriptor)) == data
    finally:
        os.close(descriptor)
    assert (len(reads) == 1) == (len(data) < 64)


@pytest.mark.parametrize("seed", range(3))
def test_plain_image_paths_take_the_same_path_as_the_full_checks(seed: int) -> None:
    """A path the shortcut takes as it is passes every check and joins to the same file."""
    import random
    from pathlib import PurePosixPath, PureWindowsPath

    from novabench.data.validate import _PLAIN_RELATIVE_PATH, _ReleaseFolder

    folders = [_ReleaseFolder(Path(root)) for root in ("/release", "/", "/a/b")]
    rng = random.Random(seed)
    pieces = ["images", "case0001_001.png", ".", "..", "", "a.b", ".hidden", "C:", "x\\y", "é"]
    pieces += ["-", "_", "..png", "a..", "/", " ", "con", "\n"]
    root = Path("/release")
    taken = 0
    for _ in range(5000):
        relative = "/".join(rng.choices(pieces, k=rng.randint(1, 4)))
        if rng.random() < 0.1:
            relative = rng.choice(["/", "\\", "./", "C:"]) + relative
        if not _PLAIN_RELATIVE_PATH.fullmatch(relative):
            continue
        taken += 1
        posix, windows = PurePosixPath(relative), PureWindowsPath(relative)
        assert not (posix.is_absolute() or windows.is_absolute() or windows.drive), relative
        assert ".." not in windows.parts and "." not in relative.split("/"), relative
        assert posix.name, relative
        assert str(root / relative) == str(root / posix), relative
        for folder in folders:  # the shortcut joins text: the same as the Path it stands for
            assert f"{folder.root_text}/{relative}" == str(folder.root / relative), relative
    assert taken > 100  # the cases did exercise the shortcut


def test_the_chunk_crc_is_zlibs_crc32_whichever_library_computes_it(monkeypatch) -> None:
    """zlib-ng's CRC-32 where installed, else the standard library's: the same values."""
    import importlib

    from novabench.data import png

    rng = np.random.default_rng(5)
    pieces = [b"", b"IEND", bytes(rng.integers(0, 256, 100_003, dtype=np.uint8))]
    chosen = png._fastest_crc32()
    for piece in pieces:
        assert chosen(piece) == chosen(memoryview(piece)) == zlib.crc32(piece)

    import_module = importlib.import_module

    def no_zlib_ng(name: str, *args, **kwargs):
        if name.startswith("zlib_ng"):
            raise ImportError(name)
        return import_module(name, *args, **kwargs)

    monkeypatch.setattr(png.importlib, "import_module", no_zlib_ng)
    assert png._fastest_crc32() is zlib.crc32


# --------------------------------------------------------------------------- novabench's mark


def _text_png(*texts: tuple[str, str]) -> bytes:
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    for keyword, value in texts:
        info.add_text(keyword, value)
    return _encoded(Image.new("L", (5, 4)), pnginfo=info)


@pytest.mark.parametrize(
    ("texts", "mark"),
    [
        ((("Software", "novabench: nova ingest (x)"),), "novabench: nova ingest (x)"),
        # another keyword, or another tool's Software text, is no mark
        ((("Comment", "novabench: nova ingest"),), None),
        ((("Software", "GIMP 2.10"),), None),
        ((("Software", "GIMP"), ("Software", "novabench: a")), "novabench: a"),
        ((), None),
    ],
)
def test_the_mark_is_the_software_text_starting_with_novabench(texts, mark) -> None:
    from novabench.data.png import check_png_marked

    data = _text_png(*texts)
    assert check_png_marked(data) == (check_png(data), mark)


def _pil_png(add) -> bytes:
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    add(info)
    return _encoded(Image.new("L", (5, 4)), pnginfo=info)


@pytest.mark.parametrize(
    ("add", "chunk_type"),
    [
        (lambda i: i.add_text("Software", "novabench: nova ingest (x)", zip=True), b"zTXt"),
        (lambda i: i.add_itxt("Software", "novabench: nova ingest (x)"), b"iTXt"),
        (lambda i: i.add_itxt("Software", "novabench: nova ingest (x)", zip=True), b"iTXt"),
        (lambda i: i.add_itxt("Software", "novabench: nova ingest (x)", "en", "Logiciel"), b"iTXt"),
    ],
    ids=["zTXt", "iTXt", "iTXt-compressed", "iTXt-language"],
)
def test_the_mark_is_read_from_itxt_and_ztxt_chunks_too(add, chunk_type) -> None:
    """user23: a tool moving the mark to iTXt or zTXt (exiftool, optimisers) made a
    rewritten sample read as the official release."""
    from novabench.data.png import check_png_marked

    data = _pil_png(add)
    assert chunk_type in [t for t, _ in split_chunks(data)]
    assert b"tEXt" not in [t for t, _ in split_chunks(data)]
    assert check_png_marked(data) == (check_png(data), "novabench: nova ingest (x)")


def _with_text_chunk(chunk_type: bytes, body: bytes) -> bytes:
    chunks = split_chunks(_encoded(Image.new("L", (5, 4))))
    return join_chunks([*chunks[:-1], (chunk_type, body), chunks[-1]])  # after IDAT


@pytest.mark.parametrize(
    ("chunk_type", "body"),
    [
        (b"zTXt", b"Software\0\0" + zlib.compress(b"GIMP 2.10.34")),
        (b"iTXt", b"Software\0\1\0\0\0" + zlib.compress(b"GIMP 2.10.34")),
        (b"iTXt", b"Software\0\0\0\0\0GIMP 2.10.34"),
        (b"zTXt", b"Softwares\0\0" + zlib.compress(b"novabench: a")),
        (b"iTXt", b"software\0\0\0\0\0novabench: a"),
        (b"zTXt", b"Comment\0\0" + zlib.compress(b"novabench: a")),
        (b"zTXt", b"Software\0\0" + zlib.compress(b"novabench")),
        (b"zTXt", b"Software\0\0" + zlib.compress(b" novabench: a")),
        # malformed content under a right CRC: no mark, and not refused (not interpreted)
        (b"zTXt", b"Software\0\0" + b"novabench: not a zlib stream"),
        (b"zTXt", b"Software\0\1" + zlib.compress(b"novabench: a")),  # unknown method
        (b"iTXt", b"Software\0\1\1\0\0" + zlib.compress(b"novabench: a")),
        (b"iTXt", b"Software\0\2\0\0\0novabench: a"),  # flag neither 0 nor 1
        (b"iTXt", b"Software\0\0\0\0novabench: a"),  # no translated keyword's NUL
        (b"iTXt", b"Software\0"),
        (b"zTXt", b"Software\0"),
    ],
)
def test_no_mark_from_other_software_texts_or_malformed_chunks(chunk_type, body) -> None:
    from novabench.data.png import check_png_marked

    data = _with_text_chunk(chunk_type, body)
    assert check_png_marked(data) == (check_png(data), None)


def test_a_compressed_mark_is_decompressed_only_as_far_as_a_mark_goes() -> None:
    from novabench.data.png import check_png_marked

    # 64 MB of text in a 64 kB stream: a reader must not inflate it to find the mark.
    bomb = zlib.compress(b"novabench: nova sample " + b"a" * (64 << 20), 9)
    for data in (
        _with_text_chunk(b"zTXt", b"Software\0\0" + bomb),
        _with_text_chunk(b"iTXt", b"Software\0\1\0\0\0" + bomb),
        _with_text_chunk(b"iTXt", b"Software\0\0\0\0\0novabench: nova sample " + b"a" * 5000),
    ):
        mark = check_png_marked(data)[1]
        assert mark is not None and mark.startswith("novabench: nova sample aaa")
        assert len(mark) <= 1024
