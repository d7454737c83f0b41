"""NOVA metric: anomaly localisation, captioning and diagnosis scores for the NOVA brain-MRI benchmark.

A thin ``evaluate`` face over ``novabench.metrics``: input Features, input
normalisation and every formula live in the ``novabench`` package; this file
only declares the module. See README.md beside it (the metric card).

It uses evaluate's public API only: ``_info`` and ``_compute``, and ``add_batch`` /
``compute`` of ``evaluate.Metric`` (overridden to normalise inputs first, then handed
to evaluate's own), with ``MetricInfo``'s default format (``_compute`` gets Python
lists). The earlier face wrote batches with evaluate's private Arrow writer and read
the columns as Arrow (``_module_info.format``); measured against this with
``scripts/bench_evaluate_face.py`` (2 shared cores, best of 5, batches of 32, results
identical), it bought nothing worth a private name. Private / public: 906 images (NOVA
size), localization: add_batch 0.085 / 0.134 s, compute 0.032 / 0.060 s, peak memory
+7.2 / +8.2 MB; ``all`` (captions and diagnoses too): add 0.157 / 0.183 s, compute
0.160 / 0.151 s, +16.7 / +15.5 MB; 9,060 images, localization (best of 3): add 0.87 /
1.06 s, compute 0.19 / 0.62 s, +26 / +40 MB.
"""

import evaluate

from novabench.citation import NOVA_ARXIV_URL, NOVA_BIBTEX
from novabench.metric_module import configuration_task
from novabench.metrics import evaluate_adapter

_CITATION = NOVA_BIBTEX

