"""Task prompts for the three NOVA tasks, in the toolkit's own wording.

The default prompts are written for this toolkit; they keep the output contract
of the benchmark protocol (so :mod:`novabench.run.parsers` reads the answers)
but are not the paper's wording. To reproduce a paper run with the official
wording, put that text in a file and pass it to :func:`load_prompt`.

Every prompt carries the SHA-256 of its text so a predictions file and a report
can state exactly which prompt produced them (two runs compare fairly only when
their prompt hashes match).

Contracts:

- ``localization``: one line per abnormal region, ``label: [ymin, xmin, ymax, xmax]``
  with integers in 0..1000 of the image size, or exactly ``no target``.
- ``captioning``: a concise radiology description (sequence/modality, plane,
  lesion location, notable abnormalities).
- ``diagnosis`` (text only): a template with the placeholders ``{clinical_history}``
  and ``{findings}``; the answer is a JSON object
  ``{"most_likely_diagnosis": str, "other_possible_diagnoses": [4 strings]}``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from novabench import registry
from novabench.errors import NovaInputError
from novabench.tasks import behaviour, tasks_where
from novabench.tasks.diagnosis import BEHAVIOUR as DIAGNOSIS
from novabench.tasks.diagnosis import PROMPT_PLACEHOLDERS

__all__ = [
    "DIAGNOSIS_PLACEHOLDERS",
    "TASKS",
    "TaskPrompt",
    "default_prompt",
    "PROMPT_BOX_CONVENTIONS",
    "load_prompt",
    "prompt_box_convention",
    "prompt_box_order",
    "prompt_hash",
    "render_diagnosis_prompt",
]

#: The three tasks, in the spelling used across the toolkit (the registry's).
TASKS: tuple[str, ...] = registry.TASK_NAMES

#: Placeholders a diagnosis template must contain (filled by :func:`render_diagnosis_prompt`);
#: declared with the task (``novabench/tasks/diagnosis.py``).
DIAGNOSIS_PLACEHOLDERS: tuple[str, ...] = PROMPT_PLACEHOLDERS

# One pass over both placeholders, so text inside the history that happens to
# read "{findings}" is never substituted a second time.
_PLACEHOLDER_PATTERN = re.compile(r"\{(clinical_history|findings)\}")

_MISSING_TEXT = "(not provided)"

#: Localisation prompts whose output contract fixes the box order, by the SHA-256 of their
#: text: the box convention each asks for. A run's manifest records its prompt's hash, so
#: bare 4-number lists in its answers are read in the order the prompt asked for. Any
#: other prompt (``--prompt-file``) fixes no order unless the user passes one.
PROMPT_BOX_CONVENTIONS: dict[str, str] = {
    # resources/prompts/localization.txt: "label: [ymin, xmin, ymax, xmax]", 0..1000.
    "4b8fb3bf01f816f9526ce7f10e44b658f9760ee856da866ca45c923d03dc9447": "protocol",
    # The presets' prompts (resources/prompts/presets/, novabench.run.presets).
    # qwen2.5-vl: bbox_2d [x1, y1, x2, y2] in pixels of the image the model saw.
    "d83115451870fe7cdb694ae799fcb46790d4465ab244bef2c85a1b832f530ba1": "qwen",
    # qwen2-vl, qwen3-vl: bbox_2d [x1, y1, x2, y2] in 0..1000.
    "5f78d176b08d035fa4afcd7faf60a53e9e99974b993f966d38739a1a671c0f9b": "xyxy_norm1000",
    # gemini: box_2d [ymin, xmin, ymax, xmax] in 0..1000.
    "35c13b731fc279d529ae578b60c9c2d4f57728b4b1d087110f2492d61839a218": "protocol",
    # gpt-4o: {"boxes": [[x1, y1, x2, y2]]} in 0..1000.
    "959e0e774eaa4df31c50e38b20f4ba0b9ad73f881a92a1b9e0524e2d1039905d": "xyxy_norm1000",
    # llava: bare [x1, y1, x2, y2] in 0..1.
    "f253b18f962e6c52ec9e79d6a831551104a7472580972d13af8ccd8ea4041cd0": "xyxy_norm1",
}


@dataclass(frozen=True)
class TaskPrompt:
    """A prompt for one task, with a name and the hash of its text.

    Attributes:
        task: ``"localization"``, ``"captioning"`` or ``"diagnosis"``.
        text: the prompt text (for diagnosis, a template with placeholders).
        name: ``"default"`` for the built-in prompt, else the file it was read from.
        sha256: hex SHA-256 of ``text`` as computed by :func:`prompt_hash`.

    Example:
        >>> prompt = TaskPrompt.from_text("captioning", "Describe this MRI slice.", name="mine")
        >>> prompt.sha256 == prompt_hash("Describe this MRI slice.")
        True
    """

    task: str
    text: str
    name: str
    sha256: str

    @classmethod
    def from_text(cls, task: str, text: str, *, name: str = "custom") -> TaskPrompt:
        """Build a validated prompt from text held in memory.

        Args:
            task: the task name (aliases such as ``"localisation"`` are accepted).
            text: the prompt text; a diagnosis template needs both placeholders.
            name: a name recorded with the prompt (shown in reports).

        Returns:
            The prompt with its hash.

        Raises:
            NovaInputError: unknown task, empty text, or a diagnosis template
                without ``{clinical_history}`` or ``{findings}``.

        Example:
            >>> TaskPrompt.from_text("localisation", "Find lesions.").task
            'localization'
        """
        canonical = _canonical_task(task)
        _validate_text(canonical, text, source=name)
        return cls(task=canonical, text=text, name=name, sha256=prompt_hash(text))

    @property
    def short_hash(self) -> str:
        """The first 12 hex digits of :attr:`sha256`, for tables and file names.

        Example:
            >>> len(default_prompt("captioning").short_hash)
            12
        """
        return self.sha256[:12]


def prompt_hash(text: str) -> str:
    """Return the hex SHA-256 of a prompt text.

    The text is encoded as UTF-8 after turning Windows (``\\r\\n``) and old Mac
    (``\\r``) line ends into ``\\n``, so the same prompt saved on any system
    hashes the same. Nothing else is normalised: any other edit changes the hash.

    Args:
        text: the prompt text.

    Returns:
        64 lowercase hex digits.

    Example:
        >>> prompt_hash("a\\r\\nb") == prompt_hash("a\\nb")
        True
        >>> prompt_hash("abc")[:16]
        'ba7816bf8f01cfea'
    """
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def prompt_box_convention(prompts: Mapping[str, Any] | None) -> str | None:
    """The box convention a run's localisation prompt asked for, from its manifest.

    Args:
        prompts: a run manifest's ``prompts`` (``{task: {"name": ..., "sha256": ...}}``).

    Returns:
        The convention of :data:`PROMPT_BOX_CONVENTIONS` for the recorded localisation
        prompt's hash; None when no localisation prompt is recorded or its hash is not in
        the table (a custom prompt).

    Example:
        >>> prompt = default_prompt("localization")
        >>> prompt_box_convention({"localization": {"name": "default", "sha256": prompt.sha256}})
        'protocol'
        >>> prompt_box_convention({"localization": {"name": "mine.txt", "sha256": "ab" * 32}}) is None
        True
    """
    # The table's prompts are those of the task whose prompt fixes its answers' box order.
    for task in tasks_where(lambda spec: spec.prompt_sets_box_order):
        recorded = (prompts or {}).get(task)
        if isinstance(recorded, Mapping):
            return PROMPT_BOX_CONVENTIONS.get(str(recorded.get("sha256")))
    return None


def prompt_box_order(prompts: Mapping[str, Any] | None) -> str | None:
    """What a run's manifest tells the box parser of the order its localisation prompt asked.

    Args:
        prompts: a run manifest's ``prompts`` (``{task: {"name": ..., "sha256": ...}}``).

    Returns:
        The convention :func:`prompt_box_convention` gives for a prompt the toolkit knows;
        ``CUSTOM_PROMPT`` (``"custom"``) for a recorded localisation prompt it does not know
        (a ``--prompt-file`` prompt, which may ask any order); None when no localisation
        prompt is recorded.

    Example:
        >>> prompt_box_order({"localization": {"name": "mine.txt", "sha256": "ab" * 32}})
        'custom'
        >>> prompt_box_order({"captioning": {"name": "default", "sha256": "cd" * 32}}) is None
        True
    """
    from novabench.run.defaults import CUSTOM_PROMPT

    known = prompt_box_convention(prompts)
    if known is not None:
        return known
    box_order_tasks = tasks_where(lambda spec: spec.prompt_sets_box_order)
    recorded = [(prompts or {}).get(task) for task in box_order_tasks]
    return CUSTOM_PROMPT if any(isinstance(one, Mapping) for one in recorded) else None


def default_prompt(task: str) -> TaskPrompt:
    """Return the built-in prompt of a task (the toolkit's own wording).

    Args:
        task: ``"localization"``, ``"captioning"`` or ``"diagnosis"`` (aliases
            ``"localisation"``, ``"caption"``, ``"reasoning"`` are accepted).

    Returns:
        The prompt, named ``"default"``.

    Raises:
        NovaInputError: the task is unknown.

    Example:
        >>> prompt = default_prompt("localization")
        >>> "no target" in prompt.text and "[ymin, xmin, ymax, xmax]" in prompt.text
        True
        >>> all(p in default_prompt("diagnosis").text for p in DIAGNOSIS_PLACEHOLDERS)
        True
    """
    canonical = _canonical_task(task)
    resource = resources.files("novabench").joinpath("resources")
    for part in registry.TASKS[canonical].prompt_resource.split("/"):
        resource = resource.joinpath(part)
    text = _strip_final_newlines(resource.read_text(encoding="utf-8"))
    return TaskPrompt(task=canonical, text=text, name="default", sha256=prompt_hash(text))


def load_prompt(task: str, path: str | Path | None = None) -> TaskPrompt:
    """Load a task prompt from a user file, or the default when ``path`` is None.

    Use this to run with another wording, for example the paper's official
    prompt. The file is read as UTF-8 (a byte-order mark is ignored) and final
    line ends are dropped; everything else is kept verbatim and hashed.

    Args:
        task: the task the prompt is for.
        path: a text file, or None for :func:`default_prompt`.

    Returns:
        The prompt, named after the file.

    Raises:
        NovaInputError: the task is unknown, the file is missing, unreadable or
            empty, or a diagnosis template lacks ``{clinical_history}`` or
            ``{findings}`` (the message names the file and the placeholder).

    Example:
        >>> import tempfile, os
        >>> folder = tempfile.mkdtemp()
        >>> path = os.path.join(folder, "dx.txt")
        >>> _ = open(path, "w").write("History: {clinical_history}\\nFindings: {findings}\\nJSON only.")
        >>> load_prompt("diagnosis", path).name.endswith("dx.txt")
        True
        >>> _ = open(path, "w").write("History: {clinical_history}")
        >>> try:
        ...     load_prompt("diagnosis", path)
        ... except NovaInputError as err:
        ...     print("{findings}" in str(err) and "dx.txt" in str(err))
        True
    """
    if path is None:
        return default_prompt(task)
    canonical = _canonical_task(task)
    file_path = Path(path)
    try:
        raw = file_path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise NovaInputError(
            f"{canonical} prompt file does not exist", source=str(file_path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise NovaInputError(
            f"cannot read the {canonical} prompt file as UTF-8 text: {exc}", source=str(file_path)
        ) from exc
    text = _strip_final_newlines(raw)
    _validate_text(canonical, text, source=str(file_path))
    return TaskPrompt(task=canonical, text=text, name=str(file_path), sha256=prompt_hash(text))


def render_diagnosis_prompt(
    prompt: TaskPrompt | str, clinical_history: str | None, captions: Sequence[str] | str
) -> str:
    """Fill a diagnosis template with a case's history and findings.

    The findings are the reference captions of the case's images, one numbered
    line per image (``Image 1: ...``). Only the two placeholders are replaced,
    so braces elsewhere in the template (such as the JSON example) stay as they
    are. A missing history or an empty caption list renders as ``(not provided)``.

    Args:
        prompt: a diagnosis :class:`TaskPrompt`, or a template string.
        clinical_history: the case's clinical history.
        captions: the captions of the case's images, in image order (a single
            string is taken as one caption).

    Returns:
        The prompt text to send to the model.

    Raises:
        NovaInputError: the prompt is for another task or lacks a placeholder.

    Example:
        >>> text = render_diagnosis_prompt(
        ...     "H: {clinical_history}\\nF:\\n{findings}", "45-year-old, seizures.",
        ...     ["Axial FLAIR: right temporal hyperintensity.", "Coronal T1: no enhancement."])
        >>> print(text)
        H: 45-year-old, seizures.
        F:
        Image 1: Axial FLAIR: right temporal hyperintensity.
        Image 2: Coronal T1: no enhancement.
    """
    if isinstance(prompt, TaskPrompt):
        if behaviour(prompt.task).prompt_placeholders != DIAGNOSIS_PLACEHOLDERS:
            raise NovaInputError(
                f"render_diagnosis_prompt needs a diagnosis prompt, got a {prompt.task} prompt",
                source=prompt.name,
            )
        template = prompt.text
    else:
        template = str(prompt)
        _validate_text(DIAGNOSIS.task, template, source="template string")

    history = (clinical_history or "").strip() or _MISSING_TEXT
    caption_list = [captions] if isinstance(captions, str) else list(captions)
    lines = [
        f"Image {number}: {' '.join(str(caption).split()) or _MISSING_TEXT}"
        for number, caption in enumerate(caption_list, start=1)
    ]
    findings = "\n".join(lines) if lines else _MISSING_TEXT
    values = {"clinical_history": history, "findings": findings}
    return _PLACEHOLDER_PATTERN.sub(lambda match: values[match.group(1)], template)


def _canonical_task(task: str) -> str:
    return registry.canonical_task(task)


def _validate_text(task: str, text: str, *, source: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise NovaInputError(f"the {task} prompt is empty", source=source)
    placeholders = behaviour(task).prompt_placeholders
    missing = [p for p in placeholders if p not in text]
    if missing:
        every = "both " if len(placeholders) == 2 else ""
        raise NovaInputError(
            f"the {task} prompt template lacks the placeholder(s) {', '.join(missing)}; "
            f"it needs {every}{' and '.join(placeholders)}",
            source=source,
        )


def _strip_final_newlines(text: str) -> str:
    return text.rstrip("\r\n")
