"""LLM-judge matchers for the diagnosis metric.

The paper decides whether a predicted diagnosis matches the final diagnosis with an LLM
judge that accepts synonyms and differences in specificity but not a different disease.
Any callable ``(reference, candidate) -> bool`` is a matcher for
:func:`novabench.metrics.diagnosis.score_diagnosis`; this module adds:

- :class:`CachedJudge`: wraps any matcher with an on-disk cache of verdicts, so a second
  scoring run (or a rerun after a crash) costs no model call;
- :class:`OpenAIChatJudge`: a client for OpenAI-compatible ``/v1/chat/completions``
  endpoints (vLLM, TGI, llama.cpp server, hosted APIs) with our judge prompt, retries with
  exponential backoff, strict reply parsing, a cache and bounded concurrency.

Both expose ``match_many``: ``score_diagnosis(..., matcher=judge)`` sends every distinct
pair in one batch, judged by at most ``max_workers`` threads; ``judge.last_batch`` then
says how many verdicts came from the cache.

Example:
    >>> import tempfile
    >>> from novabench.metrics.diagnosis import score_diagnosis
    >>> def exact(reference, candidate):
    ...     return reference.lower() == candidate.lower()
    >>> judge = CachedJudge(exact, tempfile.mkdtemp(), identity="exact-v1")
    >>> score_diagnosis([["glioma"], ["abscess"]], ["Glioma", "Lymphoma"], matcher=judge)["top1-pairwise"]
    0.5
    >>> judge.last_batch.cache_hits, judge.last_batch.judged
    (0, 2)
"""

from novabench.metrics.judge.cache import (
    CACHE_ENV,
    cache_endpoint,
    case_verdict_cache_key,
    default_cache_dir,
    shown_cache_folder,
    verdict_cache_key,
)
from novabench.metrics.judge.case import OpenAICaseJudge
from novabench.metrics.judge.common import CaseJudgeStats, JudgeBatchSummary, JudgeError, JudgeStats
from novabench.metrics.judge.http import JudgeEndpoint
from novabench.metrics.judge.pair import CachedJudge, OpenAIChatJudge
from novabench.metrics.judge.prompts import (
    CASE_JUDGE_PROMPT_VERSION,
    CASE_JUDGE_SYSTEM_PROMPT,
    JUDGE_PROMPT_VERSION,
    JUDGE_SYSTEM_PROMPT,
    build_case_judge_messages,
    build_judge_messages,
)
from novabench.metrics.judge.verdicts import CaseVerdict, parse_case_verdict, parse_judge_verdict

__all__ = [
    "CASE_JUDGE_PROMPT_VERSION",
    "CASE_JUDGE_SYSTEM_PROMPT",
    "CACHE_ENV",
    "CaseJudgeStats",
    "CaseVerdict",
    "JUDGE_PROMPT_VERSION",
    "JUDGE_SYSTEM_PROMPT",
    "CachedJudge",
    "JudgeBatchSummary",
    "JudgeEndpoint",
    "JudgeError",
    "JudgeStats",
    "OpenAICaseJudge",
    "OpenAIChatJudge",
    "build_case_judge_messages",
    "cache_endpoint",
    "case_verdict_cache_key",
    "build_judge_messages",
    "default_cache_dir",
    "parse_case_verdict",
    "parse_judge_verdict",
    "shown_cache_folder",
    "verdict_cache_key",
]
