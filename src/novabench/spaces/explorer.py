"""The NOVA explorer Space: every case with its slices, boxes, texts and a model's answers.

A researcher picks a case (from a list filtered by text, with previous/next, or by the link
``?case=ID``), sees all its slices losslessly (PNG) with the gold boxes, each rater's boxes
and optionally a model's boxes, each layer toggled and drawn in its own colour, and reads
the case's title, date, clinical history, final diagnosis, other metadata and each slice's
caption. An uploaded predictions JSONL (as ``nova run`` writes it) adds the model's boxes,
the best IoU per slice, and the parsed caption and diagnoses beside the reference.

The pure functions here (drawing, filtering, Markdown, reading predictions) need no Gradio;
:func:`build_demo` builds the interface.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novabench import registry
from novabench._files import write_bytes_atomic
from novabench.data.render import (
    GOLD_COLOUR,
    PREDICTION_COLOUR,
    RATER_COLOURS,
    colour_name,
    draw_annotations,
)
from novabench.errors import NovaError
from novabench.escaping import html_text, markdown_code_span, markdown_text, visible_text
from novabench.report.html import SCROLL_SHADOWS_CSS
from novabench.spaces.source import (
    MAX_UPLOAD_BYTES,
    OpenedSource,
    check_upload_size,
    open_source,
    scrub_paths,
)

if TYPE_CHECKING:
    import gradio as gr
    from PIL import Image

    from novabench.data.release import NovaRelease
    from novabench.records import CaseRecord, ImageRecord

__all__ = [
    "GOLD_LAYER",
    "MODEL_LAYER",
    "NO_LINE",
    "ModelAnswers",
    "answer_state",
    "build_demo",
    "case_markdown",
    "link_note_text",
    "draw_slice",
    "model_help_text",
    "filter_cases",
    "layer_names",
    "legend_html",
    "line_width",
    "read_model_answers",
    "slice_file",
    "slice_iou",
    "upload_status_text",
]

# The tasks answered in boxes, captions and diagnosis lists (named by the registry).
_BOXES_TASK = registry.task_answered_in("boxes")
_CAPTION_TASK = registry.task_answered_in("caption")
_DIAGNOSIS_TASK = registry.task_answered_in("diagnoses")

GOLD_LAYER = "gold"
MODEL_LAYER = "model"
_RATER_PREFIX = "rater "


@dataclass
class ModelAnswers:
    """A model's parsed answers, keyed as the release keys them.

    Attributes:
        name: the uploaded file's name (shown on the page).
        boxes: ``{filename: [[x, y, w, h], ...]}`` of the images the model localised.
        captions: ``{filename: caption}``.
        diagnoses: ``{case_id: [diagnosis, ...]}``, most likely first.
        notes: what the reader noticed (parse statuses, answers that failed), for the page.
        best_iou: ``{filename: best IoU}`` as the report and its item table give it
            (None: no gold box); a slice missing here is computed from ``boxes``.
        unusable: ``{task: {key: why}}`` for the items whose line holds no usable answer
            (:func:`answer_state`); an item in neither this nor the answers has no line.
        notices: the report's lines on how the answers were read (no manifest given,
            answers not read...), shown first.
    """

    name: str
    boxes: dict[str, list[list[float]]] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)
    diagnoses: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    best_iou: dict[str, float | None] = field(default_factory=dict)
    unusable: dict[str, dict[str, str]] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)

    def missing_answer(self, task: str, key: str) -> str:
        """Why ``key`` shows no answer of ``task``: its line's state, or that it has none.

        Example:
            >>> answers = ModelAnswers("m.jsonl", unusable={"diagnosis": {"c1": "x"}})
            >>> answers.missing_answer("diagnosis", "c1"), answers.missing_answer("diagnosis", "c2")
            ('x', 'no line')
        """
        return self.unusable.get(task, {}).get(key, NO_LINE)


#: What the explorer shows for an item the predictions file has no line for.
NO_LINE = "no line"


def answer_state(record: Any) -> str | None:
    """Why a predictions line gives no usable answer; None when it gives one.

    A failed model call is no answer; an answer the parser could not use is shown with its
    parse status (``ambiguous_convention``, ``unparseable``...), as the reports count it.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> answer_state(NS(task="diagnosis", error="HTTP 500", parse_status=None))
        'no answer (the model call failed)'
        >>> answer_state(NS(task="localization", error=None, parse_status="ambiguous_convention"))
        'answer not readable (ambiguous_convention)'
        >>> answer_state(NS(task="localization", error=None, parse_status="no_target")) is None
        True
    """
    from novabench.registry import TASKS

    if record.error is not None:
        return "no answer (the model call failed)"
    if record.parse_status in TASKS[record.task].failure_statuses:
        return f"answer not readable ({record.parse_status})"
    return None


def rater_names(release: NovaRelease) -> list[str]:
    """Every rater of the release, in order of first appearance (their colour order).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> image = NS(rater_boxes=[{"rater": "B", "boxes": []}, {"rater": "A", "boxes": []}])
        >>> rater_names(NS(images=[image, image]))
        ['B', 'A']
    """
    names: dict[str, None] = {}
    for image in release.images:
        for entry in image.rater_boxes:
            names.setdefault(str(entry["rater"]), None)
    return list(names)


def layer_names(raters: Sequence[str], with_model: bool) -> list[str]:
    """The box layers a viewer can toggle: gold, one per rater, and the model's if loaded.

    Example:
        >>> layer_names(["A", "B"], with_model=True)
        ['gold', 'rater A', 'rater B', 'model']
    """
    layers = [GOLD_LAYER, *(rater_layer(name) for name in raters)]
    return [*layers, MODEL_LAYER] if with_model else layers


def rater_layer(name: str) -> str:
    """The layer label of a rater: its name, prefixed with "rater " unless it says so already.

    Example:
        >>> rater_layer("A"), rater_layer("rater2")
        ('rater A', 'rater2')
    """
    return name if name.casefold().startswith("rater") else f"{_RATER_PREFIX}{name}"


def line_width(size: tuple[int, int]) -> int:
    """Box line width for an image of ``size``: about 1/160 of its longer side, at least 2 px.

    Example:
        >>> line_width((480, 480)), line_width((64, 64)), line_width((1024, 800))
        (3, 2, 6)
    """
    return max(2, round(max(size) / 160))


def rater_colour(index: int) -> tuple[int, int, int]:
    """The colour of the ``index``-th rater (the release order of :func:`rater_names`).

    Example:
        >>> rater_colour(0) == RATER_COLOURS[0]
        True
    """
    return RATER_COLOURS[index % len(RATER_COLOURS)]


def draw_slice(
    image: ImageRecord,
    raters: Sequence[str],
    layers: Iterable[str],
    predicted_boxes: Sequence[Sequence[float]] = (),
) -> Image.Image:
    """The slice as RGB with the chosen layers drawn, lines scaled to the image size.

    Each rater keeps the colour of its place in ``raters`` whether or not others are shown.

    Args:
        image: the slice's record.
        raters: every rater of the release (:func:`rater_names`), fixing their colours.
        layers: the layers to draw (names from :func:`layer_names`).
        predicted_boxes: the model's boxes for this slice.

    Example:
        >>> import io
        >>> from PIL import Image
        >>> from types import SimpleNamespace as NS
        >>> png = io.BytesIO(); Image.new("L", (64, 64)).save(png, format="PNG")
        >>> record = NS(filename="a.png", boxes=[[8, 8, 20, 20]],
        ...     rater_boxes=[{"rater": "A", "boxes": [[30, 30, 10, 10]]}],
        ...     read_bytes=png.getvalue)
        >>> drawn = draw_slice(record, ["A"], ["gold"])
        >>> drawn.getpixel((8, 15)) == GOLD_COLOUR, drawn.getpixel((30, 35))
        (True, (0, 0, 0))
        >>> draw_slice(record, ["A"], ["rater A"]).getpixel((30, 35)) == RATER_COLOURS[0]
        True
    """
    shown = set(layers)
    slice_image = _open(image)
    rater_boxes = {str(entry["rater"]): entry["boxes"] for entry in image.rater_boxes}
    width = line_width(slice_image.size)
    return draw_annotations(
        slice_image,
        boxes=image.boxes if GOLD_LAYER in shown else (),
        rater_boxes=[
            {
                "rater": name,
                "boxes": rater_boxes.get(name, []) if rater_layer(name) in shown else [],
            }
            for name in raters
        ],
        predicted_boxes=predicted_boxes if MODEL_LAYER in shown else (),
        width=width,
        rater_width=max(1, width - 1),
    )


def slice_file(picture: Image.Image, folder: str | os.PathLike[str]) -> str:
    """``picture`` as a PNG file in ``folder``, named by its content and written only once.

    Gradio saves a returned PIL image to a file named by its content and rewrites that file
    in place whenever the same picture is returned again (the slice shown is also in the
    gallery), so a browser fetching it meanwhile can get it empty or cut short. A returned
    file inside Gradio's cache is served where it is, and this one is written under a
    temporary name and renamed into place: never rewritten.

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> folder = tempfile.mkdtemp()
        >>> first = slice_file(Image.new("RGB", (8, 8), (230, 159, 0)), folder)
        >>> first == slice_file(Image.new("RGB", (8, 8), (230, 159, 0)), folder)
        True
        >>> Image.open(first).getpixel((0, 0)), sorted(os.listdir(folder)) == [Path(first).name]
        ((230, 159, 0), True)
    """
    encoded = io.BytesIO()
    picture.save(encoded, format="PNG")  # lossless: WebP smears 1-px lines and grey levels
    data = encoded.getvalue()
    target = Path(folder) / f"{hashlib.sha256(data).hexdigest()[:32]}.png"
    if not target.is_file():
        write_bytes_atomic(target, data)
    return str(target)


def _open(image: Any) -> Image.Image:
    from io import BytesIO

    from PIL import Image

    return Image.open(BytesIO(image.read_bytes()))


def legend_html(raters: Sequence[str], with_model: bool) -> str:
    """A legend of the box colours, as HTML swatches.

    Example:
        >>> legend = legend_html(["A"], with_model=False)
        >>> "gold" in legend and f"rgb{GOLD_COLOUR}" in legend and "rater A" in legend
        True
        >>> "gold (reference): green" in legend
        True
    """
    entries = [(GOLD_COLOUR, "gold (reference)")]
    entries += [(rater_colour(index), rater_layer(name)) for index, name in enumerate(raters)]
    if with_model:
        entries.append((PREDICTION_COLOUR, "model"))
    # The colour's word beside the swatch: "gold" names the reference, not its colour.
    items = "".join(
        f'<span class="nova-legend-item" style="margin-right:1em;white-space:nowrap">'
        f'<span style="display:inline-block;width:1.6em;height:0;border-top:4px solid '
        f'rgb{colour};vertical-align:middle;margin-right:.3em"></span>{html_text(label)}: '
        f"{colour_name(colour)}</span>"
        for colour, label in entries
    )
    return f'<div class="nova-legend" id="nova-legend">{items}</div>'


def model_help_text() -> str:
    """The help above the predictions upload; the model layer's colour word comes from the
    palette (:func:`novabench.data.render.colour_name`), so it names the colour drawn.

    Example:
        >>> "the orange layer" in model_help_text()
        True
    """
    return (
        "Upload a predictions JSONL as `nova run` writes it, and its run manifest (raw "
        "answers are read as `nova evaluate` reads them: without the manifest, as it reads the "
        f"file alone). The model's boxes become the {colour_name(PREDICTION_COLOUR)} "
        "layer; the table gives each slice's best IoU with the gold boxes, as the report's "
        "item table does, or why the slice has none (no line, an answer not readable)."
    )


def _searchable(case: CaseRecord) -> str:
    parts = [
        case.case_id,
        case.title or "",
        case.clinical_history or "",
        case.final_diagnosis or "",
        *(str(value) for value in case.extra.values() if value),
        *(image.caption or "" for image in case.images),
        *(image.filename for image in case.images),
    ]
    return "\n".join(parts).casefold()


#: The category dropdown's choice that keeps every case.
ALL_CATEGORIES = "all categories"


def case_category(case: CaseRecord) -> str:
    """The case's pathology category (novabench's taxonomy over its final diagnosis).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> case_category(NS(final_diagnosis="Glioblastoma")), case_category(NS(final_diagnosis=None))
        ('neoplastic', 'other')
    """
    from novabench.lexicon.taxonomy import assign_category

    return assign_category(case.final_diagnosis).category


def filter_cases(cases: Sequence[CaseRecord], text: str, category: str | None = None) -> list[str]:
    """Case ids matching ``text`` (every word, in id, title, history, diagnosis, metadata or
    captions) and ``category`` (a pathology category; None or :data:`ALL_CATEGORIES`: any).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> def case(cid, dx): return NS(case_id=cid, title=None, clinical_history=None,
        ...     final_diagnosis=dx, extra={}, images=[])
        >>> cases = [case("c1", "Glioblastoma"), case("c2", "Multiple sclerosis")]
        >>> filter_cases(cases, "SCLER"), filter_cases(cases, ""), filter_cases(cases, "x y")
        (['c2'], ['c1', 'c2'], [])
        >>> filter_cases(cases, "", "neoplastic")
        ['c1']
    """
    words = text.casefold().split()
    wanted = None if category in (None, "", ALL_CATEGORIES) else category
    return [
        case.case_id
        for case in cases
        if all(word in _searchable(case) for word in words)
        and (wanted is None or case_category(case) == wanted)
    ]


def category_choices(cases: Sequence[CaseRecord]) -> list[tuple[str, str]]:
    """The category dropdown's choices: every category present, with its number of cases.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> category_choices([NS(final_diagnosis="Glioma"), NS(final_diagnosis="Meningioma")])
        [('all categories (2)', 'all categories'), ('neoplastic (2)', 'neoplastic')]
    """
    from collections import Counter

    from novabench.lexicon.taxonomy import PATHOLOGY_CATEGORIES

    counts = Counter(case_category(case) for case in cases)
    return [(f"{ALL_CATEGORIES} ({len(cases)})", ALL_CATEGORIES)] + [
        (f"{name} ({counts[name]})", name) for name in PATHOLOGY_CATEGORIES if counts[name]
    ]


def slice_iou(
    predicted: Sequence[Sequence[float]], gold: Sequence[Sequence[float]]
) -> float | None:
    """The best IoU of any predicted box with any gold box; None when the slice has no gold box.

    Example:
        >>> slice_iou([[100, 120, 60, 40]], [[110, 118, 55, 45]])  # 2000 / 2875
        0.6956521739130435
        >>> slice_iou([], [[0, 0, 5, 5]]), slice_iou([[0, 0, 5, 5]], [])
        (0.0, None)
    """
    if not gold:
        return None
    if not predicted:
        return 0.0
    from novabench.metrics.boxes import iou_matrix_xywh

    return float(iou_matrix_xywh(predicted, gold).max())


def read_model_answers(
    path: str | Path, release: NovaRelease, name: str, manifest: str | Path | None = None
) -> ModelAnswers:
    """Read a predictions JSONL against ``release`` exactly as ``nova evaluate`` does.

    The file (and its run manifest, when given) is scored by
    :func:`novabench.report.scoring.score_predictions`, so the boxes drawn are the boxes
    scored, each slice's best IoU is the report's (and the item table's), and the notices
    say what the report says first about how the answers were read.

    Args:
        path: the file (``nova run`` output, raw or parsed).
        release: the release shown.
        name: the file's name for messages (the upload's own name, not the server path).
        manifest: the run's ``<file>.manifest.json`` (an uploaded file), or None.

    Raises:
        NovaInputError: a line or the manifest cannot be read; the message names ``name``
            (or the run manifest) and the line.

    Example:
        >>> import json, tempfile
        >>> from novabench.spaces.source import sample_release
        >>> from novabench.data.release import read_release
        >>> release = read_release(sample_release())
        >>> path = Path(tempfile.mkdtemp()) / "p.jsonl"
        >>> _ = path.write_text(json.dumps({"filename": "case0001_001.png",
        ...     "boxes": [[10, 10, 50, 50]]}) + "\\n")
        >>> answers = read_model_answers(path, release, "p.jsonl")
        >>> answers.boxes["case0001_001.png"], answers.notes
        ([[10.0, 10.0, 50.0, 50.0]], ['localization: 1 answer'])
        >>> answers.notices[0][:36]
        'note: no run manifest given: neither'
    """
    import tempfile

    from novabench.registry import TASKS
    from novabench.report.render import answer_reading_lines
    from novabench.report.scoring import score_predictions
    from novabench.spaces.run_file import (
        box_convention_in_space_words,
        manifest_missing_line,
        scrub_run_paths,
        stage_run,
        staged_file_name,
    )
    from novabench.spaces.source import read_upload

    with tempfile.TemporaryDirectory(prefix="nova-explorer-") as folder:
        staged = Path(folder) / staged_file_name(name)
        try:
            manifest_text = None
            if manifest is not None:
                manifest_text = read_upload(manifest, "the run manifest")
            # Under the user's name: the report's notices name the file they uploaded.
            staged = stage_run(
                folder,
                read_upload(path, name),
                manifest_text,
                name=name,
                manifest_name=None if manifest is None else Path(manifest).name,
            )
            # No intervals, breakdowns or BERTScore: the explorer shows answers, not scores.
            scored = score_predictions(
                release,
                staged,
                n_resamples=0,
                breakdowns=False,
                caption_options={"exclude": ["BERTScore-F1"]},
            )
        except NovaError as error:
            message = scrub_run_paths(str(error), staged, name)
            message = scrub_paths(message, [(str(path), name)])
            if "this release does not have" in message:  # run on another release
                message += (
                    f". This Space shows {len(release.images)} images in {release.n_cases} "
                    "cases; to explore these predictions, point it at the release they were run "
                    "on: set the Space variable NOVA_SOURCE to that release's folder (e.g. "
                    "NOVA_SOURCE=build/demo/nova-sample for the demo's floor.jsonl), an export "
                    "folder or a Hub dataset id, and restart it"
                )
            raise type(error)(message) from None
    predictions = scored.prediction_set
    report = scored.report
    notices = [manifest_missing_line(report), *answer_reading_lines(report)]
    # Worded for this Space: it has no --box-convention, the uploaded manifest sets it.
    notices = [box_convention_in_space_words(line, "the run manifest uploaded") for line in notices]
    answers = ModelAnswers(name=name, notices=[line for line in notices if line])
    for task in TASKS:
        records = predictions.records[task]
        if not records:
            continue
        counts = predictions.parse_counts(task)
        failed = len(predictions.errors(task))
        detail = ", ".join(f"{status}: {n}" for status, n in counts.items())
        note = f"{task}: {len(records)} answer{'s' if len(records) != 1 else ''}"
        note += f" ({detail})" if detail else ""
        note += f"; {failed} failed model call(s)" if failed else ""
        answers.notes.append(note)
        metrics = (report["tasks"].get(task) or {}).get("metrics") or {}
        answers.best_iou.update(metrics.get("per_image_best_iou") or {})
        for key, record in records.items():
            state = answer_state(record)
            if state is not None:
                answers.unusable.setdefault(task, {})[key] = state
                continue
            if record.boxes is not None:
                answers.boxes[key] = [list(box) for box in record.boxes]
            if record.caption is not None:
                answers.captions[key] = record.caption
            if record.diagnoses is not None:
                answers.diagnoses[key] = list(record.diagnoses)
    return answers


def upload_status_text(answers: ModelAnswers) -> str:
    """The Markdown under the upload: the notices first (as a report opens), then the counts.

    Example:
        >>> print(upload_status_text(ModelAnswers("run.jsonl", notes=["diagnosis: 2 answers"],
        ...     notices=["note: no run manifest given"])))
        **note: no run manifest given**
        <BLANKLINE>
        Loaded **run.jsonl**: diagnosis: 2 answers
    """
    from novabench.escaping import markdown_text_with_code

    lines = [f"**{markdown_text_with_code(line)}**" for line in answers.notices]
    loaded = f"Loaded **{_cell(answers.name)}**: " + "; ".join(_cell(n) for n in answers.notes)
    return "\n\n".join([*lines, loaded])


def _upload_path(file: Any) -> str:
    return file if isinstance(file, str) else getattr(file, "name", str(file))


def _cell(text: str | None) -> str:
    """Untrusted text for Markdown: nothing in it renders as markup, line breaks kept."""
    if text is None or text == "":
        return "—"
    return "<br>".join(markdown_text(line) for line in str(text).splitlines())


def case_markdown(case: CaseRecord, answers: ModelAnswers | None = None) -> str:
    """The case's texts as Markdown: title, date, history, diagnosis, metadata, slices.

    With ``answers``, the model's diagnoses sit beside the final diagnosis and each slice
    row adds its best IoU and the model's caption.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> image = NS(filename="c1_001.png", caption="Axial FLAIR.", boxes=[[0, 0, 4, 4]])
        >>> case = NS(case_id="c1", title="A case", publication_date="2020-01-02",
        ...     clinical_history="Headache.", final_diagnosis="Glioma", extra={"sex": "F"},
        ...     images=[image])
        >>> text = case_markdown(case, ModelAnswers("m.jsonl", boxes={"c1_001.png": [[0, 0, 4, 2]]},
        ...     diagnoses={"c1": ["glioma", "lymphoma"]}))
        >>> "**Final diagnosis.** Glioma" in text, "glioma; lymphoma" in text, "| 0.50 |" in text
        (True, True, True)
    """
    lines = [
        f"### {_cell(case.title) if case.title else case.case_id}",
        f"{markdown_code_span(case.case_id)} · published {_cell(case.publication_date)} · "
        f"{len(case.images)} slice{'s' if len(case.images) != 1 else ''}",
        "",
        f"**Clinical history.** {_cell(case.clinical_history)}",
        "",
        f"**Final diagnosis.** {_cell(case.final_diagnosis)}",
        "",
        f"**Pathology category.** {_cell(case_category(case))} (novabench's taxonomy over the "
        "final diagnosis, as in the reports' breakdowns)",
    ]
    if answers is not None:
        said = answers.diagnoses.get(case.case_id)
        shown = (
            "; ".join(_cell(d) for d in said)
            if said
            else "an empty list"
            if said is not None
            else _cell(answers.missing_answer(_DIAGNOSIS_TASK, case.case_id))
        )
        lines += ["", f"**Model's diagnoses ({_cell(answers.name)}).** {shown}"]
    for key, value in case.extra.items():
        if value not in (None, ""):
            lines += ["", f"**{_cell(key.replace('_', ' ').capitalize())}.** {_cell(value)}"]
    header = "| slice | caption | gold boxes |"
    rule = "|---|---|---|"
    if answers is not None:
        header += " best IoU | model's caption |"
        rule += "---|---|"
        # A narrow window cuts the two columns off at the right edge: say where they are.
        lines += ["", "*Best IoU and the model's caption are the last two columns: scroll the "
                  "table sideways (→) if they are cut off.*"]  # fmt: skip
    lines += ["", header, rule]
    for image in case.images:
        row = f"| {_cell(image.filename)} | {_cell(image.caption)} | {len(image.boxes)} |"
        if answers is not None:
            row += (
                f" {_slice_iou_cell(answers, image)} | {_caption_cell(answers, image.filename)} |"
            )
        lines.append(row)
    return "\n".join(lines)


def _slice_iou_cell(answers: ModelAnswers, image: Any) -> str:
    """The best IoU of a slice as the report gives it; why there is none, when there is none."""
    if not image.boxes:
        return "—"  # no gold box: no IoU to give, whatever the answer
    if image.filename in answers.boxes:
        iou = answers.best_iou.get(image.filename)
        if iou is None:  # a hand-made ModelAnswers: computed from its boxes
            iou = slice_iou(answers.boxes[image.filename], image.boxes)
        return f"{iou:.2f}" if iou is not None else "—"
    return _cell(answers.missing_answer(_BOXES_TASK, image.filename))


def _caption_cell(answers: ModelAnswers, filename: str) -> str:
    if filename in answers.captions:
        return _cell(answers.captions[filename])
    return _cell(answers.missing_answer(_CAPTION_TASK, filename))


def link_note_text(wanted: str, case_ids: Iterable[str]) -> str:
    """The note under a ``?case=`` link: empty for a known case, else a fixed sentence.

    The link's value is someone else's text: it is checked against the case ids and never
    shown, so a crafted link cannot put anything on the page.

    Example:
        >>> link_note_text("case0001", ["case0001"])
        ''
        >>> link_note_text("x`![a](http://b/c.png)", ["case0001"])
        "The link's case is not in this data (case ids look like case0183); showing the first case."
    """
    if not wanted or wanted in set(case_ids):
        return ""
    return (
        "The link's case is not in this data (case ids look like case0183); showing the first case."
    )


# --------------------------------------------------------------------------- interface

# Gradio's Markdown breaks words anywhere (overflow-wrap: anywhere), which in a narrow column
# split the per-slice table's headers letter by letter and filenames mid-name: headers and
# filenames stay whole, texts wrap between words, and the table scrolls sideways instead,
# with a shadow at the edge that has more to show (as the HTML report's wide tables).
_CSS = (
    """
