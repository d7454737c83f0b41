"""A run file given to a Space, staged beside its manifest where ``nova evaluate`` finds it.

``nova evaluate`` reads a run's manifest (``<file>.manifest.json``, written by ``nova run``)
from beside the predictions file: the box convention the run recorded (a preset's), its
prompts (which fix the coordinate order of bare 4-number box lists), the release it was run
on and whether it finished. A Space gets the two as uploads or pasted text: :func:`stage_run`
writes them into one folder as that pair, so both Spaces score and read through
:mod:`novabench.report.scoring` exactly as the command does, and :func:`manifest_missing_line`
says what changes when the manifest was not given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from novabench.errors import BOX_CONVENTION, NovaInputError
from novabench.spaces.source import scrub_paths

__all__ = [
    "MANIFEST_LABEL",
    "box_convention_in_space_words",
    "PREDICTIONS_FILE",
    "manifest_missing_line",
    "scrub_run_paths",
    "stage_run",
    "staged_file_name",
]

#: The staged predictions file's name (its manifest is this name + ``.manifest.json``).
PREDICTIONS_FILE = "predictions.jsonl"
#: How messages name the manifest the user gave.
MANIFEST_LABEL = "the run manifest"


def _base_name(name: str | None) -> str:
    # A browser may send a Windows path: its last part is the file's name.
    return (name or "").replace("\\", "/").rsplit("/", 1)[-1].strip()


def staged_file_name(name: str | None) -> str:
    """The name a run file is staged under: the user's own file name, as they gave it.

    Reports name a run file by its name (``run.jsonl has manifest status ...``), so staging
    under the upload's name makes every notice name the file the user knows. A name that is
    no plain file name (empty, a folder, hidden, too long) gives :data:`PREDICTIONS_FILE`.

    Example:
        >>> staged_file_name("qwen-run.jsonl"), staged_file_name("uploads/a.jsonl")
        ('qwen-run.jsonl', 'a.jsonl')
        >>> staged_file_name(None), staged_file_name(".."), staged_file_name("")
        ('predictions.jsonl', 'predictions.jsonl', 'predictions.jsonl')
    """
    base = _base_name(name)
    usable = base and not base.startswith(".") and len(base.encode("utf-8")) <= 200
    if not usable or "\0" in base or base.endswith((".manifest.json", ".lock")):
        return PREDICTIONS_FILE
    return base


def stage_run(
    folder: str | Path,
    predictions_text: str,
    manifest_text: str | None = None,
    *,
    name: str | None = None,
    manifest_name: str | None = None,
) -> Path:
    """Write a run's predictions and (when given) its manifest into ``folder`` as a pair.

    Args:
        folder: an empty folder of the Space's own (a temporary one).
        predictions_text: the predictions JSONL, written as given (its line numbers stay
            the ones messages name).
        manifest_text: the run's ``<file>.manifest.json`` as text; None or blank: no manifest.
        name: the uploaded file's own name, which the report's notices then name
            (:func:`staged_file_name`); None: pasted text, staged as :data:`PREDICTIONS_FILE`.
        manifest_name: the uploaded manifest's own name; ``<file>.manifest.json`` names the
            file it was written beside, which must then be ``name``. None: pasted text.

    Returns:
        The predictions file's path; ``RunManifest.read`` of it finds the manifest.

    Raises:
        NovaInputError: the manifest is not JSON or not a run manifest (a field of the wrong
            kind), or its name says it is another file's; the message names the run manifest
            and the field.

    Example:
        >>> import tempfile
        >>> from novabench.run.manifest import RunManifest
        >>> path = stage_run(tempfile.mkdtemp(), "", '{"box_convention": "qwen"}')
        >>> path.name, RunManifest.read(path).box_convention
        ('predictions.jsonl', 'qwen')
        >>> stage_run(tempfile.mkdtemp(), "", '{"box_convention": 3}')
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: the run manifest, field 'box_convention': must be a string or null, got int
        >>> stage_run(tempfile.mkdtemp(), "", "{}", name="gemma.jsonl",
        ...           manifest_name="qwen.jsonl.manifest.json")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: the run manifest, field 'manifest': qwen.jsonl.manifest.json is the record of qwen.jsonl, not of the predictions given (gemma.jsonl): give the manifest written beside gemma.jsonl (gemma.jsonl.manifest.json), or none
    """
    from novabench.run.manifest import MANIFEST_SUFFIX, RunManifest

    path = Path(folder) / staged_file_name(name)
    given = _base_name(manifest_name)
    described = given[: -len(MANIFEST_SUFFIX)] if given.endswith(MANIFEST_SUFFIX) else ""
    if manifest_text and manifest_text.strip() and name and described:
        if described != path.name:
            # Its box convention, prompts and release would be applied to another run's answers.
            raise NovaInputError(
                f"{given} is the record of {described}, not of the predictions given "
                f"({path.name}): give the manifest written beside {path.name} "
                f"({path.name}{MANIFEST_SUFFIX}), or none",
                source=MANIFEST_LABEL,
                field="manifest",
            )
    path.write_text(predictions_text, encoding="utf-8")
    if manifest_text is None or not manifest_text.strip():
        return path
    try:
        data = json.loads(manifest_text)
    except RecursionError:
        raise NovaInputError("JSON nested too deeply to read", source=MANIFEST_LABEL) from None
    except json.JSONDecodeError as error:
        raise NovaInputError(
            f"not valid JSON: {error.msg.removesuffix(' at')} at line {error.lineno}, "
            f"column {error.colno} "
            "(give the `<file>.manifest.json` that `nova run` wrote beside the file)",
            source=MANIFEST_LABEL,
        ) from None
    RunManifest.from_dict(data, source=MANIFEST_LABEL)  # checked here, where it is named
    RunManifest.path_for(path).write_text(manifest_text, encoding="utf-8")
    return path


def scrub_run_paths(text: str, predictions_path: str | Path, predictions_name: str) -> str:
    """A message about a staged run with no server path: the files named as the user knows them.

    Example:
        >>> scrub_run_paths("/tmp/x/predictions.jsonl.manifest.json: bad; /tmp/x/predictions.jsonl, "
        ...     "line 2: bad", "/tmp/x/predictions.jsonl", "run.jsonl")
        'the run manifest: bad; run.jsonl, line 2: bad'
    """
    from novabench.run.manifest import RunManifest

    manifest = RunManifest.path_for(predictions_path)
    # The manifest's path holds the predictions' path: replaced first.
    return scrub_paths(
        text, [(str(manifest), MANIFEST_LABEL), (str(predictions_path), predictions_name)]
    )


def manifest_missing_line(report: Mapping[str, Any]) -> str:
    """What scoring a run file without its manifest changes ("" when the report read one).

    A Space shows it first: the numbers are those ``nova evaluate`` gives for the file
    without its manifest, which differ from the run's own when a box answer needs the run's
    record to be read.

    Args:
        report: the report of the staged file (:func:`novabench.report.scoring.score_predictions`).

    Example:
        >>> read_here = {"manifests": [None], "box_answers": {"read_here": 132}}
        >>> manifest_missing_line({"predictions": read_here})[:80]
        'warning: no run manifest given: scored as `nova evaluate` scores this file witho'
        >>> manifest_missing_line({"predictions": {"manifests": [{"model": "m"}]}})
        ''
    """
    predictions = report.get("predictions") or {}
    if any(manifest is not None for manifest in predictions.get("manifests") or [None]):
        return ""
    unchecked = "neither the release the run was made on nor whether the run finished is checked"
    advice = "give the `<file>.manifest.json` that `nova run` wrote beside the file"
    read_here = int((predictions.get("box_answers") or {}).get("read_here") or 0)
    if not read_here:
        return f"note: no run manifest given: {unchecked}; {advice} to check them"
    return (
        "warning: no run manifest given: scored as `nova evaluate` scores this file without "
        f"its manifest, which may differ from the run's own scores: its {read_here} raw box "
        "answers were read with box convention `auto` and no prompt on record, so bare "
        "4-number box lists (whose order only the prompt fixes) are not read and a preset's "
        f"box convention (e.g. qwen2.5-vl's absolute pixels) is not applied; {unchecked}; "
        f"{advice} to score it as `nova evaluate` does"
    )


def box_convention_in_space_words(line: str, control: str) -> str:
    """A report line naming ``--box-convention``, worded for a Space, which has no such flag.

    The report's lines are the command line's (``nova evaluate --box-convention ...``); a
    Space reads raw box answers with the convention its run manifest records, so the line
    names the setting by its Python argument (``box_convention``) and says once where the
    Space takes it: ``control``, e.g. "the run manifest box".

    Args:
        line: one notice of a report.
        control: where this Space takes the setting.

    Example:
        >>> print(box_convention_in_space_words(
        ...     "localization: 2 read by --box-convention xyxy_pixel (values above 1000)",
        ...     "the run manifest box"))
        localization: 2 read by box_convention "xyxy_pixel" (values above 1000) (this Space \
reads the box_convention set by "box_convention" in the run manifest box; in Python, pass \
box_convention= to novabench.report.evaluate_predictions)
        >>> box_convention_in_space_words("no box here", "the run manifest box")
        'no box here'
    """
    import re

    from novabench.run.defaults import CONVENTIONS

    flag = re.escape(BOX_CONVENTION.flag)
    if not re.search(flag, line):
        return line
    names = "|".join(re.escape(name) for name in sorted(CONVENTIONS, key=len, reverse=True))
    worded = re.sub(rf"{flag} ({names})\b", rf'{BOX_CONVENTION.argument} "\1"', line)
    worded = re.sub(rf"{flag}'s\b", "the box convention's", worded)
    worded = re.sub(flag, BOX_CONVENTION.argument, worded)
    return (
        f"{worded} (this Space reads the {BOX_CONVENTION.argument} set by "
        f'"{BOX_CONVENTION.argument}" in {control}; in Python, pass '
        f"{BOX_CONVENTION.in_python()} to novabench.report.evaluate_predictions)"
    )
