"""Scoring a predictions file into a NOVA report.

``evaluate_predictions`` reads the release and the predictions, parses raw
answers if needed, scores every task present with the metric core (the same
code the ``evaluate`` module runs), adds seeded bootstrap confidence
intervals, and keeps the counts a reader needs to trust the numbers: items
missing, model errors, parse statuses, placeholder diagnoses excluded.

The report's metric keys are the metric module's, in fractions; the table and
the Markdown show percent.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novabench import __version__
from novabench._files import json_safe, write_text_atomic
from novabench.errors import NovaInputError

__all__ = [
    "HEADLINE_KEYS",
    "compare_predictions",
    "evaluate_predictions",
    "render_comparison",
    "render_markdown",
    "render_table",
    "write_report",
]

HEADLINE_KEYS: dict[str, tuple[str, ...]] = {
    "localization": ("mAP@30", "mAP@50", "mAP@50:95", "COCO-AP@30", "COCO-AP@50", "COCO-AP@50:95",
                     "hit@30", "hit@50", "ACC50", "TP30", "FP30", "FNR"),
    "captioning": ("BLEU-4", "ROUGE-L", "METEOR", "BERTScore-F1", "ClinicalF1", "ModalityF1", "BinaryF1"),
    "diagnosis": ("top1", "top5"),
}
TASK_ORDER: tuple[str, ...] = ("localization", "captioning", "diagnosis")


def evaluate_predictions(
    data: str | os.PathLike[str],
    predictions: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    tasks: Sequence[str] | None = None,
    box_convention: str | None = None,
    allow_other_release: bool = False,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    caption_options: Mapping[str, Any] | None = None,
    matcher: Callable[[str, str], bool] | None = None,
) -> dict[str, Any]:
    """Score a predictions JSONL file (or several, one per task) against a NOVA release.

    Args:
        data: a release folder (official v1 or legacy layout, or a ``nova export`` folder).
        predictions: one predictions file, or several (e.g. one per task); items
            may not repeat across files.
        tasks: tasks to score; by default every task the file(s) answer.
        box_convention: how raw localisation answers are read (see
            ``novabench.run.parsers.parse_localization``); by default the convention
            recorded in the run's manifest, else ``"auto"``.
        allow_other_release: score a run whose manifest records another release
            fingerprint (by default that is an error: the answers belong to other data).
        n_resamples: bootstrap resamples for confidence intervals (0: none).
        confidence: confidence level of the intervals.
        seed: bootstrap seed.
        caption_options: options of ``score_captioning`` (``exclude``,
            ``bertscore_model``, ``bertscore_num_layers``, ``keyword_averaging``...).
            Without a BERTScore model and without roberta-large in the local
            cache, BERTScore-F1 is left out and the report says why.
        matcher: a diagnosis matcher (e.g. an LLM judge); the lexicon matcher by default.

    Returns:
        The report: ``{"toolkit", "data", "predictions", "tasks": {task: {...}}}``.

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=2, seed=0)
        >>> lines = [json.dumps({"case_id": "case0001", "diagnoses": ["glioma"]})]
        >>> _ = (root / "pred.jsonl").write_text("\\n".join(lines) + "\\n")
        >>> report = evaluate_predictions(release, root / "pred.jsonl", n_resamples=0)
        >>> sorted(report["tasks"]), report["tasks"]["diagnosis"]["coverage"]["missing"]
        (['diagnosis'], 1)
    """

    loaded = _load(data, predictions, tasks, box_convention, allow_other_release=allow_other_release)
    summary = loaded.prediction_set.summary()
    stats = {"bootstrap_resamples": n_resamples, "confidence": confidence, "seed": seed}
    task_reports: dict[str, Any] = {}
    for task in loaded.tasks:
        task_predictions, references = _task_inputs(task, loaded)
        options, notes = _task_options(task, caption_options, matcher)
        if task == "localization":
            notes.extend(_box_overrun_notes(task_predictions, loaded.release.images))
        result = _score(task, task_predictions, references, stats, options)
        if task == "localization" and result.get("per_image_best_iou") is not None:
            filenames = [image.filename for image in loaded.release.images]
            result["per_image_best_iou"] = dict(zip(filenames, result["per_image_best_iou"]))
        task_reports[task] = {
            "metrics": {k: v for k, v in result.items() if k != "confidence_intervals"},
            "confidence_intervals": result.get("confidence_intervals", {}),
            "notes": notes,
            "coverage": summary[task],
        }
    return {
        **_provenance(data, loaded),
        "bootstrap": {"n_resamples": n_resamples, "confidence": confidence, "seed": seed},
        "tasks": task_reports,
    }


def compare_predictions(
    data: str | os.PathLike[str],
    predictions_a: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    predictions_b: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    tasks: Sequence[str] | None = None,
    box_convention: str | None = None,
    allow_other_release: bool = False,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    caption_options: Mapping[str, Any] | None = None,
    matcher: Callable[[str, str], bool] | None = None,
) -> dict[str, Any]:
    """Compare two models on the same NOVA items with a paired bootstrap.

    Both prediction sets are aligned to the release (missing items are "no
    prediction" for either), so every resample draws the same images or cases
    for A and B: the interval is of the difference A - B, not of two separate
    scores, and is much tighter than comparing two unpaired intervals.

    Args:
        data: the release folder.
        predictions_a: predictions file(s) of model A.
        predictions_b: predictions file(s) of model B.
        tasks: tasks to compare; by default every task both answer.
        box_convention: as in :func:`evaluate_predictions` (per run, from its manifest by default).
        allow_other_release: as in :func:`evaluate_predictions`.
        n_resamples: bootstrap resamples.
        confidence: confidence level of the intervals.
        seed: bootstrap seed.
        caption_options: options of ``score_captioning`` (both models get the same).
        matcher: diagnosis matcher (both models get the same).

    Returns:
        ``{"a": provenance, "b": provenance, "tasks": {task: {metric: {"a", "b", "difference",
        "ci", "p_value"}}}}``.

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=3, seed=0, progress=False)
        >>> _ = (root / "a.jsonl").write_text(json.dumps({"case_id": "case0001", "diagnoses": ["glioma"]}) + "\\n")
        >>> comparison = compare_predictions(release, root / "a.jsonl", root / "a.jsonl", n_resamples=50)
        >>> comparison["tasks"]["diagnosis"]["top1"]["difference"]
        0.0
    """
    from novabench.data.release import read_release
    from novabench.metrics.stats import paired_bootstrap
    from novabench.metrics.tasks import prepare_task

    release = read_release(data)  # read, validated and fingerprinted once for both models
    fingerprint = release.fingerprint()
    loaded_a = _load(data, predictions_a, tasks, box_convention, release=release,
                     fingerprint=fingerprint, allow_other_release=allow_other_release)
    loaded_b = _load(data, predictions_b, tasks, box_convention, release=release,
                     fingerprint=fingerprint, allow_other_release=allow_other_release)
    shared = [task for task in loaded_a.tasks if task in loaded_b.tasks]
    if not shared:
        raise NovaInputError("the two prediction sets answer no task in common", field="predictions")
    compared: dict[str, Any] = {}
    notes: dict[str, list[str]] = {}
    for task in shared:
        options, notes[task] = _task_options(task, caption_options, matcher)
        evaluation_a = prepare_task(task, *_task_inputs(task, loaded_a), **options)
        evaluation_b = prepare_task(task, *_task_inputs(task, loaded_b), **options)
        compared[task] = paired_bootstrap(
            evaluation_a, evaluation_b, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
    summaries = {"a": loaded_a.prediction_set.summary(), "b": loaded_b.prediction_set.summary()}
    return {
        "a": _provenance(data, loaded_a),
        "b": _provenance(data, loaded_b),
        "bootstrap": {"n_resamples": n_resamples, "confidence": confidence, "seed": seed, "paired": True},
        "tasks": compared,
        # Missing answers score as misses; a difference can come from coverage alone.
        "coverage": {task: {side: summaries[side][task] for side in ("a", "b")} for task in shared},
        "notes": notes,
    }


def render_comparison(comparison: Mapping[str, Any]) -> str:
    """A plain-text table of a comparison: A, B, A - B with its interval and p-value, in percent.

    Example:
        >>> comparison = {"bootstrap": {"confidence": 0.95}, "tasks": {"diagnosis": {"top1": {
        ...     "a": 0.5, "b": 0.25, "difference": 0.25, "ci": [0.0, 0.5], "p_value": 0.04}}}}
        >>> print(render_comparison(comparison).splitlines()[2])
        diagnosis     top1           50.0   25.0  +25.0  [+0.0, +50.0]  p=0.040
    """
    level = int(round(100 * comparison.get("bootstrap", {}).get("confidence", 0.95)))
    header = f"{'task':<13} {'metric':<12} {'A %':>6} {'B %':>6} {'A-B':>6}  {level}% CI of A-B, p"
    lines = [header, "-" * len(header)]
    for task in TASK_ORDER:
        for key in HEADLINE_KEYS[task]:
            row = comparison["tasks"].get(task, {}).get(key)
            if row is None:
                continue
            low, high = row["ci"]
            lines.append(
                f"{task:<13} {key:<12} {_percent(row['a']):>6} {_percent(row['b']):>6} "
                f"{_signed(row['difference']):>6}  [{_signed(low)}, {_signed(high)}]  p={row['p_value']:.3f}"
            )
    coverage = comparison.get("coverage") or {}
    if coverage:
        lines.append("")
    for task in TASK_ORDER:
        for side in ("a", "b"):
            counts = coverage.get(task, {}).get(side)
            if counts:
                lines.append(
                    f"{side.upper()} {task}: {counts['answered']}/{counts['items']} answered, "
                    f"{counts['missing']} missing (scored as no prediction), {counts['errors']} model errors"
                )
    return "\n".join(lines)


def _signed(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * float(value):+.1f}"


@dataclass
class _Loaded:
    release: Any
    paths: list[Path]
    prediction_set: Any
    manifests: list[Any]
    box_convention: str
    tasks: list[str]
    fingerprint: str  # of the release; hashing every image is the costly part, so once


def _load(
    data: str | os.PathLike[str],
    predictions: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    tasks: Sequence[str] | None,
    box_convention: str | None,
    *,
    release: Any = None,
    fingerprint: str | None = None,
    allow_other_release: bool = False,
) -> _Loaded:
    """Release (unless given) and predictions read, raw answers parsed, tasks to score decided."""
    from novabench.data.release import read_release
    from novabench.run.predictions import TASKS, parse_raw, read_manifest, read_predictions

    if release is None:
        release = read_release(data)
    paths = [Path(predictions)] if isinstance(predictions, (str, os.PathLike)) else [Path(p) for p in predictions]
    if not paths:
        raise NovaInputError("no predictions file given", field="predictions")
    prediction_set = _read_all(paths, release, read_predictions)
    manifests = [read_manifest(p) for p in paths]
    recorded_fingerprints = {
        str(p): m["release"]["fingerprint"]
        for p, m in zip(paths, manifests)
        if m and isinstance(m.get("release"), Mapping) and m["release"].get("fingerprint")
    }
    if fingerprint is None:
        fingerprint = release.fingerprint()
    if recorded_fingerprints and not allow_other_release:
        for path, recorded in recorded_fingerprints.items():
            if recorded != fingerprint:
                # Answers to other images or text would be scored against this ground truth.
                raise NovaInputError(
                    f"the run was made on other data (release fingerprint {recorded}, this one "
                    f"{fingerprint}); score it against the data it was run on, or pass "
                    "--allow-other-release (allow_other_release=True) if the change is intended",
                    source=path,
                    field="release.fingerprint",
                )
    if box_convention is None:
        recorded = {m["box_convention"] for m in manifests if m and m.get("box_convention")}
        if len(recorded) > 1:
            raise NovaInputError(
                f"the runs record different box conventions {sorted(recorded)}; pass one explicitly",
                field="box_convention",
            )
        box_convention = recorded.pop() if recorded else "auto"
    prediction_set = parse_raw(prediction_set, release, box_convention=box_convention)
    wanted = list(tasks) if tasks else [t for t in TASK_ORDER if prediction_set.records[t]]
    for task in wanted:
        if task not in TASKS:
            raise NovaInputError(f"unknown task {task!r}; choose from {list(TASK_ORDER)}", field="tasks")
    if not wanted:
        raise NovaInputError("the predictions answer no task", source=", ".join(map(str, paths)))
    ordered = [t for t in TASK_ORDER if t in wanted]
    return _Loaded(release, paths, prediction_set, manifests, box_convention, ordered, fingerprint)


def _task_inputs(task: str, loaded: _Loaded) -> tuple[list[Any], list[Any]]:
    """Plain predictions and references of one task, in release order."""
    release, predictions = loaded.release, loaded.prediction_set
    if task == "localization":
        return predictions.localization(), [{"boxes": image.boxes} for image in release.images]
    if task == "captioning":
        for image in release.images:
            if image.caption is None or not image.caption.strip():
                # The metric would name only an index; name the image and the way out.
                raise NovaInputError(
                    "the release has no reference caption for this image, so captioning cannot "
                    "be scored; score the other tasks with --task localization --task diagnosis",
                    source=str(release.root),
                    record=image.filename,
                    field="caption",
                )
        return predictions.captions(), [image.caption for image in release.images]
    # Rows, not strings: a null diagnosis in the release is "no ground truth" (counted).
    return predictions.diagnoses(), [
        {"case_id": case.case_id, "final_diagnosis": case.final_diagnosis} for case in release.cases()
    ]


def _box_overrun_notes(predictions: list[Any], images: list[Any]) -> list[str]:
    """A note when predicted boxes run well past their image: often xyxy given as xywh."""
    over, where = 0, 0
    for prediction, image in zip(predictions, images):
        boxes = prediction.get("boxes") or []
        limit_x, limit_y = 1.02 * image.width, 1.02 * image.height
        past = sum(1 for x, y, w, h in boxes if x + w > limit_x or y + h > limit_y)
        over += past
        where += bool(past)
    if not over:
        return []
    return [
        f"{over} predicted boxes in {where} images extend past their image by more than 2%: "
        "if they are [x1, y1, x2, y2], convert them to [x, y, width, height] (raw answers: "
        "--box-convention xyxy_pixel)"
    ]


def _task_options(
    task: str, caption_options: Mapping[str, Any] | None, matcher: Callable[[str, str], bool] | None
) -> tuple[dict[str, Any], list[str]]:
    """Options of one task's metric, and notes on what was left out and why."""
    if task == "diagnosis":
        return ({"matcher": matcher} if matcher is not None else {}), []
    if task != "captioning":
        return {}, []
    from novabench.metrics.captioning import bertscore_available

    options = dict(caption_options or {})
    excluded = set(options.get("exclude", ()))
    notes = []
    if "BERTScore-F1" not in excluded and not options.get("bertscore_model") and not bertscore_available():
        excluded.add("BERTScore-F1")
        notes.append(
            "BERTScore-F1 left out: roberta-large is not in the local cache; pass a local model "
            "(--bertscore-model PATH --bertscore-layers N) to report it"
        )
    options["exclude"] = sorted(excluded)
    return options, notes


