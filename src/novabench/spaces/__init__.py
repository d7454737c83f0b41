"""The logic behind novabench's two Gradio Spaces and the command that builds them.

``spaces/nova_explorer/app.py`` and ``metrics/nova_metric/app.py`` are thin faces over
:mod:`novabench.spaces.explorer` and :mod:`novabench.spaces.metric`; ``nova space build``
(:mod:`novabench.spaces.build`) writes either one as a complete Space repository.
Gradio is imported only when an interface is built, so the pure helpers here (drawing,
tables, parsing uploads) work and are tested without it.
"""

from __future__ import annotations

#: The Spaces ``nova space build`` writes (kept here so the command line imports no builder).
SPACE_KINDS: tuple[str, ...] = ("explorer", "metric")
