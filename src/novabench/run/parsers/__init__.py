"""Turn raw model answers into boxes, captions and diagnoses, and count how it went.

Every parser here is total: whatever the text (empty, ``None``, bytes, a lone surrogate,
a cut-off JSON list, prose around a code fence), it returns a result with a ``status``
instead of raising. Failures are statuses so a report can say how many answers of a
model could not be read: a parser that silently drops a valid box changes that model's
score. The statuses each task's answers can get, and which of them are failures, are
declared once in :mod:`novabench.registry`.

The package, by what each module reads (only the names below are public):

=================== ===================================================================
module              job
=================== ===================================================================
``text``            shared text handling: input coercion, null literals, ``<think>``
                    reasoning removal, code fences, the length limit
``lenient_json``    the forgiving JSON reader (comments, quotes, cut-off structures)
``boxes``           localisation answers -> :class:`ParsedBoxes` (:func:`parse_localization`,
                    :data:`CONVENTIONS`: candidates, ``auto`` resolution, pixel conversion)
``diagnoses``       diagnosis answers -> :class:`ParsedDiagnoses` (:func:`parse_diagnoses`:
                    the JSON object, deduplication, the one-line fallback)
``diagnosis_prose`` diagnoses written as text: lists, labelled lines, prose statements,
                    names cut with the diagnosis lexicon
``captions``        captioning answers -> :class:`ParsedCaption` (:func:`parse_caption`)
``stats``           :class:`ParseStats`, counts of outcomes over many answers of a task
=================== ===================================================================

Example:
    >>> from novabench.run.parsers import ParseStats, parse_caption, parse_localization
    >>> parse_localization("lesion: [250, 100, 750, 500]", image_size=(480, 480)).boxes
    [[48.0, 120.0, 192.0, 240.0]]
    >>> ParseStats.from_results([parse_caption("Axial T2."), parse_caption("")]).n_failed
    1
"""

from __future__ import annotations

from novabench.run.parsers.boxes import (
    CONVENTIONS,
    LOCALIZATION_STATUSES,
    ParsedBoxes,
    parse_localization,
)
from novabench.run.parsers.captions import CAPTION_STATUSES, ParsedCaption, parse_caption
from novabench.run.parsers.diagnoses import DIAGNOSIS_STATUSES, ParsedDiagnoses, parse_diagnoses
from novabench.run.parsers.stats import FAILURE_STATUSES, ParseStats

__all__ = [
    "CAPTION_STATUSES",
    "CONVENTIONS",
    "DIAGNOSIS_STATUSES",
    "FAILURE_STATUSES",
    "LOCALIZATION_STATUSES",
    "ParseStats",
    "ParsedBoxes",
    "ParsedCaption",
    "ParsedDiagnoses",
    "parse_caption",
    "parse_diagnoses",
    "parse_localization",
]
