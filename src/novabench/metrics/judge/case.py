"""The protocol-mode case judge: one call per case decides its Top-1 and Top-5."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from novabench import checks
from novabench.errors import NovaInputError, for_caller
from novabench.metrics.judge.cache import case_verdict_cache_key
from novabench.metrics.judge.common import CaseJudgeStats, JudgeError
from novabench.metrics.judge.http import _HttpJudge
from novabench.metrics.judge.prompts import (
    CASE_JUDGE_PROMPT_VERSION,
    CASE_JUDGE_SYSTEM_PROMPT,
    _case_context,
    build_case_judge_messages,
)
from novabench.metrics.judge.verdicts import CaseVerdict, parse_case_verdict


def _check_context(context: Any, case: str | None) -> None:
    """A case context is a string or None."""
    checks.text(
        context, source="judge", record=case, field="context", allow_blank=True, none_as_empty=True
    )


def _stored_slot(verdict: CaseVerdict) -> dict[str, int | None]:
    """A case verdict as its cache entry stores it."""
    return {"matched_slot": verdict.matched_slot}


class OpenAICaseJudge(_HttpJudge):
    """The protocol-mode judge: one call per case decides its Top-1 and Top-5.

    The case's clinical context (its clinical history, when given), the reference and the
    whole ranked list go to the endpoint in one request (:func:`build_case_judge_messages`,
    prompt :data:`CASE_JUDGE_PROMPT_VERSION`); a None or blank context sends no context
    line. The reply names the first matching slot (:func:`parse_case_verdict`). HTTP retries
    follow :class:`novabench.client.ChatClient`; an unreadable or out-of-range verdict is
    asked again within the same budget of ``max_retries + 1`` attempts. Verdicts are cached
    on disk under a hash of (model, temperature, server, prompt version, reference,
    predictions, context), so a case judged without its history is judged again with it,
    and a verdict of one server is never served to another; an entry is used only when it
    answers exactly this request to this server and its slot is the one its stored raw
    reply gives (else it is counted in ``cache_rejected`` and asked again).

    Args:
        endpoint: a :class:`~novabench.metrics.judge.JudgeEndpoint` (the one signature all
            three OpenAI judges share), or its ``base_url`` followed by ``model`` and any
            of its fields as keywords (the older form, still accepted).
        model: the model name, in the older form only.
        **settings: :class:`~novabench.metrics.judge.JudgeEndpoint` fields, in the older
            form only.

    Raises:
        NovaInputError: an empty URL or model, or a non-positive timeout/worker count.

    Example:
        >>> judge = OpenAICaseJudge("http://localhost:8000", "Qwen2.5-72B-Instruct")
        >>> judge.endpoint, judge.prompt_version
        ('http://localhost:8000/v1/chat/completions', 'nova-case-judge-2')
        >>> len(judge.prompt_sha256)
        64
    """

    _IDENTITY_KIND = "openai-case"
    _PROMPT_VERSION = CASE_JUDGE_PROMPT_VERSION
    _DEFAULT_TIMEOUT = 30.0

    @property
    def prompt_sha256(self) -> str:
        """SHA-256 of the system prompt, for reports."""
        return hashlib.sha256(CASE_JUDGE_SYSTEM_PROMPT.encode("utf-8")).hexdigest()

    @property
    def description(self) -> str:
        """One line for reports (no API key)."""
        return (
            f"LLM case judge {self.model} at {self.endpoint} "
            f"(prompt {self.prompt_version}, sha256 {self.prompt_sha256[:12]})"
        )

    @property
    def stats(self) -> CaseJudgeStats:
        """A snapshot of the counters (see :class:`CaseJudgeStats`)."""
        with self._lock:
            return CaseJudgeStats(**self._counts)

    def __repr__(self) -> str:
        return f"OpenAICaseJudge({self.endpoint!r}, {self.model!r}, cache_dir={self.cache_dir!r})"

    def judge_case(
        self,
        reference: str,
        predictions: Sequence[str],
        *,
        case: str | None = None,
        context: str | None = None,
    ) -> CaseVerdict:
        """Top-1 and Top-5 of one case from one verdict (the cache first).

        Args:
            reference: the final diagnosis.
            predictions: the ranked predictions (1 to 5 strings).
            case: where the case comes from, for error messages.
            context: the case's clinical history, sent with the case; None or blank: none.

        Returns:
            The case verdict.

        Raises:
            JudgeError: no readable verdict within the retry budget (counted in ``failures``).
            NovaInputError: a reference, prediction or context that is not a string, or a
                list that is empty or longer than five.
        """
        items = self._check_case(reference, predictions, case)
        _check_context(context, case)
        context = _case_context(context)
        self._count("calls")
        key = case_verdict_cache_key(self.identity, self.prompt_version, reference, items, context)
        request = {
            "judge": self.identity,
            "prompt_version": self.prompt_version,
            "prompt_sha256": self.prompt_sha256,
            "reference": reference,
            "predictions": items,
            "context": context,
        }

        def read(text: str) -> CaseVerdict | None:
            return parse_case_verdict(text, len(items))

        if self._cache is not None:
            cached = self._cache.find(key, request, read, _stored_slot, self._count)
            if cached is not None:
                return cached
        try:
            verdict, reply = self._ask(reference, items, case, context)
        except JudgeError:
            self._count("failures")
            raise
        if self._cache is not None:
            self._cache.put(key, request, reply, verdict, _stored_slot(verdict))
        return verdict

    def judge_cases(
        self,
        cases: Sequence[tuple[str, Sequence[str]]],
        *,
        labels: Sequence[str] | None = None,
        contexts: Sequence[str | None] | None = None,
    ) -> list[CaseVerdict]:
        """Judge many cases, at most ``max_workers`` at once, keeping their order.

        Args:
            cases: ``(reference, predictions)`` per case.
            labels: where each case comes from, for error messages.
            contexts: each case's clinical history (None or blank: none); None: no context
                for any case.

        Returns:
            One verdict per case.

        Raises:
            JudgeError: a case got no verdict (the first such error is raised).
            NovaInputError: labels or contexts of a different length, or a malformed case.
        """
        batch = list(cases)
        for name, given in (("labels", labels), ("contexts", contexts)):
            if given is not None and len(given) != len(batch):
                raise NovaInputError(
                    f"{len(given)} {name} for {len(batch)} cases", source="judge", field=name
                )
        names = list(labels) if labels is not None else [f"case {i}" for i in range(len(batch))]
        histories = list(contexts) if contexts is not None else [None] * len(batch)
        for (reference, predictions), name, context in zip(batch, names, histories):
            self._check_case(reference, predictions, name)
            _check_context(context, name)
        if not batch:
            return []
        judge_case = for_caller(self.judge_case)  # its warnings name the user's line
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(batch))) as pool:
            futures = [
                pool.submit(judge_case, reference, predictions, case=name, context=context)
                for (reference, predictions), name, context in zip(batch, names, histories)
            ]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _check_case(self, reference: Any, predictions: Any, case: str | None) -> list[str]:
        checks.text(reference, source="judge", record=case, field="reference", allow_blank=True)
        if isinstance(predictions, str) or not isinstance(predictions, Sequence):
            raise NovaInputError(
                "expected a list of predictions", source="judge", record=case, field="predictions"
            )
        items = list(predictions)
        if not 1 <= len(items) <= 5 or not all(isinstance(item, str) for item in items):
            raise NovaInputError(
                f"expected 1 to 5 strings, got {len(items)} items",
                source="judge",
                record=case,
                field="predictions",
            )
        return items

    def _ask(
        self, reference: str, items: list[str], case: str | None, context: str | None
    ) -> tuple[CaseVerdict, str]:
        return self._ask_until_read(
            build_case_judge_messages(reference, items, context),
            lambda text: parse_case_verdict(text, len(items)),
            what="verdict",
            unreadable="unreadable or out-of-range reply",
            error_fields={
                "case": case,
                "reference": reference,
                "candidate": f"{len(items)} predictions",
            },
        )