.nova-legend { font-size: 0.95em; line-height: 2; }
#nova-details table { display: block; max-width: 100%; overflow-x: auto;
  """
    + SCROLL_SHADOWS_CSS
    + """ }
#nova-details th, #nova-details td { background: transparent; }
#nova-details th, #nova-details td { overflow-wrap: normal; word-break: normal; }
#nova-details th, #nova-details td:first-child { white-space: nowrap; }
#nova-details td { min-width: 4em; }
#nova-details td:nth-child(2), #nova-details td:nth-child(5) { min-width: 14em; }
"""
)


def _error_page(gr: Any, opened: OpenedSource) -> None:
    gr.Markdown(
        "## The data could not be opened\n\n"
        f"**Source:** {markdown_code_span(opened.label)}\n\n**Why:** {_cell(opened.error)}\n\n"
        "Set `NOVA_SOURCE` (a Space variable) to a NOVA release folder, a `nova export` "
        "folder or a Hub dataset id you can read, then restart the Space. Without "
        "`NOVA_SOURCE` the explorer shows the toolkit's synthetic sample.",
        elem_id="nova-error",
    )


def build_demo(source: str | None = None, opened: OpenedSource | None = None) -> gr.Blocks:
    """The explorer's interface over ``source`` (default: ``$NOVA_SOURCE`` or the sample).

    A source that cannot be opened gives a page explaining why, not an exception.

    Example:
        >>> demo = build_demo("/no/such/folder")  # doctest: +SKIP
    """
    import gradio as gr

    opened = opened if opened is not None else open_source(source)
    with gr.Blocks(title="NOVA explorer") as demo:
        gr.Markdown(
            "# NOVA explorer\nBrain-MRI slices of the NOVA benchmark with their reference "
            "boxes, captions and diagnoses. Evaluation only: never train on these images.",
        )
        if opened.notice:
            gr.Markdown(f"> **Not the real data.** {opened.notice}", elem_id="nova-notice")
        if opened.release is None:
            _error_page(gr, opened)
            return demo
        _explorer(gr, demo, opened.release)
    return demo


def _explorer(gr: Any, demo: Any, release: NovaRelease) -> None:
    cases = release.cases()
    by_id = {case.case_id: case for case in cases}
    ids = [case.case_id for case in cases]
    raters = rater_names(release)
    no_model = layer_names(raters, with_model=False)

    def choice_label(case: CaseRecord) -> tuple[str, str]:
        return (
            visible_text(f"{case.case_id} · {case.final_diagnosis or case.title or ''}").strip(
                " ·"
            ),
            case.case_id,
        )

    with gr.Row(equal_height=False):
        query = gr.Textbox(
            label="Filter cases by text",
            placeholder="diagnosis, history, caption words…",
            elem_id="nova-filter",
            min_width=200,
            scale=2,
        )
        category = gr.Dropdown(
            category_choices(cases),
            value=ALL_CATEGORIES,
            label="Pathology category",
            elem_id="nova-category",
            min_width=160,
            scale=1,
        )
        case_picker = gr.Dropdown(
            [choice_label(case) for case in cases],
            value=ids[0] if ids else None,
            label=f"Case ({len(ids)} of {len(ids)})",
            elem_id="nova-case",
            min_width=200,
            scale=2,
        )
    with gr.Row():
        previous = gr.Button("◀ Previous", elem_id="nova-previous", min_width=120)
        following = gr.Button("Next ▶", elem_id="nova-next", min_width=120)
    layers = gr.CheckboxGroup(no_model, value=no_model, label="Boxes shown", elem_id="nova-layers")
    legend = gr.HTML(legend_html(raters, with_model=False))
    with gr.Row(equal_height=False):
        with gr.Column(scale=3, min_width=300):
            slice_picker = gr.Dropdown([], label="Slice", elem_id="nova-slice")
            picture = gr.Image(
                type="filepath",  # slice_file's PNGs: never rewritten while a browser reads
                format="png",
                label="Slice",
                elem_id="nova-image",
                interactive=False,
            )
            gallery = gr.Gallery(
                label="All slices of the case",
                format="png",
                columns=3,
                height="auto",
                elem_id="nova-gallery",
                interactive=False,
            )
        with gr.Column(scale=2, min_width=300):
            details = gr.Markdown(elem_id="nova-details")
    with gr.Accordion("Overlay a model's predictions", open=False, elem_id="nova-model"):
        gr.Markdown(model_help_text(), elem_id="nova-model-help")
        upload = gr.File(
            label="predictions JSONL", file_types=[".jsonl", ".json"], elem_id="nova-upload"
        )
        manifest_upload = gr.File(
            label="its run manifest (<file>.manifest.json, optional: without it the answers "
            "are read as `nova evaluate` reads the file alone, and the status says what that "
            "changes)",
            file_types=[".json"],
            elem_id="nova-manifest-upload",
        )
        upload_status = gr.Markdown(elem_id="nova-upload-status")
    model_state = gr.State(None)

    def render(
        case_id: str | None, shown: list[str], answers: ModelAnswers | None, slice_name: str | None
    ):
        case = by_id.get(case_id or "")
        if case is None:
            return None, [], "No case matches.", gr.update(choices=[], value=None)
        names = [image.filename for image in case.images]
        slice_name = slice_name if slice_name in names else names[0]
        predicted = answers.boxes if answers is not None else {}
        # Inside Gradio's cache, so the file is served where it is, not copied again.
        folder = Path(demo.GRADIO_CACHE) / "nova-slices"
        drawn = {
            image.filename: slice_file(
                draw_slice(image, raters, shown, predicted.get(image.filename, [])), folder
            )
            for image in case.images
        }
        items = [
            (drawn[image.filename], visible_text(f"{image.filename}: {image.caption or ''}"))
            for image in case.images
        ]
        return (
            drawn[slice_name],
            items,
            case_markdown(case, answers),
            gr.update(choices=names, value=slice_name),
        )

    def show_case(case_id: str | None, shown: list[str], answers: ModelAnswers | None):
        return render(case_id, shown, answers, None)

    def show_slice(
        case_id: str | None, shown: list[str], answers: ModelAnswers | None, slice_name: str | None
    ):
        return render(case_id, shown, answers, slice_name)

    def step(case_id: str | None, text: str, chosen: str | None, offset: int) -> Any:
        visible = filter_cases(cases, text or "", chosen)
        if not visible:
            return gr.update()
        position = visible.index(case_id) if case_id in visible else -1
        return gr.update(value=visible[(position + offset) % len(visible)])

    def filter_choices(text: str, chosen: str | None, case_id: str | None):
        visible = set(filter_cases(cases, text or "", chosen))
        choices = [choice_label(case) for case in cases if case.case_id in visible]
        value = case_id if case_id in visible else (choices[0][1] if choices else None)
        return gr.update(choices=choices, value=value, label=f"Case ({len(choices)} of {len(ids)})")

    def load_predictions(file: Any, shown: list[str], manifest_file: Any = None):
        if file is None:
            return (
                None,
                gr.update(choices=no_model, value=[x for x in shown if x != MODEL_LAYER]),
                legend_html(raters, False),
                "",
            )
        path = _upload_path(file)
        name = Path(path).name
        manifest = None if manifest_file is None else _upload_path(manifest_file)
        try:
            check_upload_size(path, name)
            if manifest is not None:
                check_upload_size(manifest, "the run manifest")
            answers = read_model_answers(path, release, name, manifest)
        except NovaError as error:
            names = [(path, name)] + ([(manifest, "the run manifest")] if manifest else [])
            message = scrub_paths(str(error), names)
            return (
                None,
                gr.update(),
                gr.update(),
                f"**Could not read the predictions.** {_cell(message)}",
            )
        with_model = layer_names(raters, with_model=True)
        status = upload_status_text(answers)
        return (
            answers,
            # Once: a manifest given after the file loads it again with the layer already on.
            gr.update(
                choices=with_model, value=[*(x for x in shown if x != MODEL_LAYER), MODEL_LAYER]
            ),
            legend_html(raters, True),
            status,
        )

    def open_from_link(request: Any):
        wanted = (request.query_params.get("case") if request is not None else None) or ""
        chosen = gr.update(value=wanted) if wanted in by_id else gr.update()
        return chosen, link_note_text(wanted, by_id)

    # Gradio passes the request to a parameter annotated gr.Request; postponed annotations
    # are strings it cannot resolve here, so the real class is set.
    open_from_link.__annotations__["request"] = gr.Request

    outputs = [picture, gallery, details, slice_picker]
    link_note = gr.Markdown(elem_id="nova-link-note")
    case_picker.change(
        show_case, inputs=[case_picker, layers, model_state], outputs=outputs, api_name="show_case"
    )
    layers.change(
        show_slice,
        inputs=[case_picker, layers, model_state, slice_picker],
        outputs=outputs,
        api_name="show_layers",
    )
    slice_picker.input(
        show_slice,
        inputs=[case_picker, layers, model_state, slice_picker],
        outputs=outputs,
        api_name="show_slice",
    )
    query.change(
        filter_choices,
        inputs=[query, category, case_picker],
        outputs=case_picker,
        api_name="filter_cases",
    )
    category.change(
        filter_choices,
        inputs=[query, category, case_picker],
        outputs=case_picker,
        api_name="filter_category",
    )
    previous.click(
        lambda c, t, k: step(c, t, k, -1),
        inputs=[case_picker, query, category],
        outputs=case_picker,
        api_name="previous_case",
    )
    following.click(
        lambda c, t, k: step(c, t, k, 1),
        inputs=[case_picker, query, category],
        outputs=case_picker,
        api_name="next_case",
    )
    # A manifest given after the file reads the file again with it (or without, if removed);
    # only the file's upload is the Space's API.
    api: dict[str, Any]
    for trigger, api in (
        (upload, {"api_name": "load_predictions"}),
        (manifest_upload, {"api_visibility": "private"}),
    ):
        trigger.change(
            load_predictions,
            inputs=[upload, layers, manifest_upload],  # the manifest last: older calls still work
            outputs=[model_state, layers, legend, upload_status],
            **api,
        ).then(show_slice, inputs=[case_picker, layers, model_state, slice_picker], outputs=outputs)
    demo.load(open_from_link, outputs=[case_picker, link_note], api_visibility="private").then(
        show_case, inputs=[case_picker, layers, model_state], outputs=outputs
    )


def launch(source: str | None = None, **kwargs: Any) -> None:
    """Build the explorer over ``source`` (None: ``$NOVA_SOURCE``) and serve it.

    Example:
        >>> launch("owner/nova", server_port=7860)  # doctest: +SKIP
    """
    kwargs.setdefault("max_file_size", MAX_UPLOAD_BYTES)  # Gradio refuses larger uploads
    build_demo(source).launch(css=_CSS, **kwargs)


def theme_css() -> str:
    """The small stylesheet the explorer is launched with (legend, scrolling tables).

    Example:
        >>> ".nova-legend" in theme_css()
        True
    """
    return _CSS
