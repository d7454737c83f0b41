"""Reading a diagnosis statement: what it affirms, what it negates, and its alternatives.

:func:`read_diagnosis` finds negated mentions ("no toxoplasmosis", "abscess ruled out")
and cuts the affirmed text into alternatives ("glioma or lymphoma"); the diagnosis matcher
and the prose parser read statements through it. Words are compared after the
normalisation of :mod:`novabench.lexicon.normalization`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from novabench.lexicon.normalization import (
    _ABBREVIATION,
    _NON_ALNUM,
    _check_text,
    _fold,
    normalize_diagnosis,
)

__all__ = ["DiagnosisReading", "read_diagnosis"]


# A chunk is a run of characters between white space and the punctuation below; hyphens,
# apostrophes and full stops stay inside it ("graft-versus-host", "Behçet's", "vs.").
_CHUNK = re.compile(r"[^\s,;:/()\[\]{}|?!]+")
# Punctuation that ends a negation's scope (a clause), and punctuation that separates
# alternatives ("glioma, lymphoma", "glioma/lymphoma", "glioma; lymphoma").
_CLAUSE_PUNCTUATION = frozenset(",;.?!()[]{}|\n")
_ALTERNATIVE_PUNCTUATION = frozenset(",;/|\n")
# Words that set alternatives apart whatever surrounds them.
_ALTERNATIVE_WORDS = frozenset({"or", "vs", "versus"})
# Words that end a clause like punctuation does ("not toxoplasmosis but lymphoma").
_CLAUSE_WORDS = frozenset({"but", "however", "although", "though", "whereas"})
# Words that carry no content of their own around a negation ("X has been ruled out").
_FILLERS = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "it",
        "this",
        "very",
        "highly",
        "much",
        "far",
        "considered",
        "felt",
    }
)
# A part after a comma that starts with one of these continues the diagnosis before it
# ("glioblastoma, with necrosis"; "SEGA, given the tuberous sclerosis": the reason for it):
# it is not a new alternative.
_CONTINUATIONS = frozenset(
    """
    with without in secondary due associated complicated complicating involving extending
    from plus and of on at to by for including eg ie such affecting causing caused related
    induced given considering because
