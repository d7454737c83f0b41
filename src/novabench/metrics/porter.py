"""The Porter stemmer, giving the same stems as nltk's ``PorterStemmer()`` without importing nltk.

Importing nltk costs about two seconds (its package imports scipy, scikit-learn and
pandas), which the captioning metrics would pay only to stem words for METEOR and for
ROUGE-L with ``use_stemmer``. This module is the algorithm of M. F. Porter, "An
algorithm for suffix stripping", *Program* 14(3), 1980 (described at
https://tartarus.org/martin/PorterStemmer/), plus the departures nltk makes in its
default ``NLTK_EXTENSIONS`` mode, so that :func:`porter_stem` equals
``nltk.stem.porter.PorterStemmer().stem`` on every input:

- the word is lowercased first; a few irregular forms have fixed stems (``skies`` ->
  ``sky``, ``dying`` -> ``die``, ``news`` -> ``news``, ...);
- words of at most two characters (counted before lowercasing) are returned lowercased;
- step 1a: a four-letter word ending ``ies`` keeps ``ie`` (``ties`` -> ``tie``);
- step 1b: ``ied`` becomes ``ie`` in a four-letter word and ``i`` otherwise, whatever the
  measure; the condition ``*o`` also holds for a two-letter stem vowel + consonant
  (any consonant, ``w``/``x``/``y`` included);
- step 1c: ``y`` becomes ``i`` only after a consonant that is not the word's first letter
  (``happy`` -> ``happi``, ``enjoy`` and ``by`` unchanged, ``spy`` -> ``spi``);
- step 2: ``bli`` -> ``ble`` replaces ``abli`` -> ``able``, and ``fulli`` -> ``ful`` and
  ``logi`` -> ``log`` are added (the ``logi`` measure is taken with the ``l`` kept); after
  ``alli`` -> ``al`` the step runs once more (``conditionalli`` -> ``condition``);
- step 5b: the measure is taken with one ``l`` kept (the same value as without).

As in nltk, when a word ends with a suffix that a step names but the condition fails,
that step leaves the word unchanged (no shorter suffix of the step is tried).

Parity with nltk is tested in ``tests/metrics/test_porter.py``.
"""

from __future__ import annotations

import functools

__all__ = ["porter_stem"]

_VOWELS = frozenset("aeiou")

# nltk's default mode gives these words fixed stems (after lowercasing).
_IRREGULAR_STEMS: dict[str, str] = {
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}


def _vowel_flags(word: str) -> list[bool]:
    """Per letter, whether Porter counts it a vowel: a, e, i, o, u, and y after a consonant."""
    flags = []
    after_consonant = False  # a leading y is a consonant
    for letter in word:
        is_vowel = letter in _VOWELS or (letter == "y" and after_consonant)
        flags.append(is_vowel)
        after_consonant = not is_vowel
    return flags


def _measure(stem: str) -> int:
    """Porter's m: how many vowel-run -> consonant-run transitions ``stem`` has ([C](VC)^m[V])."""
    flags = _vowel_flags(stem)
    return sum(1 for before, after in zip(flags, flags[1:]) if before and not after)


def _has_vowel(stem: str) -> bool:
    return any(_vowel_flags(stem))


def _ends_with_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and not _vowel_flags(word)[-1]


def _ends_cvc(word: str) -> bool:
    """Porter's ``*o`` (consonant-vowel-consonant, last not w/x/y), or nltk's two-letter vowel-consonant."""
    if len(word) == 2:
        return _vowel_flags(word) == [True, False]
    return (
        len(word) >= 3
        and _vowel_flags(word)[-3:] == [False, True, False]
        and (word[-1] not in "wxy")
    )


