"""The tokenisers of the caption overlap metrics, each equal to its reference library's.

- :func:`tokenize_13a`: sacrebleu's default ``13a`` (BLEU-4, :mod:`novabench.metrics.bleu`);
- :func:`tokenize_rouge`: ``rouge_score``'s default tokeniser, optionally Porter-stemmed
  (ROUGE-L, :mod:`novabench.metrics.rouge`);
- :func:`tokenize_meteor`: lowercase runs of letters and digits (METEOR,
  :mod:`novabench.metrics.meteor`).

Parity with the libraries is tested in ``tests/metrics/test_text_parity.py``.
"""

from __future__ import annotations

import functools
import re

from novabench.metrics.porter import porter_stem

__all__ = ["tokenize_13a", "tokenize_meteor", "tokenize_rouge"]

# mteval-v13a splits off every ASCII symbol except apostrophe, hyphen, period
# and comma; those three follow context rules below.
_13A_SYMBOLS = '!"#$%&()*+/:;<=>?@[\\]^_`{|}~'
_13A_SYMBOL_SET = frozenset(_13A_SYMBOLS)
# The three context rules of mteval-v13a, applied in this order with
# consuming (not look-around) matches as the Perl original does, so runs such
# as "a.,b" split the same way: a period or comma after a non-digit, a period
# or comma before a non-digit, a hyphen after a digit. re.ASCII: mteval's
# digits are 0-9 only.
_13A_CONTEXT_RULES = (
    (re.compile(r"(\D)([.,])", re.ASCII), r"\1 \2 "),
    (re.compile(r"([.,])(\D)", re.ASCII), r" \1 \2"),
    (re.compile(r"(\d)(-)", re.ASCII), r"\1 \2 "),
)
# A period or comma next to a digit or to another period or comma: only then can the two
# period-and-comma rules do anything but put spaces around every one of them. (Written
# to start with the mark, which the regex engine can skip to.)
_13A_MARK_IN_CONTEXT = re.compile(r"[.,](?<=[0-9.,][.,])|[.,](?=[0-9])")
# The hyphen rule with the same result and no group to copy: a digit before a hyphen is
# never the end of an earlier match (that would be a hyphen), so look-behind finds the
# same hyphens the consuming match does.
_13A_HYPHEN_AFTER_DIGIT = re.compile(r"-(?<=[0-9]-)")


@functools.lru_cache(maxsize=1 << 16)
def tokenize_13a(text: str) -> tuple[str, ...]:
    """Tokenise like sacrebleu's default ``13a`` tokeniser (mteval-v13a, used by WMT).

    Trailing whitespace is dropped, ``<skipped>`` markers and hyphenated line
    breaks removed, the four HTML entities ``&quot; &amp; &lt; &gt;`` decoded,
    ASCII symbols split off, periods and commas split off unless inside a
    number, and a hyphen split off after a digit. Case is kept.

    Args:
        text: one caption.

    Returns:
        The tokens.

    Example:
        >>> tokenize_13a("T2-weighted image: 3.5 cm lesion, (left).")
        ('T2', '-', 'weighted', 'image', ':', '3.5', 'cm', 'lesion', ',', '(', 'left', ')', '.')
    """
    line = text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, character in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
            line = line.replace(entity, character)
    line = f" {line} "
    for symbol in _13A_SYMBOL_SET.intersection(line):  # each symbol is replaced on its own
        line = line.replace(symbol, f" {symbol} ")
    period_comma_left, period_comma_right, _ = _13A_CONTEXT_RULES
    if "." in line or "," in line:
        if _13A_MARK_IN_CONTEXT.search(line) is None:
            # Every mark has a non-digit, non-mark on both sides: both rules match each
            # one, adding only spaces around it (the tokens are the same).
            line = line.replace(".", " . ").replace(",", " , ")
        else:
            for rule, replacement in (period_comma_left, period_comma_right):
                line = rule.sub(replacement, line)
    if "-" in line:
        line = _13A_HYPHEN_AFTER_DIGIT.sub(" - ", line)
    return tuple(line.split())


_ROUGE_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
# For ASCII text (lowercased), both word rules keep the runs of [a-z0-9]: one translate of
# every other ASCII character to a space, then a split, finds them without a regex.
_ASCII_NON_ALPHANUMERIC_TO_SPACE = str.maketrans(
    {code: " " for code in range(128) if not chr(code).isalnum() or chr(code).isupper()}
)


@functools.lru_cache(maxsize=1 << 16)
def tokenize_rouge(text: str, use_stemmer: bool = False) -> tuple[str, ...]:
    """Tokenise like ``rouge_score``'s default tokeniser.

    Lowercase, every run of characters outside ``[a-z0-9]`` becomes a
    separator (so accented letters and other scripts separate words and are
    dropped); with ``use_stemmer`` tokens longer than three characters are
    reduced by the Porter stemmer (:func:`~novabench.metrics.porter.porter_stem`,
    equal to nltk's, which ``rouge_score`` uses).

    Args:
        text: one caption.
        use_stemmer: apply the Porter stemmer to tokens of four or more characters.

    Returns:
        The tokens.

    Example:
        >>> tokenize_rouge("Ring-enhancing Lesions, 12mm (Café)")
        ('ring', 'enhancing', 'lesions', '12mm', 'caf')
        >>> tokenize_rouge("Ring-enhancing Lesions", use_stemmer=True)
        ('ring', 'enhanc', 'lesion')
    """
    lowered = text.lower()
    if lowered.isascii():
        tokens = lowered.translate(_ASCII_NON_ALPHANUMERIC_TO_SPACE).split()
    else:
        tokens = _ROUGE_NON_ALPHANUMERIC.sub(" ", lowered).split()
    if use_stemmer:
        tokens = [porter_stem(token) if len(token) > 3 else token for token in tokens]
    return tuple(tokens)


_METEOR_WORD = re.compile(r"[^\W_]+")


def tokenize_meteor(text: str) -> list[str]:
    """Tokenise a caption for METEOR: lowercase, then runs of Unicode letters and digits.

    The regex is ``[^\\W_]+`` applied to ``text.lower()``: every character that
    is not a letter or digit (punctuation, hyphens, underscores, spaces)
    separates words, so ``"T2-weighted"`` gives ``["t2", "weighted"]`` and
    ``"3.5"`` gives ``["3", "5"]``.

    Args:
        text: one caption.

    Returns:
        The tokens.

    Example:
        >>> tokenize_meteor("Axial T2-weighted: Œdème, 3.5 cm")
        ['axial', 't2', 'weighted', 'œdème', '3', '5', 'cm']
    """
    lowered = text.lower()
    if lowered.isascii():  # ASCII letters and digits are exactly [a-z0-9] once lowercased
        return lowered.translate(_ASCII_NON_ALPHANUMERIC_TO_SPACE).split()
    return _METEOR_WORD.findall(lowered)
