"""The LLM keyword judge: caption keywords extracted as the NOVA paper describes.

The paper's captioning keyword F1s come from an LLM that reads the reference and the
prediction *together* and lists their keywords in five groups (anatomy; imaging
characteristics; diseases or findings; negated findings, kept negated; sequence and
plane), with synonyms folded to one canonical, string-equal form and broader terms
preferred, plus a normal/abnormal label per caption. :class:`OpenAIKeywordJudge` follows
that procedure over an OpenAI-compatible endpoint, one request per caption pair, with our
own prompt (``novabench/resources/prompts/keyword_judge.txt``, version
:data:`KEYWORD_JUDGE_PROMPT_VERSION`, its SHA-256 in :attr:`OpenAIKeywordJudge.prompt_sha256`).

How a reply becomes keywords (:meth:`JudgedCaption.keywords`): every keyword is
normalised (:func:`normalize_keyword`: Unicode compatibility form, lower case, spaces
collapsed, surrounding punctuation removed); negated ones become ``"no:<term>"``; the
keywords in the paper's ten-term set :data:`~novabench.metrics.captioning.PAPER_MODALITY_TERMS`
(from whichever group) are the caption's modality keywords, the sequence/plane group too,
and everything else is clinical. So ``ModalityF1`` uses the ten-term keywords and
``ClinicalF1`` the rest, as the paper splits them; ``BinaryF1`` uses the LLM's labels.

Replies are checked strictly (:func:`parse_keyword_reply`): one JSON object with both
captions, all five groups as lists of strings and a label of ``"normal"`` or
``"abnormal"``; anything else is asked again within the retry budget and, if it stays
unreadable, counted as a failure. Results are cached on disk (the judge cache layout of
:mod:`novabench.metrics.judge`) under a hash of model, temperature, server
(:func:`~novabench.metrics.judge.cache_endpoint`), prompt version and hash, and the
caption pair, each entry with the raw reply its keywords are read from
again (an entry of another request, or whose keywords its reply does not give, is asked
again and counted in ``cache_rejected``); HTTP goes through the one client, :class:`novabench.client.ChatClient`.

Example:
    >>> judge = OpenAIKeywordJudge("http://localhost:8000", "Qwen2.5-72B-Instruct")
    >>> judge.endpoint, judge.prompt_version
    ('http://localhost:8000/v1/chat/completions', 'nova-keyword-judge-1')
    >>> pair = parse_keyword_reply(
    ...     '{"reference": {"anatomy": ["Thalamus"], "characteristics": [],'
    ...     ' "findings": ["infarct"],'
    ...     ' "negated": ["haemorrhage"], "sequence_plane": ["axial", "dwi"], "label": "abnormal"},'
    ...     ' "prediction": {"anatomy": [], "characteristics": [], "findings": [], "negated": [],'
    ...     ' "sequence_plane": ["axial"], "label": "normal"}}')
    >>> keywords = pair.reference.keywords()
    >>> sorted(keywords.modality), sorted(keywords.clinical), keywords.abnormal
    (['axial', 'dwi'], ['infarct', 'no:haemorrhage', 'thalamus'], True)
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any

from novabench import checks
from novabench.client import endpoint_problem
from novabench.errors import NovaInputError, for_caller
from novabench.metrics.judge.common import JudgeError
from novabench.metrics.judge.http import _HttpJudge
from novabench.metrics.keywords import NEGATED_PREFIX, CaptionKeywords

__all__ = [
    "KEYWORD_GROUPS",
    "KEYWORD_JUDGE_PROMPT_VERSION",
    "JudgedCaption",
    "JudgedPair",
    "KeywordJudgeStats",
    "OpenAIKeywordJudge",
    "build_keyword_judge_messages",
    "keyword_judge_prompt",
    "keyword_pair_cache_key",
    "normalize_keyword",
    "parse_keyword_reply",
]

KEYWORD_JUDGE_PROMPT_VERSION = "nova-keyword-judge-1"
#: The five keyword groups of the paper, as the reply names them.
KEYWORD_GROUPS: tuple[str, ...] = (
    "anatomy",
    "characteristics",
    "findings",
    "negated",
    "sequence_plane",
)
_LABELS = {"abnormal": True, "normal": False}
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_EDGE_PUNCTUATION = " \t.,;:!?\"'`()[]{}"


def keyword_judge_prompt() -> str:
    """The keyword judge's system prompt, read from the package's resources.

    Example:
        >>> "sequence_plane" in keyword_judge_prompt()
        True
    """
    resource = resources.files("novabench").joinpath("resources/prompts/keyword_judge.txt")
    return resource.read_text(encoding="utf-8").strip()


def normalize_keyword(text: str) -> str:
    """One keyword in its comparable form: NFKC, lower case, single spaces, no edge punctuation.

    Example:
        >>> normalize_keyword("  Left  Thalamus. ")
        'left thalamus'
    """
    folded = unicodedata.normalize("NFKC", text).lower()
    return _SPACES.sub(" ", folded).strip(_EDGE_PUNCTUATION)


class _NotAsked(Exception):
    """A queued pair not sent: another worker met an endpoint problem first."""


@dataclass(frozen=True)
class JudgedCaption:
    """The keyword groups and label the judge gave one caption (normalised).

    Attributes:
        anatomy: anatomy keywords.
        characteristics: imaging characteristics.
        findings: diseases and findings stated as present.
        negated: findings stated as absent (the absent thing, without a prefix).
        sequence_plane: sequences, weightings and planes.
        abnormal: True (abnormal), False (normal), None (no label: an empty caption).
    """

    anatomy: frozenset[str] = frozenset()
    characteristics: frozenset[str] = frozenset()
    findings: frozenset[str] = frozenset()
    negated: frozenset[str] = frozenset()
    sequence_plane: frozenset[str] = frozenset()
    abnormal: bool | None = None

    def keywords(self) -> CaptionKeywords:
        """The caption's keywords in the form the captioning metrics take.

        Negated keywords become ``"no:<term>"``. Keywords in the paper's ten-term set go to
        ``modality`` whichever group named them, with the whole sequence/plane group;
        the rest to ``clinical``. The captioning metrics then split ``modality`` once more
        (ten-term set for ``ModalityF1``, the rest for ``ClinicalF1``).

        Example:
            >>> caption = JudgedCaption(characteristics=frozenset({"t2w", "hyperintensity"}),
            ...                         sequence_plane=frozenset({"swi"}), abnormal=True)
            >>> sorted(caption.keywords().modality), sorted(caption.keywords().clinical)
            (['swi', 't2w'], ['hyperintensity'])
        """
        from novabench.metrics.captioning import PAPER_MODALITY_TERMS

        named = (
            self.anatomy
            | self.characteristics
            | self.findings
            | {NEGATED_PREFIX + term for term in self.negated}
        )
        return CaptionKeywords(
            modality=frozenset(self.sequence_plane | (named & PAPER_MODALITY_TERMS)),
            clinical=frozenset(named - PAPER_MODALITY_TERMS),
            abnormal=self.abnormal,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (sorted lists), as the cache stores it.

        Example:
            >>> JudgedCaption(findings=frozenset({"cyst"}), abnormal=True).to_dict()["findings"]
            ['cyst']
        """
        label = None if self.abnormal is None else ("abnormal" if self.abnormal else "normal")
        return {**{group: sorted(getattr(self, group)) for group in KEYWORD_GROUPS}, "label": label}


