"""Run a model (or a baseline) over a release and write its raw answers, resumably.

:func:`run_model` asks a :class:`~novabench.run.backends.Backend` every pending question of
the chosen tasks and appends one JSON line per answered item to the output file as soon as
the answer arrives (so answers may be out of release order; readers key them by item)::

    {"filename": "case0001_001.png", "task": "localization", "raw_boxes": "...",
     "input_size": [480, 480], "latency_s": 0.41, "model": "..."}
    {"case_id": "case0001", "task": "diagnosis", "raw_diagnoses": "...", "latency_s": 0.9, "model": "..."}
    {"filename": "case0002_001.png", "task": "captioning", "error": "HTTP 500 ...", "model": "..."}
    {"filename": "case0003_001.png", "task": "captioning", "raw_caption": "<first 64 KiB>",
     "raw_truncated_from": 52428800, "model": "..."}

Localisation and captioning are asked per image with the image; diagnosis per case, as
text only: the case's clinical history plus its reference captions as the MRI findings
(the NOVA protocol). Answers are parsed later (``nova parse`` /
:func:`novabench.run.predictions.parse_raw`), so a better parser never needs a rerun.

A backend that answers one request at a time from many threads (the endpoint backend:
``answer`` + ``max_concurrency``) is driven as a continuous pool: ``max_concurrency``
requests are in flight at all times, over all tasks, with no batch waiting for its slowest
member; each worker thread builds its request (reads the image) and sends it. Other
backends get ``generate`` calls of ``batch_size`` requests.

Guarantees:

- bounded answers: an answer longer than ``registry.MAX_RAW_ANSWER_CHARS`` (a runaway
  generation, a hostile server) is stored as that prefix with its original length in
  ``raw_truncated_from``; the item is parsed as ``too_long`` and counted in the summary and
  the manifest (``too_long``). Shorter answers are stored exactly as received. Every
  backend's answers take this one path (:func:`_answer_line`);
- nothing finished is lost: each answer is written and flushed as it arrives, so a kill
  loses only the requests in flight;
- early stop: when a failure is one every request would get (the server cannot be
  reached, connecting times out, or it answers HTTP 401/403/404;
  :func:`novabench.client.endpoint_problem`; a Python function raises what every call would,
  such as a ``NameError``: ``novabench.evaluator.function_cannot_run``; either way the
  backend sets ``Answer.endpoint_problem``) and nothing has been answered yet in this
  call, no further item is asked: the items in flight end and are recorded, and
  :class:`EndpointUnusableError` says why. A backend with ``failures_before_stop`` (a
  Python function: ``novabench.evaluator.FUNCTION_FAILURES_BEFORE_STOP``; an endpoint:
  ``backends.ENDPOINT_SERVER_ERRORS_BEFORE_STOP``) also stops so when that many items,
  none of which failed in an earlier call, fail with nothing answered: in any way, or in
  the ways its ``counts_towards_stop(answer)`` says (an endpoint: HTTP 5xx). After a first answer, failures never stop a run (every item is tried
  and its failure recorded);
- resume: a rerun with the same output skips what is already answered and retries the
  items that failed; a last line cut off by a crash is set aside (saved next to the output)
  and the file repaired, with every complete line kept, and one
  :class:`~novabench.errors.FileNoteWarning` says where at once (``nova run`` prints it as
  a ``nova:`` line), however the run then ends;
- one configuration per file: the manifest ``<out>.manifest.json`` records the backend
  (model id, revision, generation settings), the prompts (name and SHA-256), the box
  convention, the shard and the release fingerprint; resuming with a different
  configuration is refused. Where the server was (endpoint URL, port) and the library
  versions are recorded but not compared, so a run moved to another server resumes. A
  backend that describes its code by a digest (:data:`CODE_KEYS`: a Python function) is
  refused with its own message when only that digest changed, unless the caller lets the
  changed code resume (``resume_changed_code``): the manifest then lists each change
  (``code_changes``). A resume records in ``runtime.resumed`` how many answers came from
  the file and how many were asked in this call;
- sharding: ``shard=(i, n)`` keeps the items whose SHA-256 of the item id is ``i`` modulo
  ``n``, so n machines cover every item exactly once with no coordination.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from novabench import registry
from novabench._version import __version__
from novabench.errors import TASKS, NovaInputError, for_caller, note
from novabench.registry import CASE_TASKS, TASK_NAMES
from novabench.run.backends import Answer, Backend, Request
from novabench.run.lock import writer_lock
from novabench.run.manifest import (
    FILE_RECORD_FORMAT_VERSION,
    RAW_ANSWERS_FORMAT,
    RESUMED_TAIL_REASON,
    check_recorded_file,
    file_record,
    unverified_input,
)
from novabench.run.predictions import (
    TOKEN_LIMIT_FINISH,
    RunManifest,
    _append_line,
    backend_identity,
    cap_raw_answer,
    read_predictions,
    release_identity,
)

__all__ = [
    "CODE_KEYS",
    "RUNTIME_KEYS",
    "EndpointUnusableError",
    "ResumedRun",
    "RunPlan",
    "RunSummary",
    "execute_run",
    "in_shard",
    "parse_shard",
    "parse_tasks",
    "plan_run",
    "repair_partial_last_line",
    "resume_run",
    "run_model",
]

# Backend description keys that say how a run was executed, not what answered: they may
# differ between the shards of one run (one GPU each) and between a run and its resume.
RUNTIME_KEYS = frozenset(
    ("device", "device_map", "batch_size", "max_concurrency", "timeout_s", "max_retries")
)
#: Backend description keys that identify the code answering (a Python function's digest,
#: see ``novabench.evaluator.code_digest``): when only they differ on resume, the refusal
#: says the code changed, and ``resume_changed_code`` lets the run resume anyway.
CODE_KEYS = ("code_sha256", "code_seen")
#: Backend description keys that are settings of the same model, not another model: a
#: resume that changes only them is refused naming the setting (absent means "original").
BACKEND_SETTING_KEYS = ("input_size_rule",)


@dataclass
class RunSummary:
    """What a run did.

    Attributes:
        out_path: the predictions (raw answers) file.
        manifest_path: its manifest.
        counts: per task: ``items`` (in this shard, after ``limit``), ``done_before`` (found
            in the file), ``answered`` and ``errors`` (this call), and ``too_long`` (answered
            this call but beyond ``registry.MAX_RAW_ANSWER_CHARS``, so stored cut; these are
            among ``answered`` and score as failures), and ``hit_token_limit`` (answered this
            call, but the server said the answer stopped at the length limit:
            ``finish_reason`` ``length`` on the line; these may be cut off), and
            ``finish_unknown`` (answered this call by a backend that did not tell why the
            model stopped: whether these reached the length limit is not known).
        repaired_fragment: where a cut-off last line was saved, when one was found.
        elapsed_s: wall time of this call.
        asking_s: wall time from the first question to the last answer (``elapsed_s`` less
            reading the file, fingerprinting the release and writing the manifest).
        resumed: the file held answer lines (or failures) of an earlier call.
        code_changed: the file's answers were asked by other code (a resume allowed with
            ``resume_changed_code``): the file now mixes answers of two versions.
        answers_in_file: per task, the answers the file held before this call (failures
            not counted), items beyond ``limit`` included: what a score of the file reads
            besides this call's answers.
        token_limit_in_file: per task, those of them that stopped at the answer length
            limit (``finish_reason`` ``length`` on their lines).
    """

    out_path: Path
    manifest_path: Path
    counts: dict[str, dict[str, int]]
    repaired_fragment: Path | None = None
    elapsed_s: float = 0.0
    tasks: tuple[str, ...] = field(default_factory=tuple)
    asking_s: float = 0.0
    resumed: bool = False
    code_changed: bool = False
    answers_in_file: dict[str, int] = field(default_factory=dict)
    token_limit_in_file: dict[str, int] = field(default_factory=dict)

    @property
    def n_from_file(self) -> int:
        """Answers the file held before this call, over this call's tasks."""
        return sum(self.answers_in_file.values())

    @property
    def n_asked(self) -> int:
        """Items asked in this call, answered or failed (all tasks)."""
        return sum(c["answered"] + c["errors"] for c in self.counts.values())

    @property
    def n_answered(self) -> int:
        """Items answered by this call, over all tasks."""
        return sum(c["answered"] for c in self.counts.values())

    @property
    def n_errors(self) -> int:
        """Items whose model call failed in this call (rerun to retry them)."""
        return sum(c["errors"] for c in self.counts.values())

    @property
    def n_too_long(self) -> int:
        """Answers of this call stored cut at ``registry.MAX_RAW_ANSWER_CHARS`` (over all tasks)."""
        return sum(c.get("too_long", 0) for c in self.counts.values())

    @property
    def n_hit_token_limit(self) -> int:
        """Answers of this call that stopped at the answer length limit (``finish_reason``
        ``length``): they may be cut off (over all tasks)."""
        return sum(c.get("hit_token_limit", 0) for c in self.counts.values())

    @property
    def n_hit_token_limit_before(self) -> int:
        """Answers of earlier calls, kept in the file, that stopped at the answer length
        limit: a resumed file's reports count them beside this call's."""
        return sum(self.token_limit_in_file.values())

    @property
    def complete(self) -> bool:
        """True when every item of every task has an answer in the file."""
        return all(c["done_before"] + c["answered"] == c["items"] for c in self.counts.values())


