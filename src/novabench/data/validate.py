"""Validation of a release's rows into records: everything but the pixels.

The layout readers (``novabench.data.layouts``) hand over rows as found; here filenames
and ids, duplicates, image paths (which must stay inside the release), PNG integrity and
sizes, and boxes are checked, and the rows become ``ImageRecord``. Each image file is read
once: its bytes are checked as a PNG (``novabench.data.png``: signature, every chunk's
length and CRC, IHDR, IDAT, IEND; no pixel decompressed) and hashed for the release
fingerprint. Every problem raises ``NovaInputError`` naming the file, the row and the field.

Boxes are kept verbatim when they lie at most ``BOX_TOLERANCE`` (10 %) of the image size
beyond its border and overlap the image; further out, or with a non-finite coordinate or a
non-positive size, they are an error. Per-case metadata that differs between the images of
one case keeps the first image's values, with a warning. A PNG in an image folder that no row
lists is named in a warning, and beside a missing image in the error (a renamed file).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import io
import math
import os
import posixpath
import re
import stat
import sys
from collections.abc import Callable, Sequence
from operator import attrgetter
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, NamedTuple, cast
from warnings import catch_warnings, simplefilter

import numpy as np

from novabench.data.layouts.rows import RawBox, RawImage, text
from novabench.data.png import PNG_SIGNATURE, PngError, PngHeader, check_png_marked
from novabench.errors import NovaInputError, warn_at_caller
from novabench.progress import progress_bar
from novabench.records import BOX_FIELDS, FIXED_META_KEYS, ImageRecord

__all__ = ["BOX_TOLERANCE", "FILENAME_PATTERN", "build_records"]

#: ImageRecord's fields in the order ``build_records`` passes them (a test holds them to it).
_RECORD_FIELDS = (
    "filename",
    "case_id",
    "scan_id",
    "image_path",
    "width",
    "height",
    "caption",
    "clinical_history",
    "final_diagnosis",
    "title",
    "publication_date",
    "boxes",
    "rater_boxes",
    "extra",
    "image_bytes",
)

#: How far (fraction of the image width/height) a box may extend beyond the image border.
BOX_TOLERANCE = 0.10
FILENAME_PATTERN = re.compile(r"^(case\d{4})_(\d{3})\.png$")


class _CheckedImage(NamedTuple):
    """An image's file (None when embedded), that file resolved, size, SHA-256 of its bytes
    and the novabench mark the PNG carries (``novabench.data.png.check_png_marked``)."""

    path: Path | None
    resolved: str | None  # the file with every link followed, for telling shared files
    width: int
    height: int
    sha256: bytes
    mark: str | None


#: How much of a file that is not a PNG is read to name its format (PIL reads its header).
_SNIFF_BYTES = 1 << 16


def _other_format(data: bytes | bytearray | memoryview) -> str | None:
    """The format PIL recognises in bytes that are not a PNG (to name it), if any."""
    from PIL import Image

    try:
        with catch_warnings():
            simplefilter("ignore")
            with Image.open(io.BytesIO(data)) as image:
                return image.format
    except Exception:  # anything PIL cannot identify is just "not a PNG"
        return None


#: Fewer pixels than PIL's default decompression-bomb limit (about 89.5 million since PIL 5):
#: an image this small needs no look at PIL's limit unless PIL is imported (and possibly set).
_UNDER_PIL_DEFAULT_LIMIT = 1 << 24


def _png_size(
    data: bytes | bytearray | memoryview, label: str, where: dict[str, str]
) -> tuple[int, int, str | None]:
    """Width, height and novabench mark of a whole, well-formed PNG (``novabench.data.png``;
    nothing decoded)."""
    try:
        header, mark = check_png_marked(data)
    except PngError as error:
        other = None if bytes(data[: len(PNG_SIGNATURE)]) == PNG_SIGNATURE else _other_format(data)
        if other is not None and other != "PNG":
            raise NovaInputError(f"{label} is a {other} image, not a PNG", **where) from None
        raise NovaInputError(f"unreadable or corrupt PNG {label}: {error}", **where) from None
    return (*_decodable_size(header, label, lambda: where), mark)


def _decodable_size(
    header: PngHeader, label: str, where: Callable[[], dict[str, str]]
) -> tuple[int, int]:
    """The PNG's width and height, refused when PIL would not decode that many pixels."""
    # PIL's own limit (Image.MAX_IMAGE_PIXELS): the pixels are decoded later, by PIL. Only a
    # PIL already imported can hold a limit of the user's; else its default, far above this.
    pixels = header.width * header.height
    if pixels <= _UNDER_PIL_DEFAULT_LIMIT and "PIL.Image" not in sys.modules:
        return header.width, header.height
    from PIL import Image

    limit = Image.MAX_IMAGE_PIXELS
    if limit is not None and pixels > 2 * limit:
        raise NovaInputError(
            f"PNG {label} claims more pixels than PIL decodes safely (a decompression bomb?): "
            f"{header.width}x{header.height} is {pixels} pixels, over the limit of "
            f"{2 * limit} (PIL.Image.MAX_IMAGE_PIXELS x 2)",
            **where(),
        )
    if limit is not None and pixels > limit:
        warn_at_caller(
            f"PNG {label}: {pixels} pixels exceed PIL.Image.MAX_IMAGE_PIXELS ({limit}); "
            "it could be a decompression bomb",
            Image.DecompressionBombWarning,
        )
    return header.width, header.height


