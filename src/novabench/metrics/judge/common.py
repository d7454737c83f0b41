"""What every judge shares: its error type, counters and setting checks."""

from __future__ import annotations

from dataclasses import dataclass

from novabench.errors import NovaError


class JudgeError(NovaError):
    """The judge could not give a verdict (unreadable replies, HTTP errors after retries).

    Args:
        message: what went wrong.
        case: where the pair comes from, e.g. ``"example 3 (case0004), prediction 2"``.
        reference: the reference diagnosis of the pair.
        candidate: the candidate diagnosis of the pair.
        reply: the last reply text or error body, if any.

    Example:
        >>> str(JudgeError("unreadable reply", case="example 0, prediction 1",
        ...                reference="Glioma", candidate="GBM"))
        "example 0, prediction 1 (reference 'Glioma', candidate 'GBM'): unreadable reply"
    """

    item_attribute = "case"

    def __init__(
        self,
        message: str,
        *,
        case: str | None = None,
        reference: str | None = None,
        candidate: str | None = None,
        reply: str | None = None,
    ) -> None:
        self.message = message
        self.case = case
        self.reference = reference
        self.candidate = candidate
        self.reply = reply
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.case or "pair"
        if self.reference is not None or self.candidate is not None:
            where += f" (reference {self.reference!r}, candidate {self.candidate!r})"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class JudgeStats:
    """Counters of a judge since it was created.

    Attributes:
        calls: verdicts asked for (single calls plus pairs of batches).
        cache_hits: verdicts read from the cache.
        cache_misses: verdicts that had to be judged (by the model or the wrapped matcher).
        cache_rejected: cache entries found but not used (another request's, an answer its
            stored reply does not give, no stored reply, not a readable regular file...);
            each was judged again and its entry replaced.
        requests: HTTP requests sent, retries included (0 for wrapped callables).
        retries: requests that were repeats after a failure.
        failures: verdicts that could not be obtained (a :class:`JudgeError` was raised).
    """

    calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    cache_rejected: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0


@dataclass(frozen=True)
class JudgeBatchSummary:
    """What one ``match_many`` batch cost.

    Attributes:
        n_pairs: pairs asked for.
        cache_hits: verdicts read from the cache.
        judged: verdicts judged anew (cache misses).
        requests: HTTP requests sent for this batch, retries included.
    """

    n_pairs: int
    cache_hits: int
    judged: int
    requests: int


@dataclass(frozen=True)
class CaseJudgeStats:
    """Counters of a case judge since it was created.

    Attributes:
        calls: case verdicts asked for.
        cache_hits: verdicts read from the cache.
        cache_rejected: cache entries found but not used (see :class:`JudgeStats`).
        requests: HTTP requests sent, retries included.
        retries: requests that repeated a failed or unreadable one.
        failures: cases that got no verdict (a :class:`JudgeError` was raised).
    """

    calls: int = 0
    cache_hits: int = 0
    cache_rejected: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0
