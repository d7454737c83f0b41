"""Whether two trees wrote the same reports: every JSON file of two folders, field by field.

A speed change must leave every number as it was (or, where a change of summation order is
allowed, within a stated bound): run the same commands with the old tree and the new one
into two folders (``nova evaluate --out``, ``nova compare --out``, ``scripts/demo.py
--out``), then compare them here. Numbers are compared with ``==`` (NaN equal to NaN);
fields that differ between any two runs (timestamps, the build's source hash, run ids,
file digests that pin them) are left out and listed.

Usage:
    python scripts/compare_reports.py OLD_DIR NEW_DIR [--tolerance 0]

Prints one line per JSON file (leaves compared, numbers that differ and their largest
absolute difference, other differences) and the first few differences; exits 1 when any
number differs by more than ``--tolerance`` or anything else differs, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Keys whose values differ between any two runs of the same scoring: left out.
VOLATILE_KEYS = frozenset({"source_sha256", "updated_at", "created_at", "sha256", "run_id"})


@dataclass
class Differences:
    """What :func:`compare_values` found: leaves compared, numbers apart, other differences."""

    leaves: int = 0
    numbers: list[tuple[str, float, float]] = field(default_factory=list)
    others: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def largest(self) -> float:
        """The largest absolute difference of the numbers that differ (0.0 for none)."""
        return max((abs(a - b) for _, a, b in self.numbers), default=0.0)


def compare_values(
    old: Any, new: Any, path: str = "", found: Differences | None = None
) -> Differences:
    """Every leaf of two JSON values, compared: numbers with ``==``, the rest as text.

    Args:
        old: the old tree's value (parsed JSON).
        new: the new tree's value.
        path: where these values sit (for the listing).
        found: differences so far (a new record when None).

    Returns:
        The differences, :data:`VOLATILE_KEYS` left out.

    Example:
        >>> found = compare_values({"ci": [0.1, float("nan")], "updated_at": "a", "n": 3},
        ...                        {"ci": [0.1 + 1e-16, float("nan")], "updated_at": "b", "n": 3})
        >>> found.leaves, found.numbers, found.others
        (3, [('.ci[0]', 0.1, 0.1000000000000001)], [])
        >>> compare_values({"a": 1}, {"b": 1}).others
        [('', "keys ['a']", "keys ['b']")]
    """
    found = Differences() if found is None else found
    if isinstance(old, dict) and isinstance(new, dict):
        kept_old = {k: v for k, v in old.items() if k not in VOLATILE_KEYS}
        kept_new = {k: v for k, v in new.items() if k not in VOLATILE_KEYS}
        if kept_old.keys() != kept_new.keys():
            only_old, only_new = (
                sorted(kept_old.keys() - kept_new),
                sorted(kept_new.keys() - kept_old),
            )
            found.others.append((path, f"keys {only_old}", f"keys {only_new}"))
            return found
        for key in kept_old:
            compare_values(kept_old[key], kept_new[key], f"{path}.{key}", found)
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            found.others.append((path, f"{len(old)} entries", f"{len(new)} entries"))
            return found
        for index, (a, b) in enumerate(zip(old, new)):
            compare_values(a, b, f"{path}[{index}]", found)
    else:
        found.leaves += 1
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (old, new))
        if numbers:
            both_nan = (
                isinstance(old, float)
                and isinstance(new, float)
                and math.isnan(old)
                and math.isnan(new)
            )
            if old != new and not both_nan:
                found.numbers.append((path, float(old), float(new)))
        elif old != new:
            found.others.append((path, repr(old)[:80], repr(new)[:80]))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the old tree's output folder")
    parser.add_argument("new", type=Path, help="the new tree's output folder")
    parser.add_argument(
        "--tolerance", type=float, default=0.0, help="largest absolute difference allowed"
    )
    args = parser.parse_args(argv)
    same = True
    for old_file in sorted(args.old.rglob("*.json")):
        relative = old_file.relative_to(args.old)
        new_file = args.new / relative
        if not new_file.is_file():
            print(f"{relative}: missing in {args.new}")
            same = False
            continue
        found = compare_values(json.loads(old_file.read_text()), json.loads(new_file.read_text()))
        print(
            f"{relative}: {found.leaves} leaves, {len(found.numbers)} numbers differ (largest "
            f"absolute difference {found.largest:.3g}), {len(found.others)} other differences"
        )
        for difference in (found.numbers + found.others)[:5]:  # type: ignore[operator]
            print("    ", *difference)
        if found.others or found.largest > args.tolerance:
            same = False
    print(f"volatile fields left out: {', '.join(sorted(VOLATILE_KEYS))}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
