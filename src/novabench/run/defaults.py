"""Settings of the runner and the parsers that ``nova``'s argument parser needs.

Kept apart from :mod:`novabench.run.parsers` and :mod:`novabench.run.backends`, so that
building the command line (``nova --help``, any command) imports neither.
"""

from __future__ import annotations

__all__ = ["CONVENTIONS", "DEFAULT_MAX_CONCURRENCY"]

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
)

#: Requests in flight by default: enough to keep a vLLM/TGI server's continuous batch busy.
DEFAULT_MAX_CONCURRENCY = 16
