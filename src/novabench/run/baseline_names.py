"""The floor baselines by name and the tasks each answers (no numpy: the CLI's help reads it).

Example:
    >>> sorted(BASELINES)
    ['floor', 'lexicon-ranking', 'outlier-detector', 'template-caption']
"""

from __future__ import annotations

from novabench.registry import TASK_NAMES

__all__ = ["BASELINES"]

#: Each baseline's name and the tasks it answers; ``run.baselines`` builds them.
BASELINES: dict[str, tuple[str, ...]] = {
    "outlier-detector": ("localization",),
    "template-caption": ("captioning",),
    "lexicon-ranking": ("diagnosis",),
    "floor": TASK_NAMES,  # one baseline per task, together
}