_DESCRIPTION = """\
Scores the three NOVA tasks. `localization`: the protocol's mAP@30, mAP@50 and
mAP@50:95 (image-level hit rates over all images), ACC50, TP30, FP30 and FNR against
the gold boxes, with COCO-exact class-agnostic average precision beside them
(COCO-AP@30, COCO-AP@50, COCO-AP@50:95) and hit rates over images with gold (hit@30, hit@50). `captioning`: BLEU-4 (sacrebleu
default), ROUGE-L (rouge_score), METEOR (nltk), BERTScore-F1 (bert_score), and
keyword F1s: the paper's ClinicalF1, ModalityF1, BinaryF1 only from an LLM keyword
judge; an offline neuroradiology lexicon or a pluggable extractor gives the proxies
ClinicalF1-lexicon, ModalityF1-lexicon, BinaryF1-lexicon. `diagnosis`: Top-1 and
Top-5 accuracy: the paper's top1, top5 only from the LLM case judge; the offline lexicon
matcher gives the proxies top1-lexicon, top5-lexicon, a per-pair judge or any other
matcher top1-pairwise, top5-pairwise. `all`:
the three together from per-image predictions and NOVA `images` rows. Every result is a fraction in [0, 1].
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: per task,
        localization: {"boxes": [[x, y, w, h], ...], "scores": [...]} (scores optional);
        captioning: a caption string;
        diagnosis: a list of up to five diagnosis strings, most likely first;
        all: {"boxes", "scores", "caption", "diagnoses"} per image.
        Paired with references by position. Each may name its item: "filename" (image
        tasks: {"caption": ..., "filename": ...} for a caption), "case_id" (diagnosis:
        {"diagnoses": [...], "case_id": ...}); a name that is not the reference's at the
        same position is refused, never used to reorder. The pairs are scored in the order
        of the references' filename (case_id for diagnosis; NOVA rows carry them), as
        nova evaluate scores them, so any order of the same pairs gives the same numbers;
        references without names in the order added. An item named twice is refused.
    references: per task,
        localization: {"boxes": [[x, y, w, h], ...]} or a NOVA `images` row (its width
            and height, when given, are what the box notes judge boxes against);
        captioning: the reference caption or a NOVA `images` row;
        diagnosis: the final diagnosis or a NOVA `cases` row (its clinical_history goes to a
            case_judge with the case);
        all: NOVA `images` rows (their clinical_history goes to a case_judge).
        A whole `datasets.Dataset` works too.
    box_format: "xywh" (default) or "xyxy", pixels.
    max_detections: detections kept per image for AP (default 100, as COCO).
    exclude: captioning metric names to leave out (absent from the result).
    bertscore_model, bertscore_num_layers: the BERTScore model (a local folder or a Hub id;
        default roberta-large, layer 17, downloaded unless HF_HUB_OFFLINE=1) and layer.
        Only roberta-large layer 17 gives BERTScore-F1; "minilm" gives
        BERTScore-F1-MiniLM-L6, any other model BERTScore-F1[<model>-L<layer>].
    meteor: "auto" (default: METEOR when nltk's WordNet corpus is installed, else
        METEOR-exact+stem and a warning), "wordnet" (METEOR; an error without the corpus) or
        "exact+stem" (METEOR-exact+stem: exact and stem matches only, another quantity).
    keyword_extractor: a callable text -> keywords; keyword_averaging: "sample" or "micro".
    keyword_judge: instead of an extractor, an LLM keyword judge
        (novabench.metrics.keyword_judge.OpenAIKeywordJudge: both captions of a pair in one
        call, the paper's procedure); the result's keyword_extractor says which ran.
    matcher: a callable (reference, candidate) -> bool for diagnosis (e.g. the pair judge
        novabench.metrics.judge.OpenAIChatJudge).
    case_judge: instead of a matcher, the protocol-mode diagnosis judge
        (novabench.metrics.judge.OpenAICaseJudge: one call per case with all predictions).
    n_resamples, confidence, seed (an integer >= 0): add seeded bootstrap confidence intervals and
        bootstrap_unit: "case" where whole cases are resampled (all, from `images` rows
        that name their case; diagnosis), "image" for localization or captioning alone
        (they read no case from their references: intervals too narrow for NOVA, with a
        warning). n_resamples is nova evaluate's --bootstrap and evaluate_predictions'
        n_resamples=; its old name here, bootstrap_resamples, is still taken (FutureWarning).
Returns:
    localization: mAP@30, mAP@50, mAP@50:95, ACC50, TP30, FP30, FNR, COCO-AP@30, COCO-AP@50,
        COCO-AP@50:95, hit@30, hit@50, n_images, n_true_positives_30, ...
    captioning: BLEU-4, ROUGE-L, METEOR (or METEOR-exact+stem), BERTScore-F1 (or the
        model's own key), ClinicalF1,
        ModalityF1, BinaryF1 (keyword_judge; else ClinicalF1-lexicon, ModalityF1-lexicon,
        BinaryF1-lexicon), n_captions, ...
    diagnosis: top1, top5 (case_judge; else top1-lexicon, top5-lexicon with the default
        matcher, top1-pairwise, top5-pairwise with another matcher), n_cases, ...
    all: {"localization": {...}, "captioning": {...}, "diagnosis": {...}}
Examples:
    >>> nova = evaluate.load(novabench.metric_path(), "diagnosis")  # or this folder's path
    >>> nova.compute(predictions=[["MS", "ADEM"]], references=["Multiple sclerosis"])["top1-lexicon"]
    1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class NovaMetric(evaluate.Metric):
    """The NOVA benchmark metric (configurations: localization, captioning, diagnosis, all)."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=evaluate_adapter.metric_features(self.task),
            homepage="https://huggingface.co/datasets/c-i-ber/Nova",
            license="apache-2.0",
            reference_urls=[NOVA_ARXIV_URL],
        )

    def __init__(self, config_name=None, **kwargs):
        # No configuration name ("default") means "all", with a warning naming the others.
        self._nova_task = configuration_task(config_name)
        # Another spelling of a task ("localisation") is recorded as the task it names.
        named = config_name not in (None, "", "default")
        super().__init__(config_name=self._nova_task if named else config_name, **kwargs)

    @property
    def task(self):
        """The NOVA task of this configuration (none named means ``all``)."""
        return self._nova_task

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch; predictions and references are normalised (dataset rows allowed) first."""
        if kwargs:
            raise ValueError(
                f"Bad inputs for evaluation module: {sorted(kwargs)}; expected predictions and references"
            )
        start = getattr(self, "_nova_items_added", 0)
        seen = getattr(self, "_nova_items_named", {})
        # Paired by position; a prediction's filename / case_id, when given, is checked
        # against its reference here, where both are at hand; the reference's is stored
        # (the items are scored in its order) and an item named twice is refused.
        plain_predictions, plain_references = evaluate_adapter.normalize_batch(
            self.task, predictions, references, start_index=start, seen=seen
        )
        # task all: an image contradicting an earlier one of its case is refused here, not
        # in compute(), where the error would lose every batch (evaluate drops them).
        cases = evaluate_adapter.case_rows(
            self.task,
            plain_predictions,
            plain_references,
            start_index=start,
            known=getattr(self, "_nova_cases", None),
        )
        batch = {"predictions": plain_predictions, "references": plain_references}
        try:
            super().add_batch(**batch)
        except (TypeError, ValueError, OverflowError):
            # evaluate's message shows the whole batch; name the example and field instead.
            evaluate_adapter.explain_bad_batch(
                self.task, batch["predictions"], batch["references"], start_index=start
            )
            raise
        self._nova_items_added = start + len(batch["predictions"])
        self._nova_cases = cases
        self._nova_items_named = {
            **seen,
            **evaluate_adapter.item_names(self.task, plain_references, start_index=start),
        }

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and its reference."""
        self.add_batch(predictions=[prediction], references=[reference], **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score everything added; options are checked first, while a bad one can still be fixed."""
        kwargs = evaluate_adapter.renamed_options(kwargs)  # bootstrap_resamples: n_resamples
        evaluate_adapter.check_options(self.task, kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, **kwargs):
        """Score everything added (on process 0 in distributed runs)."""
        self._nova_items_added, self._nova_items_named, self._nova_cases = 0, {}, None
        with evaluate_adapter.examples_counted_from_one():
            return evaluate_adapter.compute_stored(
                self.task, predictions, references, processes=self.num_process, **kwargs
            )