def _step_1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:
        return word[:-1]  # ties -> tie, dies -> die
    if word.endswith("sses") or word.endswith("ies"):
        return word[:-2]
    if word.endswith("ss"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step_1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-1] if len(word) == 4 else word[:-2]
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    if word.endswith("ed") and _has_vowel(word[:-2]):
        stem = word[:-2]
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        stem = word[:-3]
    else:
        return word
    # The suffix went: restore an e the later steps can see, or undouble a final consonant.
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _ends_with_double_consonant(stem):
        return stem if stem[-1] in "lsz" else stem[:-1]
    if stem.endswith("*d"):
        # nltk marks its undoubling rule with the suffix "*d" and, when no double consonant
        # ends the stem, also tests that marker as a literal suffix: "a*d" becomes "ad".
        return stem[:-2] + "d"
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step_1c(word: str) -> str:
    if word.endswith("y") and len(word) > 2 and not _vowel_flags(word[:-1])[-1]:
        return word[:-1] + "i"
    return word


# Steps 2-4: suffix -> replacement; the first (longest) suffix a word ends with decides.
# (Every suffix that ends another one of its step is longer and listed before it, so
# longest-first is also the order in which Porter and nltk try them.)
_STEP_2 = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "fulli": "ful",
    "logi": "log",
}
_STEP_3 = {
    "icate": "ic",
    "ative": "",
    "alize": "al",
    "iciti": "ic",
    "ical": "ic",
    "ful": "",
    "ness": "",
}
_STEP_4 = {
    suffix: ""
    for suffix in (
        "al ance ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize".split()
    )
}


def _suffix_of(word: str, table: dict[str, str], lengths: tuple[int, ...]) -> str | None:
    for length in lengths:
        if len(word) >= length and word[-length:] in table:
            return word[-length:]
    return None


def _lengths(table: dict[str, str]) -> tuple[int, ...]:
    return tuple(sorted({len(suffix) for suffix in table}, reverse=True))


_STEP_2_LENGTHS = _lengths(_STEP_2)
_STEP_3_LENGTHS = _lengths(_STEP_3)
_STEP_4_LENGTHS = _lengths(_STEP_4)


def _step_2(word: str) -> str:
    suffix = _suffix_of(word, _STEP_2, _STEP_2_LENGTHS)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    measured = stem + "l" if suffix == "logi" else stem  # nltk keeps the l when measuring
    if _measure(measured) == 0:
        return word
    if suffix == "alli":
        return _step_2(stem + "al")  # nltk runs step 2 again: "...tionalli" -> "...tion"
    return stem + _STEP_2[suffix]


def _step_3(word: str) -> str:
    suffix = _suffix_of(word, _STEP_3, _STEP_3_LENGTHS)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    return stem + _STEP_3[suffix] if _measure(stem) > 0 else word


def _step_4(word: str) -> str:
    suffix = _suffix_of(word, _STEP_4, _STEP_4_LENGTHS)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    if _measure(stem) <= 1 or (suffix == "ion" and not stem.endswith(("s", "t"))):
        return word
    return stem


def _step_5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        measure = _measure(stem)
        if measure > 1 or (measure == 1 and not _ends_cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word[:-1]) > 1:
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 16)
def porter_stem(word: str) -> str:
    """Stem one word with the Porter algorithm as nltk's default ``PorterStemmer().stem`` does.

    The word is lowercased; see the module docstring for nltk's departures from the 1980
    paper, which this function follows. Results are memoised (a caption corpus repeats
    its words).

    Args:
        word: one token (any string; it is not split).

    Returns:
        Its stem, lowercase.

    Example:
        >>> [porter_stem(word) for word in ("Lesions", "enhancing", "hyperintensity", "happy", "by")]
        ['lesion', 'enhanc', 'hyperintens', 'happi', 'by']
    """
    lowered = word.lower()
    irregular = _IRREGULAR_STEMS.get(lowered)
    if irregular is not None:
        return irregular
    if len(word) <= 2:  # nltk counts the characters before lowercasing
        return lowered
    stem = _step_1a(lowered)
    stem = _step_1b(stem)
    stem = _step_1c(stem)
    stem = _step_2(stem)
    stem = _step_3(stem)
    stem = _step_4(stem)
    return _step_5(stem)