class EndpointUnusableError(NovaInputError):
    """A run stopped early: every request failed in a way every other one would too.

    Raised by :func:`run_model` when the backend reports a failure shared by all requests
    (an unreachable server, HTTP 401/403/404; a Python function whose code cannot run, such
    as a ``NameError``: ``novabench.evaluator.function_cannot_run``) before anything was
    answered in this call.
    What was asked is recorded in the output file as failures, so a rerun asks it again.

    Args:
        problem: the cause, naming the endpoint (``Answer.endpoint_problem``).
        summary: what the run did before it stopped.

    Example:
        >>> summary = RunSummary(Path("raw.jsonl"), Path("raw.jsonl.manifest.json"),
        ...     {"diagnosis": {"items": 40, "done_before": 0, "answered": 0, "errors": 2}})
        >>> print(EndpointUnusableError("cannot reach http://h:9/v1/chat/completions: "
        ...                             "connection refused", summary))
        cannot reach http://h:9/v1/chat/completions: connection refused; nothing was answered, \
so the run stopped after 2 of 40 items (recorded as failures in raw.jsonl); fix it and run \
the same command again
    """

    def __init__(self, problem: str, summary: RunSummary) -> None:
        self.problem = problem
        self.summary = summary
        tried = summary.n_errors
        pending = sum(c["items"] - c["done_before"] for c in summary.counts.values())
        super().__init__(
            f"{problem}; nothing was answered, so the run stopped after {tried} of {pending} "
            f"item{'' if pending == 1 else 's'} (recorded as failures in {summary.out_path}); "
            "fix it and run the same command again"
        )


def parse_tasks(tasks: str | Sequence[str]) -> tuple[str, ...]:
    """Normalise ``"all"``, one task or several into canonical task names, in toolkit order.

    Example:
        >>> parse_tasks("all")
        ('localization', 'captioning', 'diagnosis')
        >>> parse_tasks(["diagnosis", "localisation"])
        ('localization', 'diagnosis')
    """
    names = [tasks] if isinstance(tasks, str) else list(tasks)
    if not names:
        raise NovaInputError("no task given", field="tasks")
    chosen: set[str] = set()
    for name in names:
        if name == registry.ALL_TASKS:
            chosen.update(TASK_NAMES)
            continue
        try:  # aliases such as "localisation" are the registry's to define
            chosen.add(registry.canonical_task(name))
        except NovaInputError as error:
            raise NovaInputError(error.message, field="tasks") from None
    return tuple(task for task in TASK_NAMES if task in chosen)


def parse_shard(text: str | Sequence[int] | None) -> tuple[int, int] | None:
    """Read ``"i/n"`` (or ``(i, n)``) into a checked shard, 0 <= i < n.

    Example:
        >>> parse_shard("1/4")
        (1, 4)
        >>> parse_shard(None) is None
        True
    """
    if text is None:
        return None
    try:
        if isinstance(text, str):
            index_text, count_text = text.split("/")
            index, count = int(index_text), int(count_text)
        else:
            index, count = (int(v) for v in text)
    except (ValueError, TypeError):
        raise NovaInputError(
            f"a shard is written i/n, e.g. 0/4; got {text!r}", field="shard"
        ) from None
    if count < 1 or not 0 <= index < count:
        raise NovaInputError(f"a shard i/n needs 0 <= i < n; got {index}/{count}", field="shard")
    return index, count


def in_shard(item_id: str, shard: tuple[int, int] | None) -> bool:
    """True when ``item_id`` belongs to ``shard``; stable across machines and Python runs.

    Example:
        >>> ids = [f"case{i:04d}_001.png" for i in range(1, 50)]
        >>> sum(in_shard(i, (0, 3)) + in_shard(i, (1, 3)) + in_shard(i, (2, 3)) for i in ids)
        49
    """
    if shard is None:
        return True
    index, count = shard
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count == index


def repair_partial_last_line(path: str | os.PathLike) -> Path | None:
    """Make ``path`` end at a complete line, keeping whatever a crash left half-written.

    A last line without its newline is either complete JSON (the newline is added) or a
    fragment: the fragment is saved to ``<path>.partial-<UTC time>`` and cut from the file.
    Complete lines are never touched.

    Returns:
        The file holding the fragment, or None when nothing was cut.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> _ = path.write_text('{"case_id": "case0001", "raw_diagnoses": "x"}\\n{"case_id": "ca')
        >>> saved = repair_partial_last_line(path)
        >>> path.read_text(), saved.read_text()
        ('{"case_id": "case0001", "raw_diagnoses": "x"}\\n', '{"case_id": "ca')
    """
    import json

    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with path.open("rb") as handle:
        data = handle.read()
    if data.endswith(b"\n"):
        return None
    cut = data.rfind(b"\n") + 1  # 0 when the file holds a single partial line
    fragment = data[cut:]
    try:
        json.loads(fragment.decode("utf-8"))
        complete = True
    except (UnicodeDecodeError, json.JSONDecodeError):
        complete = False
    if complete:
        with path.open("ab") as handle:
            handle.write(b"\n")
        return None
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    saved = path.with_name(f"{path.name}.partial-{stamp}")
    saved.write_bytes(fragment)
    with path.open("r+b") as handle:
        handle.truncate(cut)
    return saved


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _resolve_prompts(tasks: Sequence[str], prompts: Mapping[str, Any] | None) -> dict[str, Any]:
    """The prompt of each task: given (TaskPrompt or a file path) or the default."""
    from novabench.run.prompts import TaskPrompt, default_prompt, load_prompt

    given: dict[str, Any] = {}
    for task, prompt in (prompts or {}).items():
        canonical = parse_tasks(task)[0] if task != "all" else task
        given[canonical] = prompt
    unknown = sorted(set(given) - set(tasks))
    if unknown:
        raise NovaInputError(
            f"a prompt was given for {unknown[0]!r}, which this run does not ask", field="prompts"
        )
    resolved: dict[str, Any] = {}
    for task in tasks:
        prompt = given.get(task)
        if prompt is None:
            resolved[task] = default_prompt(task)
        elif isinstance(prompt, TaskPrompt):
            if prompt.task != task:
                raise NovaInputError(
                    f"the prompt given for {task} is a {prompt.task} prompt", field="prompts"
                )
            resolved[task] = prompt
        else:
            resolved[task] = load_prompt(task, prompt)
    return resolved


