"""The diagnosis normalisation's shortcuts give what the plain rules give.

``novabench.lexicon.normalization`` skips work where it cannot change the result (ASCII text is
not folded, a token without a rule's letters is not rewritten, a hedge is looked for only
where its first word stands). Each case here compares it with the rules applied one by one,
as written before the shortcuts, on many seeded random strings.
"""

from __future__ import annotations

import random
import string
import unicodedata

import pytest

from novabench.lexicon import normalization
from novabench.lexicon.diagnoses import load_diagnosis_lexicon


def plain_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text).translate(normalization._SPECIAL_LETTERS)
    out: list[str] = []
    base = None  # the last character that is no mark
    for ch in decomposed:
        if not unicodedata.combining(ch):
            base = ch
            out.append(ch)
        elif base is None or base not in string.ascii_letters:  # a Latin letter's accent goes
            out.append(ch)
    return unicodedata.normalize("NFC", "".join(out)).casefold()


def plain_fix_spelling(token: str) -> str:
    for pattern, replacement in normalization._SPELLING_RULES:
        token = pattern.sub(replacement, token)
    return token


def plain_remove_phrases(tokens: list[str]) -> list[str]:
    kept: list[str] = []
    i = 0
    while i < len(tokens):
        for phrase in normalization._HEDGE_PHRASES:
            if tuple(tokens[i : i + len(phrase)]) == phrase:
                i += len(phrase)
                break
        else:
            kept.append(tokens[i])
            i += 1
    return kept


def plain_normalized(text: str) -> tuple[str, ...]:
    folded = plain_fold(text)
    folded = normalization._POSSESSIVE.sub(r"\1", folded).replace("'", "")
    tokens = [plain_fix_spelling(t) for t in normalization._NON_ALNUM.sub(" ", folded).split()]
    joined: list[str] = []  # "non" and the word after it are one word
    for token in tokens:
        if joined and joined[-1] == "non":
            joined[-1] = "non" + token
        else:
            joined.append(token)
    tokens = joined
    for i in range(1, len(tokens)):
        if tokens[i] in normalization._ROMAN and tokens[i - 1] in normalization._ROMAN_TRIGGERS:
            tokens[i] = normalization._ROMAN[tokens[i]]
    for label in normalization._LEADING_LABELS:
        if tuple(tokens[: len(label)]) == label:
            tokens = tokens[len(label) :]
            break
    tokens = plain_remove_phrases(tokens)
    kept = []
    for i, token in enumerate(tokens):
        letter = token == "a" and i > 0 and tokens[i - 1] in normalization._LETTER_TRIGGERS
        if token not in normalization._ARTICLES or letter:
            kept.append(token)
    return tuple(kept)


# Words that exercise every rule: spellings, hedges, labels, roman numerals, accents.
_WORDS = (
    "haemorrhage oedema tumour leucodystrophy paediatric sulphur grey ageing centre fibres "
    "coeliac amoebic foetal diarrhoea apnoea aetiology anaesthesia behaviour colour humour "
    "favour haematoma most likely probably consistent with in keeping with suggestive of "
    "in favor of rule out cannot be excluded final diagnosis differential dx findings are "
    "type II grade IV Chiari I NF-1 who iii the a an Behçet's Creutzfeldt-Jakob's type a "
    "vitamin a non non-ketotic non-Hodgkin "
    "Ménière æ ß œ ø ł đ ’ ‘ ʼ glioma glioblastoma abscess (PML) [GBM] x linked v i"
).split()
_LETTERS = "aeiouchrtlmpsgxv'- ÆéüöØβΑトドパ\u3099\u0301й"


def random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    names = [name for entry in load_diagnosis_lexicon().entries for name in entry.names]
    texts = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.4:
            words = rng.choices(_WORDS, k=rng.randint(0, 8))
        elif kind < 0.7:
            words = rng.choices(_WORDS + names, k=rng.randint(1, 5))
        else:
            words = ["".join(rng.choices(_LETTERS, k=rng.randint(1, 12))) for _ in range(4)]
        texts.append(rng.choice([" ", ", ", ": "]).join(words))
    return texts


# Seed 0 in the fast suite; seeds 1 and 2 search further under `make test-slow`.
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (1, 2))]
)
def test_normalisation_equals_the_plain_rules(seed: int) -> None:
    texts = random_texts(seed, 3000)
    normalization._normalized_tuple.cache_clear()
    for text in texts:
        assert normalization._normalized_tuple(text) == plain_normalized(text), text


def test_every_lexicon_name_normalises_as_the_plain_rules_do() -> None:
    names = [name for entry in load_diagnosis_lexicon().entries for name in entry.names]
    for name in names:
        assert normalization._normalized_tuple(name) == plain_normalized(name), name


# Seed 0 in the fast suite; seeds 1 and 2 search further under `make test-slow` (suite28).
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (1, 2))]
)
def test_folding_and_spelling_shortcuts_equal_the_plain_steps(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789" + "aeoucr" * 4
    for _ in range(5000):
        token = "".join(rng.choices(alphabet, k=rng.randint(1, 10)))
        assert normalization._fix_spelling(token) == plain_fix_spelling(token), token
    for text in random_texts(seed, 2000):
        assert normalization._fold(text) == plain_fold(text), text


def plain_key(tokens: list[str]) -> str:
    words = [normalization._singular(token) for token in tokens]
    optional = normalization._KEY_OPTIONAL
    core = [w for t, w in zip(tokens, words) if w not in optional and t not in optional]
    return "".join(core if core else words)


# Seed 0 in the fast suite; seeds 1 and 2 search further under `make test-slow` (suite28).
@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (1, 2))]
)
def test_normalize_diagnosis_and_keys_equal_the_plain_steps(seed: int) -> None:
    # normalize_diagnosis skips the parenthesis pass where no "(" or "[" stands, and a key
    # skips the optional-word filter where no optional word stands.
    rng = random.Random(seed)
    texts = random_texts(seed, 2000)
    extra = ("disease", "diseases", "syndromes", "virus", "anti", "antibodies", "blood")
    for text in texts:
        main, _ = normalization._split_abbreviations(text)
        expected = " ".join(plain_normalized(main))
        assert normalization.normalize_diagnosis(text) == expected, text
        tokens = expected.split() + rng.choices(extra, k=rng.randint(0, 2))
        rng.shuffle(tokens)
        assert normalization._key_from_tokens(tokens) == plain_key(tokens), tokens


def test_keys_drop_optional_words_only_beside_others() -> None:
    assert normalization._key_from_tokens(["krabbe", "disease"]) == "krabbe"
    assert normalization._key_from_tokens(["disease"]) == "disease"
    assert normalization._key_from_tokens(["cyanide", "intoxication"]) == "cyanidepoisoning"
    assert normalization._key_from_tokens(["metastases"]) == "metastasis"