def _embedded_image(raw: RawImage) -> _CheckedImage:
    """An export row's embedded PNG checked; the row's ``width``/``height`` must equal it."""
    where = dict(source=raw.source, record=raw.where(), field="image.bytes")
    data = raw.image_bytes
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise NovaInputError(
            f"the PNG bytes are missing (image.bytes is {'empty' if data is not None else 'null'}); "
            "a `nova export` folder embeds every image",
            **where,
        )
    width, height, mark = _png_size(data, f"embedded image {raw.filename}", where)
    for name, claimed, actual in zip(
        ("width", "height"), raw.size or (None, None), (width, height)
    ):
        if claimed != actual or isinstance(claimed, bool):
            raise NovaInputError(
                f"{name} is {claimed!r} but the embedded PNG is {width}x{height}",
                source=raw.source,
                record=raw.where(),
                field=name,
            )
    return _CheckedImage(None, None, width, height, hashlib.sha256(data).digest(), mark)


def _child_maker(parent: Path) -> Callable[[str], Path]:
    """What makes ``parent / name`` of a plain file name (no separator, not "." or "..").

    pathlib's own maker of a folder's children (what ``iterdir`` and ``glob`` use) costs a
    seventh of ``/``, which parses the name again: 1.5 ms of a release's 906 records. It is
    private, so it is taken only where it exists and gives the very Path ``/`` gives (type,
    parts and text); else ``/``.

    Example:
        >>> _child_maker(Path("/nova/images"))("case0001_001.png")
        PosixPath('/nova/images/case0001_001.png')
    """
    make_child = getattr(parent, "_make_child_relpath", None)
    probe = "case0001_001.png"
    if callable(make_child):
        made, joined = make_child(probe), parent / probe
        if type(made) is type(joined) and made.parts == joined.parts and str(made) == str(joined):
            return cast(Callable[[str], Path], make_child)
    return parent.__truediv__


class _PlainFolder(NamedTuple):
    """A folder of images named by a plain relative path (see ``_ReleaseFolder.plain_folder``)."""

    path: Path  # the release folder joined with the relative path, as records hold it
    location: str  # the same as text (``str(path)``), for opening its files
    resolved: str  # with every link followed, no trailing "/" ("" for "/")
    inside: bool  # whether that lies inside the release folder
    make_child: Callable[[str], Path]  # path / name, for a plain name (see _child_maker)


class _ReleaseFolder:
    """Where a release's image paths may lead: the folder, resolved once, and its sub-folders.

    Resolving every image path (``Path.resolve``: one system call per path component) was
    most of the cost of reading a release; a sub-folder is resolved once, and an image file
    itself only when it is a symbolic link. The rule is the same: the file, with every link
    followed, must lie inside the release folder. Paths are plain strings here: building
    ``Path`` objects cost more than the system calls.
    """

    def __init__(self, root: Path, rows: Sequence[RawImage] = ()) -> None:
        self.root = root
        # The folder as text to join a plain relative path to ("" for "/"): str(root / path)
        # for such a path, without building the Path first (a third of its cost).
        self.root_text = str(root).rstrip("/")
        self._resolved_root = root.resolve()
        self._folders: dict[str, tuple[str, bool]] = {}  # folder -> (resolved, inside root)
        self._plain_folders: dict[str, _PlainFolder] = {}  # by its plain relative path
        self.buffer = _FileBuffer()
        self._rows = rows

    @functools.cached_property
    def listed(self) -> set[str]:
        """Every image path the rows give, as written and normalised: a file beside a
        missing one that no row lists may be it, renamed. Only an error reads it, so it is
        built then, not on every read."""
        return {
            posixpath.normpath(raw.image_path)
            for raw in self._rows
            if isinstance(raw.image_path, str)
        }

    def plain_folder(self, relative: str) -> _PlainFolder:
        """The folder at the plain relative path ``relative`` ("" for the release folder
        itself), worked out once per folder: an image in it is then joined by name."""
        known = self._plain_folders.get(relative)
        if known is None:
            location = f"{self.root_text}/{relative}" if relative else self.root_text
            resolved, inside = self.folder(location or "/")
            path = self.root / relative if relative else self.root
            known = self._plain_folders[relative] = _PlainFolder(
                path, location, resolved.rstrip("/"), inside, _child_maker(path)
            )
        return known

    def unlisted_like(self, relative: str) -> list[str]:
        """PNG files in the folder of the missing ``relative`` that no row lists, nearest
        names first (at most three): what it may have been renamed to."""
        parent, name = posixpath.split(posixpath.normpath(relative))
        try:
            names = os.listdir(f"{self.root_text}/{parent}" if parent else self.root_text or "/")
        except (OSError, ValueError):
            return []
        candidates = [
            other
            for other in names
            if _is_png_name(other) and posixpath.join(parent, other) not in self.listed
        ]
        close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
        return [posixpath.join(parent, other) for other in close]

    def _is_inside(self, resolved: str) -> bool:
        return Path(resolved).is_relative_to(self._resolved_root)

    def follow(self, location: str) -> tuple[str, bool, os.stat_result | None]:
        """The file at ``location`` with every link followed, whether that lies inside the
        release folder, and the status of the file (None when there is none)."""
        try:
            status: os.stat_result | None = os.lstat(location)
        except OSError:
            status = None
        if status is not None and stat.S_ISLNK(status.st_mode):
            try:
                status = os.stat(location)
            except OSError:  # a dangling link or a loop of links: no file
                status = None
            resolved = os.path.realpath(location)  # Path.resolve raises on a loop of links
            return resolved, self._is_inside(resolved), status
        parent, name = os.path.split(location)
        resolved_parent, inside = self.folder(parent)
        return os.path.join(resolved_parent, name), inside, status

    def folder(self, location: str) -> tuple[str, bool]:
        """The folder at ``location`` with every link followed, and whether that lies
        inside the release folder (resolved once per folder)."""
        known = self._folders.get(location)
        if known is None:
            resolved = os.path.realpath(location)
            known = self._folders[location] = (resolved, self._is_inside(resolved))
        return known


