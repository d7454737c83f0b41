"""File helpers shared by every writer of the toolkit."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any


def give_usual_permissions(path: str | os.PathLike[str]) -> None:
    """Give a file or folder the mode the umask allows (0644/0755 under umask 022).

    ``tempfile.mkstemp`` and ``mkdtemp`` create private entries (0600/0700); a report, a
    run or a release written through them should stay readable by the rest of a lab.

    Example:
        >>> import tempfile, stat
        >>> folder = Path(tempfile.mkdtemp())
        >>> umask = os.umask(0o022); give_usual_permissions(folder); _ = os.umask(umask)
        >>> oct(stat.S_IMODE(folder.stat().st_mode)) == oct(0o777 & ~umask)
        True
    """
    target = Path(path)
    umask = os.umask(0)
    os.umask(umask)
    target.chmod((0o777 if target.is_dir() else 0o666) & ~umask)


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (JSON ``null``).

    Python's ``json`` writes ``NaN``, which strict parsers (JavaScript, jq, ``json.loads``
    with ``parse_constant`` checks) refuse; an undefined metric is ``null`` in our files.

    Example:
        >>> json_safe({"FP30": float("nan"), "n": [1.0, float("inf")]})
        {'FP30': None, 'n': [1.0, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def write_text_atomic(path: str | os.PathLike[str], text: str, *, durable: bool = False) -> Path:
    """Write ``text`` to ``path`` through a temporary sibling, so a failure leaves no half file.

    The file gets the umask's mode (see :func:`give_usual_permissions`); ``durable=True``
    also syncs it to disk before the rename, for files a crash must not lose (run manifests,
    merged runs).

    Example:
        >>> import tempfile
        >>> out = write_text_atomic(Path(tempfile.mkdtemp()) / "a" / "r.md", "# Report\\n")
        >>> out.read_text()
        '# Report\\n'
    """
    import tempfile

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        give_usual_permissions(temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def check_output_paths(outputs: dict[str, Any], inputs: list[Any]) -> None:
    """Refuse outputs that would overwrite an input (or its run manifest), a folder, or each other.

    Args:
        outputs: option name -> path (None entries are skipped), e.g. ``{"--out": "r.json"}``.
        inputs: paths read by the command (predictions files); their manifests count too.

    Raises:
        NovaInputError: naming the option and the path.

    Example:
        >>> check_output_paths({"--out": "runs/a.jsonl"}, ["runs/a.jsonl"])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: runs/a.jsonl, field '--out': is an input of this command (a predictions file); choose another output path
    """
    from novabench.errors import NovaInputError

    protected: dict[Path, str] = {}
    for item in inputs:
        path = Path(item).expanduser().resolve()
        protected[path] = "a predictions file"
        protected[path.with_name(path.name + ".manifest.json")] = (
            "the manifest of a predictions file"
        )
    seen: dict[Path, str] = {}
    for option, value in outputs.items():
        if value is None:
            continue
        path = Path(value).expanduser().resolve()
        if path in protected:
            raise NovaInputError(
                f"is an input of this command ({protected[path]}); choose another output path",
                source=str(value),
                field=option,
            )
        if path.is_dir():
            raise NovaInputError("is a folder; give a file path", source=str(value), field=option)
        if path in seen:
            raise NovaInputError(
                f"is also the {seen[path]} output", source=str(value), field=option
            )
        seen[path] = option
