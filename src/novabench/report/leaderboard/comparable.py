"""Whether several reports may share one board: the refusals across reports.

Not one evaluation twice (same run id or pinned tables, or the same headlines:
:func:`_same_evaluations`, :func:`_same_headlines`), nor one run's predictions scored twice
alike (:func:`_same_predictions`); one scoring revision, from a toolkit record novabench can
have written (:func:`_same_scoring_rules`, :func:`_other_revision_line`); one release and
its sizes (:func:`_same_release`, :func:`_same_release_sizes`). Each refusal is one line
naming the reports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from novabench._version import SCORING_REVISION
from novabench.errors import NovaInputError
from novabench.registry import TASKS
from novabench.report.leaderboard.settings import _UNKNOWN, SCORING_SETTINGS, _setting_value
from novabench.report.leaderboard.values import _held_reading
from novabench.report.render import HEADLINE_KEYS, TASK_ORDER, headline_keys
from novabench.tasks import behaviour


def _headline_signature(report: Mapping[str, Any]) -> str:
    """Every headline value and CI of a report, as one comparable text ("" when none, or when
    no value lies strictly between 0 and 1: reports scoring nothing, or everything, alike are
    no evidence of a copy)."""
    import json

    held = {}
    for task, section in sorted((report.get("tasks") or {}).items()):
        if task not in HEADLINE_KEYS or not isinstance(section, Mapping):
            continue
        metrics = section.get("metrics") or {}
        intervals = section.get("confidence_intervals") or {}
        for key in headline_keys(task, metrics):
            if key in metrics:
                held[f"{task}.{key}"] = [metrics[key], intervals.get(key)]
    informative = any(isinstance(value, float) and 0.0 < value < 1.0 for value, _ in held.values())
    return json.dumps(held, sort_keys=True) if informative else ""


def _same_headlines(reports: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    """Refuse two reports stating the same value and CI for every headline key when one of
    them has no per-item tables: a copy with its tables (or run id) removed. Two reports
    backed by tables are told apart by their run ids and pinned tables (a deterministic
    model run twice gives equal values, and both runs are genuine)."""
    seen: dict[str, tuple[str, bool]] = {}
    for report, name in zip(reports, names):
        signature = _headline_signature(report)
        if not signature:
            continue
        with_tables = bool(report.get("items"))
        if signature in seen and not (with_tables and seen[signature][1]):
            raise NovaInputError(
                f"{seen[signature][0]} and {name} state the same value and CI for every "
                "headline metric, and one has no per-item tables to tell them apart: one "
                "evaluation (a copied report?); give each report once",
                source=name,
                field="tasks",
            )
        seen.setdefault(signature, (name, with_tables))


def _same_evaluations(reports: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    """Refuse two reports of one evaluation (a copied report): same run id or pinned tables."""
    seen: dict[str, str] = {}
    for report, name in zip(reports, names):
        entry = report.get("items")
        if not isinstance(entry, Mapping):
            continue
        pinned = entry.get("sha256")
        hashes: Mapping[str, Any] = pinned if isinstance(pinned, Mapping) else {}
        marks = [f"run id {entry['run_id']}"] if entry.get("run_id") else []
        marks += [
            f"the same pinned {table}, SHA-256 {hashes[table]}"
            for table in ("images.parquet", "cases.parquet")
            if hashes.get(table)
        ]
        for mark in marks:
            if mark in seen:
                raise NovaInputError(
                    f"{seen[mark]} and {name} are one evaluation ({mark}: a copied "
                    "report?); give each report once",
                    source=name,
                    field="items",
                )
            seen[mark] = name


def _predictions_identity(report: Mapping[str, Any]) -> dict[str, str]:
    """What identifies the answers a report scored, as far as it records it:
    ``"the same predictions (SHA-256)"``: the digests of its predictions files
    (``predictions.sha256``); ``"the same run manifests"``: its run manifests (one run: same
    model, creation time, status and answer counts), for reports written before digests.

    Example:
        >>> sorted(_predictions_identity({"predictions": {"sha256": ["ab"], "manifests": [None]}}))
        ['the same predictions (SHA-256)']
    """
    import json

    predictions = report.get("predictions")
    if not isinstance(predictions, Mapping):
        return {}
    identity = {}
    digests = predictions.get("sha256")
    if isinstance(digests, list) and digests and all(isinstance(d, str) for d in digests):
        identity["the same predictions (SHA-256)"] = json.dumps(sorted(digests))
    manifests = predictions.get("manifests")
    if (
        isinstance(manifests, list)
        and manifests
        # a manifest identifies a run by its creation time (a bare model name does not)
        and all(isinstance(m, dict) and m.get("created_at") for m in manifests)
    ):
        ordered = sorted(json.dumps(manifest, sort_keys=True) for manifest in manifests)
        identity["the same run manifests"] = json.dumps(ordered)
    return identity


def _same_answers(a: Mapping[str, str], b: Mapping[str, str]) -> str | None:
    """How two identities (:func:`_predictions_identity`) say the answers are one run's, None
    when they do not: the digests when both record them (an edited file keeps its manifest),
    else the manifests."""
    for kind in ("the same predictions (SHA-256)", "the same run manifests"):
        if kind in a and kind in b:
            return kind if a[kind] == b[kind] else None
    return None


def _reading(report: Mapping[str, Any], task: str) -> dict[str, str]:
    """The settings that make a task's scores one reading of its answers (matcher or judge,
    METEOR variant, BERTScore model, how raw answers were read: the box convention...),
    where recorded, and the ranking key held."""
    reading = {
        setting: value
        for setting, _ in SCORING_SETTINGS[task]
        if (value := _setting_value(report, task, setting)) != _UNKNOWN
    }
    predictions = report.get("predictions")
    for field in behaviour(task).answer_reading:
        recorded = predictions.get(field) if isinstance(predictions, Mapping) else None
        if recorded is not None:
            reading[field] = str(recorded)
    reading["ranking key"] = str(_held_reading(report, task))
    return reading


def _reading_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """How two reports read their answers differently: ``"task setting (x / y)"`` for each
    setting both record with different values, over the tasks both hold; [] when they read
    them alike.

    Example:
        >>> a = {"predictions": {"box_convention": "auto"}, "tasks": {"localization": {}}}
        >>> b = {"predictions": {"box_convention": "xyxy_norm1000"}, "tasks": {"localization": {}}}
        >>> _reading_differences(a, b)
        ['localization box_convention (auto / xyxy_norm1000)']
    """
    shared = [task for task in TASK_ORDER if task in (a.get("tasks") or {})]
    shared = [task for task in shared if task in (b.get("tasks") or {})]
    differences = []
    for task in shared:
        first, second = _reading(a, task), _reading(b, task)
        differences += [
            f"{task} {key} ({first[key]} / {second[key]})"
            for key in first.keys() & second.keys()
            if first[key] != second[key]
        ]
    return sorted(differences)


def _same_predictions(reports: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    """Refuse two reports scoring the same predictions with the same settings: one run would
    be ranked as two models. Reports of the same answers under other settings (a judged and
    a lexicon diagnosis, another METEOR variant, another box convention) are other readings
    of that run, kept as the board keeps readings apart: the warnings returned name them."""
    identities = [_predictions_identity(report) for report in reports]
    readings_of_one_run = []
    for second in range(len(reports)):
        for first in range(second):
            same = _same_answers(identities[first], identities[second])
            tasks = [set(report.get("tasks") or {}) for report in (reports[first], reports[second])]
            if not same or not tasks[0] & tasks[1]:  # no task scored by both: nothing twice
                continue
            differences = _reading_differences(reports[first], reports[second])
            if not differences:
                raise NovaInputError(
                    f"{names[first]} and {names[second]} score {same} (one run) with the "
                    "same scoring settings (how the answers were read, matcher, metric "
                    "variants): one model would be ranked twice; give one of them",
                    source=names[second],
                    field="predictions",
                )
            readings_of_one_run.append(
                f"warning: {names[first]} and {names[second]} score {same}: two readings "
                f"of one run, not two models (their settings differ: "
                f"{'; '.join(differences)})"
            )
    return readings_of_one_run


def _check_toolkit_record(toolkit: Any, name: str) -> None:
    """Refuse a report's ``toolkit`` record that novabench cannot have written: a revision
    given as text (``"40"``) would be told apart from ``40`` as another scoring revision."""
    if not isinstance(toolkit, Mapping):
        raise NovaInputError(
            f"must be an object (as nova evaluate writes it), got {type(toolkit).__name__}",
            source=name,
            field="toolkit",
        )
    revision = toolkit.get("scoring_revision")
    if revision is not None and (type(revision) is not int or revision < 1):
        raise NovaInputError(
            f"must be a whole number of at least 1 (as nova evaluate writes it), got "
            f"{json.dumps(revision) if _json_text(revision) else type(revision).__name__}: "
            "the report was edited or written by another tool",
            source=name,
            field="toolkit.scoring_revision",
        )


def _json_text(value: Any) -> bool:
    """Whether ``value`` is a short JSON scalar that a one-line message can quote."""
    return isinstance(value, (str, int, float, bool)) and len(json.dumps(value)) <= 40


def _same_scoring_rules(reports: Sequence[Mapping[str, Any]], names: Sequence[str]) -> str:
    """Refuse reports scored under different scoring revisions (or one without any beside
    one with): a change that moved a score lies between them. Reports of one revision from
    different builds give a warning line instead ("" when every report is of one build)."""
    toolkits = [report.get("toolkit") or {} for report in reports]
    for toolkit, name in zip(toolkits, names):
        _check_toolkit_record(toolkit, name)
    revisions = [toolkit.get("scoring_revision") for toolkit in toolkits]
    if len(set(revisions)) > 1:
        listing = ", ".join(
            f"{name} ({'revision ' + str(revision) if revision is not None else 'no revision recorded, older'})"
            for name, revision in zip(names, revisions)
        )
        raise NovaInputError(
            "the reports were scored under different scoring rules (CHANGELOG.md lists the "
            f"changes that moved scores between them): {listing}; score every run again with "
            "one novabench (`nova evaluate`) to rank them together",
            field="toolkit.scoring_revision",
        )
    hashes = [toolkit.get("source_sha256") for toolkit in toolkits]
    builds = set(hashes) - {None}
    unknown = [name for name, digest in zip(names, hashes) if digest is None]
    if builds and unknown:
        # A report without the hash is of an unknown build: it may be another one.
        return (
            f"warning: the reports were scored by builds of novabench with the same scoring "
            f"rules (revision {revisions[0]}) that cannot all be told apart: "
            f"{', '.join(unknown)} record{'s' if len(unknown) == 1 else ''} no "
            "`toolkit.source_sha256` (an unknown build) beside "
            f"{len(builds)} that record{'s' if len(builds) == 1 else ''} one: an edit no "
            "CHANGELOG entry lists may lie between them"
        )
    if len(builds) <= 1:
        return ""
    return (
        f"warning: the reports were scored by {len(builds)} builds of novabench with the same "
        f"scoring rules (revision {revisions[0]}): an edit no CHANGELOG entry lists may lie "
        "between them (`toolkit.source_sha256` in each report)"
    )


def _other_revision_line(reports: Sequence[Mapping[str, Any]]) -> str:
    """One line when the reports (of one scoring revision, checked before) were scored under
    other rules than this novabench's, which checks their values against their per-item
    tables ("" when they share its revision; asked only when some report has tables).

    Example:
        >>> _other_revision_line([{"toolkit": {"scoring_revision": SCORING_REVISION}}])
        ''
        >>> _other_revision_line([{"toolkit": {"scoring_revision": 1}}])[:62]
        'note: every report was scored under scoring revision 1; this n'
    """
    revision = (reports[0].get("toolkit") or {}).get("scoring_revision") if reports else None
    if revision == SCORING_REVISION:
        return ""
    scored = (
        f"under scoring revision {revision}"
        if revision is not None
        else "before scoring revisions were recorded"
    )
    return (
        f"note: every report was scored {scored}; this novabench (revision "
        f"{SCORING_REVISION}) re-scores their item tables under its own rules to check them "
        "(CHANGELOG.md lists the changes that moved scores between them)"
    )


#: How the per-item checks end a refusal; said otherwise when the rules differ.
_EDITED = "the report was edited or is not the one that wrote them"


def _refusal_under_other_rules(error: NovaInputError, report: Mapping[str, Any]) -> NovaInputError:
    """A per-item check's refusal of a report scored under another scoring revision: the rule
    change may explain the difference, so it says so rather than suggest an edit."""
    revision = (report.get("toolkit") or {}).get("scoring_revision")
    if revision == SCORING_REVISION or _EDITED not in error.message:
        return error
    scored = f"revision {revision}" if revision is not None else "no revision recorded, older"
    return NovaInputError(
        error.message.replace(
            _EDITED,
            f"the report was scored under other scoring rules ({scored}; this novabench: "
            f"revision {SCORING_REVISION}), which may account for the difference: score the "
            "run again with this novabench (`nova evaluate`) to rank it",
        ),
        source=error.source,
        record=error.record,
        field=error.field,
    )


def _same_release_sizes(reports: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    """Refuse reports that state one release fingerprint but different numbers of images or
    cases, that state no size, or whose own task coverage counts another size: one release
    has one size, so such a report was edited (one without per-item tables is otherwise taken
    as it states). Reports none of which states a size (written by hand) are not compared.

    Raises:
        NovaInputError: naming the report and the field.

    Example:
        >>> same = {"data": {"fingerprint": "f", "n_images": 906, "n_cases": 281}}
        >>> _same_release_sizes([same, same], ["a.json", "b.json"])
        >>> edited = {"data": {"fingerprint": "f", "n_images": 132, "n_cases": 40}}
        >>> _same_release_sizes([same, edited], ["a.json", "b.json"])
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'data.n_images': the reports state one release (fingerprint f) but different sizes: a.json 906 images, 281 cases; b.json 132 images, 40 cases; one of them was edited or scored another release
    """
    sizes = []
    stated = [
        (report.get("data") or {}).get("n_images") is not None
        or (report.get("data") or {}).get("n_cases") is not None
        for report in reports
    ]
    for report, name in zip(reports, names):
        data = report.get("data") or {}
        size = (data.get("n_images"), data.get("n_cases"))
        if not any(stated):  # hand-made reports stating no size at all: nothing to compare
            continue
        for field, value in zip(("n_images", "n_cases"), size):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NovaInputError(
                    f"states no release size ({value!r}), which every report nova evaluate "
                    "writes holds: edited? re-score it with nova evaluate",
                    source=name,
                    field=f"data.{field}",
                )
        for task, section in (report.get("tasks") or {}).items():
            items = ((section or {}).get("coverage") or {}).get("items")
            if task not in TASKS or items is None:
                continue
            unit = TASKS[task].unit
            expected = size[0] if unit == "image" else size[1]
            if items != expected:
                raise NovaInputError(
                    f"its {task} coverage counts {items!r} items where its release has "
                    f"{expected} {unit}s (data.n_{unit}s): edited? re-score it with nova "
                    "evaluate",
                    source=name,
                    field=f"tasks.{task}.coverage.items",
                )
        sizes.append(size)
    if len(set(sizes)) <= 1:
        return
    listing = "; ".join(
        f"{name} {images} images, {cases} cases" for name, (images, cases) in zip(names, sizes)
    )
    fingerprint = (reports[0].get("data") or {}).get("fingerprint")
    raise NovaInputError(
        f"the reports state one release (fingerprint {fingerprint}) but different sizes: "
        f"{listing}; one of them was edited or scored another release",
        field="data.n_images",
    )


def _same_release(
    reports: Sequence[Mapping[str, Any]], paths: Sequence[str | os.PathLike[str]]
) -> Any:
    """Refuse reports that score different releases; the release fingerprint they share."""
    fingerprints = [(report.get("data") or {}).get("fingerprint") for report in reports]
    if len(set(fingerprints)) > 1:
        listing = ", ".join(f"{path} ({fp})" for path, fp in zip(paths, fingerprints))
        raise NovaInputError(
            f"the reports score different releases and cannot share a leaderboard: {listing}",
            field="data.fingerprint",
        )
    return fingerprints[0]