# A relative path that needs no check and no normalisation: "/"-separated names, none empty,
# none "." or ".." (a name never starts with a dot), no drive, backslash or colon; it is the
# same path as a PurePosixPath and as a PureWindowsPath, and stays inside the folder.
_PLAIN_NAME = r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]*"
_PLAIN_RELATIVE_PATH = re.compile(rf"{_PLAIN_NAME}(?:/{_PLAIN_NAME})*")


class _FileBuffer:
    """One buffer that image files are read into, in turn (their bytes are only checked and
    hashed, never kept: a v1 or legacy record keeps its path).

    A fresh ``bytes`` per file (``readall``) cost three times the copy itself in a
    long-lived process (allocating it, faulting its pages in, shrinking it to size; in a
    fresh process the difference was not measurable). The view :meth:`png_of` or
    :meth:`png_or_head` returns is valid until the next call.

    It starts at 128 kB (NOVA-size sample PNGs are 19-76 kB) and at least doubles when a
    file needs more: made at 1 MB, its pages faulted in and zeroed cost 0.37-0.40 ms of a
    fresh process's read (0.02 ms at 64 kB).
    """

    def __init__(self, size: int = 1 << 17) -> None:
        self._buffer = bytearray(size)

    def png_of(self, descriptor: int) -> memoryview | None:
        """The whole regular file open at ``descriptor`` when it starts as a PNG; None for
        anything else (not a regular file, another format, a read error), which nothing
        more is read of. One read asks for one byte more than fstat's size: getting exactly
        that size is the end; otherwise reads go on until one sees the end.
        """
        try:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                return None
            view = memoryview(self._buffer)
            filled = os.readv(descriptor, [view[: status.st_size + 1]])
            if view[: len(PNG_SIGNATURE)] != PNG_SIGNATURE or filled < len(PNG_SIGNATURE):
                return None
            if filled == status.st_size < len(view):  # the size fstat gave, one byte short of
                return view[:filled]  # what was asked: the end, seen without another read
            if len(view) <= status.st_size:  # larger than the buffer: a larger one
                larger = bytearray(max(status.st_size + 1, 2 * len(view)))
                larger[:filled] = view[:filled]
                self._buffer, view = larger, memoryview(larger)
            while True:
                if filled == len(view):  # the file grew while it was read
                    larger = bytearray(2 * len(view))
                    larger[:filled] = view
                    self._buffer, view = larger, memoryview(larger)
                count = os.readv(descriptor, [view[filled:]])
                if not count:
                    return view[:filled]
                filled += count
        except OSError:
            return None

    def png_or_head(self, handle: io.RawIOBase) -> memoryview:
        """The whole file when it starts as a PNG; else at most its first bytes (enough to
        name its format, never a whole huge file). Reads as few times as the floor does:
        a file that fits the buffer takes one read, and one more that sees its end.
        """
        wanted = _file_size(handle) + 1  # one spare byte: the end is seen at once
        view = memoryview(self._buffer)
        first = view[: max(wanted, len(PNG_SIGNATURE))]  # a size of 0 may be unknown (a pipe)
        filled = 0
        while filled < len(PNG_SIGNATURE):
            count = handle.readinto(first[filled:])
            if not count:
                return view[:filled]
            filled += count
        if view[: len(PNG_SIGNATURE)] != PNG_SIGNATURE:
            head = bytes(view[:filled]) + _read_at_most(handle, _SNIFF_BYTES - filled)
            return memoryview(head[: len(PNG_SIGNATURE) + _SNIFF_BYTES])
        return self._read_on(handle, view, filled, wanted)

    def _read_on(
        self, handle: io.RawIOBase, view: memoryview, filled: int, wanted: int
    ) -> memoryview:
        """The buffer's first ``filled`` bytes and the rest of ``handle``, to its end
        (``wanted``: the bytes the buffer should hold for that, as far as is known)."""
        if len(view) < wanted:
            larger = bytearray(wanted)
            larger[:filled] = view[:filled]
            self._buffer, view = larger, memoryview(larger)
        while True:
            if filled == len(view):  # the file grew while it was read: a larger buffer
                larger = bytearray(2 * len(view))
                larger[:filled] = view
                self._buffer, view = larger, memoryview(larger)
            count = handle.readinto(view[filled:])
            if not count:
                return view[:filled]
            filled += count


