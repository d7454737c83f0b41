"""Agreement of the offline diagnosis matcher with hand-judged (reference, prediction) pairs.

Reads ``tests/data/diagnosis_pairs.tsv`` (category, reference, prediction, expected verdict
under the paper's lenient judge rules) and prints, per category and overall, how often the
matcher agrees, and the false-accept rate: the share of pairs judged *different* that the
matcher accepts. Run it against another checkout's matcher by putting that ``src`` first on
``PYTHONPATH`` (the matcher is imported from ``novabench.metrics.diagnosis``, which every
version provides).

    PYTHONPATH=src python scripts/measure_matcher.py [--pairs FILE] [--show-errors]
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PAIRS = Path(__file__).resolve().parents[1] / "tests" / "data" / "diagnosis_pairs.tsv"


@dataclass(frozen=True)
class JudgedPair:
    """One hand-judged pair of the measurement set."""

    category: str
    reference: str
    prediction: str
    expected: bool


@dataclass(frozen=True)
class Agreement:
    """How a matcher fares on a set of judged pairs."""

    n_pairs: int
    n_agree: int
    n_different: int  # pairs judged not to match
    n_false_accepts: int  # of those, how many the matcher accepted
    n_false_rejects: int

    @property
    def agreement(self) -> float:
        """Share of pairs where the matcher's verdict equals the expected one."""
        return self.n_agree / self.n_pairs if self.n_pairs else float("nan")

    @property
    def false_accept_rate(self) -> float:
        """Share of pairs judged different that the matcher accepted."""
        return self.n_false_accepts / self.n_different if self.n_different else 0.0


def read_pairs(path: Path = DEFAULT_PAIRS) -> list[JudgedPair]:
    """The judged pairs of a TSV file (``#`` lines are comments; the first row is a header).

    Args:
        path: the TSV file.

    Returns:
        The pairs, in file order.

    Raises:
        ValueError: a row without four fields or with an expected verdict other than 0/1.

    Example:
        >>> pairs = read_pairs()
        >>> len(pairs) > 300 and {p.expected for p in pairs} == {True, False}
        True
    """
    lines = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    rows = list(csv.reader(lines[1:], delimiter="\t", quoting=csv.QUOTE_NONE))
    pairs = []
    for number, row in enumerate(rows, start=2):
        if len(row) != 4 or row[3] not in ("0", "1"):
            raise ValueError(
                f"{path}: data row {number}: expected category, reference, "
                f"prediction, 0/1; got {row!r}"
            )
        pairs.append(JudgedPair(row[0], row[1], row[2], row[3] == "1"))
    return pairs


def measure(
    pairs: Iterable[JudgedPair], matcher: Callable[[str, str], bool]
) -> tuple[dict[str, Agreement], Agreement, list[tuple[JudgedPair, bool]]]:
    """Agreement per category and overall, and the pairs the matcher got wrong.

    Args:
        pairs: judged pairs.
        matcher: ``(reference, prediction) -> bool``.

    Returns:
        ``(per category, overall, [(pair, verdict) for each disagreement])``.

    Example:
        >>> pairs = [JudgedPair("x", "a", "a", True), JudgedPair("x", "a", "b", False)]
        >>> per_category, overall, errors = measure(pairs, lambda r, p: True)
        >>> overall.agreement, overall.false_accept_rate, len(errors)
        (0.5, 1.0, 1)
    """
    tallies: dict[str, list[int]] = {}
    errors: list[tuple[JudgedPair, bool]] = []
    for pair in pairs:
        verdict = bool(matcher(pair.reference, pair.prediction))
        tally = tallies.setdefault(pair.category, [0, 0, 0, 0, 0])
        tally[0] += 1
        tally[1] += verdict == pair.expected
        tally[2] += not pair.expected
        tally[3] += verdict and not pair.expected
        tally[4] += pair.expected and not verdict
        if verdict != pair.expected:
            errors.append((pair, verdict))
    per_category = {name: Agreement(*tally) for name, tally in sorted(tallies.items())}
    overall = Agreement(*(sum(t[i] for t in tallies.values()) for i in range(5)))
    return per_category, overall, errors


def main(argv: list[str] | None = None) -> int:
    """Print the agreement table (and optionally every disagreement)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument("--show-errors", action="store_true", help="list every disagreement")
    args = parser.parse_args(argv)

    import novabench
    from novabench.metrics.diagnosis import LexiconDiagnosisMatcher

    matcher = LexiconDiagnosisMatcher()
    per_category, overall, errors = measure(read_pairs(args.pairs), matcher)
    print(f"matcher: {matcher.description}")
    print(f"package: {Path(novabench.__file__).parent}")
    print(f"{'category':<14}{'pairs':>6}{'agree':>9}{'false acc':>11}{'false rej':>11}")
    for name, result in [*per_category.items(), ("OVERALL", overall)]:
        print(
            f"{name:<14}{result.n_pairs:>6}{result.agreement:>9.1%}"
            f"{result.n_false_accepts:>5}/{result.n_different:<5}{result.n_false_rejects:>7}"
        )
    print(
        f"false-accept rate (different diagnoses accepted): {overall.false_accept_rate:.2%} "
        f"({overall.n_false_accepts}/{overall.n_different})"
    )
    if args.show_errors:
        for pair, verdict in errors:
            print(
                f"  [{pair.category}] expected {int(pair.expected)} got {int(verdict)}: "
                f"{pair.reference!r} vs {pair.prediction!r}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
