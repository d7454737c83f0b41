"""The diagnosis judges' prompts and the chat messages built from them."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources

JUDGE_PROMPT_VERSION = "nova-diagnosis-judge-1"


def _prompt_resource(name: str) -> str:
    """A judge's system prompt, read from ``novabench/resources/prompts/<name>``."""
    resource = resources.files("novabench").joinpath(f"resources/prompts/{name}")
    return resource.read_text(encoding="utf-8").strip()


#: The pair judge's system prompt (``resources/prompts/diagnosis_pair_judge.txt``); its
#: SHA-256 is :attr:`OpenAIChatJudge.prompt_sha256`.
JUDGE_SYSTEM_PROMPT = _prompt_resource("diagnosis_pair_judge.txt")


def build_judge_messages(reference: str, candidate: str) -> list[dict[str, str]]:
    """The chat messages sent to the judge model for one pair.

    Args:
        reference: the final diagnosis of the case.
        candidate: the diagnosis proposed by the model under test.

    Returns:
        A system message with :data:`JUDGE_SYSTEM_PROMPT` and a user message with the pair.

    Example:
        >>> messages = build_judge_messages("Glioblastoma", "GBM")
        >>> [m["role"] for m in messages]
        ['system', 'user']
        >>> print(messages[1]["content"])
        Reference diagnosis: Glioblastoma
        Proposed diagnosis: GBM
    """
    return [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {
            "role": "user",
            "content": f"Reference diagnosis: {reference.strip()}\n"
            f"Proposed diagnosis: {candidate.strip()}",
        },
    ]


CASE_JUDGE_PROMPT_VERSION = "nova-case-judge-2"

# The co-authors' procedure (one call per case: its clinical context, the reference and the
# ranked list), in our words (``resources/prompts/diagnosis_case_judge.txt``); its SHA-256 is
# OpenAICaseJudge.prompt_sha256.
CASE_JUDGE_SYSTEM_PROMPT = _prompt_resource("diagnosis_case_judge.txt")


def build_case_judge_messages(
    reference: str, predictions: Sequence[str], context: str | None = None
) -> list[dict[str, str]]:
    """The chat messages sent to the case judge: the reference and the numbered predictions.

    Args:
        reference: the final diagnosis of the case.
        predictions: the model's ranked diagnoses (at most five are expected); a blank item
            is shown as ``(no answer)`` so the numbering keeps the ranks.
        context: the case's clinical context (its clinical history), shown first as a
            ``Case context:`` line; None or blank: no such line.

    Returns:
        A system message with :data:`CASE_JUDGE_SYSTEM_PROMPT` and one user message.

    Example:
        >>> messages = build_case_judge_messages("Glioblastoma", ["Meningioma", "GBM"])
        >>> print(messages[1]["content"])
        Reference diagnosis: Glioblastoma
        Proposed diagnoses:
        1. Meningioma
        2. GBM
        >>> print(build_case_judge_messages("Glioblastoma", ["GBM"], "Headache.")[1]["content"])
        Case context: Headache.
        Reference diagnosis: Glioblastoma
        Proposed diagnoses:
        1. GBM
    """
    lines = []
    shown_context = _case_context(context)
    if shown_context is not None:
        lines.append(f"Case context: {shown_context}")
    lines.append(f"Reference diagnosis: {reference.strip()}")
    lines.append("Proposed diagnoses:")
    for slot, item in enumerate(predictions, start=1):
        lines.append(f"{slot}. {item.strip() or '(no answer)'}")
    return [
        {"role": "system", "content": CASE_JUDGE_SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def _case_context(context: str | None) -> str | None:
    """The context as the judge sees it: stripped, with None for none or blank."""
    if context is None or not context.strip():
        return None
    return context.strip()
