"""Diagnosis answers written as text: lists, labelled lines and prose statements.

When a diagnosis answer holds no usable JSON, ``_read_written_diagnoses`` reads what the
model wrote instead: numbered or bulleted lists, ``Most likely: X`` and ``Others: A, B``
lines, and prose statements ("the most likely diagnosis is X. Differentials include A and
B"). Lists are cut into names with the diagnosis lexicon
(:mod:`novabench.lexicon.diagnoses`) deciding when " and " joins two diagnoses and when it
is part of one. The rules are spelled out in :func:`novabench.run.parsers.parse_diagnoses`.
Private to :mod:`novabench.run.parsers`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from novabench.lexicon.diagnoses import (
    DiagnosisLexicon,
    load_diagnosis_lexicon,
    normalize_diagnosis,
)
from novabench.run.parsers.captions import _opens_declining, is_refusal

# --------------------------------------------------------------------------- lines and lists


# "Most likely: X", "Primary diagnosis is X", "**Leading diagnosis** - X" (a hyphen only with
# a space next to it, so "Primary-progressive MS" is a name, not a label).
_MOST_LIKELY_LABEL = (
    r"(?:the\s+)?(?:most\s+likely|primary|leading|final|working)(?:\s+diagnosis)?"
    r"\**(?:\s*:|\s+is\b|\s+[-\u2013\u2014]|[-\u2013\u2014](?=\s))"
)
# "Others: A, B", "Other possible diagnoses include A, B", "Differential (ranked): A; B", ...
_DIFFERENTIAL_LABEL = (
    r"(?:other\s+(?:possible\s+|potential\s+|likely\s+|differential\s+)?"
    r"(?:diagnos[ie]s|differentials?|possibilities|considerations)(?:\s+to\s+consider)?"
    r"|others?|differentials?(?:\s+diagnos[ie]s)?|alternatives?(?:\s+diagnos[ie]s)?|ddx)"
    r"\**(?:\s*\([^)\n]{0,60}\))?\**(?:\s*:|\s+includes?\b|\s+[-\u2013\u2014]|[-\u2013\u2014](?=\s)"
    # "Others are A, B" but not "Others are less likely": that is a remark, not names.
    r"|\s+are\b(?!\s+(?:less|more|not|also|un\w*|possible|possibly|considered|ruled|excluded)\b))"
)
_MOST_LIKELY_LINE = re.compile(rf"^\W*{_MOST_LIKELY_LABEL}\s*\**\s*(?P<value>.+)$", re.I)
_DIFFERENTIAL_LINE = re.compile(rf"^\W*{_DIFFERENTIAL_LABEL}\s*\**\s*(?P<value>.+)$", re.I)
# A list marker: "1.", "1)", "(1)", "1:", "a.", "(a)", "-", "*", "+", a bullet; "**1.**" too.
_LIST_MARKER = re.compile(
    r"^\s*(?:\*\*|__)?(?:\(?\d{1,2}[.):]|[-*\u2022+]|\(?[a-e][.)])(?:\*\*|__)?\s+"
)
_LIST_ITEM = re.compile(_LIST_MARKER.pattern + r"(?P<value>.+)$")
# A number and a dash opening a line ("1- Glioblastoma", "1 - Glioblastoma", "**2-** X"): a
# list marker only in a run numbered 1, 2, 3... (see _dash_numbered_as_dotted).
_DASH_MARKER = re.compile(
    r"^(?P<head>\s*(?:\*\*|__)?)(?P<number>\d{1,2}) ?[-\u2013\u2014](?P<tail>(?:\*\*|__)?\s+)(?=\S)"
)
# A whole number after "N -": the two make a range ("1 - 2 new lesions", "1 - 2 weeks old",
# "2 - 3.5 cm"), no list marker.
_NUMBER_RANGE = re.compile(r"\d+(?:[.,]\d+)?(?=[\s.,;:)%]|$)")
# A labelled statement after a sentence on the same line ("Most likely: X. Others: A, B").
_STATEMENT_BREAK = re.compile(
    rf"(?<=[.;])\s+(?=(?:\*\*|__)?(?:{_MOST_LIKELY_LABEL}|{_DIFFERENTIAL_LABEL}))", re.I
)
# Words a period may follow inside a name ("St. Louis encephalitis", "vs.", "e.g.").
_ABBREVIATIONS = frozenset(
    {
        "st",
        "vs",
        "v",
        "dr",
        "mr",
        "mrs",
        "no",
        "sp",
        "spp",
        "approx",
        "etc",
        "incl",
        "e.g",
        "i.e",
        "cf",
        "var",
        "subsp",
        "mt",
        "ca",
        "ie",
        "eg",
        "susp",
        "prob",
        "poss",
    }
)


_SENTENCE_END = re.compile(r"(?<![A-Za-z.])(?P<word>[A-Za-z.]*)\.\s+(?=\S)")


def _first_sentence(text: str) -> str:
    """The text up to its first sentence end (a period and a space, not an abbreviation)."""
    first_letter = re.search(r"[A-Za-z]", text)
    if first_letter is None:
        return text
    for end in _SENTENCE_END.finditer(text, first_letter.start()):  # "1. " opens no sentence
        word = end.group("word").strip(".")
        if len(word) == 1 or word.lower() in _ABBREVIATIONS:
            continue  # an initial ("N. meningitidis") or an abbreviation ("St. Louis")
        return text[: end.start("word") + len(end.group("word"))]
    return text


def _item_name(text: str) -> str:
    """The diagnosis at the start of a list item, without the explanation after it.

    The explanation is what follows a bold name, a spaced dash, a colon (bold closing after
    it or not), a "(most likely" remark or the end of the first sentence: in
    ``"2. Susac syndrome. Less likely: vasculitis"`` the item is "Susac syndrome", in
    ``"Glioblastoma:** ring enhancement"`` (the rest of ``**1. Glioblastoma:** ...``)
    "Glioblastoma".
    """
    bold = re.match(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)", text)
    if bold:
        return bold.group(1).rstrip(":")
    text = _first_sentence(text)
    return re.split(
        r"\s+[-\u2013\u2014]\s+|:(?:\*\*|__)?\s+|\s+\((?:most likely|likely|less likely)",
        text,
        maxsplit=1,
    )[0]


def _dash_numbered_as_dotted(lines: list[str]) -> list[str]:
    """The lines with the markers of a dash-numbered list ("1- A", "2 - B") written "1.", "2.".

    A number and a dash open a list item only in a run that starts at 1 and counts up by one
    to 2 at least, other lines (an item's explanation) between them or not: a lone "1 - X"
    line is no list; and only when the run is the answer: no line before its "1 -" names
    anything (empty lines and a label or lead-in line such as "Differential:", "Answer:" or
    "The differential is" may stand above it), so "Glioblastoma\n1- Irregular rim\n2-
    Necrosis" keeps its lines as written and Glioblastoma first. A number range ("1 - 2 new
    lesions", "1 - 2 weeks old", "2 - 3 cm": a whole number right after the dash) is never
    a marker, and names something when it stands above the run. "2 - X" with no "1 -"
    before it, a number that skips ("1- A" then "3- B": the run is "1- A" alone, no list)
    and everything from there on, a second run included, stay as written. Dashes inside a
    line ("Type 1- diabetes", "Creutzfeldt-Jakob") are never markers.

    Example:
        >>> _dash_numbered_as_dotted(["1- Glioma", "  ring enhancement", "2 - Lymphoma"])
        ['1. Glioma', '  ring enhancement', '2. Lymphoma']
        >>> _dash_numbered_as_dotted(["2 - 3 lesions", "Type 1- diabetes"])
        ['2 - 3 lesions', 'Type 1- diabetes']
        >>> _dash_numbered_as_dotted(["Multiple sclerosis", "1 - 2 new lesions"])
        ['Multiple sclerosis', '1 - 2 new lesions']
        >>> _dash_numbered_as_dotted(["1 - Glioma", "Diagnosis: Glioma"])
        ['1 - Glioma', 'Diagnosis: Glioma']
        >>> _dash_numbered_as_dotted(["Glioma", "1- Rim", "2- Necrosis"])
        ['Glioma', '1- Rim', '2- Necrosis']
        >>> _dash_numbered_as_dotted(["**Differential:**", "", "1- Glioma", "2- Lymphoma"])
        ['**Differential:**', '', '1. Glioma', '2. Lymphoma']
    """
    dotted = list(lines)
    run: list[tuple[int, re.Match[str]]] = []  # the markers of the one run read as a list
    for index, line in enumerate(lines):
        marker = _DASH_MARKER.match(line)
        if marker is not None and _NUMBER_RANGE.match(line, marker.end()):
            marker = None  # "1 - 2 new lesions": a range, no marker
        if marker is None:
            text = _plain_sentence(line).strip(" *_")
            if not run and text and not _LEAD_IN_END.search(text):
                return dotted  # a line above the run names something: no list
            continue
        number = int(marker.group("number"))
        if not run and number != 1:
            return dotted  # "2 - 3 lesions" first, or "2- B" with no "1-"
        if run and number != int(run[-1][1].group("number")) + 1:
            break  # a skipped number or a new "1-": the list ends before it
        run.append((index, marker))
    if len(run) >= 2:  # "1 -" and "2 -" at least
        for index, marker in run:
            line = lines[index]
            dotted[index] = (
                line[: marker.start("number")]
                + f"{marker.group('number')}."
                + line[marker.start("tail") :]
            )
    return dotted


def _break_statements(text: str) -> str:
    """One labelled statement per line; a list marker's own period is not a sentence end."""
    lines = []
    for line in text.splitlines():
        marker = _LIST_MARKER.match(line)
        head = marker.group() if marker else ""
        lines.append(head + _STATEMENT_BREAK.sub("\n", line[len(head) :]))
    return "\n".join(lines)


# --------------------------------------------------------------------------- inline lists

# The first marker of a numbered list written on one line: "1.", "1)", "(1)", "1:", "1-",
# "1 -", bold or not, after a label's colon; its style ("{n}." ...) is the one every later
# marker must have.
_INLINE_FIRST_MARKER = re.compile(
    r"[\s:]*(?P<item>(?:\*\*|__)?(?P<marker>\(1\)|1[.):]|1 ?[-\u2013\u2014])(?:\*\*|__)?\s+(?=\S))"
)
# Words a number belongs to ("WHO grade 2.", "type 2.", "stage 3)"): never a list marker.
_NUMBERED_WORDS = frozenset(
    """grade grades type types subtype subtypes stage stages class group level phase factor
    variant who nf sca no number""".split()
)
_POSSIBLE_FIRST_MARKER = re.compile(r"(?<![^\s:*_])(?:\(1\)|1[.):]|1 ?[-\u2013\u2014])[*_]*\s")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[\s*_]*$")
_MAX_INLINE_ITEMS = 99  # markers are at most two digits, as in _LIST_MARKER


def _inline_list_items(text: str) -> list[str] | None:
    """The items of a numbered list written on one line, each with its marker, in order.

    ``text`` must open with a marker numbered 1 ("1.", "1)", "(1)", "1:", a label's colon
    before it or not) and hold the marker numbered 2 in the same style, then 3, ...: each
    after whitespace, ``;`` or ``,``, outside brackets, followed by a space, and not right
    after a word a number belongs to ("WHO grade 2.", "type 2."). Markers run 1, 2, 3
    without a gap, so "Neurofibromatosis type 1. Schwannoma 2. Meningioma" (no marker 1
    first) and "Type 2 diabetes" are no list. None when ``text`` is no such list (fewer
    than two markers).
    """
    first = _INLINE_FIRST_MARKER.match(text)
    if first is None:
        return None
    style = first.group("marker").replace("1", "{n}", 1)
    starts = [first.start("item")]
    search_from = first.end()
    for number in range(2, _MAX_INLINE_ITEMS + 1):
        marker = re.escape(style.format(n=number))
        pattern = re.compile(rf"(?<![^\s;,])(?:\*\*|__)?{marker}(?:\*\*|__)?\s+(?=\S)")
        found = None
        for attempt, candidate in enumerate(pattern.finditer(text, search_from)):
            if attempt == _MAX_CUE_ATTEMPTS:  # a hostile line stays linear
                break
            between = text[search_from : candidate.start()]
            if not re.search(r"[A-Za-z0-9]", between):
                continue  # an empty item: "1. 2. Lymphoma" is no list of two
            if between.count("(") + between.count("[") > between.count(")") + between.count("]"):
                continue  # inside brackets: "(see 2. below)" belongs to the item
            word = _WORD_BEFORE.search(between[-40:])
            if word is not None and word.group(1).lower() in _NUMBERED_WORDS:
                continue  # "WHO grade 2.": the number belongs to the word before it
            found = candidate
            break
        if found is None:
            break
        starts.append(found.start())
        search_from = found.end()
    if len(starts) < 2:
        return None
    ends = [*starts[1:], len(text)]
    return [
        text[start:end].strip().rstrip(";,").rstrip()
        for start, end in zip(starts, ends, strict=True)
    ]


def _unfold_inline_list(line: str, reader: _NameReader, *, lead_in: bool = True) -> str:
    """A line whose text (after a bullet and a label, if any) is a numbered list written on
    one line, as the same list written one item per line under its label or lead-in; any
    other line as it is (a findings or summary label's list too: it names no diagnosis).
    "Answer: 1. Glioblastoma 2. Lymphoma" reads as "Answer:\\n1. Glioblastoma\\n2. Lymphoma"
    does, "My ranked list is: 1. A 2. B" as "My ranked list is:\\n1. A\\n2. B" (a lead-in:
    see :func:`_lead_in_list`; only with ``lead_in``)."""
    if "2" not in line or not _POSSIBLE_FIRST_MARKER.search(line):  # spares label look-ups
        return line
    items = _inline_list_items(line)
    if items is not None:
        return "\n".join(items)
    bullet = _LIST_ITEM.match(line)
    value = bullet.group("value") if bullet else line
    labelled = _MOST_LIKELY_LINE.match(value) or _DIFFERENTIAL_LINE.match(value)
    rest, items = value, None
    if labelled is not None:
        rest = value[labelled.start("value") :]
        items = _inline_list_items(rest)
    else:
        label = _line_label(value, reader)
        if label is not None and label[0] == "note":  # "Findings: 1. ... 2. ...": no diagnoses
            return line
        if label is not None:
            rest = value[len(value) - len(label[1]) :]
            items = _inline_list_items(rest)
    if items is None:  # "My ranked list is: 1. A 2. B", "Answer: the differential is 1) A 2) B"
        found = _lead_in_list(rest, reader) if lead_in else None
        if found is None:
            return line
        rest, items = rest[found[0] :], found[1]
    # "- These findings are concerning for: 1. A 2. B": the bullet goes, the lead-in is no item
    return "\n".join([line[len(line) - len(value) : len(line) - len(rest)].rstrip(), *items])


# --------------------------------------------------------------------------- labels

# The last word of a label whose value names the most likely diagnosis ("Likely diagnosis:",
# "Final answer:", "Clinical impression -"); a plural one may name a ranked list.
_LEAD_LABEL_WORDS = frozenset(
    """diagnosis diagnoses dx answer impression impressions assessment conclusion conclusions
    opinion interpretation verdict guess""".split()
)
# A word that makes a label one of the others ("Differential diagnoses:", "Top differentials").
_DIFFERENTIAL_LABEL_WORDS = frozenset(
    "differential differentials ddx alternative alternatives possibilities considerations".split()
)
# The last word of a label of text that is no diagnosis (findings, reasoning, a summary).
_NOTE_LABEL_WORDS = frozenset(
    """finding findings summary observation observations rationale reasoning explanation
    justification comment comments note notes history technique description features evidence
    reason reasons recommendation recommendations confidence location sequence sequences
    discussion analysis background caption signal enhancement diffusion morphology appearance
    characteristics distribution pattern modality plane size margins""".split()
)
# Labels that end in none of those words.
_LABEL_PHRASES = {
    "most likely": "lead",
    "likely": "lead",
    "top 1": "lead",
    "top-1": "lead",
    "top choice": "lead",
    "first choice": "lead",
    "result": "lead",
    "output": "lead",
    "response": "lead",
    "bottom line": "lead",
    "less likely": "differential",
    "other": "differential",
}
_MAX_LABEL_WORDS = 6
# "<words>:" or "<words> -" at the start of a line, markdown emphasis around either.
_LABEL_LINE = re.compile(
    r"^[\W_]*?(?P<label>[A-Za-z][\w'/()-]*(?:[ \t]+[\w'/()-]+){0,7}?)(?:\*\*|__)?"
    r"(?:[ \t]*:|[ \t]+[-\u2013\u2014](?=\s|$))(?:\*\*|__)?[ \t]*(?P<value>.*)$"
)
# A value that says there is no diagnosis ("Diagnosis: unknown", "Answer: N/A").
_NO_DIAGNOSIS = re.compile(
    r"\W*(?:none|nil|null|unknown|n/?a|not\s+applicable|undetermined|indeterminate|uncertain|"
    r"unclear|not\s+(?:known|determined|determinable)|cannot\s+be\s+determined|"
    r"no\s+(?:definitive\s+|clear\s+|specific\s+)?(?:diagnosis|answer)|-+|\?+)\W*",
    re.I,
)


def _line_label(line: str, reader: _NameReader) -> tuple[str, str] | None:
    """The kind of a line's label and the value after it, or None when the line has none.

    A label is ``<words>:`` or ``<words> -`` at the start of a line whose words are a known
    label phrase ("Most likely", "Top 1") or end in a label word (diagnosis,
    answer, impression, assessment, conclusion, opinion..., differential(s), ddx,
    finding(s), summary...) and name no disease of the lexicon ("Tuberculosis diagnosis" is
    no label). Kinds: ``"lead"`` (the value names the most likely diagnosis),
    ``"differential"`` (the value lists the others), ``"note"`` (findings, reasoning: the
    value names no diagnosis by itself).
    """
    match = _LABEL_LINE.match(line)
    if match is None:
        return None
    label = " ".join(re.sub(r"\([^()]*\)", " ", match.group("label")).lower().split())
    words = label.split()
    if not words or len(words) > _MAX_LABEL_WORDS:
        return None
    kind = _LABEL_PHRASES.get(label)
    if kind is None:
        if words[-1] in _LEAD_LABEL_WORDS:
            differential = any(word in _DIFFERENTIAL_LABEL_WORDS for word in words)
            kind = "differential" if differential or "less likely" in label else "lead"
        elif words[-1] in _DIFFERENTIAL_LABEL_WORDS:
            kind = "differential"
        elif words[-1] in _NOTE_LABEL_WORDS:
            kind = "note"
        else:
            return None
        if len(words) > 1 and reader.mentions(label):
            return None
    return kind, match.group("value")


# --------------------------------------------------------------------------- lead-ins

# Prose that ends in a colon or "is"/"are" before a numbered list on the same line.
_LEAD_IN_END = re.compile(r"(?::|\b(?:is|are))[\s*_]*$", re.I)
# A premise opening the lead-in's last clause ("Based on the findings:"): a conclusion follows.
_LEAD_IN_PREMISE = re.compile(
    r"\W*(?:based\s+on|given|considering|in\s+(?:view|light)\s+of|according\s+to)\b", re.I
)
# Words of a lead-in to diagnoses ("the differential is", "the most likely diagnoses are:",
# "My ranked list is:", "In order of likelihood:").
_LEAD_IN_DIAGNOSES = re.compile(
    r"\b(?:diagnos[ie]s|differentials?|ddx|most\s+likely|likeliest|possibilities|"
    r"considerations|alternatives|candidates|answers?|impressions?|ranked|ranking|"
    r"likelihood)\b",
    re.I,
)
# A hedge ending the lead-in, whose object is the list ("These findings are concerning for:",
# "The imaging features are consistent with:", "The findings suggest:"): diagnoses follow.
_LEAD_IN_HEDGE = re.compile(
    r"\b(?:(?:consistent|compatible)\s+with|in\s+keeping\s+with|(?:concerning|suspicious)"
    r"\s+for|suggest(?:s|ive\s+of|ing)?|(?:typical|characteristic|indicative)\s+of)"
    r"[\s*_]*:?[\s*_]*$",
    re.I,
)
# Words of a lead-in to findings, reasons, evidence, limitations or what to do next ("Why:",
# "Glioblastoma, because:", "due to:", "Key points:", "Caveats:", "What I see is:", "Features
# supporting this diagnosis are:", "The findings are:", "The lesion shows:", "Next steps:"):
# its list names no diagnosis, whatever else its last clause says ("Key differential
# features are:").
_LEAD_IN_REASONS = re.compile(
    r"\b(?:why|because|due\s+to|owing\s+to|reasons?|reasoning|rationale|justification|"
    r"explanation|points?|caveats?|limitations?|support\w*|favou?ring|features?|signs?|"
    r"evidence|clues?|hallmarks?|observations?|i\s+see|seen|findings?|notes?|pros|cons|"
    r"summary|shows?|showing|reveal\w*|demonstrat\w*|"
    r"next|steps?|plan|management|work-?up|treatment|therapy|follow-?up|recommend\w*)\b",
    re.I,
)


def _introduces_diagnoses(lead_in: str) -> bool:
    """Whether prose before a numbered list on its line introduces diagnoses: the list is the
    object of a hedge ending it ("concerning for:", "consistent with:", "suggest:"), or its
    last clause (after the last ``.``, ``!``, ``?``, ``;`` or ``,``) opens with a premise
    ("Based on the clinical history and imaging findings:"), or names diagnoses ("the
    differential is", "My ranked list is:", "In order of likelihood:") and no finding,
    reason, evidence, limitation or next step ("Key differential features are:", "What
    supports the diagnosis:", "Most likely glioblastoma due to:", "The findings are:").
    When unsure, no: the line is then read as it was before lead-ins opened lists.

    Example:
        >>> _introduces_diagnoses("Based on the findings, the differential is")
        True
        >>> _introduces_diagnoses("These findings are concerning for:")
        True
        >>> _introduces_diagnoses("Glioblastoma. Why:"), _introduces_diagnoses("Caveats:")
        (False, False)
        >>> _introduces_diagnoses("Most likely glioblastoma due to:")
        False
    """
    if _LEAD_IN_HEDGE.search(lead_in):
        return True
    sentence = re.split(r"[.!?](?=\s)|;", lead_in)[-1]
    clause = sentence.rsplit(",", 1)[-1]
    if _LEAD_IN_PREMISE.match(clause):
        return True
    if _LEAD_IN_REASONS.search(clause):
        return False
    return _LEAD_IN_DIAGNOSES.search(clause) is not None


def _starts_with_lead_in(lead_in: str, reader: _NameReader) -> bool:
    """Whether the prose before a one-line list is one lead-in with nothing before it: no
    sentence end or ``;`` in it, and any clause before its last comma a premise or words
    about diagnoses ("Based on the findings,", "In order of likelihood,") naming no disease.
    "Glioblastoma. The features are consistent with:", "Likely glioblastoma; appearance is
    consistent with:" and "Glioblastoma, with features typical of:" hold a name before the
    lead-in: their line reads as it did before lead-ins opened lists.

    Example:
        >>> reader = _NameReader()
        >>> _starts_with_lead_in("Based on the findings, the differential is", reader)
        True
        >>> _starts_with_lead_in("Glioblastoma. MRI is concerning for:", reader)
        False
        >>> _starts_with_lead_in("Glioblastoma, with features typical of:", reader)
        False
    """
    if re.search(r"[.!?](?=[\s,])|;", lead_in):  # "not found., with features typical of:"
        return False
    clauses = lead_in.split(",")[:-1]
    return all(
        (_LEAD_IN_PREMISE.match(clause) or _LEAD_IN_DIAGNOSES.search(clause))
        and not reader.mentions(clause)
        for clause in clauses
    )


def _lead_in_list(text: str, reader: _NameReader) -> tuple[int, list[str]] | None:
    """Where a numbered list written on one line after a lead-in starts in ``text``, and its
    items (:func:`_inline_list_items`); None when there is no such list.

    The lead-in is the prose before marker 1 on the line, ending in a colon or in "is" /
    "are", that introduces diagnoses (:func:`_introduces_diagnoses`): "My ranked list is:
    1. A 2. B", "Based on the findings, the differential is 1) A 2) B", "These findings are
    concerning for: 1. A 2. B". A lead-in to findings, reasons, limitations or next steps
    ("The findings are: 1. Ring enhancement 2. Edema", "Glioblastoma. Why: 1. ...",
    "Caveats: 1. ...", "Next steps: 1. ..."), one that says neither, and one with anything
    before it on its line (:func:`_starts_with_lead_in`) open no list: the line is read as a
    line without a list, so a diagnosis before the lead-in stays the answer.

    Example:
        >>> reader = _NameReader()
        >>> _lead_in_list("My ranked list is: 1. Glioma 2. Lymphoma", reader)
        (19, ['1. Glioma', '2. Lymphoma'])
        >>> _lead_in_list("The findings are: 1. Ring enhancement 2. Edema", reader) is None
        True
        >>> _lead_in_list("Glioblastoma. Why: 1. Rim enhancement 2. Necrosis", reader) is None
        True
        >>> _lead_in_list("Glioma. MRI is concerning for: 1. Edema 2. Mass effect", reader) is None
        True
    """
    for attempt, marker in enumerate(_POSSIBLE_FIRST_MARKER.finditer(text)):
        if attempt == _MAX_CUE_ATTEMPTS:
            break
        lead_in = text[: marker.start()].rstrip("*_")  # "is: **1. A** ...": the bold opens it
        start = len(lead_in)
        if not re.search(r"[A-Za-z]", lead_in) or not _LEAD_IN_END.search(lead_in):
            continue
        if not _introduces_diagnoses(lead_in) or not _starts_with_lead_in(lead_in, reader):
            return None
        items = _inline_list_items(text[start:])
        if items is not None:
            return start, items
    return None


# --------------------------------------------------------------------------- prose

_LOOKUP_BUDGET = 400  # lexicon look-ups per answer; past it names are cut by punctuation only
_MAX_NAME_CHARS = 160  # longer text is never looked up as one name (the longest alias is ~90)
_MAX_LIST_NAMES = 100  # names read from one statement's list (a runaway list is cut there)
_MAX_CUE_ATTEMPTS = 20  # negated or subject-less cues tried in one sentence
_NAME_WINDOW = 4  # pieces one known name may span ("mitochondrial encephalomyopathy, lactic ...")
_MAX_SUBJECT_CHARS = 300  # how far back a "X is the most likely diagnosis" subject is looked for

# Separators of the names of a list: brackets (tracked, never cut inside), punctuation, words.
_NAME_SEPARATOR = re.compile(
    r"(?:^| )\(?\d{1,2}\)(?= )|[()\[\];,]| (?:and/or|or|and|as well as|&|vs\.?|versus) (?=\S)", re.I
)
# Hedges, articles and connectives before a name ("and possibly a", "such as", "less likely").
_NAME_LEAD_IN = re.compile(
    r"(?:(?:and/or|and|or|also|possibly|probably|perhaps|maybe|presumably|potentially|"
    r"(?:most|more|less)\s+likely|likely|less\s+commonly|rarely|including|namely|either|both|"
    r"e\.g\.|i\.e\.|such\s+as|a\s+diagnosis\s+of|the\s+diagnosis\s+of|a\s+case\s+of|"
    r"(?:an?|the)(?=\s+\S))(?![\w/-])[\s,:]*)+",
    re.I,
)
# The end of a name inside a sentence: an explanation, a reason, the patient or a rival.
_NAME_TAIL = re.compile(
    r"\s[-\u2013\u2014]\s|:\s|\s\((?:most\s+|more\s+|less\s+)?likely\b"
    r"|\s(?:given|because|since|considering|based\s+on|as\s+(?:evidenced|suggested|indicated|"
    r"seen|shown)|in\s+view\s+of|in\s+light\s+of|which|rather\s+than|instead\s+of|over|"
    r"although|though|but|however|whereas|while|"
    r"with\s+(?:a\s+|the\s+)?(?:differentials?|alternatives?|others?)|"
    r"in\s+(?:this|a|an|the|our)\s+(?:[\w-]+\s+){0,2}?(?:patient|case|setting|context|scenario|"
    r"population|age\s+group|individual|child|adult|man|woman|person|clinical))\b",
    re.I,
)
# A remark before the names: "(in order of likelihood): A, B".
_REMARK_FIRST = re.compile(r"^\([^()]{0,80}\)\s*:?\s*")
# A piece of a list that is a clause, not a name ("lymphoma, given the location, and ...").
_CLAUSE_PIECE = re.compile(
    r"(?:given|because|since|as|which|who|where|when|if|especially|particularly|although|though|"
    r"but|however|considering|based|while|whereas|depending|that|this|these|those|it|they|there|"
    r"making|suggesting|indicating|supporting|so|then|thus|hence|therefore|not|no)\b",
    re.I,
)
# Whole values that are no name: pronouns, the lesion itself, "broad", "as follows".
_NOT_A_NAME = re.compile(
    r"(?:(?:this|that|the|these|its?)\s+)?(?:this|that|it|these|those|they|which|one|lesions?|"
    r"mass(?:es)?|findings?|abnormalit(?:y|ies)|appearances?|diagnos[ie]s|differentials?|"
    r"pictures?|case|patient|imaging|presentation|pattern|others?|following|below|above|broad|"
    r"wide|extensive|limited|numerous|several|many|various|unclear|uncertain|unknown|none|"
    r"unlikely|possible|likely|less\s+likely|etc|the|an)",
    re.I,
)
_SEPARATOR_RANK = {"": 0, "or": 1, "and": 1, ",": 2, ";": 3}
_JOINERS = {",": ", ", ";": "; ", "and": " and ", "or": " or "}
_NAME_TRAILERS = frozenset({"etc", "etc.", "and", "or", "others", "so", "on"})

# "The most likely diagnosis is X", "X is most likely Y", "I favour X", "in favour of X".
_LEAD_WORDS = (
    r"(?:most\s+likely|likeliest|most\s+probable|leading|top|favou?red|preferred|"
    r"primary|working|final|main|best|presumptive|presumed)"
)
_LEAD_CUE = re.compile(
    rf"\b{_LEAD_WORDS}\s+(?:diagnosis|diagnostic\s+consideration|consideration|possibility|"
    r"etiology|aetiology|explanation|impression)"
    r"(?:\s+(?:here|in\s+this\s+(?:case|patient)|for\s+this\s+(?:case|patient|lesion)))?"
    r"\s*(?:(?:is|would\s+be|remains|seems\s+to\s+be|appears\s+to\s+be)\b|:|=)\s*"
    r"|\b(?:the|my|our)\s+(?:(?:radiological|imaging|clinical|overall)\s+)?diagnosis\s+"
    r"(?:here\s+|in\s+this\s+case\s+)?(?:is|would\s+be)\s+"
    r"|\b(?:is|are|represents?|reflects?)\s+most\s+(?:likely|probably)\s+(?:to\s+be\s+)?"
    r"|\bmost\s+(?:likely|probably)\s+(?:represents?|reflects?|is|are|to\s+be)\s+"
    r"|\bin\s+favou?r\s+of\s+|\bfavou?r(?:s|ing)?\s+(?!of\b)",
    re.I,
)
# "X is the most likely diagnosis", "X is favoured": the name comes before.
_LEAD_AFTER = re.compile(
    r"\b(?:is|are|remains|would\s+be|seems\s+to\s+be|appears\s+to\s+be)\s+(?:the|my|our)\s+"
    rf"(?:{_LEAD_WORDS}|first)\s+(?:diagnosis|diagnoses|consideration|possibility|choice|"
    r"candidate)\b"
    r"|\b(?:is|are)\s+(?:most\s+likely|the\s+most\s+likely|favou?red|the\s+likeliest|"
    r"most\s+probable)(?=\s*(?:[.,;:!?)]|$)|\s(?:given|because|based|here|in\s+this|over|"
    r"considering)\b)",
    re.I,
)
# "Findings are suggestive of X", "most consistent with X": weaker, used when nothing stronger is.
_SUGGESTS = (
    r"(?:consistent\s+with|suggestive\s+of|compatible\s+with|in\s+keeping\s+with|"
    r"characteristic\s+of|typical\s+of|diagnostic\s+of|concerning\s+for|"
    r"suspicious\s+for|indicative\s+of)"
)
_SUGGEST_CUE = re.compile(
    rf"\b(?:(?P<degree>most|highly|strongly|very|quite)\s+)?(?:{_SUGGESTS}|(?P<verb>suggests?))"
    r"\s+(?:a\s+diagnosis\s+of\s+)?",
    re.I,
)
# What must come before a plain "consistent with" / "suggest": "the findings are", "imaging
# features ... suggest". Searched in the few words before the cue only.
_SUGGEST_SUBJECT = re.compile(
    r"\b(?:findings|appearances?|features|picture|pattern|constellation|presentation|imaging)"
    r"\b(?:\s[\w-]+){0,6}?\s?$",
    re.I,
)
_SUGGEST_LINK = re.compile(r"\b(?:is|are|seems?|appears?|be)\s(?:not\s)?$", re.I)
# "Differential diagnoses include A, B", "other considerations are", "to consider: A".
_DIFFERENTIAL_QUALIFIER = (
    r"(?:\s+(?:to\s+consider|to\s+be\s+considered|that\s+should\s+be\s+considered|"
    r"worth\s+considering|here|in\s+this\s+case|for\s+(?:a|an|this|these|the|such)\s+"
    r"(?:[\w-]+\s+){0,5}?(?:lesions?|findings?|appearances?|cases?|patients?|presentation|"
    r"mass(?:es)?|abnormalit(?:y|ies)|pattern)))?"
    r"\s*(?:(?:would|could|may|might|should|must)\s+)?(?:also\s+)?"
)
_DIFFERENTIAL_CUE = re.compile(
    # "differential(s)" may be followed by "are"/"is"; "possibilities are" only after "other"
    r"\b(?:differentials?(?:\s+diagnos[ie]s)?|differential\s+considerations?)"
    rf"{_DIFFERENTIAL_QUALIFIER}(?:(?:include|includes|including|are|is)\b|:)\s*"
    r"|\b(?:considerations|possibilities|alternatives|diagnoses|others|entities|conditions)"
    rf"{_DIFFERENTIAL_QUALIFIER}(?:(?:include|includes|including)\b|:)\s*"
    r"|(?<=other )(?:considerations|possibilities|alternatives|diagnoses)\s+are\s+"
    r"|\bto\s+consider\s*(?::|(?:include|are)\b)\s*|\balso\s+consider(?:ed)?\s*:?\s+"
    r"|\b(?:followed|trailed)\s+by\s+",
    re.I,
)
# "The differential is broad and includes A, B": the names follow "includes".
_BROAD_DIFFERENTIAL = re.compile(
    r"(?:broad|wide|extensive|long|limited|varied)\b[^,:;]{0,40}?\binclud(?:es|ing|e)\b\s*:?\s*",
    re.I,
)
# "X, with A and B as differentials": the names between "with" and "as" (looked for backwards).
_AS_DIFFERENTIALS = re.compile(
    r"\bas\s+(?:the\s+)?(?:(?:main|other|possible|alternative|less\s+likely)\s+)?"
    r"(?:differentials?|differential\s+diagnos[ie]s|alternatives|considerations|possibilities)\b",
    re.I,
)
# "A and B should also be considered", "C is also in the differential": the names come before.
_DIFFERENTIAL_AFTER = re.compile(
    r"\b(?:should|could|may|might|must|can|would)\s+(?:also\s+)?be\s+considered\b"
    r"|\b(?:is|are)\s+(?:also\s+)?in\s+the\s+differential\b"
    r"|\b(?:is|are)\s+also\s+(?:possible|a\s+consideration|a\s+possibility)\b"
    r"|\b(?:is|are)\s+(?:also\s+)?(?:(?:other|additional|alternative|less\s+likely|possible)\s+)?"
    r"(?:considerations|possibilities|differentials|alternatives)\b",
    re.I,
)
# Words that open a sentence before its subject ("I think", "Overall,", "Therefore").
_SUBJECT_LEAD_IN = re.compile(
    r"(?:(?:(?:i|we)\s+(?:would\s+|still\s+)?(?:think|believe|suspect|say|feel|consider|"
    r"suggest)(?:\s+that)?|overall|therefore|thus|hence|so|then|ultimately|in\s+summary|"
    r"in\s+conclusion|in\s+short|however|but|yet|although|though|while|whereas|and|that)"
    r"\b[\s,]*)+",
    re.I,
)
_STATEMENT_VERB = re.compile(r"\b(?:is|are|was|were|be|include|includes|including)\b", re.I)
_NOT_BUT = re.compile(r"not\s+[^,;]{0,80}?\bbut\s+(?:rather\s+)?", re.I)
# Words one of which each kind of statement needs: a cheap test before the regular expressions.
_DIFFERENTIAL_WORDS = (
    "differential",
    "consider",
    "possib",
    "alternative",
    "diagnoses",
    "others",
    "entities",
    "conditions",
    "followed",
    "trailed",
)
_LEAD_WORDS_NEEDED = (
    "diagnos",
    "consideration",
    "possibility",
    "etiology",
    "explanation",
    "impression",
    "choice",
    "candidate",
    "most likely",
    "most probabl",
    "favo",
    "likeliest",
)
_SUGGEST_WORDS = (
    "consistent",
    "suggest",
    "compatible",
    "keeping",
    "characteristic",
    "typical",
    "diagnostic",
    "concerning",
    "suspicious",
    "indicative",
)
_NEGATED_BEFORE = re.compile(r"(?:\bnot|\bnever|\bless|n't)\s+(?:\w+\s+)?$", re.I)


def _diagnosis_lexicon() -> DiagnosisLexicon | None:
    """The diagnosis lexicon, or None if it cannot be built (names are then cut by punctuation)."""
    try:
        return load_diagnosis_lexicon()
    except Exception:  # the parser stays total even with a broken lexicon
        return None


def _sentences(text: str) -> Iterator[str]:
    """The sentences of a line (a period and a space that is no initial or abbreviation)."""
    start = 0
    for end in _SENTENCE_END.finditer(text):
        word = end.group("word").strip(".")
        if len(word) == 1 or word.lower() in _ABBREVIATIONS:
            continue
        yield text[start : end.start("word") + len(end.group("word"))]
        start = end.end()
    yield text[start:]


def _plain_sentence(text: str) -> str:
    """A sentence without markdown emphasis and with single spaces."""
    return " ".join(text.replace("**", "").replace("__", "").replace("`", "").split())


def _subject_start(text: str, end: int, floor: int = 0, *, names: bool = False) -> int:
    """Where the noun phrase before ``end`` starts: after the last bracket-free ``,;:(``
    (looked for at most :data:`_MAX_SUBJECT_CHARS` back, never before ``floor``), past
    opening words such as "I think", "Overall," or "although". With ``names`` the phrase
    is a list ("A, B and C should also be considered"): commas between names are crossed.
    """
    start = max(floor, end - _MAX_SUBJECT_CHARS)
    depth = 0
    for position in range(end - 1, start - 1, -1):
        char = text[position]
        if char == ")":
            depth += 1
        elif char == "(" and depth:
            depth -= 1
        elif char in (";:(" if names else ",;:(") and not depth:
            start = position + 1
            break
    if names:
        start = _list_start(text, start, end)
    while start < end and text[start] == " ":
        start += 1
    lead_in = _SUBJECT_LEAD_IN.match(text, start, end)
    return lead_in.end() if lead_in else start


def _list_start(text: str, start: int, end: int) -> int:
    """Where a list of names ending at ``end`` starts, walking back over its commas until a
    piece opens a clause ("but A, B") or the piece before is a clause or a statement
    ("Given the history, A, B", "The most likely diagnosis is X, A and B")."""
    piece_end = end
    while True:
        comma = text.rfind(",", start, piece_end)
        if comma < 0:
            return start
        current = text[comma + 1 : piece_end].strip()
        previous_comma = text.rfind(",", start, comma)
        previous_start = previous_comma + 1 if previous_comma >= 0 else start
        previous = text[previous_start:comma].strip()
        conjunction = re.match(r"(?:and|or)\s", current, re.I)  # ", and C": still the list
        if (
            not conjunction and (_SUBJECT_LEAD_IN.match(current) or _CLAUSE_PIECE.match(current))
        ) or _STATEMENT_VERB.search(previous):
            return comma + 1
        if _SUBJECT_LEAD_IN.match(previous):  # "..., but A, B and C": the list opens there
            return previous_start
        if _CLAUSE_PIECE.match(previous):  # "Given the history, A and B"
            return comma + 1
        piece_end = comma


def _subject_before(text: str, end: int) -> str:
    """The noun phrase before ``end`` (see :func:`_subject_start`)."""
    return text[_subject_start(text, end) : end].strip()


class _NameReader:
    """Cuts prose and labelled values into diagnosis names, knowing names from the lexicon.

    Look-ups are budgeted per answer, so a hostile answer stays linear: once the budget is
    spent, names are cut at punctuation, "or" and every " and ".
    """

    def __init__(self) -> None:
        self.budget = _LOOKUP_BUDGET
        self._lexicon: DiagnosisLexicon | None = None
        self._loaded = False

    def lexicon(self) -> DiagnosisLexicon | None:
        if not self._loaded:
            self._lexicon, self._loaded = _diagnosis_lexicon(), True
        return self._lexicon

    def known(self, text: str) -> bool:
        """Whether ``text`` as a whole names one disease of the lexicon."""
        if not text or len(text) > _MAX_NAME_CHARS or self.budget <= 0:
            return False
        self.budget -= 1
        lexicon = self.lexicon()
        if lexicon is not None and lexicon.lookup(text) is not None:
            return True
        # "hand, foot and mouth disease (enterovirus 71 rhombencephalitis)": the name before
        # an explanation in brackets
        bracket = text.rfind("(")
        return text.endswith(")") and bracket > 0 and self.known(text[:bracket].strip())

    def mentions(self, text: str) -> bool:
        """Whether ``text`` mentions a disease of the lexicon anywhere."""
        if self.known(text):
            return True
        lexicon = self.lexicon()
        if lexicon is None or self.budget <= 0:
            return False
        self.budget -= 5  # a scan costs several look-ups
        found, _ = lexicon.find_mentions(normalize_diagnosis(text[:_MAX_NAME_CHARS]))
        return bool(found)

    def splits_at_and(self, left: str, right: str) -> bool:
        """Whether ``left and right`` are two diagnoses (see :func:`parse_diagnoses`)."""
        if self.known(left):
            return True
        construction = re.search(r"\b(?:with|without|of)\b", left, re.I) is not None
        if self.known(right):
            return not construction
        return not construction and len(left.split()) > 1

    def names(self, value: str, *, first_only: bool = False) -> list[str]:
        """The names of a list such as ``"A, B, or C"``, ``"A; B and C"``, in order.

        With ``first_only``, only the names before the first comma or semicolon (a lead
        statement's name is followed by a clause, not by more names).
        """
        texts, joiners, kinds = _name_pieces(value)
        names: list[str] = []
        count = len(texts)
        i = 0
        while i < count:
            if first_only and i and kinds[i] in ",;":
                break
            span = 0
            for width in range(min(_NAME_WINDOW, count - i) if self.budget > 0 else 0, 1, -1):
                if all(kinds[k] in (",", "and") for k in range(i + 1, i + width)) and self.known(
                    _joined(texts, joiners, i, i + width)
                ):
                    span = width
                    break
            if span:
                names.append(_joined(texts, joiners, i, i + span))
                i += span
                continue
            current, j = texts[i], i
            while (
                j + 1 < count
                and kinds[j + 1] == "and"
                and not self.splits_at_and(current, texts[j + 1])
            ):
                current = f"{current} and {texts[j + 1]}"
                j += 1
            names.append(current)
            i = j + 1
        return [name for name in names if not _NOT_A_NAME.fullmatch(name)]

    def lead(self, value: str) -> list[str]:
        """The name(s) of a lead statement, most likely first ("glioma or lymphoma, given...")."""
        value = value.strip()
        rather = _NOT_BUT.match(value)  # "the most likely diagnosis is not X but Y"
        return self.names(value[rather.end() :] if rather else value, first_only=True)


def _tidy_name(text: str) -> str:
    """A piece of a list without hedges, articles, explanations and trailing clauses."""
    text = _REMARK_FIRST.sub("", text.strip(" ,.;:"), count=1)
    lead_in = _NAME_LEAD_IN.match(text)
    if lead_in:
        text = text[lead_in.end() :]
    if _CLAUSE_PIECE.match(text):
        return ""
    tail = _NAME_TAIL.search(text)
    if tail:
        text = text[: tail.start()]
    words = text.split()
    while words and (
        words[-1].lower().strip(",.") in _NAME_TRAILERS
        or (len(words) > 1 and words[-1].lower() in ("a", "an", "the"))
    ):
        words.pop()
    return " ".join(words).strip(" ,.;:")


def _name_pieces(value: str) -> tuple[list[str], list[str], list[str]]:
    """Cut a list at separators outside brackets: (texts, joiners, kinds).

    ``kinds[i]`` is how piece ``i`` is set apart from the one before: ``""`` (first),
    ``","``, ``";"``, ``"and"`` or ``"or"``; ``joiners[i]`` is the separator as written,
    for looking a joined name up. Semicolons, when there are any, are the only
    punctuation that separates (commas are then inside names: "Glioblastoma, IDH-wildtype;
    lymphoma"). Pieces left empty by tidying are dropped, their separator merged.
    """
    value = " ".join(value.split())
    semicolons = ";" in value and _semicolon_outside_brackets(value)
    separators: list[tuple[int, int, str]] = []  # (start, end, kind) of the cuts outside brackets
    depth = 0
    end = len(value)
    for seen, match in enumerate(_NAME_SEPARATOR.finditer(value)):
        token = match.group()
        if seen == 8 * _MAX_LIST_NAMES:  # brackets and separators of a runaway list
            end = match.start()
            break
        if token in ("(", "["):
            depth += 1
            continue
        if token in (")", "]") or (depth and token.endswith(")")):  # "(grade 2)": a bracket
            depth = max(0, depth - 1)
            continue
        if depth or (token == "," and semicolons):
            continue
        if len(separators) + 1 >= _MAX_LIST_NAMES:  # a runaway list: the rest is not read
            end = match.start()
            break
        word = token.strip().lower()
        kind = (
            token
            if token in (",", ";")
            else ","
            if token.endswith(")")  # "1) A 2) B"
            else "and"
            if word in ("and", "&", "as well as")
            else "or"
        )
        separators.append((match.start(), match.end(), kind))
    raw: list[tuple[str, str, str]] = []  # (text, joiner, kind)
    start, joiner, kind = 0, "", ""
    for cut_start, cut_end, cut_kind in separators:
        raw.append((value[start:cut_start], joiner, kind))
        start, kind = cut_end, cut_kind
        joiner = _JOINERS[cut_kind]
    raw.append((value[start:end], joiner, kind))

    texts: list[str] = []
    joiners: list[str] = []
    kinds: list[str] = []
    carried_joiner, carried_kind = "", ""  # the separators of pieces dropped since the last kept
    for text, joiner, kind in raw:
        if carried_kind:  # ", and C": the comma decides (a list item), the "and" is kept to look up
            joiner = carried_joiner.rstrip() + joiner
            kind = carried_kind if _SEPARATOR_RANK[carried_kind] >= _SEPARATOR_RANK[kind] else kind
        name = _tidy_name(text)
        if not name:
            carried_joiner, carried_kind = joiner, kind
            continue
        texts.append(name)
        joiners.append(joiner if len(texts) > 1 else "")
        kinds.append(kind if len(texts) > 1 else "")
        carried_joiner, carried_kind = "", ""
    return texts, joiners, kinds


def _split_outside_brackets(text: str, separator: str) -> list[str]:
    """``text`` cut at each ``separator`` (one character) outside round and square brackets;
    a stray closing bracket closes nothing.

    >>> _split_outside_brackets("glioma (WHO 4, IDH-wildtype), lymphoma]; abscess", ",")
    ['glioma (WHO 4, IDH-wildtype)', ' lymphoma]; abscess']
    """
    pieces: list[str] = []
    depth = 0
    start = 0
    for match in re.finditer(rf"[()\[\]{re.escape(separator)}]", text):
        char = match.group()
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif not depth:
            pieces.append(text[start : match.start()])
            start = match.end()
    pieces.append(text[start:])
    return pieces


def _semicolon_outside_brackets(value: str) -> bool:
    return len(_split_outside_brackets(value, ";")) > 1


def _joined(texts: list[str], joiners: list[str], start: int, stop: int) -> str:
    """Pieces ``start..stop-1`` joined with their separators as written."""
    return texts[start] + "".join(joiners[k] + texts[k] for k in range(start + 1, stop))


@dataclass
class _ProseFindings:
    """What the statements of one answer say, in text order."""

    lead: list[str] | None = None  # from "Most likely: X" or "the most likely diagnosis is X"
    suggested: list[str] | None = None  # from "findings are most consistent with X"
    suggested_known: bool = False  # the suggested name is a disease of the lexicon
    # A lead statement was read but named nothing ("I would not favour lymphoma", "the lesion
    # is most likely"): the line is prose, not a bare one-line answer.
    unnamed_lead: bool = False
    others: list[str] = field(default_factory=list)  # differentials and list items
    list_items: int = 0  # how many of the others are numbered or bulleted list items
    # The lead came from a labelled value with commas read as one name ("Diagnosis:
    # Meningioma, atypical"): why, so the answer is counted as the unlabelled line would be.
    comma_note: str | None = None
    # A label said there is no diagnosis ("Diagnosis: unknown", "Answer: N/A"): the line.
    no_diagnosis: str | None = None
    # A lead label's value declined ("Diagnosis: I cannot provide one from this MRI"): the line.
    declined: str | None = None

    def ranked(self) -> list[str]:
        if self.lead:
            return self.lead + self.others
        # A "consistent with" remark in an answer with a list must name a disease:
        # "1. Glioblastoma\n   The rim is consistent with necrosis" gives no lead.
        if self.suggested and (self.suggested_known or not self.list_items):
            return self.suggested + self.others
        return list(self.others)


def _read_prose_sentence(sentence: str, reader: _NameReader, found: _ProseFindings) -> None:
    """Read the lead and differential statements of one sentence of prose."""
    lowered = sentence.lower()
    differentials = any(word in lowered for word in _DIFFERENTIAL_WORDS)
    lead = found.lead is None and any(word in lowered for word in _LEAD_WORDS_NEEDED)
    suggests = (
        found.lead is None
        and found.suggested is None
        and any(word in lowered for word in _SUGGEST_WORDS)
    )
    if not (differentials or lead or suggests):
        return
    text = _plain_sentence(sentence)
    statement = _differential_statement(text) if differentials else None
    head = text[: statement.start] if statement else text
    names: list[str] = []
    if lead:
        names, _, seen = _lead_statement(head, reader)
        if not names and statement and statement.names_end == len(text):
            # "Differentials include A and B, but the most likely diagnosis is X": the
            # lead statement after the list also ends the list.
            names, lead_at, seen_after = _lead_statement(text, reader, statement.after)
            seen = seen or seen_after
            if names:
                statement = _Differential(
                    statement.start, statement.names_start, lead_at, statement.after
                )
        if names:
            found.lead = names
        found.unnamed_lead = found.unnamed_lead or (seen and not names)
    if statement:
        found.others.extend(reader.names(text[statement.names_start : statement.names_end]))
    if suggests and not names:
        names, seen = _suggested_names(head, reader)
        if names:
            found.suggested = names
            found.suggested_known = reader.mentions(names[0])
        found.unnamed_lead = found.unnamed_lead or (seen and not names)


@dataclass(frozen=True)
class _Differential:
    """Where a differential statement of a sentence is."""

    start: int  # where the statement begins (its cue, "with", or its names when they come first)
    names_start: int  # the span of its list of names
    names_end: int
    after: int  # where the text after the statement's cue begins


def _differential_statement(text: str) -> _Differential | None:
    """The first differential statement of a sentence, if any."""
    differential = _DIFFERENTIAL_CUE.search(text)
    listed = _AS_DIFFERENTIALS.search(text)
    if listed:  # "with A and B as differentials": from the last "with" before "as"
        window_start = max(0, listed.start() - _MAX_SUBJECT_CHARS)
        with_at = text.rfind(" with ", window_start, listed.start())
        if with_at >= 0 and not (differential and differential.start() < with_at):
            return _Differential(with_at, with_at + len(" with "), listed.start(), listed.end())
    if differential:
        broad = _BROAD_DIFFERENTIAL.match(text, differential.end())
        names_start = broad.end() if broad else differential.end()
        return _Differential(differential.start(), names_start, len(text), differential.end())
    considered = _DIFFERENTIAL_AFTER.search(text)
    if considered:  # "A and B should also be considered"
        subject = _subject_start(text, considered.start(), names=True)
        return _Differential(subject, subject, considered.start(), considered.end())
    return None


def _lead_statement(text: str, reader: _NameReader, start: int = 0) -> tuple[list[str], int, bool]:
    """The name(s) of the first lead statement in ``text[start:]`` that is not negated,
    where the statement begins, and whether any lead statement (negated too) was seen."""
    forward = None
    seen = False
    for attempt, match in enumerate(_LEAD_CUE.finditer(text, start)):
        seen = True
        if attempt == _MAX_CUE_ATTEMPTS:
            break
        if not _NEGATED_BEFORE.search(text[max(start, match.start() - 30) : match.start()]):
            forward = match
            break
    backward = _LEAD_AFTER.search(text, start)

    def after_cue() -> tuple[list[str], int]:  # "the most likely diagnosis is X"
        if forward is None:
            return [], 0
        return reader.lead(text[forward.end() :]), forward.start()

    def before_cue() -> tuple[list[str], int]:  # "X is the most likely diagnosis"
        if backward is None:
            return [], 0
        subject = _subject_start(text, backward.start(), start)
        return reader.lead(text[subject : backward.start()]), subject

    # The earlier statement counts; the other one only if the earlier names nothing.
    first, second = after_cue, before_cue
    if backward and (forward is None or backward.start() <= forward.start()):
        first, second = before_cue, after_cue
    names, at = first()
    if not names:
        names, at = second()
    return names, at, seen or backward is not None


def _suggested_names(head: str, reader: _NameReader) -> tuple[list[str], bool]:
    """The name(s) after "most consistent with", "the findings are suggestive of"..., and
    whether such a statement (a negated one too) was seen."""
    seen = False
    for attempt, match in enumerate(_SUGGEST_CUE.finditer(head)):
        if attempt == _MAX_CUE_ATTEMPTS:
            break
        before = head[max(0, match.start() - 80) : match.start()]
        if match.group("verb"):  # "the imaging features strongly suggest X"
            if not _SUGGEST_SUBJECT.search(before):
                continue
        elif not match.group("degree"):  # "the findings are consistent with X"
            link = _SUGGEST_LINK.search(before)
            if link is None or not _SUGGEST_SUBJECT.search(before[: link.start()]):
                continue
        seen = True
        if re.search(r"\b(?:not|no|never)\b|n't", match.group(), re.I) or _NEGATED_BEFORE.search(
            before[-30:]
        ):
            continue
        names = reader.lead(head[match.end() :])
        if names:
            return names, True
    return [], seen


def _read_labelled_list(value: str, reader: _NameReader, found: _ProseFindings) -> None:
    """Read the names of an ``Others: A, B`` line; a lead statement in it ends the list
    ("Differentials include A and B, but the most likely diagnosis is X")."""
    text = _plain_sentence(value)
    end = len(text)
    lowered = text.lower()
    if found.lead is None and any(word in lowered for word in _LEAD_WORDS_NEEDED):
        names, lead_at, _ = _lead_statement(text, reader)
        if names:
            found.lead, end = names, lead_at
    found.others.extend(reader.names(text[:end]))


def _read_lead_line(
    value: str, line: str, reader: _NameReader, found: _ProseFindings, *, list_rule: bool = True
) -> None:
    """Read the value of a ``Diagnosis: X`` line (``line`` is the whole line, for the record);
    with ``list_rule``, a value that is a plain list is read as a bare line would be."""
    name_text = _item_name(value)
    sentence_names: list[str] = []
    if _NO_DIAGNOSIS.fullmatch(_plain_sentence(name_text)):
        if found.lead is None and found.no_diagnosis is None:
            found.no_diagnosis = _plain_sentence(line)
    elif declines_diagnosis(_plain_sentence(value), labelled=True):
        # "Diagnosis: I cannot provide one from this MRI image": no name; the diagnosis a
        # hedge introduces after the declining clause ("cannot be made definitively; likely
        # X", "I cannot be certain, but it is probably X") is read, and a statement in it
        # ("I cannot be sure, but X is most likely") below; only an answer that names none
        # declines ("cannot be made; biopsy to exclude lymphoma": no hedge, no name)
        if found.declined is None:
            found.declined = _plain_sentence(line)
        after = _named_after_declining(value)
        if after is not None:
            _read_lead_line(after, line, reader, found, list_rule=list_rule)
    elif found.lead is None:  # a later "Final diagnosis: X" restates the first
        names, comma_note = (
            _lead_names(name_text, reader) if list_rule else (reader.lead(name_text), None)
        )
        plain = _plain_sentence(name_text)
        if re.search(r"\b(?:is|are)\W*$", plain, re.I):
            names = []  # "Answer: the differential is" + a list below: a lead-in, no name
        if names and (_SENTENCE_PIECE.search(names[0]) or _CLAUSE_PIECE.match(plain)):
            # "Conclusion: the imaging features suggest X", "Answer: Based on the history,
            # the most likely diagnosis is X": a statement of the sentences below names
            # it; the value itself only when none does
            sentence_names = names
        elif names:
            found.lead, found.comma_note = names, comma_note
    for sentence in _sentences(value):  # "X, followed by A and B"
        _read_prose_sentence(sentence, reader, found)
    if sentence_names and found.lead is None and found.suggested is None:
        found.lead = sentence_names


# Where a labelled value's declining clause ends and what it names after it begins: a
# semicolon, a spaced dash or an opening bracket ("cannot be made definitively; likely X",
# "Unable to confirm without histology - most likely X", "cannot be made with certainty
# (favor X)"), a comma or sentence end before "but" / "however" ("I cannot be certain,
# but most likely X"), or a comma before a hedge ("cannot be made, suspected X").
_AFTER_DECLINING = re.compile(
    r"\s*(?:;|\s[-\u2013\u2014]\s|\(|[,.]\s*(?=(?:but|however|though|yet)\b)|\s(?=but\b)|"
    r",\s*(?=(?:(?:most\s+)?likely|probably|possibly|suspect(?:ed|s)?|favou?r(?:ed|s)?)\b))\s*",
    re.I,
)
# A reason, not a name, after a hedge ("likely due to motion artefact").
_REASON_FIRST = re.compile(
    r"(?:due|because|owing|secondary|related|caused|given|from|to|that|if|on|in)\b", re.I
)
# A connective opening what follows a declining clause ("..., but most likely X").
_CONNECTIVE = re.compile(r"^(?:but|however|though|yet)\b,?\s*", re.I)
# A hedge directly introducing the name after a declining clause ("likely X", "leading
# consideration X", "features favour a X", "but it is probably X", "this looks like a X",
# "consider X vs Y"):
# only then is what follows a diagnosis. A subject ("it is", "this", "the features") may stand
# before the hedge, an article after it.
_HEDGE_BEFORE_NAME = re.compile(
    r"^(?:(?:it|this|that)(?:\s+is|'s)?\s+|(?:the\s+)?(?:imaging\s+)?"
    r"(?:features?|findings?|appearance)\s+)?"
    r"(?:(?:the\s+)?(?:leading|top|main|primary)\s+(?:consideration|differential|possibility)"
    r"(?:\s+is)?|(?:most\s+)?likely|favou?r(?:ed|s)?|probably|possibly|best\s+guess|"
    r"suspect(?:ed|s)?|looks?\s+like|(?:is\s+)?consistent\s+with|consider)\b:?\s*"
    r"(?:(?:a|an|the)\s+)?",
    re.I,
)
_MAX_HEDGED_NAME_WORDS = 16  # "likely X vs Y" after a declining clause: names, not a sentence
# Advice, not a diagnosis, after a declining clause ("; please consult a radiologist").
_ADVICE = re.compile(
    r"\b(?:consult\w*|please|seek|refer\w*|recommend\w*|contact|correlat\w*|"
    r"(?:neuro)?radiologists?|physicians?|doctors?|clinicians?|specialists?)\b",
    re.I,
)


def _named_after_declining(value: str) -> str | None:
    """The diagnosis a value that declines names after its declining clause, without the
    hedge introducing it; None when no hedge introduces one there (:data:`_HEDGE_BEFORE_NAME`):
    advice, a next step ("biopsy to exclude lymphoma", "DWI would help distinguish abscess
    from tumor"), another refusal, a reason ("insufficient information"), a bare name
    without a hedge, or nothing. What follows the hedge must be names: at most 16 words,
    no verb.

    Example:
        >>> _named_after_declining("cannot be made definitively; likely glioblastoma")
        'glioblastoma'
        >>> _named_after_declining("I cannot be certain, but this is probably a glioblastoma")
        'glioblastoma'
        >>> _named_after_declining("cannot be made, but features favour a high-grade glioma")
        'high-grade glioma'
        >>> _named_after_declining("cannot be made; likely glioma. Consult a radiologist.")
        'glioma'
        >>> _named_after_declining("cannot be made; biopsy to exclude lymphoma")
        >>> _named_after_declining("I cannot provide one; please consult a radiologist")
        >>> _named_after_declining("cannot be made (insufficient information)")
    """
    plain = _plain_sentence(value)
    cut = _AFTER_DECLINING.search(plain)
    if cut is None:
        return None
    rest = _first_sentence(plain[cut.end() :])  # "likely X. Consult a radiologist.": X
    rest = _CONNECTIVE.sub("", rest.strip(), count=1)
    hedged = _HEDGE_BEFORE_NAME.match(rest)
    if hedged is None:
        return None
    rest = rest[hedged.end() :].strip(" \t).;,")
    if (
        not re.search(r"[^\W\d_]", rest)
        or _REASON_FIRST.match(rest)
        or len(rest.split()) > _MAX_HEDGED_NAME_WORDS
        or _SENTENCE_PIECE.search(rest)
        or _ADVICE.search(rest)
        or _NO_DIAGNOSIS.fullmatch(rest)
        or declines_diagnosis(rest, labelled=True)
    ):
        return None
    return rest


def _lead_names(text: str, reader: _NameReader) -> tuple[list[str], str | None]:
    """The names of a labelled lead value and, when its commas were kept inside one name,
    the note saying why.

    A value that is a plain list ("Glioblastoma; lymphoma; metastasis", "Glioblastoma,
    lymphoma, metastasis, abscess, tumefactive MS") is read by the rule of a bare line, so
    a label never changes what a line says; a value holding a statement ("X, followed by A")
    or a clause ("X, given the history") names the one diagnosis before its comma.
    """
    plain = _plain_sentence(text)
    pieces = [piece.strip() for piece in _commas_outside_brackets(plain)]
    separated = _semicolon_outside_brackets(plain) or len(pieces) > 1
    clause = any(_CLAUSE_PIECE.match(piece) or _NAME_TAIL.search(f" {piece}") for piece in pieces)
    if separated and not clause and not _has_statement(plain):
        read = _one_line_names(plain, reader)
        if read is not None and not read.clause:
            return read.names, read.note if read.status == COMMA_NAME_STATUS else None
    return reader.lead(text), None


def _has_statement(text: str) -> bool:
    """Whether ``text`` holds a lead, suggestion or differential statement."""
    return any(
        pattern.search(text)
        for pattern in (
            _LEAD_CUE,
            _LEAD_AFTER,
            _SUGGEST_CUE,
            _DIFFERENTIAL_CUE,
            _AS_DIFFERENTIALS,
            _DIFFERENTIAL_AFTER,
        )
    )


def _read_differential_line(value: str, reader: _NameReader, found: _ProseFindings) -> None:
    """Read the value of an ``Others: A, B`` line and the sentences after its first."""
    first = _first_sentence(value)
    _read_labelled_list(first, reader, found)
    for sentence in _sentences(value[len(first) :]):
        _read_prose_sentence(sentence, reader, found)


def _read_written_diagnoses(text: str) -> _ProseFindings:
    reader = _NameReader()
    found = _ProseFindings()
    lines = []
    lead_in = True
    for line in _break_statements(text).splitlines():
        lines.append(_unfold_inline_list(line, reader, lead_in=lead_in))
        # A lead-in opens a list only on the answer's first non-empty line: below a name
        # ("Glioblastoma\nDifferentials to exclude: 1. A 2. B") or any other line its list
        # could take the place of the diagnosis above it.
        lead_in = lead_in and not line.strip()
    for line in _dash_numbered_as_dotted("\n".join(lines).splitlines()):
        stripped = line.strip()
        if not stripped:
            continue
        item = _LIST_ITEM.match(line)
        value = item.group("value") if item else stripped
        match = _MOST_LIKELY_LINE.match(value)
        if match:
            # "Most likely: A; B" is a label; "The most likely diagnosis is X, ..." a sentence.
            written_as_sentence = (
                re.search(r"\bis\W*$", value[: match.start("value")], re.I) is not None
            )
            _read_lead_line(
                match.group("value"), value, reader, found, list_rule=not written_as_sentence
            )
            continue
        match = _DIFFERENTIAL_LINE.match(value)
        if match:
            _read_differential_line(match.group("value"), reader, found)
            continue
        label = _line_label(value, reader)
        if label is not None:
            kind, labelled = label
            if kind == "lead":
                _read_lead_line(labelled, value, reader, found)
            elif kind == "differential":
                _read_differential_line(labelled, reader, found)
            else:  # findings, a summary: statements only, never a bare name
                for sentence in _sentences(labelled):
                    _read_prose_sentence(sentence, reader, found)
            continue
        if item:
            name = _item_name(value)
            if re.fullmatch(r"[^:]*(?:diagnos[ie]s|differentials?)\s*:?\s*", name, re.I):
                continue  # a heading such as "**Differential diagnoses:**"
            ranked = _LEAD_AFTER.search(name)  # "1. Glioblastoma is the most likely diagnosis"
            if ranked and _subject_before(name, ranked.start()):
                name = _subject_before(name, ranked.start())
            found.others.append(name)
            found.list_items += 1
            continue
        for sentence in _sentences(stripped):
            _read_prose_sentence(sentence, reader, found)
    return found


# --------------------------------------------------------------------------- refusals

# Openings without a subject that decline a diagnosis ("Unable to provide a diagnosis",
# "Cannot be made from this MRI image"), beside the captioning parser's ("I cannot", "Sorry").
_DECLINE_WITHOUT_SUBJECT = re.compile(
    r"\W*(?:(?:unable|not\s+able|not\s+possible)\s+to|"
    r"(?:cannot|can't|can\s+not)\s+(?:provide|give|make|offer|determine|diagnose|interpret|"
    r"assess|comment|help|be\s+(?:made|given|provided|established|determined|assessed)))\b",
    re.I,
)
# What a declining diagnosis answer declines, or whom it sends the reader to.
_DECLINED_DIAGNOSIS = re.compile(
    r"\b(?:diagnos\w*|interpret\w*|medical\s+(?:advice|opinion)|(?:neuro)?radiologists?|"
    r"physicians?|doctors?|clinicians?|specialists?|healthcare|health\s+care)\b",
    re.I,
)


def declines_diagnosis(text: str, *, labelled: bool = False) -> bool:
    """Whether a diagnosis answer in which nothing else was read declines to give one.

    A refusal by the captioning parser's rule (:func:`novabench.run.parsers.captions.is_refusal`:
    a short answer opening with an apology or "I cannot / will not ...", naming no finding),
    or a short answer opening so (or "Unable to ...", "Cannot be made ...") that says what it
    declines: a diagnosis, an interpretation, medical advice, or a radiologist or physician
    to consult. Such an answer may name the image it declines to read ("this axial T2 MRI
    image", "the lesion"): a caption would not be there, a diagnosis would have been read
    first. With ``labelled`` the text is a diagnosis label's value ("Diagnosis: I cannot
    provide one"), whose label says what is declined.

    Example:
        >>> declines_diagnosis("I cannot provide a diagnosis from this axial T2 MRI image; "
        ...                    "please consult a radiologist.")
        True
        >>> declines_diagnosis("Cannot be made from this MRI image", labelled=True)
        True
        >>> declines_diagnosis("I cannot see the lesion clearly on this T2 image.")
        False
    """
    if is_refusal(text):
        return True
    if not _opens_declining(text, _DECLINE_WITHOUT_SUBJECT):
        return False
    return labelled or _DECLINED_DIAGNOSIS.search(text) is not None


# --------------------------------------------------------------------------- one line of names

#: Status of a one-line answer (or a labelled line's value) with commas read as one
#: diagnosis ("Meningioma, atypical"): usable, but counted apart so a report says how many
#: answers were read that way.
COMMA_NAME_STATUS = "fallback_comma_one_name"

_MAX_NAME_WORDS = 12  # a longer line without list separators is a sentence, not a name
# A piece written as a clause ("the lesion shows ring enhancement"): the line is a sentence.
_SENTENCE_PIECE = re.compile(
    r"\b(?:is|are|was|were|be|been|shows?|showed|demonstrat\w*|reveal\w*|seen|noted|"
    r"suggest\w*|indicat\w*|has|have|likely|consistent|probably|possibly)\b",
    re.I,
)
# Qualifiers written after a name and a comma ("Astrocytoma, IDH-mutant, CNS WHO grade 2"):
# grades, molecular markers, "not otherwise specified".
_QUALIFIER_MARKER = re.compile(
    r"\b(?:grade|who|idh|mutant|mutated|wild-?type|co-?deleted|codeletion|1p/19q|h3|k27m?|"
    r"g34[rv]?|mgmt|braf|v600e|tp53|egfr|shh|wnt|methylated|unmethylated|amplified|fusion|"
    r"altered|nos|nec|not\s+otherwise\s+specified|not\s+elsewhere\s+classified)\b"
    r"|\w-(?:mutant|wildtype|wild-type|altered|deleted|negative|positive)\b",
    re.I,
)
# Words that alone never name a diagnosis but qualify one ("Meningioma, atypical",
# "Leukoencephalopathy, progressive multifocal", "Neurofibromatosis, type 1", a site).
_QUALIFIER_WORDS = frozenset(
    """atypical anaplastic malignant benign progressive multifocal focal diffuse acute subacute
    chronic hyperacute primary secondary recurrent relapsing remitting congenital familial
    hereditary sporadic juvenile adult adulthood infantile childhood pediatric paediatric
    neonatal late early onset classic classical variant type subtype form forms unspecified
    left right bilateral unilateral sided frontal temporal parietal occipital cerebral
    cerebellar brainstem spinal intracranial extracranial supratentorial infratentorial
    posterior anterior fossa lobe midline intraventricular cns central nervous system
    i ii iii iv v a b c""".split()
)


def _is_qualifier(piece: str, reader: _NameReader) -> bool:
    """Whether a comma piece qualifies the name before it rather than naming a diagnosis."""
    words = re.findall(r"[\w/]+(?:-[\w/]+)*", piece.lower())
    if not words or len(words) > 5 or reader.known(piece):
        return False
    if _QUALIFIER_MARKER.search(piece):
        return True
    return all(word in _QUALIFIER_WORDS or word.isdigit() for word in words)


@dataclass(frozen=True)
class _LineNames:
    """How one line of names was read: its names, a parse status and a note saying why."""

    names: list[str]
    status: str
    note: str
    clause: bool = False  # kept whole because a piece reads as a clause, not as a name


def _one_line_names(line: str, reader: _NameReader) -> _LineNames | None:
    """The names of one line with no label or statement: cut at its semicolons; cut at its
    commas only when it cannot be one name with qualifiers (see :func:`parse_diagnoses`).
    None when the line reads as a sentence."""
    if ";" in line and _semicolon_outside_brackets(line):
        return _LineNames(
            reader.names(line), "fallback_list", "a one-line list cut at its semicolons"
        )
    pieces = [piece for piece in _commas_outside_brackets(line) if piece.strip()]
    if len(pieces) > 1:
        if reader.known(line):
            return _LineNames(
                [line], "fallback_list", "a bare one-line answer, a known name with commas"
            )
        clause = next((piece.strip() for piece in pieces if _SENTENCE_PIECE.search(piece)), None)
        names = [] if clause else reader.names(line)
        qualifiers = [name for name in names if _is_qualifier(name, reader)]
        if (
            not clause
            and not qualifiers
            and (len(names) >= 3 or (len(names) == 2 and all(reader.known(name) for name in names)))
        ):
            return _LineNames(names, "fallback_list", "a one-line list cut at its commas")
        if len(line.split()) <= _MAX_NAME_WORDS:
            reason = (
                f"{clause!r} reads as a clause"
                if clause
                else f"{qualifiers[0]!r} qualifies the name"
                if qualifiers
                else "fewer than 3 pieces, not each a known diagnosis"
            )
            return _LineNames(
                [_item_name(line)],
                COMMA_NAME_STATUS,
                f"a one-line answer with commas read as one diagnosis ({reason})",
                clause=clause is not None,
            )
        return None
    if len(line.split()) > _MAX_NAME_WORDS:
        return None
    return _LineNames([_item_name(line)], "fallback_list", "a bare one-line answer")


def _commas_outside_brackets(line: str) -> list[str]:
    return _split_outside_brackets(line, ",")
