"""Former home of the report, kept so ``from novabench.run.report import ...`` still works.

The report lives in :mod:`novabench.report` (scoring in ``report/scoring.py``, rendering in
``report/render.py``); new code should import from there.

Example:
    >>> from novabench.run.report import evaluate_predictions
    >>> evaluate_predictions.__module__
    'novabench.report.scoring'
"""

from novabench.report import (
    HEADLINE_KEYS,
    TASK_ORDER,
    ScoringOptions,
    compare_predictions,
    evaluate_predictions,
    render_comparison,
    render_markdown,
    render_table,
    write_report,
)

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