def _split_description(description: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what answered, how it ran): the second part may differ between shards and resumes."""
    what = {k: v for k, v in description.items() if k not in RUNTIME_KEYS}
    how = {k: v for k, v in description.items() if k in RUNTIME_KEYS}
    return what, how


def _task_settings(
    tasks: Sequence[str],
    generation: Any,
    box_convention: str | None,
    preset: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """How each task was asked beyond its prompt: generation settings, the preset (None:
    none), and the box convention for the tasks whose answers are boxes."""
    settings: dict[str, dict[str, Any]] = {}
    for task in tasks:
        entry: dict[str, Any] = {"generation": generation}
        if preset is not None:  # absent: no preset (as in files written before presets)
            entry["preset"] = preset.get("name")
        if "input_size" in registry.TASKS[task].extra_fields:  # answers in pixels: boxes
            entry["box_convention"] = box_convention
        settings[task] = entry
    return settings


def _recorded_task_settings(manifest: RunManifest) -> dict[str, dict[str, Any]]:
    """A file's per-task settings; a manifest from before they were recorded applied its one
    generation and box convention to every task it lists."""
    if isinstance(manifest.task_settings, dict):
        return {str(k): dict(v) for k, v in manifest.task_settings.items() if isinstance(v, dict)}
    return _task_settings(
        [t for t in manifest.tasks or [] if t in registry.TASKS],
        manifest.generation,
        manifest.box_convention,
    )


#: What ``nova run`` would do through a link given as its answers file or their manifest.
_APPENDED_THROUGH_LINK = (
    "nova run appends its answers through a link but writes the run manifest beside the link "
    "as a new file renamed into place, so the answers and their manifest would part"
)


def check_run_output_links(out_path: str | os.PathLike[str], field: Any = "out_path") -> None:
    """Refuse a run's answers file, or the manifest beside it, that is a symbolic link.

    Args:
        out_path: the raw-answers file a run appends to.
        field: the setting that gave it, as the refusal names it (``--out``, ``run_file``).

    Raises:
        NovaInputError: one line naming the link, the setting and where the link points.

    Example:
        >>> import os, tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> os.symlink("runs/model.jsonl", folder / "latest.jsonl")
        >>> check_run_output_links(folder / "latest.jsonl", "--out")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ...latest.jsonl, field '--out': is a symbolic link (to runs/model.jsonl): nova run appends ...
        >>> check_run_output_links(folder / "new.jsonl", "--out") is None
        True
    """
    from novabench._files import link_output_refusal
    from novabench.run.manifest import RunManifest

    out = Path(out_path)
    for path, name in ((out, field), (RunManifest.path_for(out), f"{field} (its manifest)")):
        refusal = link_output_refusal(path, name, why=_APPENDED_THROUGH_LINK)
        if refusal is not None:
            raise refusal


def _refuse_parse_output(out: Path, existing: RunManifest | None) -> None:
    """Refuse a ``nova parse`` output (its manifest has ``parsed``) as a run's output file.

    Appending raw answers to it would mix answers read with the parse's box convention and
    raw ones read later with another, and rewriting its manifest would lose the parse's
    record; so the file and its manifest are left as they are.
    """
    if existing is None or existing.parsed is None:
        return
    raw = existing.parsed.get("from") if isinstance(existing.parsed, dict) else None
    raw_file = f"the raw answers file ({raw})" if raw else "the raw answers file"
    raise NovaInputError(
        f"is a `nova parse` output (its manifest records the parse); a run appends raw "
        f"answers only to a raw answers file: run on {raw_file}, then parse it again",
        source=str(out),
    )


def _check_resumable(
    existing: RunManifest,
    manifest: RunManifest,
    path: Path,
    *,
    resume_changed_code: bool = False,
    file_has_answers: Callable[[], bool] = lambda: True,
) -> bool:
    """Refuse to append answers of another configuration to a file.

    The release is compared by content (fingerprint and counts), not by layout: the same
    data read from the official folder or from its ``nova export`` may resume each other.
    What is set per task (prompt, generation settings, box convention) is compared only for
    the tasks both the file and this call answer: another task may be asked its own way.
    A backend whose description differs only in its code digest (:data:`CODE_KEYS`) is
    refused as changed code, or let through with ``resume_changed_code``; but a file with
    no answer (``file_has_answers``: only failures, which a resume asks again) holds
    nothing of the old code and is resumed by the new one as it is.
    A backend that differs only in a setting (:data:`BACKEND_SETTING_KEYS`, such as the
    input-size rule) is refused naming that setting, old and new.

    Returns:
        True when only the code digest differs, the file holds answers and
        ``resume_changed_code`` let it through.
    """
    code_changed = False
    for key in ("backend", "shard", "release"):
        old, new = getattr(existing, key), getattr(manifest, key)
        if key == "release":
            old, new = release_identity(old), release_identity(new)
        elif key == "backend":  # the endpoint URL and library versions may change
            old, new = _without_generation(old), _without_generation(new)
            if old != new and _without_code(old) == _without_code(new):
                if not file_has_answers():  # only failures of the old code: nothing to mix
                    continue
                if not resume_changed_code:
                    raise NovaInputError(
                        _code_change_words(existing.backend, manifest.backend)
                        + "; write to a new output file",
                        source=str(path),
                        field="backend.code_sha256",
                    )
                code_changed = True
                continue
            changed = _changed_settings(old, new)
            if changed:
                setting, before, now = changed[0]
                raise NovaInputError(
                    f"the answers in the file were asked with another {setting.replace('_', ' ')} "
                    f"({before!r} now {now!r}); write to a new output file",
                    source=str(path),
                    field=f"backend.{setting}",
                )
        if old != new:
            raise NovaInputError(
                "the file was written by a different configuration "
                f"({key}: {getattr(existing, key)!r} now {getattr(manifest, key)!r}); "
                "write to a new output file",
                source=str(path),
                field=key,
            )
    # A preset is a name for settings: what is compared is what each task was asked with
    # (prompt text, generation settings, box convention), never the name alone.
    old_settings = _recorded_task_settings(existing)
    old_prompts, new_prompts = existing.prompts or {}, manifest.prompts or {}
    for task, settings in (manifest.task_settings or {}).items():
        if task not in old_settings:
            continue
        differences: list[tuple[str, str, Any, Any]] = []
        before_prompt, now_prompt = old_prompts.get(task), new_prompts.get(task)
        if before_prompt and now_prompt and before_prompt.get("sha256") != now_prompt.get("sha256"):
            names = (before_prompt.get("name"), now_prompt.get("name"))
            differences.append(("prompt", f"prompts.{task}", *names))
        for key, value in settings.items():
            if key != "preset" and key in old_settings[task] and old_settings[task][key] != value:
                differences.append(
                    (key, f"task_settings.{task}.{key}", old_settings[task][key], value)
                )
        if not differences:
            continue
        what, field, before, now = differences[0]
        old_preset, new_preset = old_settings[task].get("preset"), settings.get("preset")
        presets = (
            ""
            if old_preset == new_preset
            else f" ({_preset_words(old_preset)}; this run uses {_preset_words(new_preset)})"
        )
        raise NovaInputError(
            f"the {task} answers in the file were asked with another {what}{presets}: "
            f"{before!r} now {now!r}; write to a new output file",
            source=str(path),
            field=field,
        )
    old_prompts = existing.prompts or {}
    for task, prompt in (manifest.prompts or {}).items():
        if task in old_prompts and old_prompts[task].get("sha256") != prompt.get("sha256"):
            raise NovaInputError(
                f"the {task} answers in the file were asked with another prompt "
                f"({old_prompts[task].get('name')}); write to a new output file",
                source=str(path),
                field=f"prompts.{task}",
            )
    return code_changed


def _changed_settings(old: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """``(key, old, new)`` for each :data:`BACKEND_SETTING_KEYS` entry that differs, when
    nothing else does (code digests aside); else ``[]`` (another model: its own refusal)."""
    if not (isinstance(old, Mapping) and isinstance(new, Mapping)):
        return []
    ignored = (*CODE_KEYS, *BACKEND_SETTING_KEYS)
    if {k: v for k, v in old.items() if k not in ignored} != {
        k: v for k, v in new.items() if k not in ignored
    }:
        return []
    return [
        (key, old.get(key, "original"), new.get(key, "original"))
        for key in BACKEND_SETTING_KEYS
        if old.get(key, "original") != new.get(key, "original")
    ]


def _without_code(backend: Any) -> Any:
    if isinstance(backend, Mapping):
        return {k: v for k, v in backend.items() if k not in CODE_KEYS}
    return backend


def _code_change_words(old: Any, new: Any) -> str:
    """The code change between two backend entries in a reader's words (function, digests)."""
    name = new.get("function") or new.get("model") or "the backend"
    before = old.get("code_sha256") if isinstance(old, Mapping) else None
    now = new.get("code_sha256")
    if before is None:
        return (
            f"the answers in the file were asked by {name} with no digest of its code recorded "
            f"(an older novabench), so whether its code changed is unknown (now {str(now)[:12]})"
        )
    return (
        f"the code of {name} changed since the answers in the file were asked (code digest "
        f"{str(before)[:12]} now {str(now)[:12]})"
    )


