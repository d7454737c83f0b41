"""What the board reads from the task modules, and where reports differ in their settings.

Per task, the metric it is ranked on (:data:`RANK_METRICS`) and the settings its scores
depend on (:data:`SCORING_SETTINGS`), both declared by the task's module; where the reports
record different values of a setting (:func:`_setting_differences`: the metrics it affects
are marked, a task whose ranking metric it affects is not ranked) or of their bootstrap
(:func:`_bootstrap_note`: noted). Differences here are shown, never refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from novabench.registry import TASK_NAMES, TASKS
from novabench.report.render import headline_keys, portable_bertscore_hash
from novabench.tasks import behaviour, tasks_where
from novabench.tasks.captioning import BERTSCORE_FINGERPRINT, bertscore_setting_without_model

#: Per task, the metric ranked on (a mean over the items of the per-item tables); each
#: task's module (``novabench/tasks/<task>.py``) declares it.
RANK_METRICS: dict[str, str] = {task: behaviour(task).rank_metric for task in TASK_NAMES}

#: Per task, the settings a report records in the task's metrics and the metrics each one
#: affects; ``"*"`` is every metric of the task. ``answered_only`` is read from the report.
#: Declared by each task's module.
SCORING_SETTINGS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    task: behaviour(task).comparability_settings for task in TASK_NAMES
}

# The tasks whose report carries a human reference (rows under the task's table).
_HUMAN_TASKS = tasks_where(lambda spec: spec.human_reference)

# The tasks whose per-item tables give the hit-rate curve its best IoUs.
_CURVE_TASKS = tasks_where(lambda spec: spec.hit_rate_curve)

_UNKNOWN = "unknown: not recorded"


def _setting_value(report: Mapping[str, Any], task: str, setting: str) -> str:
    """A report's recorded value of a setting, comparable across machines, or unknown."""
    value: Any
    if setting == "answered_only":
        # Reports written before --answered-only existed scored every item.
        value = bool(report.get("answered_only", False))
    else:
        value = (((report.get("tasks") or {}).get(task) or {}).get("metrics") or {}).get(setting)
    if value is None:
        return _UNKNOWN
    text = str(value)
    return portable_bertscore_hash(text) if setting == "BERTScore_hash" else text


def _setting_differences(
    reports: Sequence[Mapping[str, Any]], paths: Sequence[str | os.PathLike[str]]
) -> list[dict[str, Any]]:
    """Per task and setting, where the reports having the task record different values.

    A setting no report records is not compared (nothing to compare); one only some
    reports record counts as "unknown" for the others, a difference.
    """
    differences = []
    for task, settings in SCORING_SETTINGS.items():
        having = [
            (report, str(path))
            for report, path in zip(reports, paths)
            if task in (report.get("tasks") or {})
        ]
        if len(having) < 2:
            continue
        task_keys = {
            key for report, _ in having for key in (report["tasks"][task] or {}).get("metrics", {})
        }
        for setting, affected in settings:
            values = _compared_values(having, task, setting)
            distinct = list(dict.fromkeys(value for _, value in values))
            if len(distinct) < 2:
                continue
            metrics = sorted(task_keys) if affected == ("*",) else list(affected)
            # A key named after a user's model (BERTScore-F1[...]) is affected as its anchor.
            metrics = [
                key
                for key in headline_keys(task, task_keys)
                if (key in metrics or TASKS[task].anchor_of(key) in metrics) and key in task_keys
            ]
            if setting in behaviour(task).reading_settings:
                # The keys name the reading: only the reports holding a key are compared on it.
                metrics = [
                    key for key in metrics if _differs_among_holders(having, task, setting, key)
                ]
                if not metrics:
                    continue
            groups = [
                ", ".join(path for path, value in values if value == wanted) + f" ({wanted})"
                for wanted in distinct
            ]
            who = ", ".join(metrics) if metrics else "its metrics"
            sentence = (
                f"{task}: {who} not comparable: {setting} differs between "
                + " and ".join(groups)
                + "."
            )
            differences.append(
                {
                    "task": task,
                    "setting": setting,
                    "metrics": metrics,
                    "values": {path: value for path, value in values},
                    "sentence": sentence,
                }
            )
    return differences


def _differs_among_holders(
    having: Sequence[tuple[Mapping[str, Any], str]], task: str, setting: str, key: str
) -> bool:
    """Whether the reports holding ``key`` recorded different values of ``setting``."""
    holders = [
        (report, path)
        for report, path in having
        if key in ((report["tasks"][task] or {}).get("metrics") or {})
    ]
    return len({value for _, value in _compared_values(holders, task, setting)}) > 1


def _compared_values(
    having: Sequence[tuple[Mapping[str, Any], str]], task: str, setting: str
) -> list[tuple[str, str]]:
    """``(path, value)`` of a setting for the reports compared on it.

    The BERTScore model folder's fingerprint is compared among the reports that record it
    (older reports, and Hub models, have none: their hash alone says which model, as
    before). Where every report with a BERTScore hash records a fingerprint, the hashes are
    compared without the folder they name: the fingerprint says whether the weights are
    the same, wherever the folder was.
    """
    values = [(path, _setting_value(report, task, setting)) for report, path in having]
    if setting == BERTSCORE_FINGERPRINT:
        return [(path, value) for path, value in values if value != _UNKNOWN]
    if setting == "BERTScore_hash":
        fingerprints = [
            _setting_value(report, task, BERTSCORE_FINGERPRINT)
            for (report, _), (_, value) in zip(having, values)
            if value != _UNKNOWN
        ]
        if fingerprints and _UNKNOWN not in fingerprints:
            return [
                (path, value if value == _UNKNOWN else bertscore_setting_without_model(value))
                for path, value in values
            ]
    return values


def _bootstrap_note(
    reports: Sequence[Mapping[str, Any]], paths: Sequence[str | os.PathLike[str]]
) -> str:
    """A sentence when the reports' CIs come from different bootstrap settings ("" if not)."""

    def described(report: Mapping[str, Any]) -> str:
        settings = report.get("bootstrap")
        if not isinstance(settings, Mapping):
            return _UNKNOWN
        # A report without a unit resampled images (written before cases were resampled).
        settings = {"unit": "image", **settings}
        return ", ".join(f"{key}={settings[key]}" for key in sorted(settings))

    values = [(str(path), described(report)) for report, path in zip(reports, paths)]
    distinct = list(dict.fromkeys(value for _, value in values))
    if len(distinct) < 2:
        return ""
    groups = [
        ", ".join(path for path, value in values if value == wanted) + f" ({wanted})"
        for wanted in distinct
    ]
    return (
        "the reports' CIs are not comparable: the bootstrap settings differ between "
        + " and ".join(groups)
        + " (ranks and ties use the leaderboard's own bootstrap)."
    )