def _provenance(data: str | os.PathLike[str], loaded: _Loaded) -> dict[str, Any]:
    return {
        "toolkit": {"name": "novabench", "version": __version__},
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": {
            "path": str(Path(data)),
            "layout": loaded.release.layout,
            "n_images": len(loaded.release.images),
            "n_cases": len(loaded.release.cases()),
            "fingerprint": loaded.fingerprint,
        },
        "predictions": {
            "paths": [str(p) for p in loaded.paths],
            "manifests": loaded.manifests,
            "box_convention": loaded.box_convention,
        },
    }


def _read_all(paths: list[Path], release: Any, read_predictions: Callable[..., Any]) -> Any:
    """One prediction set from several files (e.g. one per task).

    An item may not be answered twice; an answer replaces a failed attempt (an
    ``error`` line) for the same item, as in a single file.
    """
    from dataclasses import replace

    sets = [read_predictions(path, release) for path in paths]
    combined = {task: dict(records) for task, records in sets[0].records.items()}
    for path, other in zip(paths[1:], sets[1:]):
        for task, records in other.records.items():
            for key, record in records.items():
                first = combined[task].get(key)
                if first is not None and record.error is not None:
                    continue  # a failed attempt never replaces an answer
                if first is not None and first.error is None:
                    raise NovaInputError(
                        f"{task} answer for {key} also in {first.source} line {first.line}",
                        source=str(path),
                        record=f"line {record.line}",
                        field="filename" if task != "diagnosis" else "case_id",
                    )
                combined[task][key] = record
    return replace(sets[0], source=", ".join(map(str, paths)), records=combined)


