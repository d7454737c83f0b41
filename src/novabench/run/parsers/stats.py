"""Counting parse outcomes over many answers of one task: :class:`ParseStats`.

Nothing here names a task: a parser result says which task it answers (``TASK``), which
of its counts are summed (``COUNTED``) and which values are tallied (``TALLIED``); the
failure statuses come from :mod:`novabench.registry`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, get_args

from novabench.errors import NovaInputError
from novabench.registry import TASKS
from novabench.run.parsers.boxes import ParsedBoxes
from novabench.run.parsers.captions import ParsedCaption
from novabench.run.parsers.diagnoses import ParsedDiagnoses

#: Statuses meaning "nothing usable was read from the answer", over every task of the registry.
FAILURE_STATUSES: frozenset[str] = frozenset().union(
    *(spec.failure_statuses for spec in TASKS.values())
)

#: A result of any of the parsers.
Parsed = ParsedBoxes | ParsedDiagnoses | ParsedCaption

_RESULT_TYPES: tuple[type[Parsed], ...] = get_args(Parsed)
_RESULT_TYPE_OF_TASK: dict[str, type[Parsed]] = {kind.TASK: kind for kind in _RESULT_TYPES}


@dataclass
class ParseStats:
    """Counts of parse outcomes over many answers of one task.

    Add parsed results one by one (:meth:`add`) or in bulk (:meth:`from_results`);
    :meth:`as_dict` gives the numbers for a report. Mixing tasks is refused.
    Beyond the statuses, each result's ``COUNTED`` attributes are summed into the fields
    of the same name and its ``TALLIED`` attributes counted per value in ``<name>_counts``
    (for localisation: boxes, clipped, swapped and dropped boxes, conventions used).

    Example:
        >>> from novabench.run.parsers import parse_localization
        >>> stats = ParseStats.from_results(
        ...     parse_localization(answer, image_size=(480, 480))
        ...     for answer in ["lesion: [0, 0, 500, 500]", "no target", "", "???"])
        >>> stats.status_counts
        {'ok': 1, 'no_target': 1, 'empty': 1, 'unparseable': 1}
        >>> stats.n_answers, stats.n_failed, stats.failure_rate
        (4, 2, 0.5)
    """

    task: str | None = None
    n_answers: int = 0
    status_counts: dict[str, int] = field(default_factory=dict)
    convention_counts: dict[str, int] = field(default_factory=dict)
    n_boxes: int = 0
    n_degenerate_dropped: int = 0
    n_out_of_range: int = 0
    n_swapped: int = 0
    n_order_from_keys: int = 0
    n_diagnoses: int = 0
    n_duplicates_removed: int = 0

    def add(self, parsed: Parsed) -> None:
        """Count one parsed answer.

        Args:
            parsed: a :class:`ParsedBoxes`, :class:`ParsedDiagnoses` or :class:`ParsedCaption`.

        Raises:
            NovaInputError: the result is of another task than those counted so far.

        Example:
            >>> from novabench.run.parsers import parse_caption
            >>> stats = ParseStats()
            >>> stats.add(parse_caption("Axial T1."))
            >>> stats.task, stats.status_counts
            ('captioning', {'ok': 1})
        """
        if not isinstance(parsed, _RESULT_TYPES):
            raise NovaInputError(f"ParseStats counts parser results, got {type(parsed).__name__}")
        if self.task is None:
            self.task = parsed.TASK
        elif parsed.TASK != self.task:
            raise NovaInputError(
                f"ParseStats counts {self.task} answers, got a {parsed.TASK} result"
            )
        self.n_answers += 1
        self.status_counts[parsed.status] = self.status_counts.get(parsed.status, 0) + 1
        for name in parsed.COUNTED:
            setattr(self, name, getattr(self, name) + getattr(parsed, name))
        for name in parsed.TALLIED:
            value = getattr(parsed, name)
            if value is not None:
                counts: dict[str, int] = getattr(self, f"{name}_counts")
                counts[value] = counts.get(value, 0) + 1

    @classmethod
    def from_results(cls, results: Iterable[Parsed]) -> ParseStats:
        """Count every result of an iterable.

        Example:
            >>> from novabench.run.parsers import parse_diagnoses
            >>> ParseStats.from_results([parse_diagnoses("1. A\\n2. B")]).status_counts
            {'fallback_list': 1}
        """
        stats = cls()
        for parsed in results:
            stats.add(parsed)
        return stats

    @property
    def n_failed(self) -> int:
        """Answers with a status in :data:`FAILURE_STATUSES` (nothing usable read).

        Example:
            >>> ParseStats(n_answers=2, status_counts={"ok": 1, "empty": 1}).n_failed
            1
        """
        spec = TASKS.get(self.task or "")
        failures = spec.failure_statuses if spec is not None else FAILURE_STATUSES
        return sum(count for status, count in self.status_counts.items() if status in failures)

    @property
    def failure_rate(self) -> float:
        """``n_failed / n_answers`` (0.0 when nothing was counted).

        Example:
            >>> ParseStats().failure_rate
            0.0
        """
        return self.n_failed / self.n_answers if self.n_answers else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counts as plain JSON, fractions in [0, 1].

        Example:
            >>> from novabench.run.parsers import parse_caption
            >>> ParseStats.from_results([parse_caption("")]).as_dict()["n_failed"]
            1
        """
        result: dict[str, Any] = {
            "task": self.task,
            "n_answers": self.n_answers,
            "status_counts": dict(self.status_counts),
            "n_failed": self.n_failed,
            "failure_rate": self.failure_rate,
        }
        kind = _RESULT_TYPE_OF_TASK.get(self.task or "")
        if kind is not None:
            result.update(
                {f"{name}_counts": dict(getattr(self, f"{name}_counts")) for name in kind.TALLIED}
            )
            result.update({name: getattr(self, name) for name in kind.COUNTED})
        return result

    def summary(self) -> str:
        """One line for a terminal or a report, statuses by decreasing count.

        Example:
            >>> from novabench.run.parsers import parse_caption
            >>> ParseStats.from_results([parse_caption("x"), parse_caption("")]).summary()
            'captioning: 2 answers, 1 unusable (50.0%); ok 1, empty 1'
        """
        ordered = Counter(self.status_counts).most_common()
        parts = ", ".join(f"{status} {count}" for status, count in ordered)
        return (
            f"{self.task or 'no task'}: {self.n_answers} answers, {self.n_failed} unusable "
            f"({100.0 * self.failure_rate:.1f}%); {parts}"
        )
