"""The NOVA report: scoring predictions against a release, and showing the result.

- :mod:`novabench.report.scoring`: predictions + release -> results with bootstrap CIs
  (:func:`evaluate_predictions`, :func:`compare_predictions`, :class:`ScoringOptions`).
- :mod:`novabench.report.render`: the terminal table, Markdown and the JSON file.
- :mod:`novabench.report.items`: per-image and per-case tables (:func:`build_item_tables`).
- :mod:`novabench.report.breakdowns`, :mod:`novabench.report.human_reference`: the report's
  per-group scores and the raters' scores.
- :mod:`novabench.report.plots`, :mod:`novabench.report.gallery`, :mod:`novabench.report.html`:
  plots, box overlays and the self-contained HTML page (need the ``report`` extra:
  matplotlib, pandas; imported on use, not here).
- :mod:`novabench.report.leaderboard`: several reports on one release, ranked with ties.

Example:
    >>> from novabench.report import ScoringOptions, render_table
    >>> ScoringOptions(tasks=["caption"]).tasks
    ('captioning',)
"""

from novabench.report.items import ItemTables, build_item_tables, item_tables
from novabench.report.render import (
    HEADLINE_KEYS,
    TASK_ORDER,
    render_comparison,
    render_markdown,
    render_table,
    write_report,
)
from novabench.report.scoring import (
    ScoredPredictions,
    ScoringOptions,
    compare_predictions,
    evaluate_predictions,
    score_predictions,
)

__all__ = [
    "HEADLINE_KEYS",
    "TASK_ORDER",
    "ItemTables",
    "ScoredPredictions",
    "ScoringOptions",
    "build_item_tables",
    "compare_predictions",
    "evaluate_predictions",
    "item_tables",
    "render_comparison",
    "render_markdown",
    "render_table",
    "score_predictions",
    "write_report",
]
