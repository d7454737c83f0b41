"""The lexicon extractor's fast paths give what the straightforward extraction gives.

The extractor normalises ASCII text in one pass, skips a rewrite whose pattern cannot
match (a character every match needs is absent), remembers each word's spelling fold and
tries only the phrase lengths that exist. :func:`straightforward_explain` below is the
extraction without any of these shortcuts (every normalisation step, every rewrite, every
fold, every length up to the longest phrase), written over the same phrase table; the two
must agree on every caption of the gold sets, on random captions and on random text
built to hit the shortcuts' edges (non-ASCII letters, combining marks, rewrite triggers,
punctuation runs, upper case).
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from pathlib import Path

import pytest

from novabench.metrics.caption_pairs import random_caption_pairs
from novabench.metrics.keywords import (
    _CLASSICAL_PLURALS,
    _NOT_SIGN_NAMES,
    CLINICAL_FAMILIES,
    NEGATABLE_FAMILIES,
    NEGATED_PREFIX,
    CaptionKeywords,
    KeywordMatch,
    LexiconKeywordExtractor,
    _plurals,
    _required_characters,
    load_lexicon,
)

HERE = Path(__file__).resolve().parent
CLAUSE_END = frozenset(".;:!?")
WORD_OR_PUNCTUATION = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*|[.;:!?,]")
SPELT_OUT = str.maketrans({"œ": "oe", "æ": "ae", "ß": "ss", "ø": "o", "đ": "d", "ł": "l"})


def straightforward_words(extractor: LexiconKeywordExtractor, text: str) -> list[str]:
    text = unicodedata.normalize("NFKD", text.casefold().translate(SPELT_OUT))
    text = "".join(character for character in text if not unicodedata.combining(character))
    for rewrite in extractor._rewrites:
        text = rewrite.pattern.sub(rewrite.replacement, text)
    words = []
    for token in WORD_OR_PUNCTUATION.findall(text):
        if token not in CLAUSE_END and token != ",":
            for british, american in extractor._folds:
                if british in token:
                    token = token.replace(british, american)
        words.append(token)
    return words


@functools.cache  # the phrase table is fixed: one pass over it per extractor, not per text
def longest_phrase(extractor: LexiconKeywordExtractor) -> int:
    return max(len(phrase) for phrase in extractor._phrases)


def straightforward_segments(extractor: LexiconKeywordExtractor, words: list[str]) -> list:
    longest = longest_phrase(extractor)
    segments, position = [], 0
    while position < len(words):
        for length in range(min(longest, len(words) - position), 0, -1):
            entry = extractor._phrases.get(tuple(words[position : position + length]))
            if entry is not None:
                segments.append((" ".join(words[position : position + length]), entry))
                position += length
                break
        else:
            segments.append((words[position], None))
            position += 1
    extractor._share_coordinated_heads(segments)  # a reading rule, no shortcut
    return segments


def straightforward_explain(
    extractor: LexiconKeywordExtractor, text: str
) -> tuple[list[KeywordMatch], bool]:
    segments = straightforward_segments(extractor, straightforward_words(extractor, text))
    matches: list[KeywordMatch] = []
    positions: list[int] = []
    states_normal = in_scope = prefix_pending = False
    negated_in_scope = False  # "no X within Y": Y is where X is absent
    listing = False  # "no X or areas of Y": a coordinator began another ruled-out item
    clause_start = 0

    def starts_negatable(index: int) -> bool:
        entry = segments[index][1] if index < len(segments) else None
        return (
            entry is not None
            and entry.kind == "term"
            and any(family in NEGATABLE_FAMILIES for family, _ in entry.emits)
        )

    def starts_structure(index: int) -> bool:
        entry = segments[index][1] if index < len(segments) else None
        return (
            entry is not None
            and entry.kind == "term"
            and all(family == "anatomy" for family, _ in entry.emits)
        )

    def starts_plain_plural(index: int) -> bool:
        phrase, entry = segments[index] if index < len(segments) else ("", None)
        return entry is None and len(phrase) > 3 and phrase.endswith("s") and phrase[-2] != "s"

    landmarks = straightforward_landmarks(extractor, segments)
    for index, (phrase, entry) in enumerate(segments):
        kind = entry.kind if entry is not None else None
        if index in landmarks:
            continue
        if (
            kind is None
            and phrase == "both"
            and (starts_structure(index + 1) or starts_plain_plural(index + 1))
        ):
            matches.append(KeywordMatch("anatomy", "bilateral", False, phrase))
            positions.append(index)
        elif phrase in CLAUSE_END or kind == "terminator":
            in_scope = prefix_pending = listing = False
            clause_start = len(matches)
        elif phrase in (",", "and") and not starts_negatable(index + 1):
            in_scope = False
        elif kind is None and phrase in (",", "and", "or"):
            listing = negated_in_scope and in_scope
        elif kind is None and phrase in ("in", "within", "inside", "into", "of"):
            after_partitive = (
                phrase == "of"
                and bool(matches)
                and matches[-1].phrase
                in (
                    "focus foci area areas region regions zone zones spot spots amount evidence".split()
                )
            )
            if negated_in_scope and not listing and not after_partitive:
                in_scope = False
        elif kind is None and phrase == "sign" and (name := unknown_sign_name(segments, index)):
            negated = in_scope or prefix_pending
            if negated and in_scope:
                negated_in_scope = True
            matches.append(KeywordMatch("finding", name, negated, name))
            positions.append(index)
            prefix_pending = False
        elif kind == "trigger":
            if (phrase == "absent" and starts_structure(index + 1)) or (
                phrase == "without"
                and index + 1 < len(segments)
                and segments[index + 1][0] in ("a", "an")
                and starts_structure(index + 2)
            ):
                matches.append(KeywordMatch("finding", "agenesis", False, phrase))
                positions.append(index)
            else:
                in_scope, negated_in_scope, listing = True, False, False
        elif kind == "prefix":
            prefix_pending = True
        elif kind == "post":
            for earlier in range(clause_start, len(matches)):
                match = matches[earlier]
                if match.family in NEGATABLE_FAMILIES and not match.negated:
                    matches[earlier] = KeywordMatch(match.family, match.term, True, match.phrase)
        elif kind == "normal":
            states_normal = True
            first_word = phrase.split()[0]
            if extractor._phrases.get((first_word,)) == extractor._phrases.get(("no",)):
                in_scope = negated_in_scope = True  # a trigger word opens the normal phrase
            for family, term in entry.emits:
                matches.append(KeywordMatch(family, term, False, phrase))
                positions.append(index)
        elif kind == "term":
            if phrase in extractor._qualifiers and starts_negatable(index + 1):
                continue
            for family, term in entry.emits:
                negated = family in NEGATABLE_FAMILIES and (in_scope or prefix_pending)
                if negated and in_scope:
                    negated_in_scope, listing = True, False
                matches.append(KeywordMatch(family, term, negated, phrase))
                positions.append(index)
            prefix_pending = False
    # A ruled-out generic abnormality states normality and is no keyword; a negated neutral
    # characteristic in the segment right before another negated term only qualifies it.
    dropped = set()
    for at, match in enumerate(matches):
        if not match.negated:
            continue
        if (match.family, match.term) in extractor._normal_when_negated:
            states_normal = True
            dropped.add(at)
        elif (
            (match.family, match.term) in extractor._neutral
            and at + 1 < len(matches)
            and matches[at + 1].negated
            and positions[at + 1] == positions[at] + 1
        ):
            dropped.add(at)
    return [match for at, match in enumerate(matches) if at not in dropped], states_normal


def unknown_sign_name(segments: list, index: int) -> str:
    """Up to three plain alphabetic words (2+ letters, no stop word) right before "sign"."""
    taken = []
    for phrase, entry in reversed(segments[max(0, index - 3) : index]):
        if entry is not None or not re.fullmatch(r"[a-z]{2,}", phrase):
            break
        if phrase in _NOT_SIGN_NAMES:
            break
        taken.append(phrase)
    return " ".join([*reversed(taken), "sign"]) if taken else ""


def straightforward_landmarks(extractor: LexiconKeywordExtractor, segments: list) -> set[int]:
    """Indices of the terms named only as a landmark: after a run of plain words ending in a
    location reference, past reference words, anatomy and neutral characteristics, the
    abnormal characteristics up to and including the first finding."""
    plain = [entry is None for _, entry in segments]
    landmarks: set[int] = set()

    def finding_earlier_in_clause(before: int) -> bool:
        for index in range(before - 1, -1, -1):
            phrase, entry = segments[index]
            if phrase in CLAUSE_END or (entry is not None and entry.kind == "terminator"):
                return False
            if entry is None and phrase == "sign" and unknown_sign_name(segments, index):
                return True
            if index in landmarks or entry is None or entry.kind != "term":
                continue
            following = segments[index + 1][1] if index + 1 < len(segments) else None
            if phrase in extractor._qualifiers and following is not None and following.negatable:
                continue
            if any(pair in extractor._abnormal_terms for pair in entry.emits):
                return True
        return False

    for end in range(len(segments)):
        start = end
        while start >= 0 and plain[start]:
            words = tuple(" ".join(phrase for phrase, _ in segments[start : end + 1]).split())
            if words in extractor._references:
                break
            start -= 1
        else:
            continue
        if words not in extractor._remote_references and finding_earlier_in_clause(start):
            continue
        for index in range(end + 1, len(segments)):
            phrase, entry = segments[index]
            if entry is None:
                if phrase in extractor._reference_words:
                    continue
                break
            if entry.kind != "term":
                break
            if all(
                family == "anatomy" or (family, term) in extractor._neutral
                for family, term in entry.emits
            ):
                continue
            if not any(pair in extractor._abnormal_terms for pair in entry.emits):
                break
            landmarks.add(index)
            if any(family == "finding" for family, _ in entry.emits):
                break
    return landmarks


def gold_captions() -> list[str]:
    captions = []
    for name in ("keyword_gold.txt", "keyword_gold_heldout.txt"):
        for line in (HERE / name).read_text("utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                captions.append(line.split("|")[0].strip())
    return captions


def tricky_texts(extractor: LexiconKeywordExtractor, n_texts: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    vocabulary = sorted({word for phrase in extractor._phrases for word in phrase})
    vocabulary += [
        ".",
        ",",
        ";",
        ":",
        "!",
        "?",
        "and",
        "but",
        "no",
        "not",
        "non",
        "-",
        "/",
        "(",
        ")",
        "T2*",
        "t1 *",
        "T1+C",
        "T1 + Gd",
        "t1c",
        "c+",
        "C +",
        "+",
        "*",
        "3.5",
        "1,000",
        "2.",
        "Œdème",
        "haemorrhage",
        "oesophageal",
        "paediatric",
        "grey",
        "tumour",
        "leucodystrophy",
        "Ærzte",
        "straße",
        "naïve",
        "é",
        "\u0301",
        "ﬁbre",
        "Ⅳ",
        "İ",
        "ΣΑΣ",
        "Ø",
        "łódź",
        "\u00a0",
    ]
    texts = []
    for _ in range(n_texts):
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 30)))
        if rng.random() < 0.3:
            text = text.upper()
        if rng.random() < 0.3:
            text = text.replace(" ", rng.choice(["", "-", ", ", "  ", "\n"]), rng.randint(0, 6))
        texts.append(text)
    return texts


def straightforward_keywords(
    extractor: LexiconKeywordExtractor, matches: list[KeywordMatch], states_normal: bool
) -> CaptionKeywords:
    """The keywords of a straightforward explanation (``straightforward_explain``'s result)."""
    modality = frozenset(match.term for match in matches if match.family == "modality")
    clinical = frozenset(
        f"{NEGATED_PREFIX}{match.term}" if match.negated else match.term
        for match in matches
        if match.family in CLINICAL_FAMILIES
    )
    if any(
        (match.family, match.term)
        in (extractor._abnormal_when_negated if match.negated else extractor._abnormal_terms)
        for match in matches
    ):
        abnormal: bool | None = True
    else:
        abnormal = False if states_normal else None
    return CaptionKeywords(modality=modality, clinical=clinical, abnormal=abnormal)


def assert_same_extraction(extractor: LexiconKeywordExtractor, texts: list[str]) -> None:
    for text in texts:
        explained = straightforward_explain(extractor, text)  # the slow side: once per text
        assert extractor.explain(text) == explained, text
        assert extractor(text) == straightforward_keywords(extractor, *explained), text


# The fast suite checks each path on 150 texts; `make test-slow` on 500 and on the thousands
# these searches were written for (each thousand takes about a CPU second).
FAST_OR_DEEP = [150, *(pytest.param(n, marks=pytest.mark.slow) for n in (500, 1500))]


@pytest.mark.parametrize("n_pairs", FAST_OR_DEEP)
def test_gold_and_random_captions_extract_as_the_straightforward_path(n_pairs: int) -> None:
    extractor = LexiconKeywordExtractor()
    predictions, references = random_caption_pairs(n_pairs, seed=9)
    assert_same_extraction(extractor, gold_captions() + predictions + references)


# Seed 0 on 300 texts keeps the check in the fast suite; seed 0 on 1,000 texts and seeds 0-3
# on 2,500 texts each (seconds apiece) search further under `make test-slow`.
@pytest.mark.parametrize(
    ("seed", "n_texts"),
    [
        (0, 300),
        pytest.param(0, 1000, marks=pytest.mark.slow),
        *(pytest.param(seed, 2500, marks=pytest.mark.slow) for seed in (0, 1, 2, 3)),
    ],
)
def test_random_text_extracts_as_the_straightforward_path(seed: int, n_texts: int) -> None:
    extractor = LexiconKeywordExtractor()
    assert_same_extraction(extractor, tricky_texts(extractor, n_texts, seed))
    # the sample exercises the non-ASCII path (its share of the vocabulary is small)
    assert any(not text.isascii() for text in tricky_texts(extractor, 300, seed))


@pytest.mark.parametrize("n_texts", FAST_OR_DEEP)
def test_a_lexicon_with_other_rewrites_extracts_as_the_straightforward_path(n_texts: int) -> None:
    lexicon = load_lexicon()
    lexicon["rewrites"] = [
        *lexicon["rewrites"],
        # Each replacement is a keyword, so a rewrite wrongly skipped changes the result.
        ["(?i)FLAIR\\s*\\+", " haemorrhage "],  # case-insensitive: no shortcut
        ["(?i:t)2\\s*=", " oedema "],  # a case-insensitive group is not required
        ["(x+)y\\1", " cyst "],  # a back-reference
        ["q{0,2}z#", " mass "],  # an optional repeat requires nothing
        ["(?:ab|cd)%", " thalamus "],  # a branch requires nothing
    ]
    extractor = LexiconKeywordExtractor(lexicon)
    texts = tricky_texts(extractor, n_texts, seed=17)
    texts += ["flair+", "Flair +", "T2=", "xxyxx", "z#", "qqz#", "cd%", "ab%", "t1*c+"]
    assert_same_extraction(extractor, texts)


@pytest.mark.parametrize(
    "pattern, required",
    [
        (r"t([12])\s*\*", ("*", "t")),
        (r"\bt1\s*(?:\+\s*c|c)(?![a-z0-9])", ("1", "t")),
        (r"(?<![a-z0-9])c\s*\+(?![a-z0-9])", ("+", "c")),
        (r"(?:ab)+c{1,3}d?", ("a", "b", "c")),
        (r"(?i)abc", ()),
        (r"(?i:a)b", ("b",)),
        (r"a|b", ()),
        (r"[ab]x*", ()),
    ],
)
def test_required_characters_of_a_pattern(pattern: str, required: tuple[str, ...]) -> None:
    assert _required_characters(re.compile(pattern)) == required


def straightforward_plurals(word: str) -> tuple[str, ...]:
    """The lexicon's generated plurals, every classical ending tried in order."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        english = word + "es"
    elif word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        english = word[:-1] + "ies"
    else:
        english = word + "s"
    for ending, plural in _CLASSICAL_PLURALS:
        if word.endswith(ending) and len(word) > len(ending) + 2:
            classical = word[: -len(ending)] + plural
            return (english,) if classical == english else (english, classical)
    return (english,)


def test_plurals_skip_the_classical_endings_only_where_none_ends_the_word() -> None:
    rng = random.Random(0)
    endings = [ending for ending, _ in _CLASSICAL_PLURALS] + ["y", "ay", "s", "ch", "x", ""]
    words = ["".join(rng.choices("abcdeilmnorsuxy", k=rng.randint(0, 6))) + rng.choice(endings)]
    words += ["".join(rng.choices("abcdeilmnorsuxy", k=rng.randint(1, 9))) for _ in range(3000)]
    words += [
        rng.choice("abcdeilmnorsu") * rng.randint(0, 4) + e for e in endings for _ in range(50)
    ]
    for word in words:
        assert _plurals(word) == straightforward_plurals(word), word
    assert _plurals("glioma") == ("gliomas", "gliomata")
    assert _plurals("nucleus") == ("nucleuses", "nuclei")
    assert _plurals("ganglion") == ("ganglions", "ganglia")
    assert _plurals("cyst") == ("cysts",)


def test_every_location_reference_reads_as_the_straightforward_path() -> None:
    # A plain word is looked up as the end of a reference only where some reference ends
    # in it ("to", "from", "above", "below"): each reference, before a finding and after one.
    extractor = LexiconKeywordExtractor()
    references = load_lexicon()["location_references"]
    texts = [f"Oedema {reference} the mass." for reference in references]
    texts += [
        f"Small cyst {reference} the enhancing tumour, no haemorrhage." for reference in references
    ]
    texts += [f"{reference.capitalize()} the lesion there is oedema." for reference in references]
    assert_same_extraction(extractor, texts)
    remote = extractor("Oedema remote from the mass.")
    assert remote.clinical == {"oedema"}
    assert "mass" in extractor("Oedema below the mass.").clinical  # a finding came first
