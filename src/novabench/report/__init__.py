"""The NOVA report: scoring predictions against a release, and showing the result.

- :mod:`novabench.report.scoring`: predictions + release -> results with bootstrap CIs
  (:func:`evaluate_predictions`, :func:`compare_predictions`, :class:`ScoringOptions`).
- :mod:`novabench.report.render`: the terminal table, Markdown and the JSON file.
- :mod:`novabench.report.plots`, :mod:`novabench.report.gallery`, :mod:`novabench.report.html`:
  plots, box overlays and the self-contained HTML page (need the ``report`` extra:
  matplotlib, pandas; imported on use, not here).
- :mod:`novabench.report.leaderboard`: several reports on one release, ranked with ties.

Example:
    >>> from novabench.report import ScoringOptions, render_table
    >>> ScoringOptions(tasks=["caption"]).tasks
    ('captioning',)
"""

from novabench.report.render import (
    HEADLINE_KEYS,
    TASK_ORDER,
    render_comparison,
    render_markdown,
    render_table,
    write_report,
)
from novabench.report.scoring import ScoringOptions, compare_predictions, evaluate_predictions

__all__ = [
    "HEADLINE_KEYS",
    "TASK_ORDER",
    "ScoringOptions",
    "compare_predictions",
    "evaluate_predictions",
    "render_comparison",
    "render_markdown",
    "render_table",
    "write_report",
]
