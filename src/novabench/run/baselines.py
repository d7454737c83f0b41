"""Floor baselines: honest, no-GPU, no-download answers for the three NOVA tasks.

- ``outlier-detector`` (localisation): boxes from ``novabench.run.detector``.
- ``template-caption`` (captioning): a sentence built from what the detector
  finds: signal, side (radiological convention: image left is the patient's
  right) and region along the slice's long axis.
- ``lexicon-ranking`` (diagnosis): the diagnosis lexicon ranked by weighted
  word overlap between each entry's words and the clinical history plus
  findings.
- ``floor``: the three together, one per task.

They are floors, not models: a vision-language model that does not beat them
on NOVA has learnt nothing the image statistics or the history do not give
away. Each answers in the same text formats a model would (the protocol's
``label: [ymin, xmin, ymax, xmax]`` lines, a caption, the diagnosis JSON), so
their answers go through the same parsers and the same files as any model.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from novabench.errors import NovaInputError
from novabench.run.defaults import BASELINES
from novabench.run.detector import Detection, DetectorSettings, detect_anomalies, head_mask
from novabench.tasks import behaviour, load_hook

__all__ = [
    "BASELINES",
    "BaselineBackend",
    "answer_captioning",
    "answer_diagnosis",
    "answer_localization",
    "describe_findings",
    "diagnosis_answer",
    "get_baseline",
    "localization_answer",
    "rank_diagnoses",
]


def localization_answer(image: np.ndarray, settings: DetectorSettings | None = None) -> str:
    """The detector's boxes as a protocol answer: ``label: [ymin, xmin, ymax, xmax]`` in 0..1000.

    Args:
        image: 2-D grayscale slice.
        settings: detector thresholds.

    Returns:
        One line per detection, best first, or ``no target``.

    Example:
        >>> localization_answer(np.zeros((32, 32)))
        'no target'
    """
    height, width = np.asarray(image).shape[:2]
    lines = []
    for detection in detect_anomalies(image, settings):
        x, y, w, h = detection.box
        ymin, xmin = round(1000 * y / height), round(1000 * x / width)
        ymax, xmax = round(1000 * (y + h) / height), round(1000 * (x + w) / width)
        lines.append(f"{detection.signal} region: [{ymin}, {xmin}, {ymax}, {xmax}]")
    return "\n".join(lines) if lines else "no target"


def describe_findings(image: np.ndarray, settings: DetectorSettings | None = None) -> str:
    """A template radiology caption from the detector's best finding.

    The plane and sequence cannot be read off a PNG reliably, so the caption
    says "MRI slice" and nothing about them; ModalityF1 of this baseline is a
    floor by construction.

    Args:
        image: 2-D grayscale slice.
        settings: detector thresholds.

    Returns:
        One sentence.

    Example:
        >>> describe_findings(np.zeros((32, 32)))
        'MRI slice of the brain without a focal signal abnormality.'
    """
    values = np.asarray(image, dtype=np.float64)
    detections = detect_anomalies(values, settings)
    if not detections:
        return "MRI slice of the brain without a focal signal abnormality."
    best = detections[0]
    side, region = _position_words(best, head_mask(values))
    size = "small" if best.area < 0.01 * values.size else "large"
    more = f" {len(detections) - 1} further smaller focus." if len(detections) == 2 else ""
    if len(detections) > 2:
        more = f" {len(detections) - 1} further smaller foci."
    return f"MRI slice of the brain showing a {size} {best.signal} lesion in the {side} {region}.{more}"


def _position_words(detection: Detection, mask: np.ndarray) -> tuple[str, str]:
    x, y, w, h = detection.box
    cx, cy = x + w / 2, y + h / 2
    rows = np.nonzero(mask.any(axis=1))[0]
    cols = np.nonzero(mask.any(axis=0))[0]
    if rows.size == 0:
        return "midline", "brain"
    centre_x = (cols[0] + cols[-1]) / 2
    span_x = max(cols[-1] - cols[0], 1)
    if abs(cx - centre_x) < 0.08 * span_x:
        side = "midline"
    else:
        # Radiological convention: the patient's right is on the image's left.
        side = "right" if cx < centre_x else "left"
    fraction = (cy - rows[0]) / max(rows[-1] - rows[0], 1)
    region = (
        "frontal region"
        if fraction < 0.38
        else ("parietal region" if fraction < 0.68 else "occipital region")
    )
    if side == "midline":
        return "midline", region.replace(" region", " midline region")
    return side, region


@dataclass(frozen=True)
class _RankedEntry:
    name: str
    words: frozenset[str]


_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by for from in into is it its of on or the to with without was were has have "
    "had this that these those patient year years old man woman male female history presented presents "
    "presenting mri image images shows showing show seen findings disease syndrome type".split()
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2]


@lru_cache(maxsize=1)
def _ranking_entries() -> tuple[_RankedEntry, ...]:
    from novabench.lexicon.diagnoses import load_diagnosis_lexicon

    entries = []
    for entry in load_diagnosis_lexicon().entries:
        if entry.is_category:  # a class such as "brain tumor" is never a diagnosis
            continue
        text_parts = [entry.name, *entry.synonyms, *getattr(entry, "cues", ())]
        entries.append(_RankedEntry(name=entry.name, words=frozenset(_words(" ".join(text_parts)))))
    return tuple(entries)


def rank_diagnoses(clinical_history: str, findings: Sequence[str], *, k: int = 5) -> list[str]:
    """Rank the diagnosis lexicon by IDF-weighted word overlap with the case text.

    Args:
        clinical_history: the case's clinical history.
        findings: the case's reference captions (the task's "MRI findings").
        k: how many diagnoses to return.

    Returns:
        ``k`` canonical diagnosis names, best first; ties broken by name so the
        ranking is deterministic.

    Example:
        >>> ranked = rank_diagnoses("Young woman with optic neuritis and relapsing weakness.",
        ...                         ["Periventricular ovoid FLAIR lesions perpendicular to the ventricles."])
        >>> len(ranked)
        5
    """
    if k < 1:
        raise NovaInputError(f"k must be at least 1, got {k}", field="k")
    entries = _ranking_entries()
    document_frequency: Counter[str] = Counter()
    for entry in entries:
        document_frequency.update(entry.words)
    total = len(entries)
    case_words = Counter(_words(" ".join([clinical_history or "", *findings])))
    scored = []
    for entry in entries:
        score = sum(
            math.log(1 + total / document_frequency[word]) * min(count, 2)
            for word, count in case_words.items()
            if word in entry.words
        )
        scored.append((-score, entry.name))
    scored.sort()
    return [name for _, name in scored[:k]]


def diagnosis_answer(clinical_history: str, findings: Sequence[str]) -> str:
    """The lexicon ranking as the protocol's JSON answer.

    Example:
        >>> answer = json.loads(diagnosis_answer("Seizures.", ["Cortical tuber."]))
        >>> sorted(answer)
        ['most_likely_diagnosis', 'other_possible_diagnoses']
    """
    ranked = rank_diagnoses(clinical_history, findings, k=5)
    return json.dumps({"most_likely_diagnosis": ranked[0], "other_possible_diagnoses": ranked[1:]})


#: A baseline's answer to one request: the text, and the size of the image it looked at.
BaselineAnswer = tuple[str, tuple[int, int] | None]


def _size(request: Any) -> tuple[int, int]:
    width, height = request.image.size
    return int(width), int(height)


def _grey_pixels(request: Any) -> np.ndarray:
    return np.asarray(request.image.convert("L"), dtype=np.float64)


def answer_localization(request: Any, settings: DetectorSettings) -> BaselineAnswer:
    """The outlier detector's boxes for a localisation request (its task's baseline).

    Example:
        >>> from types import SimpleNamespace
        >>> from PIL import Image
        >>> answer_localization(SimpleNamespace(image=Image.new("L", (32, 24))), DetectorSettings())
        ('no target', (32, 24))
    """
    return localization_answer(_grey_pixels(request), settings), _size(request)


def answer_captioning(request: Any, settings: DetectorSettings) -> BaselineAnswer:
    """The template caption of what the detector finds, for a captioning request.

    Example:
        >>> from types import SimpleNamespace
        >>> from PIL import Image
        >>> text, size = answer_captioning(SimpleNamespace(image=Image.new("L", (32, 24))),
        ...                                DetectorSettings())
        >>> text == describe_findings(np.zeros((24, 32))), size
        (True, (32, 24))
    """
    return describe_findings(_grey_pixels(request), settings), _size(request)


def answer_diagnosis(request: Any, settings: DetectorSettings) -> BaselineAnswer:
    """The lexicon ranking for a diagnosis request, from its clinical history and findings.

    Example:
        >>> from types import SimpleNamespace
        >>> request = SimpleNamespace(context={"clinical_history": "Seizures.",
        ...                                    "findings": ["Ring-enhancing lesion."]})
        >>> text, size = answer_diagnosis(request, DetectorSettings())
        >>> text == diagnosis_answer("Seizures.", ["Ring-enhancing lesion."]), size
        (True, None)
    """
    context = request.context
    text = diagnosis_answer(
        context.get("clinical_history") or "", list(context.get("findings") or [])
    )
    return text, None


class BaselineBackend:
    """A floor baseline behind the runner's ``Backend`` protocol.

    Args:
        name: one of ``BASELINES``.
        settings: detector thresholds for the image tasks.

    Example:
        >>> from novabench.run.backends import Request
        >>> backend = get_baseline("lexicon-ranking")
        >>> request = Request("case0001", "diagnosis", "(prompt)",
        ...                   context={"clinical_history": "Seizures.", "findings": ["Cortical tubers."]})
        >>> answer = backend.generate([request])[0]
        >>> answer.ok, sorted(json.loads(answer.text))
        (True, ['most_likely_diagnosis', 'other_possible_diagnoses'])
    """

    batch_size = 8

    def __init__(self, name: str, settings: DetectorSettings | None = None) -> None:
        if name not in BASELINES:
            raise NovaInputError(
                f"unknown baseline {name!r}; choose one of {sorted(BASELINES)}", field="baseline"
            )
        self.name = f"baseline:{name}"
        self.baseline = name
        self.tasks = BASELINES[name]
        self.settings = settings or DetectorSettings()

    def describe(self) -> dict[str, Any]:
        """What the manifest records about this baseline."""
        from dataclasses import asdict

        return {
            "backend": "baseline",
            "model": self.name,
            "tasks": list(self.tasks),
            "detector_settings": asdict(self.settings),
        }

    def generate(self, requests: Sequence[Any]) -> list[Any]:
        """One answer per request; a task this baseline does not do is an error on that item."""
        from novabench.run.backends import Answer

        answers = []
        for request in requests:
            started = time.perf_counter()
            if request.task not in self.tasks:
                answers.append(
                    Answer(error=f"baseline {self.baseline} does not answer {request.task}")
                )
                continue
            answer = load_hook(behaviour(request.task).baseline_answer)
            text, input_size = answer(request, self.settings)
            latency = time.perf_counter() - started
            # A rule, not a generator: its answer is always whole.
            answers.append(
                Answer(text=text, latency_s=latency, input_size=input_size, finish_reason="stop")
            )
        return answers


def get_baseline(name: str) -> BaselineBackend:
    """The baseline backend called ``name`` (see ``BASELINES``).

    Example:
        >>> get_baseline("floor").tasks
        ('localization', 'captioning', 'diagnosis')
    """
    return BaselineBackend(name)
