"""The three NOVA tasks, each declared once.

What a task is lives here: the unit it is answered per (an image or a case), the fields
of a raw and of a parsed answer in a predictions file, the prompt resource, the parser and
the scorer (as import paths, so reading the registry imports nothing heavy), the headline
metric keys a report leads with, every parse status an answer can get, and the module
holding how the task is judged, scored, broken down and ranked (``novabench.tasks.<task>``).

The runner, the predictions files, the evaluate adapter, the report, the CLI and the
Spaces read this module; no other module lists the tasks. It imports nothing of the
package but ``novabench.errors``, so any module may use it.

Example:
    >>> from novabench.registry import TASKS, get_task
    >>> list(TASKS)
    ['localization', 'captioning', 'diagnosis']
    >>> spec = get_task("localisation")
    >>> spec.unit, spec.key_field, spec.raw_field, spec.answer_field
    ('image', 'filename', 'raw_boxes', 'boxes')
    >>> "ok_out_of_image" in spec.parse_statuses
    True
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from novabench.errors import NovaInputError

__all__ = [
    "ALL_TASKS",
    "KeyMeaning",
    "CASE_TASKS",
    "IMAGE_TASKS",
    "TASKS",
    "TASK_NAMES",
    "TaskSpec",
    "Unit",
    "canonical_task",
    "get_task",
    "task_answered_in",
]

Unit = Literal["image", "case"]

# How far a report's key can be put beside the paper's figure of the same name (the metric
# card's "Protocol note" says why, key by key). A key the paper has no figure for is
# NOT_A_PAPER_KEY.
SAME_DEFINITION = "yes"
UP_TO_THE_JUDGE = "yes, up to the judge model (the paper's is not known)"
DEFINITION_INFERRED = "with care: definition inferred"
DEFINITION_OURS = "with care: the paper's definition is not public (ours)"
SETTINGS_UNPUBLISHED = "with care: the paper's settings are not published"
ANOTHER_QUANTITY = "no: another quantity"
NOT_A_PAPER_KEY = "not a paper key"

#: The pseudo-task of the evaluate face that scores every task from one row per image.
ALL_TASKS = "all"

# Where a key's definition comes from (the metric card's provenance, in its words).
FROM_COAUTHORS_CODE = "co-authors' code (WALDO)"
FROM_COAUTHORS_PROCEDURE = "co-authors' procedure, our wording"
FROM_INFERRED = "inferred"
FROM_COCO = "COCO (pycocotools)"
FROM_OURS = "ours"
FROM_OURS_PAPER_NAME = "ours (the paper's definition is not public)"
FROM_OURS_SETTINGS = "ours (the paper's settings are not known)"
FROM_NLTK = "nltk's METEOR (the paper's settings are not known)"
FROM_ROUGE_SCORE = "rouge_score's ROUGE-L (not a paper key)"


@dataclass(frozen=True)
class KeyMeaning:
    """What one metric key measures, in one line: the one source of every report's legend,
    ``nova evaluate --explain`` and the metric card's key legend (a test holds the card to it).

    Attributes:
        definition: what is counted over what, in one line.
        source: where the definition comes from (``FROM_*``: the co-authors' code or
            procedure, inferred, COCO, ours).
        undefined: when the key is undefined (NaN, shown ``n/a``), in words.

    Example:
        >>> meaning = TASKS["localization"].meaning("FP30")
        >>> meaning.source, meaning.undefined
        ("ours (the paper's definition is not public)", 'no box was predicted (0 / 0)')
    """

    definition: str
    source: str
    undefined: str

    def undefined_when(self, predicted_by: str | None = None, reference: str | None = None) -> str:
        """When the key is undefined for boxes drawn by ``predicted_by`` (None: the model)
        scored against ``reference``'s boxes (None: the gold boxes), as the human reference
        scores a rater against gold or against the other rater.

        Example:
            >>> fp30 = TASKS["localization"].meaning("FP30")
            >>> fp30.undefined_when(), fp30.undefined_when("rater 1", "rater 2")
            ('no box was predicted (0 / 0)', 'rater 1 drew no box (0 / 0)')
            >>> TASKS["localization"].meaning("FNR").undefined_when("rater 1", "rater 2")
            'no image has a box of rater 2'
        """
        text = self.undefined
        if reference is not None:
            text = text.replace("a gold box", f"a box of {reference}")
        if predicted_by is not None:
            text = text.replace("no box was predicted", f"{predicted_by} drew no box")
        return text


@dataclass(frozen=True)
class TaskSpec:
    """One NOVA task: how it is asked, answered, stored, read and scored.

    Attributes:
        name: canonical name (``"localization"``, ``"captioning"``, ``"diagnosis"``).
        title: the name a report or a Space shows.
        unit: ``"image"`` (one answer per PNG) or ``"case"`` (one answer per case).
        key_field: the predictions-file field naming the item (``filename`` or ``case_id``).
        raw_field: the field holding the model's raw answer text.
        answer_field: the field holding the parsed answer (also names the answer's form:
            ``boxes``, ``caption`` or ``diagnoses``, which the evaluate adapter reads by).
        extra_fields: further task fields a predictions line may carry.
        reference_field: the field of a NOVA dataset row (``images`` or ``cases``) holding
            the task's reference.
        prompt_resource: the default prompt, under ``novabench/resources/``.
        parser: ``"module:function"`` turning a raw answer into a parsed one.
        scorer: ``"module:function"`` preparing the task's evaluation
            (``prepare_<family>(predictions, references, **options)``).
        metric_options: the keyword options that scorer takes (what ``compute_task`` and the
            evaluate face route to the task).
        headline_keys: the metric keys a report's table leads with, in order.
        paper_keys: the keys of the NOVA paper's tables among them, in the paper's order: the
            HTML report's headline table shows these first ("More measures" the rest).
        paper_key_stand_ins: ``(paper key, other key)`` pairs: when a report lacks the paper
            key, it may hold the other one instead (a different quantity, shown under its
            own name, never relabelled, never compared with the paper's figures as one):
            ``METEOR-exact+stem`` where WordNet is missing, the ``-lexicon`` keyword F1s
            without the keyword judge, ``top1-lexicon`` / ``top1-pairwise`` (and Top-5's)
            without the case judge. A paper key may have several.
        parse_statuses: every status a parsed answer of this task can carry.
        failure_statuses: the statuses meaning "nothing usable was read".
        lower_is_better: the metric keys where a lower value is the better one (error
            rates); every other key is better higher.
        paper_comparison: ``(key, how far)`` pairs: how far each key that carries a name of
            the paper's tables (or stands in for one) can be put beside the paper's figure
            (:meth:`comparison_with_paper`); reports show it beside every value.
        behaviour: ``"module:attribute"`` of the task's :class:`novabench.tasks.TaskBehaviour`
            (how it is judged, scored, broken down and ranked: ``novabench/tasks/<task>.py``).

    Example:
        >>> spec = TASKS["diagnosis"]
        >>> spec.fields
        ('raw_diagnoses', 'diagnoses')
        >>> spec.load_parser().__name__
        'parse_diagnoses'
        >>> spec.reference_field, spec.metric_options
        ('final_diagnosis', ('matcher', 'case_judge', 'contexts'))
    """

    name: str
    title: str
    unit: Unit
    key_field: str
    raw_field: str
    answer_field: str
    extra_fields: tuple[str, ...]
    reference_field: str
    prompt_resource: str
    parser: str
    scorer: str
    metric_options: tuple[str, ...]
    headline_keys: tuple[str, ...]
    parse_statuses: tuple[str, ...]
    failure_statuses: frozenset[str]
    behaviour: str

    paper_keys: tuple[str, ...] = ()
    paper_key_stand_ins: tuple[tuple[str, str], ...] = ()
    lower_is_better: tuple[str, ...] = ()
    paper_comparison: tuple[tuple[str, str], ...] = ()
    #: ``(anchor, pattern)``: keys a user's setting names (``BERTScore-F1[<model>-L<layer>]``)
    #: that no fixed list can hold, each whole key matching ``pattern`` (a regular expression;
    #: ``<key>_ci`` and the like never do); shown after ``anchor`` and judged as it.
    model_keys: tuple[tuple[str, str], ...] = ()
    #: ``(key, meaning)`` for every headline key: one line each (:class:`KeyMeaning`).
    key_meanings: tuple[tuple[str, KeyMeaning], ...] = ()

    def meaning(self, key: str) -> KeyMeaning | None:
        """What ``key`` measures (a key named after a model: its anchor's), or None.

        Example:
            >>> TASKS["localization"].meaning("mAP@30").source
            "co-authors' code (WALDO)"
            >>> TASKS["captioning"].meaning("BERTScore-F1[radbert-L9]").source
            'ours'
            >>> TASKS["diagnosis"].meaning("n_cases") is None
            True
        """
        meanings = dict(self.key_meanings)
        return meanings.get(key) or meanings.get(self.anchor_of(key) or "")

    def direction(self, key: str) -> str:
        """``"lower is better"`` for the error rates (:attr:`lower_is_better`), else
        ``"higher is better"``.

        Example:
            >>> TASKS["localization"].direction("FNR"), TASKS["localization"].direction("TP30")
            ('lower is better', 'higher is better')
        """
        return "lower is better" if key in self.lower_is_better else "higher is better"

    def anchor_of(self, key: str) -> str | None:
        """The headline key a key named after a model is shown after (None: not such a key).

        Example:
            >>> TASKS["captioning"].anchor_of("BERTScore-F1[radbert-L9]")
            'BERTScore-F1-MiniLM-L6'
            >>> TASKS["captioning"].anchor_of("ROUGE-L") is None
            True
            >>> TASKS["captioning"].anchor_of("BERTScore-F1-MiniLM-L6_ci") is None
            True
        """
        return next(
            (
                anchor
                for anchor, pattern in self.model_keys
                if isinstance(key, str) and re.fullmatch(pattern, key)
            ),
            None,
        )

    def headline_keys_with(self, held: Iterable[str]) -> tuple[str, ...]:
        """:attr:`headline_keys` and, after their anchor, the keys named after a model that
        ``held`` holds (sorted): the keys a report of this task shows, in order.

        Example:
            >>> keys = TASKS["captioning"].headline_keys_with(["BERTScore-F1[radbert-L9]", "x"])
            >>> keys[keys.index("BERTScore-F1-MiniLM-L6") + 1]
            'BERTScore-F1[radbert-L9]'
            >>> TASKS["diagnosis"].headline_keys_with(["x"]) == TASKS["diagnosis"].headline_keys
            True
        """
        if not self.model_keys:
            return self.headline_keys
        named = sorted(
            {key for key in held if key not in self.headline_keys and self.anchor_of(key)}
        )
        keys: list[str] = []
        for key in self.headline_keys:
            keys.append(key)
            keys += [other for other in named if self.anchor_of(other) == key]
        return tuple(keys)

    @property
    def fields(self) -> tuple[str, ...]:
        """Every task field of a predictions line, the raw answer first.

        Example:
            >>> TASKS["localization"].fields
            ('raw_boxes', 'boxes', 'scores', 'input_size')
        """
        return (self.raw_field, self.answer_field, *self.extra_fields)

    def stand_ins(self, paper_key: str) -> tuple[str, ...]:
        """The keys that may stand where the paper's ``paper_key`` is missing (other quantities).

        Example:
            >>> TASKS["diagnosis"].stand_ins("top1")
            ('top1-lexicon', 'top1-pairwise')
        """
        return tuple(other for key, other in self.paper_key_stand_ins if key == paper_key)

    def stands_in_for(self, key: str) -> str | None:
        """The paper key ``key`` stands in for, or None when it is no stand-in.

        Example:
            >>> TASKS["captioning"].stands_in_for("ClinicalF1-lexicon"), TASKS["captioning"].stands_in_for("ROUGE-L")
            ('ClinicalF1', None)
        """
        return next((paper for paper, other in self.paper_key_stand_ins if other == key), None)

    def comparison_with_paper(self, key: str) -> str:
        """How far a report's ``key`` can be put beside the paper's figure of that name.

        Example:
            >>> TASKS["localization"].comparison_with_paper("mAP@30")
            'yes'
            >>> TASKS["diagnosis"].comparison_with_paper("top1-lexicon")
            'no: another quantity'
            >>> TASKS["localization"].comparison_with_paper("COCO-AP@50")
            'not a paper key'
            >>> TASKS["captioning"].comparison_with_paper("BERTScore-F1[radbert-L9]")
            'no: another quantity'
        """
        comparisons = dict(self.paper_comparison)
        return comparisons.get(key) or comparisons.get(self.anchor_of(key) or "", NOT_A_PAPER_KEY)

    def load_parser(self) -> Callable[..., Any]:
        """Import and return the task's parser.

        Example:
            >>> TASKS["captioning"].load_parser().__name__
            'parse_caption'
        """
        return _load(self.parser)

    def load_scorer(self) -> Callable[..., Any]:
        """Import and return the task's ``prepare_*`` function.

        Example:
            >>> TASKS["captioning"].load_scorer().__name__
            'prepare_captioning'
        """
        return _load(self.scorer)

    def load_behaviour(self) -> Any:
        """Import and return the task's ``TaskBehaviour`` (its module in ``novabench.tasks``).

        Example:
            >>> TASKS["diagnosis"].load_behaviour().rank_metric
            'top1'
        """
        return _load(self.behaviour)


def _load(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    function: Any = getattr(importlib.import_module(module_name), attribute)
    return function


#: Longest raw model answer (in characters) that is parsed. A longer one (a model looping
#: until its token limit, a server sending garbage) gets the parse status ``too_long`` and
#: counts as no answer, instead of being parsed and scored slowly.
MAX_RAW_ANSWER_CHARS = 64 * 1024
#: Longest parsed caption, or parsed diagnosis list (all names together), in characters; a
#: longer one gets the status ``too_long`` and counts as no answer (a 50 MB caption made
#: ``nova evaluate`` run for minutes before).
MAX_CAPTION_CHARS = 16 * 1024
#: The status of an answer beyond those caps (a failure: nothing usable was read).
TOO_LONG = "too_long"

_FAILURES = frozenset({"empty", "unparseable", TOO_LONG})

TASKS: Mapping[str, TaskSpec] = MappingProxyType(
    {
        "localization": TaskSpec(
            name="localization",
            title="Anomaly localisation",
            unit="image",
            key_field="filename",
            raw_field="raw_boxes",
            answer_field="boxes",
            extra_fields=("scores", "input_size"),
            reference_field="boxes",
            prompt_resource="prompts/localization.txt",
            parser="novabench.run.parsers:parse_localization",
            scorer="novabench.metrics.localization:prepare_localization",
            metric_options=("box_format", "reference_box_format", "max_detections"),
            # The protocol's keys first; COCO AP and the diagnostic hit rates beside them.
            headline_keys=(
                "mAP@30",
                "mAP@50",
                "mAP@50:95",
                "ACC50",
                "TP30",
                "FP30",
                "FNR",
                "COCO-AP@30",
                "COCO-AP@50",
                "COCO-AP@50:95",
                "hit@30",
                "hit@50",
            ),
            # ok_out_of_image: a box reaches past the image (kept as given), often a wrong
            # convention. ok_order_from_keys: the answer's keys fixed another order than the
            # explicit convention's; read in the keys' order, the convention's scale.
            parse_statuses=(
                "ok",
                "ok_out_of_image",
                "ok_order_from_keys",
                "no_target",
                "empty",
                "unparseable",
                "truncated_ok",
                "ambiguous_convention",
                "invalid_boxes",
                "refusal",
                TOO_LONG,
            ),
            # refusal: no box, and the whole answer declines (never read as "no target").
            # invalid_boxes: boxes written, none of them one (zero area, or past a float).
            failure_statuses=_FAILURES | {"ambiguous_convention", "invalid_boxes", "refusal"},
            behaviour="novabench.tasks.localization:BEHAVIOUR",
            key_meanings=(
                (
                    "mAP@30",
                    KeyMeaning(
                        "images whose best box reaches IoU 0.30 with a gold box, over ALL images (an image-level hit rate, not an average precision; scores unused)",
                        FROM_COAUTHORS_CODE,
                        "no image was scored",
                    ),
                ),
                (
                    "mAP@50",
                    KeyMeaning(
                        "images whose best box reaches IoU 0.50 with a gold box, over ALL images (as mAP@30)",
                        FROM_COAUTHORS_CODE,
                        "no image was scored",
                    ),
                ),
                (
                    "mAP@50:95",
                    KeyMeaning(
                        "the mAP@30 hit rate (over ALL images) averaged over IoU 0.50, 0.55, ..., 0.95",
                        FROM_INFERRED,
                        "no image was scored",
                    ),
                ),
                (
                    "ACC50",
                    KeyMeaning(
                        "images with gold whose first-ranked box reaches IoU 0.50, over images with gold",
                        FROM_OURS_PAPER_NAME,
                        "no image has a gold box",
                    ),
                ),
                (
                    "TP30",
                    KeyMeaning(
                        "gold boxes matched one-to-one at IoU 0.30, over gold boxes (box-level recall)",
                        FROM_OURS_PAPER_NAME,
                        "no image has a gold box",
                    ),
                ),
                (
                    "FP30",
                    KeyMeaning(
                        "predicted boxes left unmatched at IoU 0.30, over predicted boxes (box-level false-discovery rate)",
                        FROM_OURS_PAPER_NAME,
                        "no box was predicted (0 / 0)",
                    ),
                ),
                (
                    "FNR",
                    KeyMeaning(
                        "images with gold given no box at all, over images with gold",
                        FROM_OURS_PAPER_NAME,
                        "no image has a gold box",
                    ),
                ),
                (
                    "COCO-AP@30",
                    KeyMeaning(
                        "COCO average precision at IoU 0.30, class-agnostic (every score 1 when none is given)",
                        FROM_COCO,
                        "no image has a gold box",
                    ),
                ),
                (
                    "COCO-AP@50",
                    KeyMeaning(
                        "COCO average precision at IoU 0.50", FROM_COCO, "no image has a gold box"
                    ),
                ),
                (
                    "COCO-AP@50:95",
                    KeyMeaning(
                        "COCO average precision averaged over IoU 0.50, 0.55, ..., 0.95",
                        FROM_COCO,
                        "no image has a gold box",
                    ),
                ),
                (
                    "hit@30",
                    KeyMeaning(
                        "images whose best box reaches IoU 0.30, over images WITH a gold box only (a diagnostic)",
                        FROM_OURS,
                        "no image has a gold box",
                    ),
                ),
                (
                    "hit@50",
                    KeyMeaning(
                        "images whose best box reaches IoU 0.50, over images WITH a gold box only (a diagnostic)",
                        FROM_OURS,
                        "no image has a gold box",
                    ),
                ),
            ),
            lower_is_better=("FP30", "FNR"),  # error rates
            paper_keys=("mAP@30", "mAP@50"),
            paper_comparison=(
                ("mAP@30", SAME_DEFINITION),
                ("mAP@50", SAME_DEFINITION),
                ("mAP@50:95", DEFINITION_INFERRED),
                ("ACC50", DEFINITION_OURS),
                ("TP30", DEFINITION_OURS),
                ("FP30", DEFINITION_OURS),
                ("FNR", DEFINITION_OURS),
            ),
        ),
        "captioning": TaskSpec(
            name="captioning",
            title="Image captioning",
            unit="image",
            key_field="filename",
            raw_field="raw_caption",
            answer_field="caption",
            extra_fields=(),
            reference_field="caption",
            prompt_resource="prompts/captioning.txt",
            parser="novabench.run.parsers:parse_caption",
            scorer="novabench.metrics.captioning:prepare_captioning",
            metric_options=(
                "exclude",
                "bertscore_model",
                "bertscore_num_layers",
                "bertscore_batch_size",
                "keyword_extractor",
                "keyword_averaging",
                "keyword_judge",
                "meteor",
            ),
            headline_keys=(
                "BLEU-4",
                "ROUGE-L",
                "METEOR",
                "METEOR-exact+stem",
                "BERTScore-F1",
                "BERTScore-F1-MiniLM-L6",
                "ClinicalF1",
                "ClinicalF1-lexicon",
                "ModalityF1",
                "ModalityF1-lexicon",
                "BinaryF1",
                "BinaryF1-lexicon",
            ),
            # refusal: the whole answer declines to describe the image (no caption in it).
            parse_statuses=("ok", "empty", "unparseable", "refusal", TOO_LONG),
            failure_statuses=_FAILURES | {"refusal"},
            behaviour="novabench.tasks.captioning:BEHAVIOUR",
            key_meanings=(
                (
                    "BLEU-4",
                    KeyMeaning(
                        "corpus BLEU-4 of the captions against the reference captions (sacrebleu defaults)",
                        FROM_OURS_SETTINGS,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "ROUGE-L",
                    KeyMeaning(
                        "longest-common-subsequence F-measure per caption (rouge_score), mean over captions",
                        FROM_ROUGE_SCORE,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "METEOR",
                    KeyMeaning(
                        "nltk's METEOR with WordNet synonyms per caption, mean over captions",
                        FROM_NLTK,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "METEOR-exact+stem",
                    KeyMeaning(
                        "METEOR without the WordNet synonym stage (another quantity)",
                        FROM_OURS,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "BERTScore-F1",
                    KeyMeaning(
                        "BERTScore F1 per caption (roberta-large layer 17, no IDF, no rescaling), mean",
                        FROM_INFERRED,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "BERTScore-F1-MiniLM-L6",
                    KeyMeaning(
                        "BERTScore F1 with all-MiniLM-L6-v2 layer 6, or the model named (another scale)",
                        FROM_OURS,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "ClinicalF1",
                    KeyMeaning(
                        "F1 of the clinical keywords an LLM judge extracts from caption and reference together",
                        FROM_COAUTHORS_PROCEDURE,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "ClinicalF1-lexicon",
                    KeyMeaning(
                        "F1 of the clinical keywords our offline lexicon finds in caption and reference (a proxy for ClinicalF1)",
                        FROM_OURS,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "ModalityF1",
                    KeyMeaning(
                        "F1 of the sequence and plane keywords (flair, t1, axial...) of the LLM judge",
                        FROM_COAUTHORS_PROCEDURE,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "ModalityF1-lexicon",
                    KeyMeaning(
                        "F1 of the sequence and plane keywords our offline lexicon finds (a proxy for ModalityF1)",
                        FROM_OURS,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "BinaryF1",
                    KeyMeaning(
                        "F1 of the normal/abnormal labels the LLM judge gives caption and reference",
                        FROM_COAUTHORS_PROCEDURE,
                        "no caption pair was scored",
                    ),
                ),
                (
                    "BinaryF1-lexicon",
                    KeyMeaning(
                        "F1 of the normal/abnormal labels our offline lexicon reads (a proxy for BinaryF1)",
                        FROM_OURS,
                        "no caption pair was scored",
                    ),
                ),
            ),
            paper_keys=("BLEU-4", "METEOR", "ClinicalF1"),
            paper_comparison=(
                ("BLEU-4", SETTINGS_UNPUBLISHED),
                ("METEOR", SETTINGS_UNPUBLISHED),
                ("METEOR-exact+stem", ANOTHER_QUANTITY),
                ("BERTScore-F1", SETTINGS_UNPUBLISHED),
                ("BERTScore-F1-MiniLM-L6", ANOTHER_QUANTITY),
                ("ClinicalF1", UP_TO_THE_JUDGE),
                ("ModalityF1", UP_TO_THE_JUDGE),
                ("BinaryF1", UP_TO_THE_JUDGE),
                ("ClinicalF1-lexicon", ANOTHER_QUANTITY),
                ("ModalityF1-lexicon", ANOTHER_QUANTITY),
                ("BinaryF1-lexicon", ANOTHER_QUANTITY),
            ),
            # Any other BERTScore model or layer: its own key, another scale.
            model_keys=(
                (
                    "BERTScore-F1-MiniLM-L6",
                    # bertscore_key's forms: MiniLM at a layer, with bert_score's flags; [model].
                    r"BERTScore-F1(?:-MiniLM-L[0-9]+(?:-idf)?(?:-rescaled|-custom-rescaled)?"
                    r"(?:-fast-tokenizer)?|\[[^\]]+\])",
                ),
            ),
            # Without WordNet / without the keyword judge: other quantities, other names.
            paper_key_stand_ins=(
                ("METEOR", "METEOR-exact+stem"),
                ("ClinicalF1", "ClinicalF1-lexicon"),
                ("ModalityF1", "ModalityF1-lexicon"),
                ("BinaryF1", "BinaryF1-lexicon"),
            ),
        ),
        "diagnosis": TaskSpec(
            name="diagnosis",
            title="Diagnostic reasoning",
            unit="case",
            key_field="case_id",
            raw_field="raw_diagnoses",
            answer_field="diagnoses",
            extra_fields=(),
            reference_field="final_diagnosis",
            prompt_resource="prompts/diagnosis.txt",
            parser="novabench.run.parsers:parse_diagnoses",
            scorer="novabench.metrics.diagnosis:prepare_diagnosis",
            metric_options=("matcher", "case_judge", "contexts"),
            # top1/top5 only from the case judge (the paper's procedure); the lexicon matcher
            # and pair judges give their own keys.
            headline_keys=(
                "top1",
                "top1-lexicon",
                "top1-pairwise",
                "top5",
                "top5-lexicon",
                "top5-pairwise",
            ),
            parse_statuses=(
                "ok",
                "partial",
                "fallback_list",
                "fallback_comma_one_name",
                "empty",
                "unparseable",
                "refusal",
                TOO_LONG,
            ),
            # refusal: the whole answer declines to give a diagnosis (scored as no answer).
            failure_statuses=_FAILURES | {"refusal"},
            behaviour="novabench.tasks.diagnosis:BEHAVIOUR",
            key_meanings=(
                (
                    "top1",
                    KeyMeaning(
                        "cases whose most likely diagnosis matches the final diagnosis (one LLM judge call per "
                        "case), over cases with a final diagnosis",
                        FROM_COAUTHORS_PROCEDURE,
                        "no case has a usable final diagnosis",
                    ),
                ),
                (
                    "top1-lexicon",
                    KeyMeaning(
                        "top1 with our offline lexicon matcher in place of the case judge (a proxy)",
                        FROM_OURS,
                        "no case has a usable final diagnosis",
                    ),
                ),
                (
                    "top1-pairwise",
                    KeyMeaning(
                        "top1 with one LLM judge call per (reference, prediction) pair, not per case",
                        FROM_OURS,
                        "no case has a usable final diagnosis",
                    ),
                ),
                (
                    "top5",
                    KeyMeaning(
                        "cases where any of the five diagnoses matches the final diagnosis (one LLM judge call "
                        "per case), over cases with a final diagnosis",
                        FROM_COAUTHORS_PROCEDURE,
                        "no case has a usable final diagnosis",
                    ),
                ),
                (
                    "top5-lexicon",
                    KeyMeaning(
                        "top5 with our offline lexicon matcher in place of the case judge (a proxy)",
                        FROM_OURS,
                        "no case has a usable final diagnosis",
                    ),
                ),
                (
                    "top5-pairwise",
                    KeyMeaning(
                        "top5 with one LLM judge call per (reference, prediction) pair, not per case",
                        FROM_OURS,
                        "no case has a usable final diagnosis",
                    ),
                ),
            ),
            paper_keys=("top1", "top5"),
            paper_comparison=(
                ("top1", UP_TO_THE_JUDGE),
                ("top5", UP_TO_THE_JUDGE),
                ("top1-lexicon", ANOTHER_QUANTITY),
                ("top5-lexicon", ANOTHER_QUANTITY),
                ("top1-pairwise", ANOTHER_QUANTITY),
                ("top5-pairwise", ANOTHER_QUANTITY),
            ),
            paper_key_stand_ins=(
                ("top1", "top1-lexicon"),
                ("top1", "top1-pairwise"),
                ("top5", "top5-lexicon"),
                ("top5", "top5-pairwise"),
            ),
        ),
    }
)

#: Canonical task names in report order.
TASK_NAMES: tuple[str, ...] = tuple(TASKS)
#: Tasks answered once per image / once per case.
IMAGE_TASKS: tuple[str, ...] = tuple(name for name, spec in TASKS.items() if spec.unit == "image")
CASE_TASKS: tuple[str, ...] = tuple(name for name, spec in TASKS.items() if spec.unit == "case")

# Spellings people type, mapped to the canonical name.
_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        **{name: name for name in TASKS},
        "localisation": "localization",
        "detection": "localization",
        "caption": "captioning",
        "reasoning": "diagnosis",
        "diagnostic_reasoning": "diagnosis",
    }
)


def canonical_task(task: str) -> str:
    """The canonical name of a task as people type it (case, ``-``/space and UK spelling folded).

    Raises:
        ValueError (``NovaInputError``): an unknown task, naming the known ones.

    Example:
        >>> canonical_task("Localisation"), canonical_task("diagnostic-reasoning")
        ('localization', 'diagnosis')
    """
    key = str(task).strip().lower().replace("-", "_").replace(" ", "_")
    if key not in _ALIASES:
        raise NovaInputError(f"unknown task {task!r}; expected one of {', '.join(TASK_NAMES)}")
    return _ALIASES[key]


def get_task(task: str) -> TaskSpec:
    """The declaration of a task, by any accepted spelling.

    Example:
        >>> get_task("caption").headline_keys[:2]
        ('BLEU-4', 'ROUGE-L')
    """
    return TASKS[canonical_task(task)]


def task_answered_in(answer_field: str) -> str:
    """The task whose parsed answer a predictions line holds under ``answer_field``.

    Raises:
        ValueError (``NovaInputError``): no task's answer is held there.

    Example:
        >>> task_answered_in("boxes")
        'localization'
    """
    for name, spec in TASKS.items():
        if spec.answer_field == answer_field:
            return name
    raise NovaInputError(f"no task answers in the field {answer_field!r}", field=answer_field)
