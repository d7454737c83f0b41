"""Settings of the runner, the parsers and the baselines that ``nova``'s argument parser needs.

Kept apart from :mod:`novabench.run.parsers`, :mod:`novabench.run.backends` and
:mod:`novabench.run.baselines`, so that building the command line (``nova --help``, any
command) imports none of them, nor numpy through them.

Example:
    >>> sorted(BASELINES)
    ['floor', 'lexicon-ranking', 'outlier-detector', 'template-caption']
"""

from __future__ import annotations

from novabench.registry import TASK_NAMES
from novabench.tasks import behaviour

__all__ = ["BASELINES", "CONVENTIONS", "CUSTOM_PROMPT", "DEFAULT_MAX_CONCURRENCY", "PRESET_NAMES"]

#: Conventions accepted by :func:`novabench.run.parsers.parse_localization` (``"auto"``
#: decides per answer).
CONVENTIONS: tuple[str, ...] = (
    "auto",
    "protocol",
    "qwen",
    "xyxy_norm1",
    "xyxy_norm1000",
    "xyxy_pixel",
    "xywh_pixel",
    "yxyx_norm1",
)

#: What a run's manifest says of its localisation prompt when it records one the toolkit does
#: not know (``--prompt-file``): the prompt is the user's, so the order it asked for is unknown
#: (``parse_localization(prompt_convention=CUSTOM_PROMPT)``).
CUSTOM_PROMPT = "custom"

#: The presets' names (``novabench.run.presets.PRESETS`` holds them; a test keeps both equal).
PRESET_NAMES: tuple[str, ...] = (
    "nova-protocol",
    "qwen2.5-vl",
    "qwen2-vl",
    "qwen3-vl",
    "gemini",
    "gpt-4o",
    "llava",
)

#: Requests in flight by default: enough to keep a vLLM/TGI server's continuous batch busy.
DEFAULT_MAX_CONCURRENCY = 16

#: Each baseline's name and the tasks it answers (each task's own, named by its module:
#: ``TaskBehaviour.baseline_name``); ``run.baselines`` builds them.
BASELINES: dict[str, tuple[str, ...]] = {
    **{behaviour(task).baseline_name: (task,) for task in TASK_NAMES},
    "floor": TASK_NAMES,  # one baseline per task, together
}