@dataclass(frozen=True)
class JudgedPair:
    """The judge's reading of one caption pair.

    Attributes:
        reference: the reference caption's keywords.
        prediction: the predicted caption's keywords.
    """

    reference: JudgedCaption
    prediction: JudgedCaption

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, as the cache stores it.

        Example:
            >>> pair = JudgedPair(JudgedCaption(), JudgedCaption())
            >>> pair.to_dict()["prediction"]["label"] is None
            True
        """
        return {"reference": self.reference.to_dict(), "prediction": self.prediction.to_dict()}


def _read_caption(value: Any, *, label_required: bool) -> JudgedCaption | None:
    if not isinstance(value, Mapping):
        return None
    groups: list[frozenset[str]] = []
    for group in KEYWORD_GROUPS:
        items = value.get(group)
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            return None
        groups.append(frozenset(filter(None, (normalize_keyword(item) for item in items))))
    label = value.get("label")
    abnormal: bool | None = None
    if label is not None or label_required:
        if not isinstance(label, str) or label.strip().lower() not in _LABELS:
            return None
        abnormal = _LABELS[label.strip().lower()]
    anatomy, characteristics, findings, negated, sequence_plane = groups
    return JudgedCaption(anatomy, characteristics, findings, negated, sequence_plane, abnormal)


def _json_objects(text: str) -> list[Any]:
    """Every top-level JSON object in ``text`` (nested objects are read whole)."""
    decoder = json.JSONDecoder()
    found = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            position = text.find("{", position + 1)
            continue
        found.append(value)
        position = text.find("{", end)
    return found


def parse_keyword_reply(text: str | None, *, blank_prediction: bool = False) -> JudgedPair | None:
    """Read a keyword judge reply: one JSON object with ``reference`` and ``prediction``.

    Reasoning blocks (``<think>...</think>``) and code fences are ignored. Each side must
    carry all five groups of :data:`KEYWORD_GROUPS` as lists of strings and a ``label`` of
    ``"normal"`` or ``"abnormal"`` (any case); keywords are normalised with
    :func:`normalize_keyword` and empty ones dropped. Several such objects must agree.
    Anything else (malformed JSON, a missing group or label, a group that is not a list
    of strings) is unreadable.

    Args:
        text: the reply content (``None`` for a missing content).
        blank_prediction: the prediction was blank: its side is not read (it may be
            anything or missing) and has no keywords and no label.

    Returns:
        The pair, or ``None`` when the reply cannot be read.

    Example:
        >>> side = '"anatomy": [], "characteristics": [], "findings": ["Cyst"], "negated": [], '
        >>> reply = ('```json\\n{"reference": {' + side
        ...          + '"sequence_plane": [], "label": "Abnormal"}, "prediction": {' + side
        ...          + '"sequence_plane": [], "label": "abnormal"}}\\n```')
        >>> parse_keyword_reply(reply).prediction.findings
        frozenset({'cyst'})
        >>> parse_keyword_reply(reply.replace('"findings": ["Cyst"], ', '')) is None
        True
        >>> parse_keyword_reply('{"reference": {') is None
        True
    """
    if not isinstance(text, str):
        return None
    found: set[JudgedPair] = set()
    for value in _json_objects(_THINKING.sub(" ", text)):
        if not (isinstance(value, dict) and "reference" in value):
            continue
        if not blank_prediction and "prediction" not in value:
            return None
        reference = _read_caption(value["reference"], label_required=True)
        prediction = (
            JudgedCaption()
            if blank_prediction
            else _read_caption(value["prediction"], label_required=True)
        )
        if reference is None or prediction is None:
            return None
        found.add(JudgedPair(reference, prediction))
    return found.pop() if len(found) == 1 else None


def build_keyword_judge_messages(reference: str, prediction: str) -> list[dict[str, str]]:
    """The chat messages for one caption pair: our system prompt and both captions.

    Args:
        reference: the reference caption.
        prediction: the model's caption; a blank one is shown as ``(no caption)``.

    Returns:
        A system message with :func:`keyword_judge_prompt` and one user message.

    Example:
        >>> messages = build_keyword_judge_messages("Axial FLAIR: lesion.", "Axial T2.")
        >>> print(messages[1]["content"])
        REFERENCE: Axial FLAIR: lesion.
        PREDICTION: Axial T2.
    """
    shown = prediction.strip() or "(no caption)"
    return [
        {"role": "system", "content": keyword_judge_prompt()},
        {"role": "user", "content": f"REFERENCE: {reference.strip()}\nPREDICTION: {shown}"},
    ]


def keyword_pair_cache_key(
    identity: str, prompt_version: str, prompt_sha256: str, reference: str, prediction: str
) -> str:
    """SHA-256 key of a judged pair: judge identity, prompt version and hash, both captions.

    Example:
        >>> a = keyword_pair_cache_key("m", "v1", "abc", "Axial T2.", "Axial FLAIR.")
        >>> a == keyword_pair_cache_key("m", "v1", "abc", "Axial FLAIR.", "Axial T2.")
        False
        >>> a == keyword_pair_cache_key("m", "v1", "abd", "Axial T2.", "Axial FLAIR.")
        False
    """
    payload = json.dumps(
        [identity, prompt_version, prompt_sha256, reference, prediction], ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _stored_pair(pair: JudgedPair) -> dict[str, Any]:
    """A judged pair as its cache entry stores it."""
    return {"keywords": pair.to_dict()}


@dataclass(frozen=True)
class KeywordJudgeStats:
    """Counters of a keyword judge since it was created.

    Attributes:
        calls: caption pairs asked for (repeats within a batch counted once).
        cache_hits: pairs read from the cache.
        cache_rejected: cache entries found but not used (another request's, keywords their
            stored reply does not give, no stored reply, not a readable regular file...);
            each pair was judged again and its entry replaced.
        requests: HTTP requests sent, retries included.
        retries: requests that repeated a failed or unreadable one.
        failures: pairs that got no readable keywords (a :class:`JudgeError` followed).
    """

    calls: int = 0
    cache_hits: int = 0
    cache_rejected: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0


class OpenAIKeywordJudge(_HttpJudge):
    """Caption keywords from an LLM behind an OpenAI-compatible endpoint, one request per pair.

    Each (reference, prediction) pair goes to the endpoint in one request
    (:func:`build_keyword_judge_messages`); the reply is read with
    :func:`parse_keyword_reply`. HTTP retries follow :class:`novabench.client.ChatClient`;
    an unreadable reply is asked again within the same budget of ``max_retries + 1``
    attempts. Results are cached on disk. Pass it to
    ``score_captioning(..., keyword_judge=judge)``: ``ClinicalF1``, ``ModalityF1``,
    ``BinaryF1`` and ``SequencePlaneF1`` are then computed from its keywords.

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
        >>> judge = OpenAIKeywordJudge("http://localhost:8000/v1", "judge", temperature=0)
        >>> judge.identity, len(judge.prompt_sha256)
        ('openai-keywords:judge:temperature=0:endpoint=http://localhost:8000/v1/chat/completions', 64)
    """

    _IDENTITY_KIND = "openai-keywords"
    _PROMPT_VERSION = KEYWORD_JUDGE_PROMPT_VERSION
    _DEFAULT_TIMEOUT = 60.0

    @property
    def prompt_sha256(self) -> str:
        """SHA-256 of the system prompt, for reports and the cache key."""
        return hashlib.sha256(keyword_judge_prompt().encode("utf-8")).hexdigest()

    @property
    def description(self) -> str:
        """One line for reports (no API key)."""
        return (
            f"LLM keyword judge {self.model} at {self.endpoint} "
            f"(prompt {self.prompt_version}, sha256 {self.prompt_sha256[:12]})"
        )

    @property
    def stats(self) -> KeywordJudgeStats:
        """A snapshot of the counters (see :class:`KeywordJudgeStats`)."""
        with self._lock:
            return KeywordJudgeStats(**self._counts)

    def __repr__(self) -> str:
        return (
            f"OpenAIKeywordJudge({self.endpoint!r}, {self.model!r}, cache_dir={self.cache_dir!r})"
        )

    def judge_pair(self, reference: str, prediction: str, *, pair: str | None = None) -> JudgedPair:
        """The keywords of one caption pair (the cache first).

        A blank prediction has no keywords and no label whatever the reply says (the
        reference still needs its keywords, so the pair is asked all the same).

        Args:
            reference: the reference caption.
            prediction: the predicted caption (``""`` for no answer).
            pair: where the pair comes from, for error messages.

        Returns:
            The judged pair.

        Raises:
            JudgeError: no readable reply within the retry budget (counted in ``failures``).
            NovaInputError: a caption that is not a string, or a blank reference.
        """
        self._check_pair(reference, prediction, pair)
        self._count("calls")
        key = keyword_pair_cache_key(
            self.identity, self.prompt_version, self.prompt_sha256, reference, prediction
        )
        request = {
            "judge": self.identity,
            "prompt_version": self.prompt_version,
            "prompt_sha256": self.prompt_sha256,
            "reference": reference,
            "prediction": prediction,
        }

        def read(text: str) -> JudgedPair | None:
            return parse_keyword_reply(text, blank_prediction=not prediction.strip())

        if self._cache is not None:
            cached = self._cache.find(key, request, read, _stored_pair, self._count)
            if cached is not None:
                return cached
        try:
            judged, reply = self._ask(reference, prediction, pair)
        except JudgeError:
            self._count("failures")
            raise
        if self._cache is not None:
            self._cache.put(key, request, reply, judged, _stored_pair(judged))
        return judged

    def judge_pairs(
        self, pairs: Sequence[tuple[str, str]], *, labels: Sequence[str] | None = None
    ) -> list[JudgedPair]:
        """Judge many pairs, at most ``max_workers`` at once, each distinct pair once.

        Every pair is attempted before an error is raised, so all readable results reach
        the cache and a rerun asks only for the pairs that failed. The exception: when the
        endpoint cannot be reached (connection refused, reset, timed out, TLS failure) or
        refuses every request (HTTP 401, 403, 404;
        :func:`novabench.client.endpoint_problem`) before any pair came back, the remaining
        pairs are cancelled and the error is raised at once.

        Args:
            pairs: ``(reference, prediction)`` caption pairs.
            labels: where each pair comes from, for error messages.

        Returns:
            One judged pair per input pair, in order.

        Raises:
            JudgeError: some pairs got no readable keywords; the message says how many and
                names the first. Or the endpoint could not be reached at all.
            NovaInputError: labels of a different length, or a malformed pair.
        """
        batch = [tuple(pair) for pair in pairs]
        if labels is not None and len(labels) != len(batch):
            raise NovaInputError(
                f"{len(labels)} labels for {len(batch)} pairs",
                source="keyword judge",
                field="labels",
            )
        names = list(labels) if labels is not None else [f"pair {i}" for i in range(len(batch))]
        positions: dict[tuple[str, str], list[int]] = {}
        for index, (item, name) in enumerate(zip(batch, names)):
            if len(item) != 2:
                raise NovaInputError(
                    f"expected (reference, prediction), got {len(item)} items",
                    source="keyword judge",
                    record=name,
                    field="pairs",
                )
            self._check_pair(item[0], item[1], name)
            positions.setdefault((item[0], item[1]), []).append(index)
        if not batch:
            return []
        results: list[JudgedPair | None] = [None] * len(batch)
        errors: list[JudgeError] = []
        judged_any = False
        # A worker that meets an endpoint problem before any pair came back tells the
        # others at once, so a queued pair is not sent to an endpoint known to refuse it
        # (with one worker the main thread would learn of it only after a few more).
        stop = threading.Event()
        answered = threading.Event()

        def judge_unless_stopped(reference: str, prediction: str, pair: str) -> JudgedPair:
            if stop.is_set():
                raise _NotAsked
            try:
                judged = self.judge_pair(reference, prediction, pair=pair)
            except JudgeError as error:
                if not answered.is_set() and endpoint_problem(error) is not None:
                    stop.set()
                raise
            answered.set()
            return judged

        judge = for_caller(judge_unless_stopped)  # its warnings name the user's line
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(positions))) as pool:
            futures = {
                pool.submit(judge, reference, prediction, names[where[0]]): (
                    reference,
                    prediction,
                    where,
                )
                for (reference, prediction), where in positions.items()
            }
            for future, (reference, prediction, where) in futures.items():
                try:
                    try:
                        judged = future.result()
                    except _NotAsked:
                        # Stopped by a worker, yet an earlier pair came back after all
                        # (several workers): this pair is judged here, as it would have been.
                        judged = self.judge_pair(reference, prediction, pair=names[where[0]])
                except JudgeError as error:
                    problem = None if judged_any else endpoint_problem(error)
                    if problem is not None:
                        # Nothing has come back: every other pair would wait out the same
                        # retries. Stop here instead of after minutes.
                        stop.set()
                        for pending in futures:
                            pending.cancel()
                        raise JudgeError(
                            f"{problem}, so no caption pair was judged", case="keyword judge"
                        ) from error
                    errors.append(error)
                    continue
                judged_any = True
                for index in where:
                    results[index] = judged
        if errors:
            first = errors[0]
            raise JudgeError(
                f"{len(errors)} of {len(positions)} distinct caption pairs got no keywords "
                "(the judged ones are cached; run again to retry the rest); "
                f"first: {first.message}",
                case=first.case,
                reply=first.reply,
            ) from first
        return [judged for judged in results if judged is not None]

    def extract_pairs(
        self, pairs: Sequence[tuple[str, str]], *, labels: Sequence[str] | None = None
    ) -> list[tuple[CaptionKeywords, CaptionKeywords]]:
        """Reference and prediction keywords per pair, as ``score_captioning`` takes them.

        Args:
            pairs: ``(reference, prediction)`` caption pairs.
            labels: where each pair comes from, for error messages.

        Returns:
            ``(reference keywords, prediction keywords)`` per pair, in order.

        Raises:
            JudgeError: see :meth:`judge_pairs`.
        """
        return [
            (judged.reference.keywords(), judged.prediction.keywords())
            for judged in self.judge_pairs(pairs, labels=labels)
        ]

    def _check_pair(self, reference: Any, prediction: Any, pair: str | None) -> None:
        for name, value in (("reference", reference), ("prediction", prediction)):
            checks.text(value, source="keyword judge", record=pair, field=name, allow_blank=True)
        if not reference.strip():
            raise NovaInputError(
                "a reference caption is needed",
                source="keyword judge",
                record=pair,
                field="reference",
            )

    def _ask(self, reference: str, prediction: str, pair: str | None) -> tuple[JudgedPair, str]:
        return self._ask_until_read(
            build_keyword_judge_messages(reference, prediction),
            lambda text: parse_keyword_reply(text, blank_prediction=not prediction.strip()),
            what="keywords",
            unreadable="unreadable reply: malformed JSON, a missing group or label",
            error_fields={"case": pair},
            shown_reply=lambda text: repr(text[:300]),
        )
