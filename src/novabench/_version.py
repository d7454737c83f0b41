"""The one version of novabench: pyproject.toml reads it here when the package is built.

A bottom module, so any layer can say which toolkit wrote a file without importing the
package's entry points (``novabench/__init__.py``, the top layer).

Example:
    >>> import novabench
    >>> __version__ == novabench.__version__
    True
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__version__ = "0.1.0"

#: How many changes have moved a score so far: one per entry of CHANGELOG.md's "Changes that
#: move scores" sections (a test counts them), so a change that moves a score raises it.
#: A report records it: two reports of one revision were scored by the same rules, whatever
#: ``__version__`` says (it did not change with every such change).
SCORING_REVISION = 61


@functools.cache
def source_sha256(root: Path | None = None) -> str:
    """SHA-256 of the package's source and resource files: which build scored a report.

    Two checkouts with the same :data:`SCORING_REVISION` may still differ (an unreleased
    edit, a local patch); this names the exact files. Compiled caches are left out.

    Args:
        root: the package folder (default: this package's).

    Returns:
        The hex digest over every file's path relative to ``root`` and its bytes, in path
        order.

    Example:
        >>> len(source_sha256()) == 64 and source_sha256() == source_sha256()
        True
    """
    folder = Path(__file__).parent if root is None else Path(root)
    digest = hashlib.sha256()
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )
    for path in files:
        name = path.relative_to(folder).as_posix().encode()
        content = path.read_bytes()
        digest.update(len(name).to_bytes(8, "big") + name + len(content).to_bytes(8, "big"))
        digest.update(content)
    return digest.hexdigest()


def toolkit_record() -> dict[str, object]:
    """What a report records of the toolkit that wrote it.

    Example:
        >>> sorted(toolkit_record())
        ['name', 'scoring_revision', 'source_sha256', 'version']
    """
    return {
        "name": "novabench",
        "version": __version__,
        "scoring_revision": SCORING_REVISION,
        "source_sha256": source_sha256(),
    }