def _score(task: str, predictions: list[Any], references: list[Any], stats: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    from novabench.metrics.tasks import compute_task

    return compute_task(task, predictions, references, **stats, **options)


def _percent(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * float(value):.1f}"


def _interval(report_task: Mapping[str, Any], key: str) -> str:
    interval = report_task.get("confidence_intervals", {}).get(key)
    if not interval or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in interval):
        return ""
    return f"[{_percent(interval[0])}, {_percent(interval[1])}]"


def _rows(report: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    rows = []
    for task in TASK_ORDER:
        if task not in report["tasks"]:
            continue
        task_report = report["tasks"][task]
        for key in HEADLINE_KEYS[task]:
            if key in task_report["metrics"]:
                rows.append((task, key, _percent(task_report["metrics"][key]), _interval(task_report, key)))
    return rows


def _coverage_lines(report: Mapping[str, Any]) -> list[str]:
    lines = []
    for task in TASK_ORDER:
        if task not in report["tasks"]:
            continue
        task_report = report["tasks"][task]
        coverage = task_report["coverage"]
        parse = ", ".join(f"{status} {count}" for status, count in coverage.get("parse_status", {}).items())
        line = (
            f"{task}: {coverage['answered']}/{coverage['items']} answered, {coverage['missing']} missing "
            f"(scored as no prediction), {coverage['errors']} model errors"
        )
        if parse:
            line += f"; parse: {parse}"
        metrics = task_report["metrics"]
        if task == "diagnosis" and metrics.get("n_cases_without_reference"):
            line += f"; cases without a final diagnosis (excluded): {metrics['n_cases_without_reference']}"
        if task == "localization" and coverage.get("parse_status", {}).get("ok_clipped"):
            line += " (ok_clipped: boxes ran past the image and were clipped; check --box-convention)"
        if task == "localization" and metrics.get("n_truncated_predictions"):
            line += f"; {metrics['n_truncated_predictions']} boxes beyond max_detections not scored for AP"
        lines.append(line)
        lines.extend(f"{task}: note: {note}" for note in task_report.get("notes", []))
    return lines


def render_table(report: Mapping[str, Any]) -> str:
    """A plain-text table in percent with confidence intervals, then coverage lines.

    Example:
        >>> report = {"bootstrap": {"confidence": 0.95}, "tasks": {"diagnosis": {"metrics": {"top1": 0.25, "top5": 0.5},
        ...     "confidence_intervals": {"top1": [0.0, 0.75]}, "notes": [],
        ...     "coverage": {"items": 4, "answered": 4, "missing": 0, "errors": 0, "parse_status": {}}}}}
        >>> print(render_table(report).splitlines()[2])
        diagnosis     top1          25.0  [0.0, 75.0]
    """
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    header = f"{'task':<13} {'metric':<12} {'value %':>7}  {level}% CI"
    lines = [header, "-" * len(header)]
    for task, key, value, interval in _rows(report):
        lines.append(f"{task:<13} {key:<12} {value:>5}  {interval}".rstrip())
    lines.append("")
    lines.extend(_coverage_lines(report))
    return "\n".join(lines)


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as Markdown: a table per task in percent, coverage and provenance.

    Example:
        >>> report = {"toolkit": {"version": "0"}, "data": {"path": "d", "n_images": 1, "n_cases": 1},
        ...     "bootstrap": {"confidence": 0.95, "n_resamples": 0, "seed": 0}, "predictions": {"paths": ["p"]},
        ...     "tasks": {"diagnosis": {"metrics": {"top1": 1.0, "top5": 1.0}, "confidence_intervals": {},
        ...     "notes": [], "coverage": {"items": 1, "answered": 1, "missing": 0, "errors": 0, "parse_status": {}}}}}
        >>> "| diagnosis | top1 | 100.0 |" in render_markdown(report)
        True
    """
    level = int(round(100 * report.get("bootstrap", {}).get("confidence", 0.95)))
    lines = [
        "# NOVA evaluation report",
        "",
        f"Data: `{report['data']['path']}` ({report['data']['n_images']} images, {report['data']['n_cases']} cases). "
        f"Predictions: {', '.join('`' + p + '`' for p in report['predictions']['paths'])}. "
        f"novabench {report['toolkit']['version']}.",
        "",
        f"| task | metric | value (%) | {level}% CI (bootstrap, n={report['bootstrap']['n_resamples']}, seed={report['bootstrap']['seed']}) |",
        "|---|---|---:|---|",
    ]
    lines += [f"| {task} | {key} | {value} | {interval} |" for task, key, value, interval in _rows(report)]
    lines += ["", "## Coverage", ""] + [f"- {line}" for line in _coverage_lines(report)]
    return "\n".join(lines) + "\n"


def write_report(report: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the report as JSON atomically (a crash never leaves half a file).

    Example:
        >>> import tempfile, pathlib
        >>> out = write_report({"tasks": {}}, pathlib.Path(tempfile.mkdtemp()) / "r.json")
        >>> json.loads(out.read_text())
        {'tasks': {}}
    """
    # Undefined metrics (NaN) are written as null: strict JSON readers refuse NaN.
    text = json.dumps(json_safe(report), indent=2, allow_nan=False, default=str) + "\n"
    return write_text_atomic(path, text)