def _file_size(handle: io.RawIOBase) -> int:
    """The size the open file has now (0 when the system cannot tell, as for a pipe)."""
    try:
        return max(os.fstat(handle.fileno()).st_size, 0)
    except (OSError, ValueError, io.UnsupportedOperation):
        return 0


def _read_at_most(handle: io.RawIOBase, size: int) -> bytes:
    """``size`` bytes of an unbuffered file, fewer only at its end (as a buffered read gives)."""
    chunks = []
    while size > 0:
        chunk = handle.read(size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _inside_release(relative: str, where: dict[str, Any]) -> PurePosixPath:
    """``relative`` with "." and ".." undone by name, refused when it leaves the folder.

    ``images/./../images/x.png`` is ``images/x.png``; ``../x.png``, ``images/../../x.png``,
    an absolute path or a drive escape. A path written with backslashes is read as Windows
    would, and refused when any ".." is in it (on POSIX a backslash is a plain character).
    """
    posix, windows = PurePosixPath(relative), PureWindowsPath(relative)
    if posix.is_absolute() or windows.is_absolute() or windows.drive:
        raise NovaInputError(f"image path {relative!r} escapes the release folder", **where)
    if "\\" in relative and ".." in windows.parts:
        raise NovaInputError(f"image path {relative!r} escapes the release folder", **where)
    kept: list[str] = []
    for part in posix.parts:
        if part == "..":
            if not kept:
                raise NovaInputError(f"image path {relative!r} escapes the release folder", **where)
            kept.pop()
        elif part != ".":
            kept.append(part)
    if not kept:  # ".", "./" or "images/..": the release folder itself
        raise NovaInputError(f"image path {relative!r} is the release folder, not a file", **where)
    return PurePosixPath(*kept)


def _file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, kind in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return "no regular file"


def _checked_image(folder: _ReleaseFolder, raw: RawImage) -> _CheckedImage:
    """The image file read once: path checked, bytes hashed and checked as a PNG."""
    if raw.embedded:  # by layout, so a v1 row with a null image_path is named as such
        return _embedded_image(raw)
    relative = raw.image_path
    if type(relative) is str and _PLAIN_RELATIVE_PATH.fullmatch(relative):  # "images/x.png"
        checked = _plain_png(folder, raw, relative)
        if checked is not None:
            return checked
    where = dict(source=raw.source, record=raw.where(), field="image_path")
    if not isinstance(relative, str) or not relative.strip():
        raise NovaInputError(f"image path must be a non-empty string, got {relative!r}", **where)
    if _PLAIN_RELATIVE_PATH.fullmatch(relative):  # nothing to undo
        path = folder.root / relative
    else:
        if "\x00" in relative:  # no file name can hold it; open() would raise ValueError
            raise NovaInputError(
                f"image path {relative!r} holds a NUL character, which no file name can", **where
            )
        path = folder.root / _inside_release(relative, where)
    return _checked_image_file(folder, str(path), path, relative, where)


def _plain_png(folder: _ReleaseFolder, raw: RawImage, relative: str) -> _CheckedImage | None:
    """A plain path to a regular file inside the release that holds a whole PNG: read
    once (opened without following a link, its status from the open file), checked and
    hashed. None for anything else, which the long way reads again and names."""
    if _OPEN_FLAGS is None:
        return None
    parent, _, name = relative.rpartition("/")
    in_folder = folder.plain_folder(parent)
    if not in_folder.inside:
        return None
    try:
        descriptor = os.open(f"{in_folder.location}/{name}", _OPEN_FLAGS)
    except OSError:  # a link, no file, no access...
        return None
    try:
        data = folder.buffer.png_of(descriptor)
    finally:
        os.close(descriptor)
    if data is None:
        return None
    try:
        header, mark = check_png_marked(data)
    except PngError:
        return None
    size = _decodable_size(
        header, relative, lambda: dict(source=raw.source, record=raw.where(), field="image_path")
    )
    resolved = f"{in_folder.resolved}/{name}"
    path = in_folder.make_child(name)
    return _CheckedImage(path, resolved, *size, hashlib.sha256(data).digest(), mark)


# Opening an image file at once, without following a link at its end (a link is refused
# by open and takes the long way, which follows it and checks where it leads) and without
# waiting on a named pipe (refused once its status is seen); None where the system has no
# such flags: every file then takes the long way.
_OPEN_FLAGS = (
    os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_NONBLOCK")
    else None
)


def _read_image(
    folder: _ReleaseFolder, handle: io.RawIOBase, relative: str, where: Any
) -> memoryview:
    """An image file's bytes (only its head when it is no PNG), errors named."""
    try:
        return folder.buffer.png_or_head(handle)
    except OSError as error:
        raise NovaInputError(
            f"cannot read image file {relative}: {error.strerror or error}", **where
        ) from None


def _checked_image_file(
    folder: _ReleaseFolder, location: str, path: Path, relative: str, where: dict[str, Any]
) -> _CheckedImage:
    """The long way: the file's status first, links followed, each problem named."""
    resolved, inside, status = folder.follow(location)
    if not inside:
        raise NovaInputError(
            f"image path {relative!r} escapes the release folder (symlink)", **where
        )
    if status is None:
        beside = folder.unlisted_like(relative)
        hint = (
            f"; did you mean {' or '.join(beside)} (in that folder, listed by no row)?"
            if beside
            else ""
        )
        raise NovaInputError(f"image file not found: {relative}{hint}", **where)
    if not stat.S_ISREG(status.st_mode):
        raise NovaInputError(
            f"image path {relative!r} is {_file_kind(status.st_mode)}, not a file", **where
        )
    try:
        # Unbuffered: a buffered reader copies each file through its buffer (twice the CPU).
        with open(location, "rb", buffering=0) as handle:
            data = _read_image(folder, handle, relative, where)
    except OSError as error:
        raise NovaInputError(
            f"cannot read image file {relative}: {error.strerror or error}", **where
        ) from None
    width, height, mark = _png_size(data, relative, where)
    return _CheckedImage(path, resolved, width, height, hashlib.sha256(data).digest(), mark)


def _coordinate(box: RawBox, name: str) -> float:
    value = box.values.get(name)
    if type(value) is float and math.isfinite(value):  # the usual case, checked first
        return value
    where = dict(source=box.source, record=box.record, field=box.field_prefix + name)
    if (
        isinstance(value, (bool, np.bool_))
        or value is None
        or (isinstance(value, str) and not value.strip())
    ):
        raise NovaInputError(f"{name} is missing or not a number: {value!r}", **where)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise NovaInputError(f"{name} is not a number: {value!r}", **where) from error
    if not math.isfinite(number):
        raise NovaInputError(f"{name} must be finite, got {value!r}", **where)
    return number


def _validated_box(box: RawBox, width: int, height: int) -> list[float]:
    x, y, w, h = (_coordinate(box, name) for name in BOX_FIELDS)
    for name, size in (("width", w), ("height", h)):
        if size <= 0:
            raise NovaInputError(
                f"{name} must be positive, got {size}",
                source=box.source,
                record=box.record,
                field=box.field_prefix + name,
            )
    slack_x, slack_y = BOX_TOLERANCE * width, BOX_TOLERANCE * height
    overlaps = x < width and y < height and x + w > 0 and y + h > 0
    within = (
        x >= -slack_x and y >= -slack_y and x + w <= width + slack_x and y + h <= height + slack_y
    )
    if not (overlaps and within):
        raise NovaInputError(
            f"box [x={x}, y={y}, width={w}, height={h}] lies outside the {width}x{height} image "
            f"(allowed: overlapping it and at most {BOX_TOLERANCE:.0%} of its size beyond the border)",
            source=box.source,
            record=box.record,
            field=box.field_prefix[:-1] or "x, y, width, height",
        )
    return [x, y, w, h]


def _check_identity(raw: RawImage, seen: dict[str, RawImage]) -> None:
    match = FILENAME_PATTERN.match(raw.filename) if isinstance(raw.filename, str) else None
    if match is not None and (raw.case_id, raw.scan_id) == match.groups():
        if raw.filename not in seen:  # the usual case: no message built
            seen[raw.filename] = raw
            return
    where = dict(source=raw.source, record=raw.where())
    if match is None:
        raise NovaInputError(
            f"filename {raw.filename!r} is not of the form caseNNNN_NNN.png",
            field="filename",
            **where,
        )
    for name, expected in (("case_id", match.group(1)), ("scan_id", match.group(2))):
        value = getattr(raw, name)
        if value != expected:
            raise NovaInputError(
                f"{name} {value!r} does not match the filename (expected {expected!r})",
                field=name,
                **where,
            )
    first = seen[raw.filename]  # shards of an export are several files: both are named
    raise NovaInputError(
        f"duplicate filename, first seen at {first.source}, {first.record}",
        field="filename",
        **where,
    )


def build_records(
    root: Path,
    raws: list[RawImage],
    extra_keys: list[str],
    warnings: list[str],
    *,
    png_digests: dict[str, bytes] | None = None,
    png_marks: dict[str, str] | None = None,
) -> list[ImageRecord]:
    """Validate a layout's rows and turn them into records sorted by filename.

    Args:
        root: the release folder (image paths are relative to it).
        raws: the rows a layout reader gave.
        extra_keys: the release's extra meta keys, in order.
        warnings: empty captions, a gold box listed twice in one image, per-case
            metadata that differs within a case and PNG files in the image folders that no
            row lists are noted here.
        png_digests: if given, filled with filename -> SHA-256 of the image's PNG bytes,
            hashed from the bytes that were checked (each file is read once).
        png_marks: if given, filled with filename -> the novabench mark of each image
            whose PNG carries one (``novabench.data.png.check_png_marked``).

    Returns:
        The records, sorted by filename.

    Raises:
        NovaInputError: naming the file, the row and the field of the first problem; a
            release without a single image row (nothing could ever be scored on it).

    Example:
        >>> build_records(Path("Nova"), [], [], [])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: Nova: the release holds no images (no rows); nothing could be scored on it
    """
    if not raws:
        raise NovaInputError(
            "the release holds no images (no rows); nothing could be scored on it",
            source=str(root),
        )
    seen: dict[str, RawImage] = {}
    for raw in raws:
        _check_identity(raw, seen)
    folder = _ReleaseFolder(root, raws)
    ordered = sorted(raws, key=attrgetter("filename"))
    images: list[_CheckedImage] = []
    owner_of_path: dict[str, str] = {}
    for raw in progress_bar(ordered, desc="reading release", unit="image"):
        try:
            image = _checked_image(folder, raw)
            if image.resolved is not None:
                owner = owner_of_path.setdefault(image.resolved, raw.filename)
                if owner != raw.filename:
                    raise NovaInputError(
                        f"image {raw.image_path} is already the image of {owner}",
                        source=raw.source,
                        record=raw.where(),
                        field="image_path",
                    )
        except NovaInputError:
            # The boxes are checked once every size is known; a box problem of an earlier
            # image is the first problem all the same.
            for earlier, checked in zip(ordered, images):
                _boxes_one_by_one(earlier, checked)
            raise
        images.append(image)
    warnings.extend(_unlisted_png_warnings(folder, images))
    boxes = _validated_boxes(ordered, images)
    records: list[ImageRecord] = []
    first_of_case: dict[str, tuple[ImageRecord, RawImage]] = {}
    meta_keys = (*FIXED_META_KEYS, *extra_keys)
    for raw, image, (gold, rater_boxes) in zip(ordered, images, boxes):
        if png_digests is not None:
            png_digests[raw.filename] = image.sha256
        if png_marks is not None and image.mark is not None:
            png_marks[raw.filename] = image.mark
        first_seen = first_of_case.get(raw.case_id)
        if first_seen is not None and raw.meta == first_seen[1].meta:
            first = first_seen[0]  # the case's metadata again, as found: its values kept
            case_values = first.title, first.publication_date, first.clinical_history
            final_diagnosis, extra = first.final_diagnosis, dict(first.extra)
        else:
            meta = {key: text(raw.meta.get(key)) for key in meta_keys}
            if first_seen is not None:
                first, first_raw = first_seen
                kept = {key: getattr(first, key) for key in FIXED_META_KEYS} | first.extra
                differing = [key for key in meta if meta[key] != kept[key]]
                if differing:
                    warnings.append(
                        f"{raw.source}, {raw.where()}: meta {', '.join(differing)} differ from "
                        f"{first_raw.source}, {first_raw.where()} of the same case; the values of {first.filename} were kept"
                    )
                meta = kept
            case_values = meta["title"], meta["publication_date"], meta["clinical_history"]
            final_diagnosis, extra = meta["final_diagnosis"], {key: meta[key] for key in extra_keys}
        caption = raw.caption if type(raw.caption) is str else text(raw.caption)
        if caption is None or not caption.strip():
            warnings.append(f"{raw.source}, {raw.where()}: empty caption")
        if _has_repeated_box(gold, rater_boxes):
            warnings.extend(_duplicate_box_warnings(raw))
        title, publication_date, clinical_history = case_values
        # In the order of ImageRecord's fields (_RECORD_FIELDS): 15 keywords cost seven times
        # what positions cost (1.9 ms of NOVA's 906 records).
        record = ImageRecord(
            raw.filename,
            raw.case_id,
            raw.scan_id,
            image.path,
            image.width,
            image.height,
            caption,
            clinical_history,
            final_diagnosis,
            title,
            publication_date,
            gold,
            rater_boxes,
            extra,
            None if image.path is not None else bytes(raw.image_bytes),
        )
        first_of_case.setdefault(raw.case_id, (record, raw))
        records.append(record)
    return records


def _is_png_name(name: str) -> bool:
    return name.lower().endswith(".png") and not name.startswith(".")


#: How many unlisted files a warning names (it counts them all).
_UNLISTED_SHOWN = 5


def _unlisted_png_warnings(folder: _ReleaseFolder, images: list[_CheckedImage]) -> list[str]:
    """One warning per image folder holding PNG files no row lists (never read nor scored).

    Only the folders that hold the release's images are looked at (``images/``, ``test/``),
    hidden files skipped; a file reached through a link counts as the file it leads to.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "images").mkdir()
        >>> for name in ("case0001_001.png", "case0001_01.png"):
        ...     _ = (root / "images" / name).write_bytes(b"")
        >>> folder = _ReleaseFolder(root)
        >>> listed = f"{folder.folder(str(root / 'images'))[0]}/case0001_001.png"
        >>> _unlisted_png_warnings(folder, [_CheckedImage(None, listed, 1, 1, b"", None)])
        ['images/case0001_01.png: a PNG file in the image folder that no row lists; not read, not scored (renamed or left over?)']
    """
    # The names read in each folder: a file is listed when its folder's set holds its name
    # (names compared, not paths built for every file of the folder).
    # ``resolved`` is absolute and normal (no "//", ".", "..", trailing "/"), so its folder
    # and name are either side of the last "/" (os.path.split's answer, at a fifth the cost).
    used: dict[str, set[str]] = {}
    for image in images:
        if image.resolved is not None:
            parent, _, name = image.resolved.rpartition("/")
            used.setdefault(parent or "/", set()).add(name)
    root = str(folder.root.resolve())
    found: list[str] = []
    for parent in sorted(used):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        read_here = used[parent]
        unlisted = []
        # A name read here is no link (a link's image is the file it leads to).
        for name in sorted(name for name in names if name not in read_here and _is_png_name(name)):
            location = os.path.join(parent, name)
            if os.path.islink(location):  # listed when the file it leads to was read
                target_parent, target = os.path.split(os.path.realpath(location))
                if target in used.get(target_parent, ()):
                    continue
            unlisted.append(os.path.relpath(location, root))
        if len(unlisted) == 1:
            found.append(
                f"{PurePosixPath(Path(unlisted[0]))}: a PNG file in the image folder that no "
                "row lists; not read, not scored (renamed or left over?)"
            )
        elif unlisted:
            shown = ", ".join(PurePosixPath(Path(name)).name for name in unlisted[:_UNLISTED_SHOWN])
            more = (
                f", and {len(unlisted) - _UNLISTED_SHOWN} more"
                if len(unlisted) > _UNLISTED_SHOWN
                else ""
            )
            where = PurePosixPath(Path(os.path.relpath(parent, root)))
            found.append(
                f"{where}/: {len(unlisted)} PNG files that no row lists ({shown}{more}); not "
                "read, not scored (renamed or left over?)"
            )
    return found


def _boxes_one_by_one(
    raw: RawImage, image: _CheckedImage
) -> tuple[list[list[float]], list[dict[str, Any]]]:
    """An image's gold boxes and its raters' (sorted by name), each box checked in turn:
    the first problem raises, named as the layout names the box."""
    gold: list[list[float]] = []
    by_rater: dict[str, list[list[float]]] = {}
    for box in raw.listed_boxes():
        values = _validated_box(box, image.width, image.height)
        (gold if box.rater is None else by_rater.setdefault(box.rater, [])).append(values)
    return gold, [{"rater": name, "boxes": by_rater[name]} for name in sorted(by_rater)]


def _listed_twice(boxes: list[list[float]]) -> bool:
    return len(boxes) > 1 and len({tuple(box) for box in boxes}) < len(boxes)


def _has_repeated_box(gold: list[list[float]], rater_boxes: list[dict[str, Any]]) -> bool:
    """Whether a box is listed twice in the gold boxes or in one rater's (one call an image;
    most images have a box or two of each source)."""
    if _listed_twice(gold):
        return True
    for entry in rater_boxes:
        if _listed_twice(entry["boxes"]):
            return True
    return False


def _duplicate_box_warnings(raw: RawImage) -> list[str]:
    """Where each box listed twice for one image and one source (gold, or one rater) is.

    Both places are named, in the file that holds them (``bboxes_gold.csv`` lines in the
    legacy layout, the row's box list in v1). Kept as the release lists them: the ground
    truth is not ours to edit.

    Example:
        >>> row = RawImage("captions.csv", "line 2", "a.png", "case1", "1", "", None, {})
        >>> box = {"x": 1, "y": 2, "width": 3, "height": 4}
        >>> row.boxes = [RawBox(box, None, "bboxes_gold.csv", f"line {n} (a.png)", "") for n in (2, 9)]
        >>> _duplicate_box_warnings(row)[0][:72]
        'bboxes_gold.csv, line 2 (a.png) and line 9 (a.png): a gold box is listed'
    """
    first_place: dict[tuple[str | None, tuple[float, ...]], RawBox] = {}
    found: list[str] = []
    for box in raw.listed_boxes():
        key = (box.rater, tuple(float(box.values[name]) for name in BOX_FIELDS))
        first = first_place.setdefault(key, box)
        if first is box:
            continue
        whose = "a gold box" if box.rater is None else f"a box of rater {box.rater!r}"
        effect = (
            "COCO-AP@ and TP30 count each copy; the hit rates do not change"
            if box.rater is None
            else "the human reference counts each copy"
        )
        second = _box_field(box) if box.record == first.record else f"{box.record}{_box_field(box)}"
        found.append(
            f"{first.source}, {first.record}{_box_field(first)} and {second.lstrip(', ')}: "
            f"{whose} is listed more than once; kept as listed ({effect})"
        )
    return found


def _box_field(box: RawBox) -> str:
    return f", {box.field_prefix.rstrip('.')}" if box.field_prefix else ""


def _validated_boxes(
    ordered: list[RawImage], images: list[_CheckedImage]
) -> list[tuple[list[list[float]], list[dict[str, Any]]]]:
    """Every image's boxes checked against its size, as ``_boxes_one_by_one`` gives them.

    Rows whose boxes came as columns (``BoxColumns``, one file's) are checked all at once
    with numpy, by the same comparisons in float64; should any box fail, the images are
    checked one by one again in order, so the error is the one the first problem raises.
    """
    columns = ordered[0].box_columns
    if columns is None or any(raw.box_columns is not columns for raw in ordered):
        return [_boxes_one_by_one(raw, image) for raw, image in zip(ordered, images)]
    rows = np.fromiter((raw.box_row for raw in ordered), dtype=np.int64, count=len(ordered))
    starts = columns.starts[rows]
    counts = columns.starts[rows + 1] - starts
    # Box positions in the file, image after image in filename order.
    firsts_here = np.cumsum(counts) - counts
    positions = np.repeat(starts - firsts_here, counts) + np.arange(int(counts.sum()))
    in_order = columns.coordinates[positions]
    x, y, w, h = in_order.T
    width = np.repeat(np.fromiter((image.width for image in images), np.float64), counts)
    height = np.repeat(np.fromiter((image.height for image in images), np.float64), counts)
    slack_x, slack_y = BOX_TOLERANCE * width, BOX_TOLERANCE * height
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite values are refused below
        right, bottom = x + w, y + h
        good = (
            np.isfinite(x)
            & np.isfinite(y)
            & np.isfinite(w)
            & np.isfinite(h)
            & (w > 0)
            & (h > 0)
            & (x < width)
            & (y < height)
            & (right > 0)
            & (bottom > 0)
            & (x >= -slack_x)
            & (y >= -slack_y)
            & (right <= width + slack_x)
            & (bottom <= height + slack_y)
        )
    if not good.all():
        for raw, image in zip(ordered, images):
            _boxes_one_by_one(raw, image)  # raises at the first problem
    # Each image's boxes grouped by source with one stable sort (gold first, then the raters
    # by name, each group in file order) and taken as slices: a step per group, not per box.
    rater_names = sorted({name for name in columns.raters if name is not None})
    code_of = {name: code for code, name in enumerate(rater_names, start=1)}
    codes = np.fromiter(
        (0 if name is None else code_of[name] for name in columns.raters),
        dtype=np.int64,
        count=len(columns.raters),
    )[positions]
    n_codes = len(rater_names) + 1
    keys = np.repeat(np.arange(len(counts), dtype=np.int64), counts) * n_codes + codes
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    values = in_order[order].tolist()
    firsts = np.flatnonzero(np.diff(keys, prepend=-1))
    ends = np.append(firsts[1:], len(keys))
    group_keys = keys[firsts]
    golds: list[list[list[float]]] = [[] for _ in range(len(counts))]
    raters: list[list[dict[str, Any]]] = [[] for _ in range(len(counts))]
    for image, code, start, end in zip(
        (group_keys // n_codes).tolist(),
        (group_keys % n_codes).tolist(),
        firsts.tolist(),
        ends.tolist(),
    ):
        if code:
            raters[image].append({"rater": rater_names[code - 1], "boxes": values[start:end]})
        else:
            golds[image] = values[start:end]
    return list(zip(golds, raters))
