"""Where a Space's NOVA data comes from, and how a Space talks about files without paths.

A Space reads ``NOVA_SOURCE`` (a release folder, a ``nova export`` folder or a Hub dataset
id); without it, it builds the toolkit's synthetic sample once per process. Whatever goes
wrong while opening the data becomes a message for a clear page, never a crash, and no
message a Space shows carries a server path (:func:`scrub_paths`).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from novabench.errors import NovaError, NovaInputError

if TYPE_CHECKING:
    from novabench.data.release import NovaRelease

__all__ = [
    "MAX_UPLOAD_BYTES",
    "SOURCE_ENV",
    "SOURCE_FILE",
    "default_source",
    "OpenedSource",
    "check_upload_size",
    "open_source",
    "read_upload",
    "scrub_paths",
    "source_label",
]

#: The environment variable naming the data a Space shows or scores against.
SOURCE_ENV = "NOVA_SOURCE"

#: A file beside a built Space's app.py recording its data (written by ``nova space build --data``).
SOURCE_FILE = "nova_source.txt"

#: The largest upload either Space takes: 50 MB. A full NOVA run's JSONL (906 images and
#: 281 cases, every task) is a few MB. Gradio refuses larger files before storing them
#: (``launch(max_file_size=...)``); :func:`read_upload` checks again while reading.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
_UPLOAD_CHUNK = 1024 * 1024

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# An absolute POSIX path of two or more parts (or one under the home folder, ~/), or a
# Windows drive path. It starts where no path or URL goes on before it: the "/" inside
# "../../x" or "https://host/a" begins no absolute path.
_ABSOLUTE_PATH = re.compile(
    r"(?<![\w.~\-/\\:])(?:[A-Za-z]:\\|~?/)"
    r"(?:[^\s'\"`,;:()\[\]{}<>|/\\]+[/\\])+([^\s'\"`,;:()\[\]{}<>|/\\]*)"
)

_SAMPLE_CACHE: dict[tuple[int, int], Path] = {}


def read_upload(path: str | os.PathLike[str], name: str, limit: int = MAX_UPLOAD_BYTES) -> str:
    """An uploaded file's text, read in chunks and refused once it passes ``limit`` bytes.

    Args:
        path: where the Space stored the upload.
        name: the upload's own file name, for messages (never the server path).
        limit: the most bytes read (default :data:`MAX_UPLOAD_BYTES`).

    Raises:
        NovaInputError: larger than ``limit``, unreadable, or not UTF-8; names ``name``.

    Example:
        >>> path = Path(tempfile.mkdtemp()) / "p.jsonl"
        >>> _ = path.write_bytes(b'{"case_id": "case0001"}\\n' * 3)
        >>> len(read_upload(path, "p.jsonl"))
        72
        >>> read_upload(path, "p.jsonl", limit=50)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: p.jsonl: larger than the 50 bytes an upload may have
    """
    chunks, size = [], 0
    try:
        with open(path, "rb") as stream:
            while chunk := stream.read(min(_UPLOAD_CHUNK, limit + 1 - size)):
                size += len(chunk)
                if size > limit:
                    raise NovaInputError(
                        f"larger than the {limit:,} bytes an upload may have", source=name
                    )
                chunks.append(chunk)
        return b"".join(chunks).decode("utf-8-sig")
    except OSError as error:
        raise NovaInputError(f"cannot be read ({type(error).__name__})", source=name) from None
    except UnicodeDecodeError as error:
        raise NovaInputError(
            f"not UTF-8 text (byte {error.start}: {error.reason})", source=name
        ) from None


def check_upload_size(
    path: str | os.PathLike[str], name: str, limit: int = MAX_UPLOAD_BYTES
) -> int:
    """An upload's size in bytes, refused beyond ``limit`` before anything reads it.

    Args:
        path: where the Space stored the upload.
        name: the upload's own file name, for messages (never the server path).
        limit: the most bytes allowed (default :data:`MAX_UPLOAD_BYTES`).

    Raises:
        NovaInputError: larger than ``limit`` or not there; names ``name``.

    Example:
        >>> path = Path(tempfile.mkdtemp()) / "run.jsonl"
        >>> _ = path.write_bytes(b"x" * 100)
        >>> check_upload_size(path, "run.jsonl")
        100
        >>> check_upload_size(path, "run.jsonl", limit=99)
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: run.jsonl: larger than the 99 bytes an upload may have
    """
    try:
        size = os.stat(path).st_size
    except OSError as error:
        raise NovaInputError(f"cannot be read ({type(error).__name__})", source=name) from None
    if size > limit:
        raise NovaInputError(f"larger than the {limit:,} bytes an upload may have", source=name)
    return size


@dataclass
class OpenedSource:
    """The outcome of opening a Space's data source.

    Attributes:
        release: the validated release, or None when it could not be opened.
        label: how the Space names the source (a Hub id or a folder name, never a path).
        notice: the provenance notice (e.g. "Synthetic sample ..."), when novabench made the data.
        error: why the data could not be opened, for the page; None when it opened.
        warnings: what the reader noticed (already free of server paths).
    """

    release: NovaRelease | None
    label: str
    notice: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def default_source(space_dir: str | os.PathLike[str]) -> str:
    """The data a Space in ``space_dir`` shows: ``$NOVA_SOURCE``, else its ``nova_source.txt``.

    A folder named in ``nova_source.txt`` is taken relative to ``space_dir``. The empty
    string means the synthetic sample.

    Example:
        >>> folder = Path(tempfile.mkdtemp())
        >>> os.environ.pop(SOURCE_ENV, None) and None
        >>> default_source(folder)
        ''
        >>> _ = (folder / SOURCE_FILE).write_text("owner/nova\\n")
        >>> default_source(folder)
        'owner/nova'
    """
    from_env = os.environ.get(SOURCE_ENV, "").strip()
    if from_env:
        return from_env
    recorded = Path(space_dir) / SOURCE_FILE
    if not recorded.is_file():
        return ""
    text = recorded.read_text(encoding="utf-8").strip()
    local = Path(space_dir) / text
    return str(local) if text and local.is_dir() else text


def sample_release(n_cases: int = 8, seed: int = 0) -> Path:
    """The synthetic sample release, written once per process into a temporary folder.

    Example:
        >>> folder = sample_release(n_cases=2)
        >>> folder == sample_release(n_cases=2), (folder / "data" / "nova-v1.parquet").is_file()
        (True, True)
    """
    key = (n_cases, seed)
    if key not in _SAMPLE_CACHE or not _SAMPLE_CACHE[key].is_dir():
        from novabench.data.sample import write_sample_release

        folder = Path(tempfile.mkdtemp(prefix="nova-space-")) / "nova-sample"
        _SAMPLE_CACHE[key] = write_sample_release(
            folder, n_cases=n_cases, seed=seed, progress=False
        )
    return _SAMPLE_CACHE[key]


def resolve_folder(source: str | os.PathLike[str] | None) -> tuple[Path, str]:
    """The local folder of ``source`` (downloading a Hub id) and its label for the page.

    Args:
        source: a folder, a Hub dataset id ``owner/name``, or None/empty for the sample.

    Returns:
        ``(folder, label)``.

    Raises:
        NovaInputError: neither a folder nor a Hub id, or the Hub cannot give it.

    Example:
        >>> resolve_folder("no such folder")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: no such folder: neither an existing folder nor a Hub dataset id (owner/name)
    """
    if source is None or not str(source).strip():
        return sample_release(), "synthetic sample"
    text = os.fspath(source).strip()
    folder = Path(text).expanduser()
    if folder.is_dir():
        return folder, folder.name
    if not _HUB_ID.match(text):
        raise NovaInputError(
            "neither an existing folder nor a Hub dataset id (owner/name)", source=text
        )
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(text, repo_type="dataset")), text
    except Exception as error:  # every Hub failure (offline, 401/403/404, network) is a page
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes"}
        reason = "HF_HUB_OFFLINE is set" if offline else type(error).__name__
        raise NovaInputError(
            f"cannot fetch this dataset from the Hub ({reason}); check the id, your access "
            f"and the network, or set {SOURCE_ENV} to a local copy",
            source=text,
        ) from error


def open_source(source: str | os.PathLike[str] | None = None) -> OpenedSource:
    """Open a Space's data: ``source``, else ``$NOVA_SOURCE``, else the synthetic sample.

    Never raises for bad data: the error is returned for the page to show.

    Example:
        >>> opened = open_source("/definitely/not/here")
        >>> opened.release is None, opened.error
        (True, 'here: neither an existing folder nor a Hub dataset id (owner/name)')
        >>> sample = open_source("")
        >>> sample.label, sample.notice.startswith("Synthetic sample")
        ('synthetic sample', True)
    """
    if source is None:
        source = os.environ.get(SOURCE_ENV, "")
    label = source_label(source)
    try:
        folder, label = resolve_folder(source)
        from novabench.data.release import read_release

        release = read_release(folder)
    except (NovaError, OSError, ImportError, ValueError) as error:
        return OpenedSource(None, label, error=scrub_paths(str(error)))
    from novabench.data.provenance import provenance_notice

    if not source:
        label = "synthetic sample"
    return OpenedSource(
        release,
        label,
        notice=provenance_notice(release.provenance),
        warnings=[scrub_paths(warning) for warning in release.warnings],
    )


def source_label(source: str | os.PathLike[str] | None) -> str:
    """How a page names a Space's data: a Hub id as given, a folder by its last part.

    Example:
        >>> source_label("owner/nova"), source_label("/srv/space/data/nova-v1"), source_label("")
        ('owner/nova', 'nova-v1', 'synthetic sample')
    """
    text = os.fspath(source or "").strip()
    if not text:
        return "synthetic sample"
    return text if _HUB_ID.match(text) and not Path(text).exists() else Path(text).name


def scrub_paths(text: str, names: Iterable[tuple[str, str]] = ()) -> str:
    """``text`` with every absolute path replaced by its last part (and named paths renamed).

    Args:
        text: a message for the page.
        names: ``(path, name)`` pairs replaced first, e.g. an upload's temporary path and
            the file name the user chose.

    Example:
        >>> scrub_paths("/tmp/gradio/ab12/pred.jsonl, line 3: bad box; see /srv/app/x")
        'pred.jsonl, line 3: bad box; see x'
        >>> scrub_paths("C:\\\\Users\\\\me\\\\run.jsonl failed")
        'run.jsonl failed'
        >>> scrub_paths("error in /tmp/u/9f.jsonl", [("/tmp/u/9f.jsonl", "mine.jsonl")])
        'error in mine.jsonl'
        >>> scrub_paths("ratio 3/4 and owner/name stay")
        'ratio 3/4 and owner/name stay'
        >>> scrub_paths("image path '../../etc/passwd' escapes; see https://hf.co/a/b")
        "image path '../../etc/passwd' escapes; see https://hf.co/a/b"
    """
    for path, name in names:
        if path:
            text = text.replace(str(path), name)
    return _ABSOLUTE_PATH.sub(lambda match: match.group(1), text)
