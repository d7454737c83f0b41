"""Diagnosis answers to ranked diagnoses: :func:`parse_diagnoses` and :class:`ParsedDiagnoses`.

The JSON object of the protocol is read here (any spelling of its keys, cut off or not);
an answer without one is handed to :mod:`novabench.run.parsers.diagnosis_prose`, which
reads lists, labelled lines and prose. A bare one-line answer is the last resort.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from novabench.registry import TASKS, task_answered_in
from novabench.run.parsers.diagnosis_prose import (
    _MAX_NAME_WORDS,
    _NO_DIAGNOSIS,
    _SENTENCE_PIECE,
    COMMA_NAME_STATUS,
    _inline_list_items,
    _item_name,
    _line_label,
    _named_after_declining,
    _NameReader,
    _one_line_names,
    _read_written_diagnoses,
    declines_diagnosis,
)
from novabench.run.parsers.lenient_json import _norm_key, _structures
from novabench.run.parsers.text import (
    _MAX_CHARS,
    _coerce_text,
    _is_null_literal,
    _strip_reasoning,
    _without_fences,
)


@dataclass(frozen=True)
class ParsedDiagnoses:
    """Diagnoses read from one diagnosis answer, most likely first.

    Attributes:
        diagnoses: the diagnoses in the model's order, duplicates removed
            (case-insensitively, first kept). All are kept, even beyond five:
            the metric looks at the first five only.
        status: one of :data:`DIAGNOSIS_STATUSES`: ``"ok"`` (the JSON object, five or
            more diagnoses), ``"partial"`` (the JSON object, fewer than five),
            ``"fallback_list"`` (no usable JSON; read from a numbered or bulleted list,
            ``Most likely: X`` lines, prose statements such as "the most likely diagnosis
            is X. Differentials include A and B", a bare list or a bare one-line answer),
            ``"fallback_comma_one_name"`` (a bare one-line answer, or a labelled line's
            value, with commas that may be one name with qualifiers, read as one diagnosis
            and counted apart), ``"empty"`` (no text, or an answer that names no diagnosis:
            ``Diagnosis: unknown``, ``Answer: N/A``), ``"refusal"`` (the whole answer
            declines to give a diagnosis; scored as no answer), ``"unparseable"``.
        n_duplicates_removed: diagnoses dropped as repeats.
        error: why nothing could be read, else ``None``.
        notes: other remarks (a cut-off JSON object, for instance).

    Example:
        >>> parsed = parse_diagnoses('{"most_likely_diagnosis": "Glioma", "differentials": []}')
        >>> parsed.diagnoses, parsed.status, parsed.n_duplicates_removed
        (['Glioma'], 'partial', 0)
    """

    #: The task of :mod:`novabench.registry` this result answers.
    TASK: ClassVar[str] = task_answered_in("diagnoses")
    #: Counts :class:`ParseStats` adds up over the answers (attributes of both).
    COUNTED: ClassVar[tuple[str, ...]] = ("n_diagnoses", "n_duplicates_removed")
    #: Attributes whose values :class:`ParseStats` counts in its ``<name>_counts``.
    TALLIED: ClassVar[tuple[str, ...]] = ()

    diagnoses: list[str] = field(default_factory=list)
    status: str = "ok"
    n_duplicates_removed: int = 0
    error: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def n_diagnoses(self) -> int:
        """Number of diagnoses kept.

        Example:
            >>> parse_diagnoses("1. Glioma\\n2. Lymphoma").n_diagnoses
            2
        """
        return len(self.diagnoses)

    @property
    def most_likely(self) -> str | None:
        """The first diagnosis, or None.

        Example:
            >>> parse_diagnoses("1. Glioma\\n2. Lymphoma").most_likely
            'Glioma'
        """
        return self.diagnoses[0] if self.diagnoses else None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form.

        Example:
            >>> ParsedDiagnoses(status="empty").to_dict()["diagnoses"]
            []
        """
        result = asdict(self)
        result["notes"] = list(self.notes)
        return result


#: Statuses of :class:`ParsedDiagnoses`, as the task registry declares them.
DIAGNOSIS_STATUSES: tuple[str, ...] = TASKS[ParsedDiagnoses.TASK].parse_statuses


# --------------------------------------------------------------------------- the JSON object


_MOST_LIKELY_KEYS = frozenset(
    {
        "most_likely_diagnosis",
        "most_likely",
        "most_likely_dx",
        "primary_diagnosis",
        "diagnosis",
        "top_diagnosis",
        "final_diagnosis",
        "likely_diagnosis",
        "main_diagnosis",
        "leading_diagnosis",
        "best_diagnosis",
        "top_1",
        "top1",
        "working_diagnosis",
    }
)
_OTHER_KEYS = frozenset(
    {
        "other_possible_diagnoses",
        "other_diagnoses",
        "differentials",
        "differential",
        "differential_diagnoses",
        "differential_diagnosis",
        "alternatives",
        "alternative_diagnoses",
        "possible_diagnoses",
        "other_possible_diagnosis",
        "ddx",
        "others",
        "diagnoses",
        "top_5",
        "top5",
        "other_differentials",
    }
)
_DIAGNOSIS_NAME_KEYS = ("diagnosis", "name", "label", "dx", "condition", "disease", "value")


def _is_most_likely_key(norm: str) -> bool:
    return (
        norm in _MOST_LIKELY_KEYS
        or "most_likely" in norm
        or ("primary" in norm and "diagnos" in norm)
    )


def _is_other_key(norm: str) -> bool:
    return (
        norm in _OTHER_KEYS
        or "differential" in norm
        or norm.startswith("other")
        or ("alternative" in norm)
    )


def _strings_of(value: Any, depth: int = 0) -> list[str]:
    if depth > 5:
        return []
    if isinstance(value, str):
        inline = _inline_list_items(value) if depth == 0 else None
        if inline is not None:  # "1. Lymphoma 2. Metastasis": as written one item per line
            return inline
        if ";" in value or "\n" in value:
            return re.split(r"\s*;\s*|\n+", value)
        if depth == 0 and "," in value:  # a key's whole value: the list rule of a bare line
            read = _one_line_names(" ".join(value.split()), _NameReader())
            return read.names if read is not None else [value]
        return [value]
    if isinstance(value, dict):
        for key, item in value.items():
            if _norm_key(key) in _DIAGNOSIS_NAME_KEYS and isinstance(item, str):
                return [item]
        return [item for item in value.values() if isinstance(item, str)][:1]
    if isinstance(value, list):
        return [text for item in value for text in _strings_of(item, depth + 1)]
    return []


def _clean_diagnosis(text: str, *, dash_markers: bool = False) -> str:
    text = re.sub(r"\*\*|__|`", "", text)
    # "a)", "(b)", "C." are list markers; "E. coli", "C. neoformans" are genus initials. In
    # a JSON item (``dash_markers``) "1-" and "1 -" are markers too ("5-ALA" and "11-beta",
    # no space after the dash, are not); a written line keeps them unless its dash run was
    # read as a list (see diagnosis_prose._dash_numbered_as_dotted).
    dash = r"|\d{1,2} ?[-\u2013\u2014](?=\s)" if dash_markers else ""
    text = re.sub(
        rf"^\s*(?:[-*\u2022+]|\(?\d+[.):]{dash}|\(?[a-eA-E]\)|[a-eA-E]\.(?!\s*[a-z]))\s*",
        "",
        text,
    )
    text = " ".join(text.split())
    text = text.strip(" \"'\u201c\u201d")
    text = text.rstrip(" .;,")
    return text if re.search(r"[A-Za-z0-9]", text) else ""


def _deduplicate(items: Iterable[str], *, dash_markers: bool = False) -> tuple[list[str], int]:
    kept: list[str] = []
    seen: set[str] = set()
    removed = 0
    for item in items:
        cleaned = _clean_diagnosis(item, dash_markers=dash_markers)
        if not cleaned:
            continue
        key = " ".join(cleaned.casefold().split())
        if key in seen:
            removed += 1
            continue
        seen.add(key)
        kept.append(cleaned)
    return kept, removed


def _diagnoses_from_object(obj: dict[str, Any]) -> list[str] | None:
    """Most likely first, then the others; None when no recognised key."""
    first: list[str] = []
    others: list[str] = []
    recognised = False
    for key, value in obj.items():
        norm = _norm_key(key)
        if _is_most_likely_key(norm) and not _is_other_key(norm):
            recognised = True
            first.extend(_strings_of(value))
        elif _is_other_key(norm):
            recognised = True
            others.extend(_strings_of(value))
    if recognised:
        return first + others
    for value in obj.values():
        if isinstance(value, dict):
            nested = _diagnoses_from_object(value)
            if nested is not None:
                return nested
    return None


_REFUSAL = re.compile(r"\b(?:cannot|can't|can not|unable|not able|sorry|as an ai)\b", re.I)


# --------------------------------------------------------------------------- the answer


def parse_diagnoses(text: Any) -> ParsedDiagnoses:
    """Read the ranked diagnoses of one diagnosis answer, most likely first.

    The JSON object of the contract is found even inside code fences, with
    prose around it, single quotes, comments, trailing commas, other key
    spellings (``"most likely diagnosis"``, ``"differentials"``...) or cut off
    (complete strings are kept). Without usable JSON, numbered or bulleted
    lists (``1.``, ``1)``, ``(1)``, ``-``, ``*``, ``\u2022``; ``1-`` and ``1 -`` in a run
    numbered 1, 2, 3..., so a line "2 - 3 lesions" alone is no item), ``Most likely: X``
    lines, labelled ``Differentials: A, B`` / ``Others: A; B`` / ``Alternatives: ...``
    lines, statements in prose, or a bare one-line answer are read (status
    ``"fallback_list"``). A list item is its name: the explanation after a colon (inside
    the bold or after it: ``**1. Glioblastoma:** necrosis`` and ``1. **Glioblastoma**:
    necrosis`` are "Glioblastoma"), a spaced dash or the item's first sentence is left
    out. A numbered list written on one line ("1. A 2. B 3. C", "Answer: 1) A; 2) B",
    "1- A 2- B") is read as the same list one item per line: after any bullet or label the
    line must open with marker 1 and hold 2, 3... in the same style, each after
    whitespace, ``;`` or ``,``, outside brackets and not right after grade, type, stage,
    WHO... ("1. Astrocytoma, WHO grade 2. X" is one item; "Neurofibromatosis type 1.
    Schwannoma 2. Meningioma" and "Type 1- diabetes" no list). Such a list may also follow
    a lead-in on its line that ends in a colon or "is" / "are" and introduces diagnoses: a
    hedge ends it ("These findings are concerning for: 1. A 2. B", "consistent with:",
    "The findings suggest:"), or its last clause opens with a premise ("Based on the
    clinical history:") or names diagnoses ("My ranked list is: 1. A 2. B", "Based on the
    findings, the differential is 1) A 2) B", "In order of likelihood:") and no finding,
    reason, limitation or next step ("Glioblastoma. Why: 1. ...", "Key differential
    features are: 1. ...", "Caveats: 1. ...", "The lesion shows: 1. ...", "Next steps:
    1. ..."), and only when the lead-in starts the answer: its first non-empty line, nothing
    before the lead-in but a bullet, markup or a label ("Glioblastoma. The features are
    consistent with: 1. ..." and "Glioblastoma, with features typical of: 1. ..." open
    none). Any other lead-in opens no list: the line reads as it did before lead-ins opened
    lists, so "Glioblastoma. Why: 1. Rim 2. Necrosis" is "Glioblastoma". A
    ``Findings:`` / ``Summary:`` label's list names no diagnosis either. A dash-numbered
    run needs "1 -" and "2 -" at least, and a number range ("1 - 2 new lesions",
    "1 - 2 weeks") is never a marker. Duplicates are removed case-insensitively, keeping the first. ``<think>``
    reasoning is removed first.

    Prose (how models answer when they ignore the JSON instruction) is read
    sentence by sentence, in the order it ranks:

    - the most likely diagnosis comes first, from a lead statement: "the most
      likely (leading, top, working...) diagnosis is X", "X is the most likely
      diagnosis", "X is favoured", "this most likely represents X", "I favour X",
      "in favour of X"; failing one, from "(the findings are) most consistent
      with X", "findings are suggestive of / consistent with X", "the imaging
      features suggest X" (in an answer with a numbered or bulleted list, only
      when X mentions a disease of the lexicon, so "the rim is consistent with
      necrosis" under a list item ranks nothing). A negated statement ("I would
      not favour X") and a pronoun or "the lesion" as X are skipped; of "not X
      but Y" Y is read; a one-line answer made of such a statement is
      ``"unparseable"``, not a bare name. The first lead statement counts, a
      later one restates it.
    - the others follow, in text order, from differential statements:
      "differential diagnoses (for this lesion) include A, B", "differentials
      are", "other considerations / possibilities include", "to consider: A",
      "also consider A", "followed by A and B", "with A and B as differentials",
      "A and B should also be considered", "A is also in the differential".
    - a name ends at a clause: hedges and articles are left out ("possibly a
      glioma" is "glioma"), and so is what follows ", given ...", " because",
      " which", " over" ("I favour X over Y"), " in this patient", " in the
      setting of ...", a spaced dash or a colon. A lead statement's name ends at
      its first comma ("glioblastoma, which..."), unless the lexicon knows the
      name with it ("Glioblastoma, IDH-wildtype"); "X or Y" there gives X, then Y.
    - a list is cut at semicolons if it has any, else at commas, and at "or",
      "vs" and inline "1) ... 2) ..." numbers, never inside brackets ("CADASIL
      (cerebral autosomal dominant arteriopathy with subcortical infarcts and
      leukoencephalopathy)" stays whole); ", and" / ", or" before the last name
      is a comma. A run of pieces that together are a name of the diagnosis
      lexicon is kept whole ("mitochondrial encephalomyopathy, lactic acidosis,
      and stroke-like episodes"; also "hand, foot and mouth disease").
    - " and " between two pieces is read with the lexicon
      (:mod:`novabench.lexicon.diagnoses`, exact look-up after its
      normalisation): when the whole is a known name it is kept ("hypomyelination
      with atrophy of basal ganglia and cerebellum"); else it is split when the
      left side is a known disease ("metastasis and abscess", "tuberous
      sclerosis and SEGA"), or when the right side is known and the left is not
      an "X with / of ..." construction; with neither side known it is split
      unless the left side is one word ("foot and mouth disease", "hypoxic and
      ischaemic injury") or an "X with / of ..." construction
      ("leukoencephalopathy with brainstem and spinal cord involvement"). So
      " and " splits whenever the whole is not a known name, except where the
      words show one name.

    A label at the start of a line (``<words>:`` or ``<words> -``, markdown bold around it
    or not) is never a diagnosis. Its words are a label when they are a known label phrase
    ("Most likely", "Top 1") or end in a label word and name no disease of the lexicon:
    after "... diagnosis", "answer", "impression", "assessment", "conclusion", "opinion"
    ("Likely diagnosis: X", "Final answer: X", "Clinical impression - X") comes the most
    likely diagnosis; after "differential(s)", "ddx", "alternatives", "less likely ..." the
    others; after "finding(s)", "summary", "signal", "location"... text that is read for
    statements only ("Findings: a ring-enhancing lesion" names nothing). The value after a
    lead label is read as the same line without the label would be (a plain list cut at its
    semicolons or commas by the bare-line rule below, "Diagnosis: Meningioma, atypical"
    kept whole and counted as ``"fallback_comma_one_name"``), unless it holds a statement
    ("Most likely: X, followed by A and B") or a clause ("X, given ..."), read as above.
    "unknown", "none", "N/A", "undetermined", "no definitive diagnosis" after a label (or
    alone) is an answer without a diagnosis: status ``"empty"``, with an error quoting it.
    A whole answer that declines ("I cannot provide a diagnosis", the captioning parser's
    conservative detector; or, when nothing else was read, a short answer opening with an
    apology, "I cannot / won't / must decline ..." or "Unable to ..." that names what it
    declines, a diagnosis or a radiologist to consult, imaging words in it or not: "I
    cannot provide a diagnosis from this axial T2 MRI image; please consult a radiologist"),
    and a lead label's value that declines and names nothing after its declining clause
    ("Diagnosis: I cannot provide one from this MRI image; consult a radiologist"), is
    ``"refusal"``, scored as no answer and counted; never a diagnosis. A diagnosis that a
    hedge (likely, most likely, probably, possibly, favour(s/ed), leading consideration,
    suspect(ed), "looks like", "consistent with") introduces right after the declining
    clause is the answer ("Diagnosis: cannot be made definitively; likely glioblastoma",
    "Diagnosis: I cannot be certain, but this is probably a glioblastoma" and "I cannot be
    sure, but this looks like a meningioma" name it); without such a hedge nothing after
    the clause is read ("Diagnosis: cannot be made; biopsy to exclude lymphoma" is
    ``"refusal"``).

    A prose or labelled list is read up to its first 100 names, and lexicon
    look-ups are budgeted per answer, so hostile answers stay linear.

    An answer with none of these (no marker, label or statement) is a bare answer:

    - several lines (at most 20, none over 12 words, none a clause): one name per
      line, commas included; a heading line ("Final answer", "Diagnoses:") is skipped.
    - one line with a semicolon outside brackets: cut at its semicolons (and at "and" /
      "or" as above); commas stay inside names ("Glioblastoma, IDH-wildtype; lymphoma").
    - one line with commas: one name when the lexicon knows the whole line
      ("Astrocytoma, IDH-mutant, CNS WHO grade 2", "hand, foot and mouth disease").
      Otherwise it is cut into names when it has 3 or more pieces (commas, and the "and"
      / "or" rules above) and none is a qualifier, or 2 pieces that are each a known
      disease ("Susac syndrome, CADASIL"). A qualifier is a piece of at most 5 words
      that the lexicon does not know and that holds a grade, WHO, a molecular marker
      (IDH, H3 K27M, 1p/19q, "-mutant", "-wildtype"...), NOS, or is made only of
      qualifying words: "atypical", "anaplastic", "progressive", "multifocal", "acute",
      "primary", "type", a number, a side or a site ("posterior fossa", "CNS"). Any
      other comma line of at most 12 words (a qualifier, a piece that reads as a
      clause, 2 pieces not both known) is read as ONE diagnosis with status
      ``"fallback_comma_one_name"`` and a note saying why, so a report counts them.
    - one line without those separators, of at most 12 words: one diagnosis.

    A JSON value written as one string with commas
    (``"other_possible_diagnoses": "Lymphoma, Metastasis, Sarcoidosis"``) is cut by the
    same rule as one line; an item of a JSON list is never cut.

    Args:
        text: the raw answer (str; bytes, None or a decoded dict/list too).

    Returns:
        The diagnoses with a status from :data:`DIAGNOSIS_STATUSES`; never raises.

    Example:
        >>> answer = '''Here you go:
        ... ```json
        ... {"most_likely_diagnosis": "Glioblastoma",
        ...  "other_possible_diagnoses": ["Lymphoma", "Metastasis", "Abscess", "lymphoma",
        ...                               "Tumefactive MS",]}
        ... ```'''
        >>> parsed = parse_diagnoses(answer)
        >>> parsed.status, parsed.diagnoses, parsed.n_duplicates_removed
        ('ok', ['Glioblastoma', 'Lymphoma', 'Metastasis', 'Abscess', 'Tumefactive MS'], 1)
        >>> prose = ("Based on the findings, the most likely diagnosis is glioblastoma. "
        ...          "Differential diagnoses include lymphoma, metastasis and abscess.")
        >>> parse_diagnoses(prose).diagnoses
        ['glioblastoma', 'lymphoma', 'metastasis', 'abscess']
        >>> parse_diagnoses("Multiple sclerosis, ADEM, NMOSD, glioma, lymphoma").diagnoses
        ['Multiple sclerosis', 'ADEM', 'NMOSD', 'glioma', 'lymphoma']
        >>> parsed = parse_diagnoses("Meningioma, atypical")
        >>> parsed.diagnoses, parsed.status
        (['Meningioma, atypical'], 'fallback_comma_one_name')
        >>> parse_diagnoses("**Final answer:** Glioblastoma; lymphoma; metastasis").diagnoses
        ['Glioblastoma', 'lymphoma', 'metastasis']
        >>> parse_diagnoses("Answer: 1. **Glioblastoma** - necrotic rim 2. **Lymphoma**").diagnoses
        ['Glioblastoma', 'Lymphoma']
        >>> parse_diagnoses("1- Glioblastoma\\n2- Lymphoma\\n3- Metastasis").diagnoses
        ['Glioblastoma', 'Lymphoma', 'Metastasis']
        >>> parse_diagnoses("My ranked list is: 1. Glioblastoma 2. Lymphoma").diagnoses
        ['Glioblastoma', 'Lymphoma']
        >>> parse_diagnoses("**1. Glioblastoma:** ring enhancement and necrosis").diagnoses
        ['Glioblastoma']
        >>> parse_diagnoses("Diagnosis: N/A").status, parse_diagnoses("I cannot help with that.").status
        ('empty', 'refusal')
    """
    try:
        return _parse_diagnoses(text)
    except Exception as exc:  # the contract: a status, never an exception
        return ParsedDiagnoses(status="unparseable", error=f"internal parser error: {exc!r}")


def _parse_diagnoses(raw: Any) -> ParsedDiagnoses:
    text, type_error = _coerce_text(raw)
    if text is None:
        return ParsedDiagnoses(status="unparseable", error=type_error)
    reasoning = _strip_reasoning(text)
    notes: list[str] = [str(reasoning.note())] if reasoning.note() else []
    text = reasoning.text[:_MAX_CHARS]
    if not text.strip():
        error = reasoning.empty_error() if reasoning.removed else "no answer text"
        return ParsedDiagnoses(status="empty", error=error, notes=tuple(notes))
    if _is_null_literal(text):
        return ParsedDiagnoses(
            status="empty", notes=tuple(notes), error=f"answer is the null literal {text.strip()!r}"
        )

    json_list: list[str] | None = None
    for value, complete in _structures(text):
        found = _diagnoses_from_object(value) if isinstance(value, dict) else None
        if found is not None:
            diagnoses, removed = _deduplicate(found, dash_markers=True)
            if diagnoses:
                if not complete:
                    notes.append("the JSON object was cut off; complete entries kept")
                status = "ok" if len(diagnoses) >= 5 else "partial"
                return ParsedDiagnoses(diagnoses, status, removed, None, tuple(notes))
        if (
            json_list is None
            and isinstance(value, list)
            and value
            and all(isinstance(item, str) for item in value)
        ):
            json_list = value

    if json_list is not None:
        diagnoses, removed = _deduplicate(json_list, dash_markers=True)
        if diagnoses:
            notes.append("a JSON list of strings, not the requested object")
            return ParsedDiagnoses(diagnoses, "fallback_list", removed, None, tuple(notes))

    plain = _without_fences(text)
    prose = _read_written_diagnoses(plain)
    diagnoses, removed = _deduplicate(prose.ranked())
    if diagnoses:
        status = "fallback_list"
        if prose.comma_note:  # "Diagnosis: Meningioma, atypical": counted as the bare line
            notes.append(prose.comma_note)
            status = COMMA_NAME_STATUS if len(diagnoses) == 1 else status
        return ParsedDiagnoses(diagnoses, status, removed, None, tuple(notes))
    said_none = prose.no_diagnosis or (_NO_DIAGNOSIS.fullmatch(plain.strip()) and plain.strip())
    if said_none:  # "Diagnosis: unknown", "Unknown": an answer without a diagnosis
        return ParsedDiagnoses(
            status="empty",
            notes=tuple(notes),
            error=f"the answer names no diagnosis: {_shown(said_none)}",
        )

    reader = _NameReader()
    # A labelled line that gave no name is findings or a heading, never a diagnosis itself.
    lines = [
        line.strip()
        for line in plain.splitlines()
        if line.strip() and _line_label(line.strip(), reader) is None
    ]
    declined = prose.declined or (plain if declines_diagnosis(plain) else None)
    if (
        lines
        and not prose.unnamed_lead
        and not declined  # "I won't diagnose from this MRI image; consult a radiologist"
        and not any(_REFUSAL.search(line) or re.search(r"[{}\[\]]", line) for line in lines)
    ):
        bare = _bare_answer(lines)
        if bare is not None:
            names, status, note = bare
            kept, removed = _deduplicate(names)
            if kept:
                notes.append(note)
                return ParsedDiagnoses(kept, status, removed, None, tuple(notes))
    # "I cannot be sure, but this looks like a meningioma": the name a hedge introduces
    # after the declining clause is the answer
    named = _named_after_declining(plain) if declined and not prose.declined else None
    if named is not None:
        kept, removed = _deduplicate([named])
        if kept:
            return ParsedDiagnoses(kept, "fallback_list", removed, None, tuple(notes))
    if declined:  # scored as no answer, counted apart from the unreadable ones
        return ParsedDiagnoses(
            status="refusal",
            notes=tuple(notes),
            error=f"the model declined to give a diagnosis: {_shown(declined)}",
        )
    return ParsedDiagnoses(
        status="unparseable",
        notes=tuple(notes),
        error="no diagnosis JSON object, list or one-line answer found",
    )


def _shown(text: str) -> str:
    """A short quotation of the answer for an error message."""
    text = " ".join(text.split())
    return repr(text if len(text) <= 80 else text[:77] + "...")


# --------------------------------------------------------------------------- bare answers

_MAX_BARE_LINES = 20  # more unmarked lines than this are an essay, not one name per line
# A heading line above the names ("Final answer", "Diagnoses:"), not a diagnosis.
_HEADING_LINE = re.compile(
    r"[^\w]*(?:(?:final|my|the)\s+)?(?:answer|response|output|diagnos[ie]s|differentials?|"
    r"differential\s+diagnos[ie]s|ranked\s+diagnos[ie]s)[^\w]*|.*:\W*",
    re.I,
)


def _bare_answer(lines: list[str]) -> tuple[list[str], str, str] | None:
    """Names, status and note of an answer with no list marker, label or statement.

    One name per line; a line cut at its semicolons; a line cut at its commas only when it
    cannot be one name with qualifiers (see :func:`parse_diagnoses`). None when the answer
    reads as prose.
    """
    if len(lines) > 1:
        if len(lines) > _MAX_BARE_LINES or any(
            len(line.split()) > _MAX_NAME_WORDS or _SENTENCE_PIECE.search(line) for line in lines
        ):
            return None
        names = [_item_name(line) for line in lines if not _HEADING_LINE.fullmatch(line)]
        return names, "fallback_list", "one diagnosis per line"
    read = _one_line_names(lines[0], _NameReader())
    return None if read is None else (read.names, read.status, read.note)
