"""Recall and precision of the caption keyword extractor on our hand-written gold set, per category.

The gold set (``tests/metrics/keyword_gold.txt``) holds caption fragments written for
novabench with the keywords a careful neuroradiologist would extract, by category (named
signs, spectroscopy/perfusion, small anatomy, developmental findings, negation,
sequence/plane, plain findings). For each category the counts are pooled over its
captions: recall = TP / (TP + FN), precision = TP / (TP + FP), where a keyword is a
modality keyword (``m:<term>``) or a clinical one (negated as ``no:<term>``);
``label`` is the share of captions whose normal/abnormal/undecided label agrees.

It uses whatever ``novabench`` is first on the path, so the same script measures an
older checkout: ``PYTHONPATH=/path/to/old/src python scripts/measure_keywords.py``.

Usage:
    PYTHONPATH=src python scripts/measure_keywords.py [--gold FILE] [--json] [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GOLD = Path(__file__).resolve().parents[1] / "tests" / "metrics" / "keyword_gold.txt"
LABELS = {"abnormal": True, "normal": False, "undecided": None}


@dataclass(frozen=True)
class GoldCaption:
    """One gold caption: its category, text, expected keywords and label."""

    category: str
    caption: str
    keywords: frozenset[str]
    abnormal: bool | None


def parse_gold(text: str, source: str = "gold") -> list[GoldCaption]:
    """Read the gold format: ``## category`` headers, then ``caption | kw; kw | label`` lines.

    Args:
        text: the file's text (``#`` lines are comments).
        source: name used in error messages.

    Returns:
        The gold captions in file order.

    Raises:
        ValueError: a malformed line, naming it.

    Example:
        >>> gold = parse_gold("## signs\\nDural tail. | dural tail sign; m:t1w | abnormal\\n")
        >>> gold[0].category, sorted(gold[0].keywords), gold[0].abnormal
        ('signs', ['dural tail sign', 'm:t1w'], True)
    """
    captions: list[GoldCaption] = []
    category = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("## "):
            category = stripped[3:].strip()
            continue
        if not stripped or stripped.startswith("#"):
            continue
        parts = [part.strip() for part in stripped.split("|")]
        if len(parts) != 3 or not category or parts[2] not in LABELS or not parts[0]:
            raise ValueError(
                f"{source}:{number}: expected 'caption | keywords | label' under a '## category'"
            )
        keywords = frozenset(word.strip() for word in parts[1].split(";") if word.strip())
        captions.append(GoldCaption(category, parts[0], keywords, LABELS[parts[2]]))
    return captions


def load_gold(path: Path = GOLD) -> list[GoldCaption]:
    """The gold captions of ``path`` (our bundled set by default).

    Example:
        >>> len(load_gold()) >= 150
        True
    """
    return parse_gold(path.read_text(encoding="utf-8"), source=str(path))


def extracted_keywords(keywords: Any) -> frozenset[str]:
    """A :class:`CaptionKeywords` as one set: ``m:<term>`` for modality, clinical terms as they are.

    Example:
        >>> from novabench.metrics.keywords import CaptionKeywords
        >>> keywords = CaptionKeywords(frozenset({"t1w"}), frozenset({"cyst"}), True)
        >>> sorted(extracted_keywords(keywords))
        ['cyst', 'm:t1w']
    """
    return frozenset({f"m:{term}" for term in keywords.modality} | set(keywords.clinical))


def measure(gold: list[GoldCaption], extract: Callable[[str], Any]) -> dict[str, dict[str, float]]:
    """Pooled recall, precision and label agreement per category (and ``"all"``).

    Args:
        gold: gold captions.
        extract: a keyword extractor (caption -> CaptionKeywords).

    Returns:
        category -> ``{"n", "recall", "precision", "label"}``.

    Example:
        >>> from novabench.metrics.keywords import CaptionKeywords
        >>> gold = parse_gold("## a\\nx | cyst; pons | abnormal\\n")
        >>> fake = lambda text: CaptionKeywords(frozenset(), frozenset({"cyst", "left"}), True)
        >>> measure(gold, fake)["a"]
        {'n': 1, 'recall': 0.5, 'precision': 0.5, 'label': 1.0}
    """
    totals: dict[str, list[int]] = {}
    for item in gold:
        keywords = extract(item.caption)
        found = extracted_keywords(keywords)
        row = [
            len(found & item.keywords),
            len(found - item.keywords),
            len(item.keywords - found),
            int(keywords.abnormal is item.abnormal),
            1,
        ]
        for category in (item.category, "all"):
            totals[category] = [a + b for a, b in zip(totals.get(category, [0] * 5), row)]
    result = {}
    for category in [name for name in totals if name != "all"] + ["all"]:
        tp, fp, fn, agree, n = totals[category]
        result[category] = {
            "n": n,
            "recall": tp / (tp + fn) if tp + fn else float("nan"),
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "label": agree / n,
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=GOLD, help="gold file (default: ours)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--misses", action="store_true", help="list each caption's misses and extras"
    )
    args = parser.parse_args(argv)

    import novabench
    from novabench.metrics.keywords import default_keyword_extractor

    gold = load_gold(args.gold)
    extract = default_keyword_extractor()
    scores = measure(gold, extract)
    if args.misses:
        for item in gold:
            keywords = extract(item.caption)
            found = extracted_keywords(keywords)
            if found != item.keywords or keywords.abnormal is not item.abnormal:
                print(
                    f"[{item.category}] {item.caption}\n"
                    f"    missed {sorted(item.keywords - found)}"
                    f"  extra {sorted(found - item.keywords)}"
                    f"  label {keywords.abnormal} (gold {item.abnormal})"
                )
    if args.json:
        print(json.dumps(scores, indent=1))
        return 0
    print(f"novabench from {Path(novabench.__file__).parent}")
    print(f"{'category':<24}{'n':>5}{'recall':>9}{'precision':>11}{'label':>8}")
    for category, values in scores.items():
        print(
            f"{category:<24}{values['n']:>5}{values['recall']:>9.3f}{values['precision']:>11.3f}"
            f"{values['label']:>8.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
