"""Per-item results: one row per scored image and one per case, joinable to the dataset.

:func:`build_item_tables` scores predictions exactly as ``nova evaluate`` does and keeps
what each item contributed; :func:`item_tables` does the same from a scoring already done
(:func:`novabench.report.scoring.score_predictions`). Every value comes from the evaluation
the report's numbers come from, so the report's aggregates are recomputable from the
tables: ``mAP@30`` is the mean of ``hit_30`` over the images, ``hit@30`` its mean over images
with ``n_gold_boxes > 0``, ``top1`` / ``top5`` (or ``top1-lexicon`` / ``top5-lexicon``, or
``top1-pairwise`` / ``top5-pairwise``: the report's keys) the means of those columns over the
cases that have them, and ``ROUGE-L`` / ``METEOR`` (or ``METEOR-exact+stem``) / BERTScore (under
the report's key: ``BERTScore-F1``, ``BERTScore-F1-MiniLM-L6`` or ``BERTScore-F1[<model>-L<n>]``) the
means of their columns (the keyword F1s are the means of theirs over non-null rows under
sample averaging, and ``2 TP / (2 TP + FP + FN)`` of their count columns' sums under micro
averaging; ``BinaryF1`` is ``2 TP / (abnormal references + abnormal predictions of labelled
references)`` of the two label columns).

``images`` columns (null where not applicable; every box column is named ``..._xyxy``: boxes
``[x1, y1, x2, y2]`` in pixels of the original image, corners, not the ``[x, y, width,
height]`` the evaluate module and the metric functions take by default: pass
``box_format="xyxy"`` to score them again; tables written before 0.1.0's trust28 named them
without the suffix, and :func:`with_box_columns_named` reads those as these):

- ``filename`` (join key), ``case_id``, ``scan_id``, ``width``, ``height``;
- ``category`` (the case's pathology category), ``category_rule`` (how it was assigned),
  ``sequence``, ``plane`` (from the reference caption), ``images_per_case``;
- ``n_gold_boxes``, ``gold_box_size`` (``small``/``medium``/``large``/``none``),
  ``gold_box_fraction`` (the largest gold box over the image area), ``gold_boxes_xyxy``;
- ``rater_1_boxes_xyxy``, ``rater_2_boxes_xyxy`` (null when the release has no such rater);
- ``predicted_boxes_xyxy`` (null when the image was not answered), ``predicted_scores``,
  ``localization_status`` (the parse status; ``"given"`` for parsed answers, ``"error"`` for
  a failed model call, ``"missing"`` without a line; null when localisation was not scored),
  ``boxes_dropped`` (boxes the parser read in the answer but dropped: zero width or height,
  a value that is not a finite number, a size past a float, or box_2d beside readable boxes under a pixel convention; not scored), ``boxes_swapped`` (boxes whose corners it put in
  order; scored) (both null when no parser read the answer here or the count was not
  recorded),
  ``best_iou`` (0.0 when either side is empty), ``hit_30``, ``hit_50``,
  ``rater_1_best_iou``, ``rater_2_best_iou`` (each rater against gold);
- ``caption_reference``, ``caption_prediction``, ``captioning_status``, one column per
  caption metric with a per-item value (``ROUGE-L``, ``METEOR`` or ``METEOR-exact+stem``,
  BERTScore under the report's key (``BERTScore-F1`` for roberta-large layer 17 only,
  ``BERTScore-F1-MiniLM-L6``, ``BERTScore-F1[<model>-L<layer>]``),
  ``ClinicalF1`` and ``ModalityF1`` with the keyword judge, else ``ClinicalF1-lexicon`` and
  ``ModalityF1-lexicon``, ``SequencePlaneF1``, those computed), and per keyword F1 the
  caption's keyword counts ``<key> TP``, ``<key> FP``, ``<key> FN`` (integers; older
  tables lack them),
  ``binary_label_reference`` / ``binary_label_prediction`` (``abnormal``, ``normal`` or null:
  what BinaryF1 counts), ``keywords_reference``, ``keywords_prediction``.

``cases`` columns: ``case_id``, ``category``, ``category_rule``, ``category_entry``,
``final_diagnosis``, ``n_images``, ``predicted_diagnoses`` (the five counted),
``diagnosis_status``, ``has_reference`` (False for a placeholder diagnosis: not scored),
``matched_slot`` (1..5 or null), ``match_rule`` (``"matcher"``, ``"pair-judge"``,
``"callable"``, ``"case-judge"``; null without a match), then the Top-1 and Top-5 hits under
the report's keys: ``top1``, ``top5`` (case judge), ``top1-lexicon``, ``top5-lexicon`` (the
lexicon matcher) or ``top1-pairwise``, ``top5-pairwise`` (another matcher); null when the case
is not scored. Tables written before the keys named their reading hold ``top1``, ``top5``.

Rows: the images scored by an image task (every image unless ``answered_only``); the cases
scored by the diagnosis task, or, without it, the cases of those images.

Pins: :func:`write_item_tables` writes the tables for a report and gives the report's
``items`` entry (paths relative to the report, ``run_id``, ``sha256`` of every file); each
Parquet table records that run id and the report in its ``novabench.items`` metadata.
:func:`read_item_tables` (the leaderboard's and the HTML page's reader) refuses tables
that are not the ones the report pins; :func:`check_items_folder` keeps a second report
from taking over a folder another report pins.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench import registry
from novabench._files import StagedOutputs, file_sha256, writing_all_or_none
from novabench.errors import OVERWRITE, NovaInputError, Option
from novabench.tasks.captioning import keyword_count_columns

if TYPE_CHECKING:
    import pandas as pd

    from novabench.lexicon.taxonomy import CategoryMap
    from novabench.report.scoring import PredictionPaths, ScoredPredictions, ScoringOptions

__all__ = [
    "CASE_COLUMNS",
    "IMAGE_COLUMNS",
    "ItemTables",
    "build_item_tables",
    "check_items_folder",
    "bleu_from_tables",
    "item_tables",
    "localization_from_tables",
    "older_tables_note",
    "read_item_tables",
    "unrecorded_tables",
    "write_item_tables",
]

#: The images table's fixed columns, in order (caption metric columns follow ``captioning_status``).
IMAGE_COLUMNS: tuple[str, ...] = (
    "filename",
    "case_id",
    "scan_id",
    "width",
    "height",
    "category",
    "category_rule",
    "sequence",
    "plane",
    "images_per_case",
    "n_gold_boxes",
    "gold_box_size",
    "gold_box_fraction",
    "gold_boxes_xyxy",
    "rater_1_boxes_xyxy",
    "rater_2_boxes_xyxy",
    "predicted_boxes_xyxy",
    "predicted_scores",
    "localization_status",
    "boxes_dropped",
    "boxes_swapped",
    "best_iou",
    "hit_30",
    "hit_50",
    "rater_1_best_iou",
    "rater_2_best_iou",
    "caption_reference",
    "caption_prediction",
    "captioning_status",
    "binary_label_reference",
    "binary_label_prediction",
    "keywords_reference",
    "keywords_prediction",
)
#: The cases table's columns, in order.
CASE_COLUMNS: tuple[str, ...] = (
    "case_id",
    "category",
    "category_rule",
    "category_entry",
    "final_diagnosis",
    "n_images",
    "predicted_diagnoses",
    "diagnosis_status",
    "has_reference",
    "matched_slot",
    "match_rule",
    "top1",
    "top5",
)
# Nullable pandas dtypes, so a null stays a null (not NaN in a float column or "None").
_DTYPES: dict[str, str] = {
    "width": "Int64",
    "height": "Int64",
    "images_per_case": "Int64",
    "n_gold_boxes": "Int64",
    "boxes_dropped": "Int64",
    "boxes_swapped": "Int64",
    "n_images": "Int64",
    "matched_slot": "Int64",
    "gold_box_fraction": "Float64",
    "best_iou": "Float64",
    "rater_1_best_iou": "Float64",
    "rater_2_best_iou": "Float64",
    "hit_30": "boolean",
    "hit_50": "boolean",
    "has_reference": "boolean",
    # Per-case hits under each reading's key (top1, top1-lexicon, top1-pairwise, top5...).
    **{
        key: "boolean"
        for key in registry.TASKS[registry.task_answered_in("diagnoses")].headline_keys
    },
}
# The caption scores' columns (their headline keys, BERTScore under any model) are floats.
_CAPTION_SPEC = registry.TASKS[registry.task_answered_in("caption")]
_LABELS = {1: "abnormal", 0: "normal"}
#: The per-item tables' folder: ``directory`` of the functions here, ``--items`` of
#: ``nova evaluate``; a caller whose own argument gives it says so (``NovaReport.save``).
ITEMS_FOLDER = Option("directory", "--items")
# How the per-caption keyword count columns end (``ClinicalF1-lexicon TP``...).
_COUNT_ENDINGS = keyword_count_columns("")


@dataclass(frozen=True)
class ItemTables:
    """The per-image and per-case tables of one evaluation.

    Attributes:
        images: one row per scored image (see the module docstring for the columns).
        cases: one row per case.
    """

    images: pd.DataFrame
    cases: pd.DataFrame

    def write(
        self,
        directory: str | os.PathLike[str],
        *,
        owner: Mapping[str, str] | None = None,
        outputs: StagedOutputs | None = None,
        option: Option = ITEMS_FOLDER,
    ) -> dict[str, Path]:
        """Write ``images.parquet``, ``images.csv``, ``cases.parquet``, ``cases.csv``.

        The folder is created if needed; the four files are written all or none (a folder
        made for them is removed again on failure). In the CSV files list columns are JSON
        text (``[[1.0, 2.0, 3.0, 4.0]]``) and nulls are empty.

        Args:
            directory: the output folder.
            owner: the report the tables belong to (``{"run_id": ..., "report": path of
                the report relative to the folder}``), kept in each Parquet file's key-value
                metadata under ``novabench.items`` (see :func:`write_item_tables`).
            outputs: stage the files in this group of a command's outputs, which puts
                them in place with the others (see :func:`~novabench._files.writing_all_or_none`).
            option: the setting that gave ``directory``, as errors name it.

        Returns:
            ``{"images": parquet path, "images_csv": ..., "cases": ..., "cases_csv": ...}``.

        Example:
            >>> import tempfile, pandas as pd
            >>> images = pd.DataFrame({"filename": ["a.png"], "gold_boxes_xyxy": [[[0.0, 0, 1, 1]]]})
            >>> tables = ItemTables(images,
            ...                     pd.DataFrame({"case_id": ["case0001"]}))
            >>> paths = tables.write(tempfile.mkdtemp())
            >>> sorted(paths), paths["images_csv"].read_text().splitlines()[1]
            (['cases', 'cases_csv', 'images', 'images_csv'], 'a.png,"[[0.0, 0.0, 1.0, 1.0]]"')
        """
        folder = Path(directory)
        if folder.exists() and not folder.is_dir():
            raise NovaInputError("is a file, not a folder", source=str(folder), field=option)
        paths: dict[str, Path] = {}
        with writing_all_or_none(outputs) as group:
            group.make_folder(folder)
            for name, table in (("images", self.images), ("cases", self.cases)):
                mark = None if owner is None else {**owner, "table": name}
                paths[name] = folder / f"{name}.parquet"
                with group.staging(paths[name]) as temporary:
                    _to_parquet(table, temporary, mark)
                paths[f"{name}_csv"] = folder / f"{name}.csv"
                with group.staging(paths[f"{name}_csv"]) as temporary:
                    _to_csv(table, temporary)
        return paths


#: The Parquet key-value metadata key naming the report a per-item table belongs to.
OWNER_KEY = b"novabench.items"


def _to_parquet(table: pd.DataFrame, path: Path, owner: Mapping[str, str] | None = None) -> None:
    if owner is None:
        table.to_parquet(path, index=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.Table.from_pandas(table, preserve_index=False)
    metadata = {**(arrow.schema.metadata or {}), OWNER_KEY: json.dumps(dict(owner)).encode()}
    pq.write_table(arrow.replace_schema_metadata(metadata), path)


def _to_csv(table: pd.DataFrame, path: Path) -> None:
    flat = table.copy()
    for column in flat.columns:
        if flat[column].dtype == object and flat[column].map(_is_list).any():
            flat[column] = flat[column].map(lambda v: None if v is None else json.dumps(_plain(v)))
    flat.to_csv(path, index=False)


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return (
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    )


def build_item_tables(
    data: str | os.PathLike[str],
    predictions: PredictionPaths,
    options: ScoringOptions | None = None,
    *,
    answered_only: bool | None = None,
    category_map: CategoryMap | str | os.PathLike[str] | None = None,
) -> ItemTables:
    """Score predictions as ``nova evaluate`` does and return the per-item tables.

    Args:
        data: the release folder.
        predictions: one predictions file or several.
        options: how to score (:class:`~novabench.report.scoring.ScoringOptions`).
        answered_only: score only answered items; None: as ``options`` says (default no).
        category_map: a :class:`~novabench.lexicon.taxonomy.CategoryMap` or the path of a
            mapping file; None: as ``options`` says (default the built-in taxonomy).

    Returns:
        An :class:`ItemTables`.

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> from novabench.data.release import read_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=2, seed=0, progress=False)
        >>> image = read_release(release).images[0]
        >>> line = {"filename": image.filename, "boxes": image.boxes}
        >>> _ = (root / "pred.jsonl").write_text(json.dumps(line) + "\\n")
        >>> tables = build_item_tables(release, root / "pred.jsonl", answered_only=True)
        >>> row = tables.images.iloc[0]
        >>> row["filename"] == image.filename, round(float(row["best_iou"]), 9), bool(row["hit_50"])
        (True, 1.0, True)
    """
    from novabench.report.scoring import ScoringOptions, score_predictions

    overrides: dict[str, Any] = {"n_resamples": 0}  # tables need no intervals
    if answered_only is not None:
        overrides["answered_only"] = answered_only
    if category_map is not None:
        from novabench.lexicon.taxonomy import CategoryMap, load_category_map

        if not isinstance(category_map, CategoryMap):
            category_map = load_category_map(category_map)
        overrides["category_map"] = category_map
    chosen = ScoringOptions.build(options, **overrides)
    return item_tables(score_predictions(data, predictions, chosen))


def item_tables(scored: ScoredPredictions) -> ItemTables:
    """The per-item tables of a scoring already done.

    Args:
        scored: what :func:`novabench.report.scoring.score_predictions` returned.

    Returns:
        An :class:`ItemTables`.

    Example:
        >>> import tempfile, pathlib, json
        >>> from novabench.data.sample import write_sample_release
        >>> from novabench.report.scoring import score_predictions
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = write_sample_release(root / "nova", n_cases=2, seed=0, progress=False)
        >>> line = {"case_id": "case0001", "diagnoses": []}
        >>> _ = (root / "p.jsonl").write_text(json.dumps(line) + "\\n")
        >>> tables = item_tables(score_predictions(release, root / "p.jsonl", n_resamples=0))
        >>> len(tables.images), tables.cases["diagnosis_status"].tolist()
        (0, ['given', 'missing'])
    """
    import pandas as pd

    images = _image_rows(scored)
    cases = _case_rows(scored, {row["case_id"] for row in images})
    image_columns = list(IMAGE_COLUMNS)
    metric_columns = [c for c in (images[0] if images else {}) if c not in IMAGE_COLUMNS]
    at = image_columns.index("captioning_status") + 1
    image_columns[at:at] = metric_columns
    # The hit columns carry the report's keys: top1 only for the case judge's reading.
    diagnosis = _task_of(scored, "diagnoses")
    keys = scored.evaluations[diagnosis].keys if diagnosis is not None else ("top1", "top5")
    case_columns = [dict(zip(("top1", "top5"), keys)).get(c, c) for c in CASE_COLUMNS]
    return ItemTables(_frame(pd, images, image_columns), _frame(pd, cases, case_columns))


def _frame(pd: Any, rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=columns)
    for column in columns:
        if column in _DTYPES:
            table[column] = table[column].astype(_DTYPES[column])
        elif column.endswith(_COUNT_ENDINGS):
            table[column] = table[column].astype("Int64")
        elif (
            column in _CAPTION_SPEC.headline_keys
            or column.endswith("F1")
            or _CAPTION_SPEC.anchor_of(column)  # BERTScore-F1[<model>-L<n>]
        ):
            table[column] = table[column].astype("Float64")
        else:
            table[column] = table[column].astype(object).where(table[column].notna(), None)
    return table


def _xyxy(boxes: Sequence[Sequence[float]] | None) -> list[list[float]] | None:
    if boxes is None:
        return None
    return [[float(x), float(y), float(x) + float(w), float(y) + float(h)] for x, y, w, h in boxes]


def _status(record: Any, scored: bool) -> str | None:
    if not scored:
        return None
    if record is None:
        return "missing"
    if record.error is not None:
        return "error"
    return str(record.parse_status) if record.parse_status is not None else "given"


def _task_of(scored: ScoredPredictions, answer_field: str) -> str | None:
    for task in scored.evaluations:
        if registry.TASKS[task].answer_field == answer_field:
            return task
    return None


def _image_rows(scored: ScoredPredictions) -> list[dict[str, Any]]:
    from novabench.report.human_reference import human_reference

    release = scored.release
    records = scored.prediction_set.records
    localization = _task_of(scored, "boxes")
    captioning = _task_of(scored, "caption")
    image_tasks = [t for t in (localization, captioning) if t is not None]
    rows_at = sorted({p for task in image_tasks for p in scored.positions[task]})
    item_of = {task: {p: i for i, p in enumerate(scored.positions[task])} for task in image_tasks}

    location: dict[str, list[Any]] = {}
    if localization is not None:
        evaluation = scored.evaluations[localization]
        location["best_iou"] = [v or 0.0 for v in evaluation.per_image_best_iou]
        location.update(evaluation.per_image_hits())
    caption: dict[str, list[Any]] = {}
    labels: tuple[Any, Any] | None = None  # (references, predictions), what BinaryF1 counts
    keywords: tuple[Any, Any] | None = None
    if captioning is not None:
        evaluation = scored.evaluations[captioning]
        caption = {**evaluation.per_pair(), **_keyword_count_values(evaluation)}
        if evaluation.reference_labels is not None:
            labels = (evaluation.reference_labels, evaluation.prediction_labels)
        if evaluation.reference_keywords is not None:
            keywords = (evaluation.reference_keywords, evaluation.prediction_keywords)
    # The raters on the rows' images, by the function the report's human reference uses.
    human = human_reference(release, rows_at, n_resamples=0)
    rater_row = {p: i for i, p in enumerate(rows_at)}

    rows = []
    for position in rows_at:
        image = release.images[position]
        facts = scored.images[position]
        row: dict[str, Any] = {
            "filename": image.filename,
            "case_id": image.case_id,
            "scan_id": image.scan_id,
            "width": image.width,
            "height": image.height,
            "category": facts.case.category,
            "category_rule": facts.case.category_rule,
            "sequence": facts.sequence,
            "plane": facts.plane,
            "images_per_case": facts.case.n_images,
            "n_gold_boxes": facts.n_gold_boxes,
            "gold_box_size": facts.gold_box_size,
            "gold_box_fraction": facts.gold_box_fraction,
            "gold_boxes_xyxy": _xyxy(image.boxes),
            "caption_reference": image.caption,
        }
        for slot in ("rater_1", "rater_2"):
            boxes = human.boxes.get(slot)
            iou = human.best_iou.get(f"{slot}_vs_gold")
            at = rater_row[position]
            row[f"{slot}_boxes_xyxy"] = None if boxes is None else _xyxy(boxes[at])
            row[f"{slot}_best_iou"] = None if iou is None else iou[at]
        if localization is not None:
            item = item_of[localization].get(position)
            record = records[localization].get(image.filename)
            row["localization_status"] = _status(record, item is not None)
            answered = record is not None and record.error is None and item is not None
            row["predicted_boxes_xyxy"] = _xyxy(record.boxes or []) if answered else None
            row["predicted_scores"] = list(record.scores) if answered and record.scores else None
            for column in ("boxes_dropped", "boxes_swapped"):
                row[column] = getattr(record, column) if answered else None
            for column in ("best_iou", "hit_30", "hit_50"):
                row[column] = None if item is None else location[column][item]
        if captioning is not None:
            item = item_of[captioning].get(position)
            record = records[captioning].get(image.filename)
            row["captioning_status"] = _status(record, item is not None)
            answered = record is not None and record.error is None and item is not None
            row["caption_prediction"] = str(record.caption) if answered else None
            for name, values in caption.items():
                row[name] = None if item is None else values[item]
            if item is not None and labels is not None:
                row["binary_label_reference"] = _LABELS.get(int(labels[0][item]))
                row["binary_label_prediction"] = _LABELS.get(int(labels[1][item]))
            if item is not None and keywords is not None:
                row["keywords_reference"] = _keywords(keywords[0][item])
                row["keywords_prediction"] = _keywords(keywords[1][item])
        rows.append(row)
    return rows


def _keyword_count_values(evaluation: Any) -> dict[str, list[int]]:
    """Per keyword F1 scored, its per-caption TP, FP and FN columns (their sums over captions
    make the micro-averaged F1, which the per-caption F1s do not give)."""
    from novabench.metrics.captioning import KEYWORD_FAMILIES

    columns: dict[str, list[int]] = {}
    for name in evaluation.metrics:
        family = KEYWORD_FAMILIES.get(name)
        if family is None or family not in evaluation.keyword_counts:
            continue
        counts = evaluation.keyword_counts[family]
        for position, column in enumerate(keyword_count_columns(name)):
            columns[column] = [int(value) for value in counts[:, position]]
    return columns


def _keywords(keywords: Any) -> list[str]:
    return sorted(set(keywords.modality) | set(keywords.clinical))


def _case_rows(scored: ScoredPredictions, image_cases: set[str]) -> list[dict[str, Any]]:
    diagnosis = _task_of(scored, "diagnoses")
    results_at: dict[int, Any] = {}
    match_rule = None
    top1_key, top5_key = "top1", "top5"
    if diagnosis is not None:
        evaluation = scored.evaluations[diagnosis]
        match_rule = evaluation.match_rule
        top1_key, top5_key = evaluation.keys  # the reading's keys, as the report's
        for case in evaluation.cases:
            results_at[scored.positions[diagnosis][case.index]] = case
        positions = list(scored.positions[diagnosis])
    else:
        positions = [i for i, facts in enumerate(scored.cases) if facts.case_id in image_cases]
    records = scored.prediction_set.records.get(diagnosis, {}) if diagnosis else {}
    rows = []
    for position in positions:
        facts = scored.cases[position]
        result = results_at.get(position)
        row: dict[str, Any] = {
            "case_id": facts.case_id,
            "category": facts.category,
            "category_rule": facts.category_rule,
            "category_entry": facts.category_entry,
            "final_diagnosis": facts.final_diagnosis,
            "n_images": facts.n_images,
            "diagnosis_status": _status(records.get(facts.case_id), diagnosis is not None),
        }
        if result is not None:
            slot = result.first_hit_rank
            row.update(
                predicted_diagnoses=list(result.predictions),
                has_reference=result.has_reference,
                matched_slot=slot,
                match_rule=match_rule if slot is not None else None,
            )
            row[top1_key] = (slot == 1) if result.has_reference else None
            row[top5_key] = (slot is not None) if result.has_reference else None
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- pinning
# A report pins the tables it wrote: its ``items`` entry holds a run id and the SHA-256 of
# every file; each Parquet table holds the run id and the report's name in its metadata.
# A reader recomputes the hashes and refuses a table another evaluation (or a kill between
# the tables and the report) left in place, so a report never scores with another's tables.

_PINNED_FILES = ("images.parquet", "images.csv", "cases.parquet", "cases.csv")


_TABLE_FILES = ("images.parquet", "images.csv", "cases.parquet", "cases.csv")


def _owner(path: Path) -> dict[str, Any] | None:
    """The ``novabench.items`` metadata of a Parquet table, or None (not ours, unreadable)."""
    try:
        import pyarrow.parquet as pq

        metadata = pq.read_schema(path).metadata or {}
        owner = json.loads(metadata[OWNER_KEY])
    except Exception:  # a foreign or broken file has no owner to protect
        return None
    return owner if isinstance(owner, dict) else None


def check_items_folder(
    directory: str | os.PathLike[str],
    report_path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    option: Option = ITEMS_FOLDER,
) -> None:
    """Refuse an ``--items`` folder that holds the tables of another report still pointing at them.

    Two reports cannot share one folder: the second would replace the tables the first one
    pins. Tables of the same report (a rerun of it) and of a report that is gone or that no
    longer pins them are replaced. Tables that record no report (an older novabench's, or
    another program's) may still be an older report's: they are replaced only with
    ``overwrite``. ``option`` is the setting that gave ``directory``, as errors name it.

    Raises:
        NovaInputError: the folder's tables belong to another existing report, or record
            none and ``overwrite`` is False.

    Example:
        >>> import tempfile
        >>> check_items_folder(tempfile.mkdtemp(), "report.json") is None
        True
        >>> older = Path(tempfile.mkdtemp()); _ = (older / "images.csv").write_text("filename\\n")
        >>> check_items_folder(older, "report.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: ..., field 'directory': holds per-item tables (images.csv) that record no report...; pass overwrite=True to replace them
    """
    folder, present = Path(directory), unrecorded_tables(directory)
    if present and not overwrite:
        raise NovaInputError(
            (
                f"holds per-item tables ({', '.join(present)}) that record no report (an older "
                "novabench's, maybe pinned by an older report); pass ",
                OVERWRITE,
                " to replace them",
            ),
            source=str(folder),
            field=option,
        )
    folder, report = Path(directory), Path(report_path)
    for name in ("images", "cases"):
        table = folder / f"{name}.parquet"
        owner = _owner(table) if table.is_file() else None
        if owner is None or not isinstance(owner.get("report"), str):
            continue
        other = Path(os.path.normpath(folder / owner["report"]))
        if not other.is_file() or (report.exists() and _same_file(other, report)):
            continue
        try:
            pinned = json.loads(other.read_text(encoding="utf-8")).get("items", {}).get("run_id")
        except (OSError, ValueError, AttributeError):
            continue  # not a report any more: nothing points at the tables
        if pinned == owner.get("run_id"):
            raise NovaInputError(
                (
                    f"holds the per-item tables of the report {other}, which points at them; "
                    "a second report would replace them: give ",
                    option,
                    " another folder",
                ),
                source=str(folder),
                field=option,
            )


def unrecorded_tables(directory: str | os.PathLike[str]) -> list[str]:
    """The per-item table files in ``directory`` when none of them records its report.

    Such tables were written by an older novabench (before tables named their report) or
    by another program: :func:`check_items_folder` replaces them only with ``overwrite``.

    Example:
        >>> import tempfile
        >>> older = Path(tempfile.mkdtemp()); _ = (older / "cases.csv").write_text("case_id\\n")
        >>> unrecorded_tables(older), unrecorded_tables(older / "none")
        (['cases.csv'], [])
    """
    folder = Path(directory)
    present = [name for name in _TABLE_FILES if (folder / name).is_file()]
    marked = any(_owner(folder / name) for name in present if name.endswith(".parquet"))
    return [] if marked else present


def older_tables_note(
    directory: str | os.PathLike[str], report_path: str | os.PathLike[str]
) -> str | None:
    """What replacing the unrecorded tables in ``directory`` loses, in one line; None if none.

    Read before the tables are replaced. The tables record no version; the report at
    ``report_path`` (the one being replaced) gives it when it points at them.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()); (root / "items").mkdir()
        >>> _ = (root / "items" / "images.csv").write_text("filename\\n")
        >>> _ = (root / "r.json").write_text(json.dumps({"toolkit": {"version": "0.0.9"},
        ...     "items": {"images": "items/images.parquet"}}))
        >>> print(older_tables_note(root / "items", root / "r.json"))  # doctest: +ELLIPSIS
        replaced the per-item tables of an older novabench in .../items (they recorded no \
report): images.csv; written by novabench 0.0.9, the version of .../r.json, the report that \
pointed at them
    """
    names = unrecorded_tables(directory)
    if not names:
        return None
    folder, version = Path(directory), None
    try:
        report = json.loads(Path(report_path).read_text(encoding="utf-8"))
        tables = [report["items"].get(name) for name in ("images", "cases")]
        here = os.path.realpath(folder)
        if any(
            isinstance(table, str)
            and os.path.realpath((Path(report_path).parent / table).parent) == here
            for table in tables
        ):
            found = report["toolkit"]["version"]
            version = found if isinstance(found, str) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # no such report, or not one of ours: the version stays unknown
    said = (
        f"written by novabench {version}, the version of {report_path}, the report that "
        "pointed at them"
        if version
        else "their version is not recorded"
    )
    return (
        f"replaced the per-item tables of an older novabench in {folder} (they recorded no "
        f"report): {', '.join(names)}; {said}"
    )


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def write_item_tables(
    tables: ItemTables,
    directory: str | os.PathLike[str],
    report_path: str | os.PathLike[str],
    *,
    outputs: StagedOutputs | None = None,
    option: Option = ITEMS_FOLDER,
) -> dict[str, Any]:
    """Write the tables for a report and return the report's ``items`` entry that pins them.

    The entry names the Parquet tables relative to the report's folder and holds a fresh
    ``run_id`` and the SHA-256 of each of the four files (``sha256``); each Parquet table
    records the run id and the report's path relative to the folder. Write the report after
    the tables: a kill in between leaves a report whose pins no longer match (a refusal on
    reading, never a silent mix). With ``outputs`` the tables are only staged in that group
    of a command's outputs (the pins are those of the staged files, the ones its commit puts
    in place; see :func:`~novabench._files.writing_all_or_none`). ``option`` is the setting
    that gave ``directory``, as errors name it.

    Example:
        >>> import tempfile, pandas as pd
        >>> root = Path(tempfile.mkdtemp())
        >>> tables = ItemTables(pd.DataFrame({"filename": ["a.png"]}), pd.DataFrame({"case_id": ["case0001"]}))
        >>> entry = write_item_tables(tables, root / "items", root / "report.json")
        >>> entry["images"], sorted(entry["sha256"]), len(entry["run_id"])
        ('items/images.parquet', ['cases.csv', 'cases.parquet', 'images.csv', 'images.parquet'], 32)
    """
    import uuid

    folder, report = Path(directory), Path(report_path)
    run_id = uuid.uuid4().hex
    relative_report = os.path.relpath(report.resolve(), folder.resolve())
    with writing_all_or_none(outputs) as group:
        owner = {"run_id": run_id, "report": relative_report}
        paths = tables.write(folder, owner=owner, outputs=group, option=option)
        report_folder = report.resolve().parent
        entry: dict[str, Any] = {
            name: os.path.relpath(paths[name].resolve(), report_folder)
            for name in ("images", "cases")
        }
        entry["run_id"] = run_id
        entry["sha256"] = {
            path.name: file_sha256(group.file_holding(path)) for path in paths.values()
        }
    return entry


def read_item_tables(
    report: Mapping[str, Any], report_path: str | os.PathLike[str]
) -> dict[str, Any]:
    """The per-item tables a report points at, checked to be the ones it wrote.

    Raises:
        NovaInputError: the report has no ``items`` entry or does not pin its tables (written
            by an older novabench), a table is missing, or a table is not the one the report
            wrote (its SHA-256 or run id differs: another evaluation replaced it).

    Example:
        >>> read_item_tables({"tasks": {}}, "r.json")
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: r.json, field 'items': the report has no per-item tables; score it with nova evaluate --items DIR
    """
    import pandas as pd

    entry = report.get("items")
    if not entry:
        raise NovaInputError(
            "the report has no per-item tables; score it with nova evaluate --items DIR",
            source=str(report_path),
            field="items",
        )
    hashes = entry.get("sha256") if isinstance(entry, Mapping) else None
    if not isinstance(hashes, Mapping) or not entry.get("run_id"):
        raise NovaInputError(
            "the report does not pin its per-item tables (an older novabench wrote it), so "
            "they may be another evaluation's; score it again with nova evaluate --items DIR",
            source=str(report_path),
            field="items",
        )
    base = Path(report_path).parent
    tables = {}
    for name in ("images", "cases"):
        path = base / str(entry[name])
        if not path.is_file():
            # A report shared alone is the usual cause: say what brings the tables back.
            raise NovaInputError(
                f"the per-item table {path} is missing; share the report together with its items "
                f"folder (the report expects {entry[name]!r} relative to itself), or score the "
                "predictions again with nova evaluate --items DIR",
                source=str(report_path),
                field="items",
            )
        owner = _owner(path) or {}
        digest = file_sha256(path)
        if owner.get("run_id") != entry["run_id"]:
            cause = (
                f"it records run id {owner.get('run_id')}, the report {entry['run_id']}: "
                "another evaluation or an interrupted one replaced it"
            )
        elif digest != hashes.get(path.name):
            cause = (
                f"its SHA-256 {digest} differs from the {hashes.get(path.name)} the report "
                "pinned: it was changed after the report was written"
            )
        else:
            cause = ""
        if cause:
            raise NovaInputError(
                f"the per-item table {path} is not the one this report wrote ({cause}); "
                "score the report again with nova evaluate --items",
                source=str(report_path),
                field="items",
            )
        table = pd.read_parquet(path)
        tables[name] = with_box_columns_named(table) if name == "images" else table
    return tables


#: The images table's box columns as tables written before named them -> their names now,
#: which say the convention (``[x1, y1, x2, y2]`` pixels; the metric's default is ``xywh``).
BOX_COLUMNS_RENAMED: dict[str, str] = {
    "gold_boxes": "gold_boxes_xyxy",
    "rater_1_boxes": "rater_1_boxes_xyxy",
    "rater_2_boxes": "rater_2_boxes_xyxy",
    "predicted_boxes": "predicted_boxes_xyxy",
}


def with_box_columns_named(images: pd.DataFrame) -> pd.DataFrame:
    """An images table with an older table's box columns under their names now (``..._xyxy``);
    the table itself when it has them already.

    Example:
        >>> import pandas as pd
        >>> older = pd.DataFrame({"filename": ["a.png"], "gold_boxes": [[[0.0, 0, 1, 1]]]})
        >>> list(with_box_columns_named(older).columns)
        ['filename', 'gold_boxes_xyxy']
    """
    renamed = {
        old: new
        for old, new in BOX_COLUMNS_RENAMED.items()
        if old in images.columns and new not in images.columns
    }
    return images.rename(columns=renamed) if renamed else images


def _box_lists(value: Any) -> list[list[float]] | None:
    """A table cell of boxes (a list, or Parquet's array of arrays) as plain float lists."""
    if value is None:
        return None
    return [[float(end) for end in box] for box in value]


def localization_from_tables(tables: Mapping[str, Any], keys: Sequence[str] = ()) -> Any:
    """The localisation evaluation of the images the report scored, rebuilt from the table.

    The images table holds what the scorer was given: each scored image's predicted boxes,
    their scores (null: none given, every score 1.0) and the gold boxes, as
    ``[x1, y1, x2, y2]`` pixels. They are scored in that form (``box_format="xyxy"``, no
    conversion back to ``[x, y, w, h]`` by the caller), in the table's order (the
    evaluation's), so the COCO-AP keys, ACC50, TP30, FP30 and FNR come out as ``nova
    evaluate`` computed them, and a bootstrap with the report's settings draws the same
    images. An image not answered (``predicted_boxes`` null) scores as no box, as it did.

    Args:
        tables: the per-item tables (:func:`read_item_tables`).
        keys: the headline keys wanted; without a COCO-AP key among them the evaluation
            skips COCO AP (most of a resample's cost).

    Returns:
        An evaluation (``aggregate``, ``aggregate_resamples``), or None when the table lacks
        the boxes (localisation not scored).

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"localization_status": ["given", "missing"],
        ...     "gold_boxes_xyxy": [[[0.0, 0.0, 10.0, 10.0]], [[0.0, 0.0, 4.0, 4.0]]],
        ...     "predicted_boxes_xyxy": [[[0.0, 0.0, 10.0, 20.0]], None],
        ...     "predicted_scores": [None, None]})
        >>> evaluation = localization_from_tables({"images": images}, ["FNR", "TP30"])
        >>> scores = evaluation.aggregate()
        >>> scores["FNR"], scores["TP30"], "COCO-AP@30" in scores
        (0.5, 0.5, False)
    """
    import warnings

    from novabench.metrics.localization import (
        COCO_AP_KEYS,
        LocalizationWarning,
        prepare_localization,
    )
    from novabench.report.breakdowns import result_without_coco_ap

    images = with_box_columns_named(tables["images"])
    needed = {"localization_status", "gold_boxes_xyxy", "predicted_boxes_xyxy", "predicted_scores"}
    if not needed <= set(images.columns):
        return None
    scored = images[images["localization_status"].notna()]
    predictions = []
    for boxes, scores in zip(scored["predicted_boxes_xyxy"], scored["predicted_scores"]):
        prediction: dict[str, Any] = {"boxes": _box_lists(boxes) or []}
        if scores is not None:
            prediction["scores"] = [float(score) for score in scores]
        predictions.append(prediction)
    references = [{"boxes": _box_lists(boxes)} for boxes in scored["gold_boxes_xyxy"]]
    with warnings.catch_warnings():
        # What the scorer warned about (no gold box, truncated boxes), nova evaluate said.
        warnings.simplefilter("ignore", LocalizationWarning)
        evaluation = prepare_localization(
            predictions, references, box_format="xyxy", reference_box_format="xyxy"
        )
    if any(key in COCO_AP_KEYS for key in keys):
        return evaluation
    return result_without_coco_ap(evaluation)


def bleu_from_tables(tables: Mapping[str, Any], keys: Sequence[str] = ()) -> Any:
    """The captioning evaluation of BLEU-4 alone over the captions the report scored, from
    the table's two captions (a caption not answered, null, scores as ``""``, as it did).

    BLEU-4 is a corpus score: its sufficient statistics are summed over the captions
    drawn, so neither its value nor a resample's is a mean of a column; re-scored from the
    captions, in the table's order, both come out as ``nova evaluate`` computed them. No
    setting of the report changes BLEU-4.

    Args:
        tables: the per-item tables (:func:`read_item_tables`).
        keys: the headline keys wanted (only BLEU-4 is given).

    Returns:
        A :class:`~novabench.metrics.captioning.CaptioningEvaluation` of BLEU-4, or None when
        the table lacks the captions (captioning not scored).

    Example:
        >>> import pandas as pd
        >>> images = pd.DataFrame({"captioning_status": ["given", None],
        ...     "caption_reference": ["Axial FLAIR shows a left frontal mass.", "Normal."],
        ...     "caption_prediction": ["Axial FLAIR shows a left frontal mass.", None]})
        >>> evaluation = bleu_from_tables({"images": images}, ["BLEU-4"])
        >>> evaluation.n_items, round(evaluation.aggregate()["BLEU-4"], 12)  # exp(log) rounding
        (1, 1.0)
    """
    from novabench.metrics.captioning import METRIC_NAMES, prepare_captioning

    images = tables["images"]
    if not {"captioning_status", "caption_reference", "caption_prediction"} <= set(images.columns):
        return None
    scored = images[images["captioning_status"].notna()]
    predictions = [text if isinstance(text, str) else "" for text in scored["caption_prediction"]]
    return prepare_captioning(
        predictions,
        [str(text) for text in scored["caption_reference"]],
        exclude=[name for name in METRIC_NAMES if name != "BLEU-4"],
    )