""".split()
)

_NEGATE_FORWARD, _NEGATE_BACKWARD, _NEUTRAL = "forward", "backward", "neutral"
# Negation cues. A forward cue negates the rest of its clause ("no evidence of X", "not X",
# "without X", "X rather than Y"); a backward cue the clause before it ("X ruled out",
# "X is unlikely"). Either turns round when its own side of the clause is empty
# ("unlikely X", "X: no"). Neutral phrases are double negatives and boilerplate that
# negate nothing ("cannot be excluded", "not ruled out", "not otherwise specified").
# "absent", "absence of", "lack of" and "negative" are no cues: they name congenital
# diagnoses ("absent septum pellucidum") more often than they negate one.
_CUES: dict[tuple[str, ...], str] = {
    **{
        tuple(p.split()): _NEGATE_FORWARD
        for p in (
            "no",
            "not",
            "without",
            "negative for",
            "free of",
            "neither",
            "nor",
            "rather than",
            "instead of",
            "than",
            "excluding",
            "rules out",
            "ruling out",
            "argue against",
            "argues against",
            "arguing against",
            "speaks against",
            "inconsistent with",
        )
    },
    **{
        tuple(p.split()): _NEGATE_BACKWARD
        for p in (
            "ruled out",
            "excluded",
            "unlikely",
            "less likely",
            # "Y less likely than X": the "than" belongs to the cue, X stays affirmed
            "less likely than",
            "less probable than",
            "not likely",
            "improbable",
            "not favored",
            "not favoured",
            "not supported",
            "not seen",
            "not present",
            "not identified",
        )
    },
    **{
        tuple(p.split()): _NEUTRAL
        for p in (
            "not only",
            "not otherwise specified",
            "not elsewhere classified",
            "no change",
            "no significant change",
            "no interval change",
        )
    },
}
_CUE_LENGTH = max(len(p) for p in _CUES)
# "cannot [be] excluded", "can't rule out", "not excluded", "not unlikely": negated negations.
_DOUBLE_NEGATORS = (
    ("cannot",),
    ("cant",),
    ("can", "not"),
    ("could", "not"),
    ("couldnt",),
    ("not",),
    ("never",),
)
_DOUBLE_FILLERS = frozenset(
    {
        "be",
        "been",
        "to",
        "yet",
        "completely",
        "entirely",
        "definitely",
        "fully",
        "safely",
        "reliably",
        "confidently",
        "firmly",
    }
)
_NEGATED_NEGATIONS = (("excluded",), ("exclude",), ("ruled", "out"), ("rule", "out"), ("unlikely",))


@dataclass(frozen=True)
class DiagnosisReading:
    """What a diagnosis statement affirms, what it negates, and its alternatives.

    Attributes:
        affirmed: the text with negated words and neutral double negatives blanked out
            (the text itself when nothing is negated).
        negated: the negated spans of the text, cue words included, in text order.
        segments: the affirmed text cut at separators of alternatives (``or``, ``vs``,
            ``versus``, ``,``, ``;``, ``/``), except where the next part continues the
            diagnosis ("with ...", "secondary to ..."); unnormalised. Parts without
            letters or digits are left out.
        explicit: the segments are set apart by an explicit ``or``, ``vs`` or ``versus``
            (so each is an alternative whatever its words); when only punctuation
            separates them, a part may be a qualifier ("Glioblastoma, IDH-wildtype").
    """

    affirmed: str
    negated: tuple[str, ...]
    segments: tuple[str, ...]
    explicit: bool = False


def _chunk_key(chunk: str) -> str:
    return _NON_ALNUM.sub("", _fold(chunk).replace("'", ""))


def _phrase_at(keys: list[str], position: int, end: int) -> tuple[int, str]:
    """The longest cue (or negated negation) starting at ``position``: (length, kind)."""
    for negator in _DOUBLE_NEGATORS:
        if tuple(keys[position : position + len(negator)]) == negator:
            after = position + len(negator)
            while after < end and keys[after] in _DOUBLE_FILLERS:
                after += 1
            for tail in _NEGATED_NEGATIONS:
                if after + len(tail) <= end and tuple(keys[after : after + len(tail)]) == tail:
                    return after + len(tail) - position, _NEUTRAL
    for length in range(min(_CUE_LENGTH, end - position), 0, -1):
        kind = _CUES.get(tuple(keys[position : position + length]))
        if kind is not None:
            return length, kind
    return 0, ""


@lru_cache(maxsize=16384)
def _read_diagnosis(text: str) -> DiagnosisReading:
    spans = [
        (m.start(), m.end(), key) for m in _CHUNK.finditer(text) if (key := _chunk_key(m.group()))
    ]
    if not spans:
        return DiagnosisReading(text, (), ())
    keys = [key for _, _, key in spans]
    count = len(spans)
    # A parenthesised abbreviation belongs to its clause: "no progressive multifocal
    # leukoencephalopathy (PML)" negates the PML too.
    transparent = []
    for i, (start, end, _) in enumerate(spans):
        before = text[spans[i - 1][1] if i else 0 : start]
        after = text[end : spans[i + 1][0] if i + 1 < count else len(text)]
        chunk = text[start:end]
        transparent.append(
            "(" in before
            and ")" in after
            and _ABBREVIATION.match(chunk) is not None
            and any(c.isupper() or c.isdigit() for c in chunk)
        )

    def clause_break(i: int) -> bool:
        """Whether a clause ends between chunk ``i - 1`` and chunk ``i``."""
        gap = set(text[spans[i - 1][1] : spans[i][0]])
        if transparent[i]:
            gap.discard("(")
        if transparent[i - 1]:
            gap.discard(")")
        previous = text[spans[i - 1][0] : spans[i - 1][1]]
        sentence_end = previous.endswith(".") and len(keys[i - 1]) >= 4
        return bool(gap & _CLAUSE_PUNCTUATION) or sentence_end

    clauses: list[list[int]] = [[]]
    for i in range(count):
        if keys[i] in _CLAUSE_WORDS:
            clauses.append([])
            continue
        if i and clause_break(i) and clauses[-1]:
            clauses.append([])
        clauses[-1].append(i)

    negated: set[int] = set()
    neutral: set[int] = set()
    for clause in clauses:
        words = [keys[i] for i in clause]
        position = 0
        while position < len(words):
            length, kind = _phrase_at(words, position, len(words))
            if not length:
                position += 1
                continue
            cue_end = position + length
            if kind == _NEUTRAL:
                neutral.update(clause[position:cue_end])
                position = cue_end
                continue
            words_before = any(w not in _FILLERS for w in words[:position])
            words_after = any(w not in _FILLERS for w in words[cue_end:])
            forward = words_after if kind == _NEGATE_FORWARD else not words_before
            if forward:
                negated.update(clause[position:])
                break
            # A backward cue reaches back to the clause start or to a "with": "glioblastoma
            # with toxoplasmosis ruled out" keeps the glioblastoma.
            start = max((at + 1 for at in range(position) if words[at] == "with"), default=0)
            negated.update(clause[start:cue_end])
            position = cue_end

    if negated:  # "not toxoplasmosis but lymphoma": the "but" goes with the negation
        neutral.update(i for i in range(count) if keys[i] in _CLAUSE_WORDS)
    blanked = list(text)
    for i in negated | neutral:
        start, end, _ = spans[i]
        blanked[start:end] = " " * (end - start)
    affirmed = "".join(blanked) if negated or neutral else text
    negated_spans: list[str] = []
    run: list[int] = []
    for i in sorted(negated) + [count + 1]:
        if run and i != run[-1] + 1:
            end = spans[run[-1]][1]
            if transparent[run[-1]]:  # the abbreviation's closing parenthesis
                end = text.index(")", end) + 1
            negated_spans.append(text[spans[run[0]][0] : end])
            run = []
        run.append(i)

    # Cut the affirmed text at separators of alternatives.
    kept = [i for i in range(count) if i not in negated and i not in neutral]
    cuts: list[tuple[int, int, bool]] = [(0, 0, False)]  # (start, end, an explicit word)
    for position, i in enumerate(kept):
        start, end, key = spans[i]
        if position:
            gap_start = spans[kept[position - 1]][1]
            marks = [at for at in range(gap_start, start) if text[at] in _ALTERNATIVE_PUNCTUATION]
            if marks:
                cuts.append((marks[0], marks[-1] + 1, False))
        if key in _ALTERNATIVE_WORDS:
            cuts.append((start, end, True))
    cuts.append((len(affirmed), len(affirmed), False))
    pieces: list[tuple[int, int]] = []
    after_word = False  # the last cut was an explicit word ("glioma and/or lymphoma")
    for (_, start, word), (end, _, _) in pairwise(cuts):
        after_word = after_word or word
        part = affirmed[start:end]
        if not _NON_ALNUM.sub("", _fold(part)):
            continue
        words = normalize_diagnosis(part).split()
        if pieces and not after_word and words and words[0] in _CONTINUATIONS:
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
        after_word = False
    segments = tuple(affirmed[start:end] for start, end in pieces)
    explicit = any(word for _, _, word in cuts) and len(segments) > 1
    return DiagnosisReading(affirmed, tuple(negated_spans), segments, explicit)


def read_diagnosis(text: str) -> DiagnosisReading:
    """Split a diagnosis statement into what it affirms, what it negates, and alternatives.

    Negation works on clauses: a clause ends at ``, ; . ? ! ( ) [ ] |`` or at ``but``,
    ``however``, ``although``..., while a parenthesised abbreviation stays in its clause.
    A forward cue (``no``, ``not``, ``without``, ``no evidence of``, ``negative for``,
    ``free of``, ``neither``/``nor``, ``rather than``, ``instead of``, ``excluding``,
    ``argues against``, ``inconsistent with``...) negates the rest of its clause; a backward
    cue (``ruled out``, ``excluded``, ``unlikely``, ``less likely``, ``not seen``...; ``less
    likely than`` keeps what follows it) negates the clause before it, back to
    a ``with`` at most ("glioblastoma with toxoplasmosis ruled out"). A cue with nothing on its own side turns round (``unlikely X``,
    ``X: no``). Double negatives (``cannot be excluded``, ``can't rule out``, ``not
    ruled out``, ``not unlikely``) and boilerplate (``not otherwise specified``) negate
    nothing and are dropped.

    Args:
        text: a diagnosis as written by a model or in the release.

    Returns:
        A :class:`DiagnosisReading`.

    Raises:
        NovaInputError: ``text`` is not a string.

    Example:
        >>> reading = read_diagnosis("Glioblastoma (toxoplasmosis ruled out)")
        >>> normalize_diagnosis(reading.affirmed), reading.negated
        ('glioblastoma', ('toxoplasmosis ruled out',))
        >>> reading = read_diagnosis("Glioma, abscess or toxoplasmosis")
        >>> [part.strip() for part in reading.segments], reading.explicit
        (['Glioma', 'abscess', 'toxoplasmosis'], True)
        >>> read_diagnosis("Glioblastoma, with necrosis").segments
        ('Glioblastoma, with necrosis',)
        >>> normalize_diagnosis(read_diagnosis("Toxoplasmosis cannot be ruled out").affirmed)
        'toxoplasmosis'
    """
    return _read_diagnosis(_check_text(text, "text"))