def _keep_recorded_box_convention(
    existing: RunManifest, manifest: RunManifest, preset: Mapping[str, Any] | None
) -> str | None:
    """Keep a file's box convention when only a preset's own one differs; say so, or None.

    The default prompts asked with the default generation settings are what the
    ``nova-protocol`` preset asks, so its run resumes a default run; but the default run
    records ``auto`` and the preset ``protocol``, and the file's earlier answers would then
    be read another way without anyone choosing it. A convention given explicitly (the
    preset record lists it as overridden) is compared as any setting and refused if it
    differs; so is everything when the prompt or generation settings differ.
    """
    if preset is None or "box_convention" in (preset.get("overridden") or ()):
        return None
    old_settings = _recorded_task_settings(existing)
    old_prompts, new_prompts = existing.prompts or {}, manifest.prompts or {}
    kept: dict[str, Any] = {}
    for task, settings in (manifest.task_settings or {}).items():
        before = old_settings.get(task, {})
        if "box_convention" not in settings or "box_convention" not in before:
            continue
        if before["box_convention"] == settings["box_convention"]:
            continue
        same_prompt = (old_prompts.get(task) or {}).get("sha256") == (
            new_prompts.get(task) or {}
        ).get("sha256")
        if not same_prompt or before.get("generation") != settings.get("generation"):
            return None  # asked otherwise: the refusal names what differs
        kept[task] = before["box_convention"]
    if not kept:
        return None
    for task, convention in kept.items():
        (manifest.task_settings or {})[task]["box_convention"] = convention
    manifest.box_convention = existing.box_convention
    if isinstance(manifest.extra.get("preset"), dict):  # the record says the file kept it
        manifest.extra["preset"] = {
            **manifest.extra["preset"],
            "kept_from_file": ["box_convention"],
        }
    conventions = ", ".join(f"{c} ({t})" for t, c in kept.items())
    return (
        f"the preset {preset.get('name')!r} asks as its answers were asked (the same prompts "
        f"and generation settings); they keep the box convention recorded, {conventions}, "
        "not the preset's, so their reading does not change (--box-convention chooses)"
    )


def _preset_words(name: Any) -> str:
    return "no preset" if name is None else f"the preset {name!r}"


def _without_generation(backend: Any) -> Any:
    """A backend entry as compared on resume: its generation settings are per task."""
    identity = backend_identity(backend)
    if isinstance(identity, Mapping):
        return {k: v for k, v in identity.items() if k != "generation"}
    return identity


def _join_task_settings(existing: RunManifest, manifest: RunManifest) -> None:
    """Keep every task's settings in the resumed file's manifest, not only this call's.

    Counts and per-task settings of the tasks this call did not run stay as recorded; the
    top-level ``box_convention`` stays the box task's; the top-level ``generation`` (and the
    backend's) is kept only while every task shares it.
    """
    joined = {**_recorded_task_settings(existing), **(manifest.task_settings or {})}
    manifest.task_settings = joined
    conventions = [s["box_convention"] for s in joined.values() if "box_convention" in s]
    if conventions:
        manifest.box_convention = conventions[0]
    generations = [s.get("generation") for s in joined.values()]
    if any(g != generations[0] for g in generations[1:]):
        manifest.generation = None  # differs per task: task_settings says which
        if isinstance(manifest.backend, dict):
            manifest.backend = {k: v for k, v in manifest.backend.items() if k != "generation"}


def _load_image(item: Any) -> Any:
    """An image record's PNG as RGB: its embedded bytes (a `nova export` folder), else its file."""
    import io

    from PIL import Image

    from novabench.data.pixels import to_rgb8

    data = getattr(item, "image_bytes", None)
    with Image.open(io.BytesIO(data) if data is not None else Path(item.image_path)) as image:
        return to_rgb8(image, source=str(item.image_path or "embedded image"), record=item.filename)


def _items(release: Any, task: str) -> list[Any]:
    return release.cases() if task in CASE_TASKS else list(release.images)


def _image_file_bytes(item: Any) -> bytes:
    """An image record's PNG file as stored: its embedded bytes (a `nova export`), else its file."""
    if callable(getattr(item, "read_bytes", None)):
        return bytes(item.read_bytes())
    data = getattr(item, "image_bytes", None)
    return bytes(data) if data is not None else Path(item.image_path).read_bytes()


def _request(task: str, item: Any, prompt: Any, *, as_png: bool = False) -> Request:
    """The question of ``task`` about one image or case (images are loaded here, lazily).

    With ``as_png`` the image goes as PNG bytes (the release's own when possible, see
    :func:`~novabench.run.backends.png_for_model`) instead of a decoded image.
    """
    if task in CASE_TASKS:
        from novabench.run.prompts import render_diagnosis_prompt

        findings = [caption for caption in item.captions if caption]
        return Request(
            item_id=item.case_id,
            task=task,
            prompt=render_diagnosis_prompt(prompt, item.clinical_history, findings),
            context={
                "case_id": item.case_id,
                "clinical_history": item.clinical_history,
                "findings": findings,
            },
        )
    context = {
        "filename": item.filename,
        "case_id": item.case_id,
        "width": item.width,
        "height": item.height,
    }
    if as_png:
        from novabench.run.backends import png_for_model

        source = str(item.image_path or "embedded image")
        png, encoding = png_for_model(_image_file_bytes(item), source=source, record=item.filename)
        return Request(
            item_id=item.filename,
            task=task,
            prompt=prompt.text,
            context=context,
            image_png=png,
            image_encoding=encoding,
        )
    return Request(
        item_id=item.filename,
        task=task,
        prompt=prompt.text,
        image=_load_image(item),
        context=context,
    )


def _answer_line(request: Request, answer: Answer, model: str) -> dict[str, Any]:
    spec = registry.TASKS[request.task]
    line: dict[str, Any] = {spec.key_field: request.item_id, "task": request.task}
    if answer.error is not None or answer.text is None:
        line["error"] = answer.error or "the backend returned no text"
    else:
        line[spec.raw_field], truncated_from = cap_raw_answer(answer.text)
        if truncated_from is not None:
            line["raw_truncated_from"] = truncated_from
        if answer.finish_reason == TOKEN_LIMIT_FINISH:  # the answer may be cut off: say so
            line["finish_reason"] = answer.finish_reason
        if "input_size" in spec.extra_fields:  # the size the model saw, to rescale its boxes
            size = answer.input_size or request.image_size
            if size is not None:
                line["input_size"] = [int(size[0]), int(size[1])]
    if answer.latency_s is not None:
        line["latency_s"] = round(float(answer.latency_s), 4)
    line["model"] = model
    return line


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _pooled(backend: Any) -> bool:
    """Whether ``backend`` answers single requests from many threads (see the module doc)."""
    concurrency = getattr(backend, "max_concurrency", None)
    return callable(getattr(backend, "answer", None)) and isinstance(concurrency, int)


def _ask_in_pool(
    jobs: Iterator[tuple[str, Any]],
    ask: Callable[[str, Any], tuple[Request, Answer]],
    concurrency: int,
    record: Callable[[Request, Answer], None],
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Keep ``concurrency`` jobs in flight until none is left; ``record`` each as it ends.

    ``concurrency`` worker threads each take the next job, ask it and record the answer
    themselves (under one lock, in completion order), so an answer costs no hand-over to
    another thread. The first exception (a job's or ``record``'s) stops the workers taking
    new jobs and is raised here once the jobs in flight have ended. While ``stop()`` (asked
    under the same lock) is true, workers take no new job either; the jobs in flight end
    and are recorded.
    """
    lock = threading.Lock()
    failures: list[BaseException] = []

    def work() -> None:
        while True:
            with lock:
                if failures or stop():
                    return
                job = next(jobs, None)
            if job is None:
                return
            try:
                request, answer = ask(*job)
                with lock:
                    record(request, answer)
            except BaseException as error:  # handed to the calling thread
                with lock:
                    failures.append(error)
                return

    workers = [
        threading.Thread(target=for_caller(work), name=f"nova-run-{index}", daemon=True)
        for index in range(concurrency)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failures:
        raise failures[0]


@dataclass(frozen=True)
class RunPlan:
    """What a run asks, and how: its checked arguments, before any file is touched.

    Attributes:
        tasks: the tasks, in registry order.
        items: per task, the items of this shard (after ``limit``), in release order.
        prompts: per task, the :class:`~novabench.run.prompts.TaskPrompt` asked.
        shard: ``(i, n)``, or None for every item.
        batch_size: requests per ``backend.generate`` call (batched backends).
        box_convention: how ``nova parse`` should read localisation answers.
        limit: at most this many items per task, or None.
        preset: the preset record kept in the manifest, or None.
        pooled: the backend is driven as a continuous pool (see the module docstring).
        send_png: pooled requests carry PNG bytes rather than decoded images.
    """

    tasks: tuple[str, ...]
    items: dict[str, list[Any]]
    prompts: dict[str, Any]
    shard: tuple[int, int] | None
    batch_size: int
    box_convention: str
    limit: int | None
    preset: Mapping[str, Any] | None
    pooled: bool
    send_png: bool


def plan_run(
    release: Any,
    *,
    tasks: str | Sequence[str],
    backend: Backend,
    prompts: Mapping[str, Any] | None = None,
    shard: tuple[int, int] | str | None = None,
    batch_size: int | None = None,
    box_convention: str = "auto",
    limit: int | None = None,
    preset: Mapping[str, Any] | None = None,
) -> RunPlan:
    """Check a run's arguments and list what it asks (the first step of :func:`run_model`).

    Args:
        release: a ``NovaRelease`` (or any object with ``images`` and ``cases()``).
        tasks: ``"all"``, one task, or several.
        backend: the backend that will answer (its ``tasks``, ``batch_size``,
            ``answer``/``max_concurrency`` and ``accepts_png`` are read; it is not asked).
        prompts: ``{task: TaskPrompt or prompt file}``; the default prompt for the others.
        shard: ``(i, n)`` or ``"i/n"``.
        batch_size: requests per ``backend.generate`` call (default: the backend's own).
        box_convention: recorded for ``nova parse``; must be a known convention.
        limit: at most this many items per task (after sharding).
        preset: the preset record kept in the manifest.

    Returns:
        The :class:`RunPlan`.

    Raises:
        NovaInputError: an unknown task, shard or box convention, a task the backend does
            not answer, a negative limit, a batch size below 1, or a bad prompt.

    Example:
        >>> import types
        >>> case = types.SimpleNamespace(case_id="case0001", clinical_history="Headache.",
        ...                              captions=["Axial FLAIR: right frontal hyperintensity."])
        >>> release = types.SimpleNamespace(images=[], cases=lambda: [case])
        >>> class Echo:
        ...     name = "echo"
        ...     def generate(self, requests): return [Answer(text="Glioma.") for _ in requests]
        >>> plan = plan_run(release, tasks="diagnosis", backend=Echo())
        >>> plan.tasks, [item.case_id for item in plan.items["diagnosis"]], plan.pooled
        (('diagnosis',), ['case0001'], False)
    """
    chosen = parse_tasks(tasks)
    shard = parse_shard(shard)
    supported = getattr(backend, "tasks", None)
    if supported is not None and not set(chosen) <= set(supported):
        unsupported = [task for task in chosen if task not in supported]
        raise NovaInputError(
            (
                f"{backend.name} does not answer {', '.join(unsupported)} (it answers "
                f"{', '.join(supported)}); choose among those with ",
                TASKS,
                " or take another backend",
            ),
            field=TASKS,
        )
    from novabench.run.parsers import CONVENTIONS

    if box_convention not in CONVENTIONS:
        raise NovaInputError(
            f"box_convention={box_convention!r}: unknown box convention; choose one of "
            f"{', '.join(CONVENTIONS)}",
            field="box_convention",
        )
    if limit is not None and limit < 0:
        raise NovaInputError(f"limit must not be negative, got {limit}", field="limit")
    size = int(batch_size or getattr(backend, "batch_size", 1) or 1)
    if size < 1:
        raise NovaInputError(f"batch_size must be at least 1, got {size}", field="batch_size")
    resolved_prompts = _resolve_prompts(chosen, prompts)
    items: dict[str, list[Any]] = {}
    for task in chosen:
        key_field = registry.TASKS[task].key_field  # the item's own attribute of that name
        in_this_shard = [
            item for item in _items(release, task) if in_shard(getattr(item, key_field), shard)
        ]
        items[task] = in_this_shard if limit is None else in_this_shard[:limit]
    pooled = _pooled(backend)
    return RunPlan(
        tasks=chosen,
        items=items,
        prompts=resolved_prompts,
        shard=shard,
        batch_size=size,
        box_convention=box_convention,
        limit=limit,
        preset=preset,
        pooled=pooled,
        send_png=pooled and bool(getattr(backend, "accepts_png", False)),
    )


@dataclass
class ResumedRun:
    """Where a run starts: the output file's state, checked against the plan.

    Attributes:
        out_path: the raw-answers file.
        manifest: the manifest this call writes (joined with the file's on resume).
        pending: per task, the planned items without an answer in the file yet.
        counts: per task, the :class:`RunSummary` counts (``answered``/``errors`` at 0).
        earlier_counts: the file's recorded counts (kept for tasks this call does not run).
        image_encodings: how images were sent, over the file's earlier calls (grows as
            this call sends PNGs; the manifest holds it when ``send_png``).
        model_label: the name written on every answer line.
        repaired_fragment: where a cut-off last line was saved, if one was found.
        resumed: the file held lines of an earlier call.
        code_changed: the file's answers were asked by other code, let through with
            ``resume_changed_code`` (recorded in the manifest's ``code_changes``, taken
            back when this call answers nothing: failures mix nothing).
        code_change: that ``code_changes`` entry (in the manifest while this call runs).
        code_before: the file's backend entry before that change, which the manifest
            keeps when this call answers nothing.
        failed_before: per task, the items whose only lines in the file are failures
            (asked again now; they do not count towards a function's early stop).
        answers_in_file: per task of the plan, the answers the file already held.
        token_limit_in_file: per task of the plan, those that stopped at the answer length
            limit.
        unverified_from: bytes of the file its manifest could not vouch for when this call
            found it (a killed writer's lines past its last checkpoint, and what earlier
            calls recorded so): kept in every manifest this call writes.
    """

    #: Seconds between two checkpoints of a running file's digest in its manifest: a run
    #: killed meanwhile leaves at most this much of its answers unverifiable.
    CHECKPOINT_S: ClassVar[float] = 2.0

    out_path: Path
    manifest: RunManifest
    pending: dict[str, list[Any]]
    counts: dict[str, dict[str, int]]
    earlier_counts: dict[str, Any]
    image_encodings: Counter[str]
    model_label: str
    repaired_fragment: Path | None = None
    resumed: bool = False
    code_changed: bool = False
    code_change: dict[str, Any] | None = None
    code_before: dict[str, Any] | None = None
    answers_in_file: dict[str, int] = field(default_factory=dict)
    failed_before: dict[str, set[str]] = field(default_factory=dict)
    token_limit_in_file: dict[str, int] = field(default_factory=dict)
    unverified_from: list[dict[str, Any]] = field(default_factory=list)
    # The running digest of the file's bytes up to ``_hashed_bytes`` (checkpoints extend it).
    _hasher: Any = field(default=None, repr=False)
    _hashed_bytes: int = 0
    _checkpointed_at: float = 0.0

    def resuming_line(self) -> str:
        """What a resumed run takes from its file, said before the model is asked.

        Example:
            >>> from pathlib import Path
            >>> resumed = ResumedRun(Path("runs/x.jsonl"), RunManifest(), {"diagnosis": [1, 2]},
            ...     {}, {}, Counter(), "m", resumed=True, answers_in_file={"diagnosis": 1})
            >>> resumed.resuming_line()
            'resumed runs/x.jsonl: 1 answer from the file, 2 to ask now'
        """
        from_file = sum(self.answers_in_file.values())
        to_ask = sum(len(items) for items in self.pending.values())
        answers = f"{from_file} answer{'' if from_file == 1 else 's'}"
        return f"resumed {self.out_path}: {answers} from the file, {to_ask} to ask now"

    def save_manifest(self, status: str) -> Path:
        """Write the manifest with ``status`` and the counts so far; returns its path."""
        self.manifest.status, self.manifest.updated_at = status, _now()
        self.manifest.counts = {**self.earlier_counts, **self.counts}
        # The bytes written so far, so a reader can tell this file from an edited or
        # swapped one (while running: the bytes a reader's file must begin with).
        self.manifest.file = (
            file_record(self.out_path, self.unverified_from)
            if self.out_path.is_file()
            else {"sha256": hashlib.sha256(b"").hexdigest(), "bytes": 0}
        )
        self._hasher, self._hashed_bytes = None, 0
        self._checkpointed_at = time.monotonic()
        return self.manifest.write(self.out_path)

    def checkpoint(self, handle: Any, *, now: float | None = None) -> bool:
        """Record the bytes written so far in the ``running`` manifest, at most every
        :attr:`CHECKPOINT_S` seconds; returns whether it did.

        Called after each answer is appended: a run killed later leaves only the answers
        written since its last checkpoint unverifiable (a resume keeps them, recorded as
        such), not all of its call's. Only the bytes new since the last checkpoint are
        hashed.

        Example:
            >>> import pathlib, tempfile
            >>> out = pathlib.Path(tempfile.mkdtemp()) / "raw.jsonl"
            >>> resumed = ResumedRun(out, RunManifest(), {}, {}, {}, Counter(), "m")
            >>> _ = resumed.save_manifest("running")
            >>> with out.open("a", encoding="utf-8") as handle:
            ...     _ = handle.write('{"case_id": "case0001", "raw_diagnoses": "Glioma."}\\n')
            ...     resumed.checkpoint(handle, now=time.monotonic() + resumed.CHECKPOINT_S)
            True
            >>> RunManifest.read(out).file == file_record(out)
            True
        """
        now = time.monotonic() if now is None else now
        if now - self._checkpointed_at < self.CHECKPOINT_S:
            return False
        handle.flush()
        os.fsync(handle.fileno())  # the bytes on disk before a manifest that vouches for them
        if self._hasher is None:
            self._hasher, self._hashed_bytes = hashlib.sha256(), 0
        with open(self.out_path, "rb") as reader:
            reader.seek(self._hashed_bytes)
            for block in iter(lambda: reader.read(1 << 20), b""):
                self._hasher.update(block)
                self._hashed_bytes += len(block)
        record: dict[str, Any] = {
            "sha256": self._hasher.hexdigest(),
            "bytes": self._hashed_bytes,
        }
        if self.unverified_from:
            record["unverified_from"] = [dict(entry) for entry in self.unverified_from]
        self.manifest.file, self.manifest.updated_at = record, _now()
        self.manifest.counts = {**self.earlier_counts, **self.counts}
        self.manifest.write(self.out_path)
        self._checkpointed_at = now
        return True


def resume_run(
    plan: RunPlan,
    release: Any,
    backend: Backend,
    out_path: str | os.PathLike,
    *,
    resume_changed_code: bool = False,
) -> ResumedRun:
    """Read what ``out_path`` already answers and check it was asked the way ``plan`` asks.

    The second step of :func:`run_model`, to be called while holding
    :func:`~novabench.run.lock.writer_lock` on ``out_path``: a cut-off last line is set
    aside and the file repaired, its manifest compared with this call's configuration
    (backend, shard, release, per-task prompt, generation, box convention and preset), and
    the items answered without error are left out of ``pending``. Nothing is written but
    the repair.

    Args:
        plan: what :func:`plan_run` gave.
        release: the release the plan was made from.
        backend: the backend (its ``describe()`` is recorded and compared).
        out_path: the raw-answers file (need not exist).
        resume_changed_code: resume a file whose answers were asked by the same backend
            with other code (its :data:`CODE_KEYS` differ); the manifest records the change.

    Returns:
        The :class:`ResumedRun`.

    Raises:
        NovaInputError: the file has answers but no manifest, was written by another
            configuration (or by other code, without ``resume_changed_code``), or holds a
            line that cannot be read.

    Example:
        >>> import pathlib, tempfile, types
        >>> case = types.SimpleNamespace(case_id="case0001", clinical_history="Headache.",
        ...                              captions=["Axial FLAIR: right frontal hyperintensity."])
        >>> release = types.SimpleNamespace(images=[], cases=lambda: [case])
        >>> class Echo:
        ...     name = "echo"
        ...     def describe(self): return {"type": "test", "model": "echo"}
        ...     def generate(self, requests): return [Answer(text="Glioma.") for _ in requests]
        >>> plan = plan_run(release, tasks="diagnosis", backend=Echo())
        >>> resumed = resume_run(plan, release, Echo(), pathlib.Path(tempfile.mkdtemp()) / "raw.jsonl")
        >>> [item.case_id for item in resumed.pending["diagnosis"]], resumed.counts["diagnosis"]["done_before"]
        (['case0001'], 0)
    """
    out = Path(out_path)
    what, how = _split_description(backend.describe())
    release_info = {
        "layout": getattr(release, "layout", None),
        "n_images": len(release.images),
        "n_cases": len(release.cases()),
        "fingerprint": release.fingerprint() if hasattr(release, "fingerprint") else None,
    }
    shard = plan.shard
    manifest = RunManifest(
        format=RAW_ANSWERS_FORMAT,
        format_version=FILE_RECORD_FORMAT_VERSION,
        novabench_version=__version__,
        backend=what,
        model=getattr(backend, "display_name", None)
        or what.get("model", getattr(backend, "name", None)),
        revision=what.get("revision"),
        prompts={t: {"name": p.name, "sha256": p.sha256} for t, p in plan.prompts.items()},
        generation=what.get("generation"),
        box_convention=plan.box_convention,
        shard=None if shard is None else {"index": shard[0], "count": shard[1]},
        release=release_info,
        task_settings=_task_settings(
            plan.tasks, what.get("generation"), plan.box_convention, plan.preset
        ),
    )
    if plan.preset is not None:
        manifest.extra["preset"] = dict(plan.preset)

    # A parse output is refused before anything (the repair too) touches it.
    existing = RunManifest.read(out)
    _refuse_parse_output(out, existing)
    # Repair a crash's leftovers, check the configuration, collect what is done.
    repaired = repair_partial_last_line(out)
    if repaired is not None:  # said now: the run may yet stop (no server, Ctrl-C, a refusal)
        note(
            f"the cut-off last line of {out} (left by an interrupted writer) was set "
            f"aside in {repaired}; every complete line is kept"
        )
    has_lines = out.is_file() and out.stat().st_size > 0
    if has_lines and existing is None:
        raise NovaInputError(
            "exists and has no manifest, so it was not written by a run of this toolkit; choose a new output",
            source=str(out),
        )
    done: dict[str, set[str]] = {task: set() for task in TASK_NAMES}
    if existing is not None and not has_lines:
        existing = None  # a manifest without answers (file deleted, or a crash before any line)
    unverified_from: list[dict[str, Any]] = []
    if existing is not None:
        # Resuming an edited file would record the edit as the run's own answers.
        found = check_recorded_file(
            out, existing, advice="restore it as the run wrote it, or choose a new output"
        )
        # Lines a killed writer added after its last checkpoint are kept (refusing them
        # would make a crash unrecoverable) but stay unverified in every later record.
        unverified_from = unverified_input(found, reason=RESUMED_TAIL_REASON, resumed=True)
        if len(unverified_from) > len(found.unverified_from):
            added = unverified_from[-1]["bytes"]
            note(
                f"resuming {out}: its last {added:,} bytes were written after its "
                "manifest last recorded the file (a killed run): kept, and recorded as not "
                "verified in its manifest and every report"
            )
    code_changed = False
    code_change: dict[str, Any] | None = None
    old_code: dict[str, Any] = {}
    read: list[Any] = []  # the file's lines, read once, after the configuration check

    def previous_lines() -> Any:
        if not read:
            read.append(read_predictions(out, release) if has_lines else None)
        return read[0]

    def file_has_answers() -> bool:
        lines = previous_lines()
        return lines is not None and any(
            record.error is None for task in lines.records.values() for record in task.values()
        )

    if existing is not None:
        kept = _keep_recorded_box_convention(existing, manifest, plan.preset)
        if kept is not None:
            note(f"resuming {out}: {kept}")
        code_changed = _check_resumable(
            existing,
            manifest,
            RunManifest.path_for(out),
            resume_changed_code=resume_changed_code,
            file_has_answers=file_has_answers,
        )
        # Once two versions answered in one file, every later manifest says so.
        recorded = existing.extra.get("code_changes")
        changes = list(recorded) if isinstance(recorded, list) else []
        if code_changed:  # taken back by execute_run if this version answers nothing
            code_change = {
                "at": _now(),
                "code_sha256_before": (existing.backend or {}).get("code_sha256"),
                "code_sha256_after": what.get("code_sha256"),
            }
            changes.append(code_change)
            old_code = {key: (existing.backend or {}).get(key) for key in CODE_KEYS}
        if changes:
            manifest.extra["code_changes"] = changes
        manifest.prompts = {**(existing.prompts or {}), **(manifest.prompts or {})}
        _join_task_settings(existing, manifest)
        manifest.created_at = existing.created_at
    previous = previous_lines()
    failed_before: dict[str, set[str]] = {task: set() for task in TASK_NAMES}
    if previous is not None:
        for task in TASK_NAMES:
            done[task] = {
                key for key, record in previous.records[task].items() if record.error is None
            }
            failed_before[task] = set(previous.records[task]) - done[task]
    manifest.created_at = manifest.created_at or _now()
    manifest.runtime = {
        **how,
        "limit": plan.limit,
        "python": platform.python_version(),
    }
    # How the images of the whole file were sent, over this call and the earlier ones.
    image_encodings: Counter[str] = Counter()
    earlier_runtime = existing.runtime if existing is not None else None
    earlier = earlier_runtime.get("image_encoding") if isinstance(earlier_runtime, dict) else None
    if isinstance(earlier, dict):
        image_encodings.update(
            {str(k): v for k, v in earlier.items() if type(v) is int}  # a hand-edit is ignored
        )
    if plan.send_png:
        manifest.runtime["image_encoding"] = image_encodings
    earlier_endpoints = []
    if isinstance(earlier_runtime, dict) and isinstance(earlier_runtime.get("endpoints"), list):
        earlier_endpoints = list(earlier_runtime["endpoints"])
    old_endpoint = (existing.backend or {}).get("endpoint") if existing is not None else None
    endpoints = [e for e in [*earlier_endpoints, old_endpoint, what.get("endpoint")] if e]
    if len(set(endpoints)) > 1:  # a resumed run moved server: say where each part came from
        manifest.runtime["endpoints"] = list(dict.fromkeys(endpoints))

    pending: dict[str, list[Any]] = {}
    counts: dict[str, dict[str, int]] = {}
    for task in plan.tasks:
        key_field = registry.TASKS[task].key_field
        items = plan.items[task]
        todo = [item for item in items if getattr(item, key_field) not in done[task]]
        pending[task] = todo
        counts[task] = {
            "items": len(items),
            "done_before": len(items) - len(todo),
            "answered": 0,
            "errors": 0,
            "too_long": 0,
            "hit_token_limit": 0,
            "finish_unknown": 0,
        }
    manifest.tasks = sorted(
        set((existing.tasks or []) if existing else []) | set(plan.tasks), key=TASK_NAMES.index
    )
    # The name reports show (a backend's display name, never a local path), else its own.
    model_label = str(
        getattr(backend, "display_name", None)
        or getattr(backend, "name", what.get("model", "model"))
    )
    return ResumedRun(
        out_path=out,
        manifest=manifest,
        pending=pending,
        counts=counts,
        # The counts of tasks this call does not run stay as the file's manifest had them.
        earlier_counts=dict(existing.counts or {}) if existing is not None else {},
        image_encodings=image_encodings,
        model_label=model_label,
        repaired_fragment=repaired,
        resumed=has_lines,
        code_changed=code_changed,
        code_change=code_change,
        code_before=None if code_change is None else {**(manifest.backend or {}), **old_code},
        answers_in_file={task: len(done[task]) for task in plan.tasks},
        failed_before=failed_before,
        token_limit_in_file={
            task: sum(
                record.error is None and record.finish_reason == TOKEN_LIMIT_FINISH
                for record in previous.records[task].values()
            )
            for task in plan.tasks
        }
        if previous is not None
        else {},
        unverified_from=unverified_from,
    )


def execute_run(
    plan: RunPlan,
    resumed: ResumedRun,
    backend: Backend,
    *,
    progress: bool = True,
    started: float | None = None,
) -> RunSummary:
    """Ask every pending question and append each answer to the file as it arrives.

    The last step of :func:`run_model`, under the same writer lock as :func:`resume_run`:
    the manifest is written as ``running`` first and, whatever happens, with the final
    status at the end (``complete``, ``complete-with-errors``, ``stopped`` or
    ``interrupted``). Pooled backends keep ``max_concurrency`` requests in flight (and are
    closed at the end); others get ``generate`` calls of ``plan.batch_size``.

    Args:
        plan: what :func:`plan_run` gave.
        resumed: what :func:`resume_run` gave for the same plan; its counts are updated.
        backend: the backend to ask.
        progress: show a progress bar.
        started: ``time.perf_counter()`` when the run began, so ``elapsed_s`` covers
            planning and resuming too (default: when this call began).

    Returns:
        The :class:`RunSummary`.

    Raises:
        EndpointUnusableError: the backend failed in a way every request would, before
            anything was answered in this call (the early stop of the module docstring).
        RuntimeError: a batched backend returned another number of answers than asked.

    Example:
        >>> import pathlib, tempfile, types
        >>> case = types.SimpleNamespace(case_id="case0001", clinical_history="Headache.",
        ...                              captions=["Axial FLAIR: right frontal hyperintensity."])
        >>> release = types.SimpleNamespace(images=[], cases=lambda: [case])
        >>> class Echo:
        ...     name = "echo"
        ...     def describe(self): return {"type": "test", "model": "echo"}
        ...     def generate(self, requests): return [Answer(text="Glioma.") for _ in requests]
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> plan = plan_run(release, tasks="diagnosis", backend=Echo())
        >>> summary = execute_run(plan, resume_run(plan, release, Echo(), out), Echo(), progress=False)
        >>> summary.counts["diagnosis"]["answered"], RunManifest.read(out).status
        (1, 'complete')
    """
    started = time.perf_counter() if started is None else started
    out = resumed.out_path
    counts = resumed.counts
    pending = resumed.pending
    manifest = resumed.manifest
    image_encodings = resumed.image_encodings
    model_label = resumed.model_label
    manifest_path = resumed.save_manifest("running")
    from novabench.progress import progress_bar

    bar = progress_bar(
        total=sum(len(v) for v in pending.values()),
        unit="item",
        desc="nova run",
        enabled=progress,
    )
    status = "interrupted"
    asking_started = time.perf_counter()
    asking_s = 0.0
    # The early stop (module docstring): the first endpoint-wide failure while nothing has
    # been answered in this call. Both are only touched under the pool's lock (or by the
    # one thread of the batch path).
    answered_now = False
    problem: str | None = None
    # A backend may stop on failures of any kind too (a Python function: every exception):
    # after this many items, not already failed in the file, failed with nothing answered.
    failures_before_stop = getattr(backend, "failures_before_stop", None)
    # ...or only on the failures it says count (an endpoint: server errors).
    counts_towards_stop = getattr(backend, "counts_towards_stop", None)
    new_failures = 0

    def stopping() -> bool:
        return problem is not None and not answered_now

    try:
        with out.open("a", encoding="utf-8") as handle:

            def record(request: Request, answer: Answer) -> None:
                nonlocal answered_now, problem, new_failures
                line = _answer_line(request, answer, model_label)
                _append_line(handle, line)
                counts[request.task]["errors" if "error" in line else "answered"] += 1
                counts[request.task]["too_long"] += "raw_truncated_from" in line
                counts[request.task]["hit_token_limit"] += "finish_reason" in line
                # Never "not cut off" by default: an answer whose end nobody told is counted.
                counts[request.task]["finish_unknown"] += (
                    "error" not in line and answer.finish_reason is None
                )
                if request.image_encoding is not None:
                    image_encodings[request.image_encoding] += 1
                if "error" not in line:
                    answered_now = True
                elif problem is None and not answered_now and answer.endpoint_problem:
                    problem = answer.endpoint_problem
                elif (
                    problem is None
                    and not answered_now
                    and failures_before_stop
                    and (counts_towards_stop is None or counts_towards_stop(answer))
                ):
                    # An item that failed in an earlier call may fail for its own reason:
                    # only new items count, so a rerun cannot stop on the same ones again.
                    if request.item_id not in resumed.failed_before.get(request.task, ()):
                        new_failures += 1
                    if new_failures >= failures_before_stop:
                        subject = getattr(backend, "failure_subject", None) or model_label
                        problem = (
                            f"{subject} failed on all of the first {new_failures} new items "
                            f"asked (last failure: {' '.join(line['error'].split())})"
                        )
                resumed.checkpoint(handle)  # the bytes so far, every few seconds
                bar.update(1)

            if plan.pooled:

                def ask(task: str, item: Any) -> tuple[Request, Answer]:
                    request = _request(task, item, plan.prompts[task], as_png=plan.send_png)
                    return request, backend.answer(request)  # type: ignore[attr-defined]

                jobs = ((task, item) for task in plan.tasks for item in pending[task])
                concurrency = max(1, int(backend.max_concurrency))  # type: ignore[attr-defined]
                try:
                    _ask_in_pool(jobs, ask, concurrency, record, stop=stopping)
                finally:
                    close = getattr(backend, "close", None)
                    if callable(close):
                        close()  # the workers' kept-alive connections
            else:
                for task in plan.tasks:
                    bar.set_postfix_str(task)
                    for chunk in _chunks(pending[task], plan.batch_size):
                        if stopping():
                            break
                        requests = [_request(task, item, plan.prompts[task]) for item in chunk]
                        answers = backend.generate(requests)
                        if len(answers) != len(requests):
                            raise RuntimeError(
                                f"backend {model_label!r} returned {len(answers)} answers for {len(requests)} requests"
                            )
                        for request, answer in zip(requests, answers):
                            record(request, answer)
        asking_s = time.perf_counter() - asking_started
        status = "stopped" if stopping() else "complete"
    finally:
        bar.close()
        if resumed.resumed:  # how much of the file this call found, and how much it added
            manifest.runtime["resumed"] = {
                "answers_from_file": sum(resumed.answers_in_file.values()),
                "asked_now": sum(c["answered"] + c["errors"] for c in counts.values()),
            }
        if resumed.code_change is not None and not answered_now:
            # Only failures of the new code: the file's answers are all the old code's, so
            # the file mixes nothing and its manifest names the old code, as before.
            changes = [c for c in manifest.extra["code_changes"] if c is not resumed.code_change]
            if changes:
                manifest.extra["code_changes"] = changes
            else:
                del manifest.extra["code_changes"]
            manifest.backend = resumed.code_before
        if status == "stopped":
            manifest.runtime["stopped_because"] = problem
        if status == "complete":
            every_item_done = all(
                c["done_before"] + c["answered"] == c["items"] for c in counts.values()
            )
            status = "complete" if every_item_done else "complete-with-errors"
        resumed.save_manifest(status)
    summary = RunSummary(
        out_path=out,
        manifest_path=manifest_path,
        counts=counts,
        repaired_fragment=resumed.repaired_fragment,
        elapsed_s=time.perf_counter() - started,
        tasks=plan.tasks,
        asking_s=asking_s,
        resumed=resumed.resumed,
        code_changed=resumed.code_changed and answered_now,
        answers_in_file=dict(resumed.answers_in_file),
        token_limit_in_file=dict(resumed.token_limit_in_file),
    )
    if status == "stopped" and problem is not None:
        raise EndpointUnusableError(problem, summary)
    return summary


def run_model(
    release: Any,
    *,
    tasks: str | Sequence[str],
    backend: Backend,
    out_path: str | os.PathLike,
    prompts: Mapping[str, Any] | None = None,
    shard: tuple[int, int] | str | None = None,
    batch_size: int | None = None,
    box_convention: str = "auto",
    limit: int | None = None,
    progress: bool = True,
    command: str = "run_model",
    preset: Mapping[str, Any] | None = None,
    on_start: Callable[[], None] | None = None,
    resume_changed_code: bool = False,
    on_resume: Callable[[ResumedRun], None] | None = None,
) -> RunSummary:
    """Ask ``backend`` every pending question of ``tasks`` and append the raw answers to ``out_path``.

    Three steps, each usable alone: :func:`plan_run` (what to ask), :func:`resume_run`
    (what the file already answers, checked) and :func:`execute_run` (ask and write).

    Args:
        release: a ``NovaRelease`` (``novabench.data.release.read_release``).
        tasks: ``"all"``, one task, or several.
        backend: a :class:`~novabench.run.backends.Backend` (transformers model, endpoint, baseline).
        out_path: the JSONL file of raw answers; appended to, never rewritten.
        prompts: ``{task: TaskPrompt or prompt file}``; the default prompt for the others.
        shard: ``(i, n)`` or ``"i/n"``: only the items of shard ``i`` of ``n``.
        batch_size: requests per ``backend.generate`` call (default: the backend's own);
            unused by pooled backends (the endpoint), which keep ``max_concurrency`` in flight.
        box_convention: how ``nova parse`` should read localisation answers; recorded in the
            manifest (answers are stored raw).
        limit: at most this many items per task (after sharding), for a quick trial.
        progress: show a progress bar.
        command: what runs, recorded in the file's lock (``<out>.lock``) for a second writer's
            message: while this call writes ``out``, any other writer of it fails at once.
        preset: what :meth:`novabench.run.presets.PresetChoice.record` gives (the preset's
            name and the parts overridden), kept in the manifest as ``preset``; the caller
            has already applied it to ``prompts``, ``box_convention`` and the backend.
            Resuming a file asked with another preset (or none) is refused.
        on_start: called once the plan and the file are checked, before the backend is
            asked (``nova run`` says there what data it runs on, so a refusal stays the
            one line it is).
        on_resume: called like ``on_start``, with what :func:`resume_run` found, when the
            file held lines of an earlier call (``evaluate_model`` says there how many
            answers it takes from the file, before a long run).
        resume_changed_code: resume a file whose answers the same backend gave with other
            code (a Python function edited since; see :data:`CODE_KEYS`), instead of
            refusing; the manifest's ``code_changes`` records it.

    Returns:
        A :class:`RunSummary`.

    Raises:
        EndpointUnusableError: the backend cannot answer any request (an unreachable
            server, HTTP 401/403/404) and nothing was answered in this call: the run
            stopped early (see the module docstring); its ``summary`` says what was done.
        NovaInputError: bad arguments, a broken output file, an output written by
            another configuration, or an output another process is writing.

    Example:
        >>> import pathlib, tempfile, types
        >>> case = types.SimpleNamespace(case_id="case0001", clinical_history="Headache.",
        ...                              captions=["Axial FLAIR: right frontal hyperintensity."])
        >>> release = types.SimpleNamespace(images=[], cases=lambda: [case])  # stands in for read_release(...)
        >>> class Echo:
        ...     name = "echo"
        ...     def describe(self): return {"type": "test", "model": "echo"}
        ...     def generate(self, requests): return [Answer(text="Glioma.") for _ in requests]
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "raw.jsonl"
        >>> run_model(release, tasks="diagnosis", backend=Echo(), out_path=out, progress=False).counts
        {'diagnosis': {'items': 1, 'done_before': 0, 'answered': 1, 'errors': 0, 'too_long': 0, 'hit_token_limit': 0, 'finish_unknown': 1}}
        >>> print(out.read_text(), end="")
        {"case_id": "case0001", "task": "diagnosis", "raw_diagnoses": "Glioma.", "model": "echo"}
    """
    started = time.perf_counter()
    plan = plan_run(
        release,
        tasks=tasks,
        backend=backend,
        prompts=prompts,
        shard=shard,
        batch_size=batch_size,
        box_convention=box_convention,
        limit=limit,
        preset=preset,
    )
    out = Path(out_path)
    check_run_output_links(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(out, command):  # one writer per file: a second run fails at once
        resumed = resume_run(plan, release, backend, out, resume_changed_code=resume_changed_code)
        if on_start is not None:
            on_start()
        if on_resume is not None and resumed.resumed:
            on_resume(resumed)
        return execute_run(plan, resumed, backend, progress=progress, started=started)
