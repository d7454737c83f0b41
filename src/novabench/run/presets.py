"""Presets: how to ask one model family, bundled under a name (``nova run --preset NAME``).

A preset is data: the prompt of each task (the toolkit's own wording, in the output format
the family answers natively, so its answers parse), the box convention that prompt asks
for, the input-size rule an endpoint run records for each image, and the generation
settings (greedy decoding, an answer length limit). The README's table "Presets" gives the
evidence behind each rule.

Options given explicitly win over the preset's part (:func:`resolve_preset` lists which
were overridden); the run's manifest records the preset's name and the overridden parts,
so a report says how its answers were asked.

Example:
    >>> choice = resolve_preset("gemini")
    >>> choice.box_convention, choice.input_size_rule, choice.overridden
    ('protocol', 'original', ())
    >>> resolve_preset("gemini", box_convention="xyxy_norm1000").record()
    {'name': 'gemini', 'overridden': ['box_convention']}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from novabench import registry
from novabench.errors import NovaInputError

__all__ = ["PRESETS", "Preset", "PresetChoice", "get_preset", "list_presets", "resolve_preset"]

# What a run uses when neither a preset nor an option says otherwise (the CLI's defaults).
_DEFAULT_BOX_CONVENTION = "auto"
_DEFAULT_INPUT_SIZE_RULE = "original"
_DEFAULT_MAX_NEW_TOKENS = 256
_DEFAULT_TEMPERATURE = 0.0
# The task answered in boxes: the one whose prompt a preset words for its box convention.
_BOX_TASK = registry.task_answered_in("boxes")


@dataclass(frozen=True)
class Preset:
    """How to ask one model family every NOVA question.

    Attributes:
        name: the name ``--preset`` takes.
        description: one line on the family and the answer format asked for.
        prompt_resources: ``{task: file under resources/prompts/presets/}``; the tasks not
            listed use the toolkit's default prompt.
        box_convention: the convention the localisation prompt asks for (see
            :mod:`novabench.run.parsers.boxes`).
        input_size_rule: the image size an endpoint run records as the model's input
            (``"original"`` or ``"qwen2.5-vl"``); a local transformers model reports the
            size its own processor gave instead.
        max_new_tokens: answer length limit.
        temperature: sampling temperature (0: greedy, reproducible answers).

    Example:
        >>> PRESETS["qwen2.5-vl"].prompt("localization").text.count("bbox_2d")
        1
    """

    name: str
    description: str
    box_convention: str
    input_size_rule: str
    max_new_tokens: int
    temperature: float = 0.0
    prompt_resources: Mapping[str, str] = field(default_factory=dict)

    def prompt(self, task: str) -> Any:
        """The preset's prompt of ``task`` (a :class:`~novabench.run.prompts.TaskPrompt`).

        Preset prompts are named ``preset:<name>``; a task the preset leaves alone gets
        the toolkit's default prompt, named ``default``.

        Example:
            >>> PRESETS["gemini"].prompt("localization").name
            'preset:gemini'
            >>> PRESETS["gemini"].prompt("captioning").name
            'default'
        """
        from novabench.run.prompts import TaskPrompt, default_prompt, prompt_hash

        canonical = registry.canonical_task(task)
        resource = self.prompt_resources.get(canonical)
        if resource is None:
            return default_prompt(canonical)
        text = (
            resources.files("novabench")
            .joinpath("resources")
            .joinpath("prompts")
            .joinpath("presets")
            .joinpath(resource)
            .read_text(encoding="utf-8")
            .rstrip("\r\n")
        )
        return TaskPrompt(
            task=canonical, text=text, name=f"preset:{self.name}", sha256=prompt_hash(text)
        )


_JSON_TOKENS = 512  # a JSON object per box (label included) is longer than a protocol line

#: Every preset, by name. ``nova-protocol`` is the benchmark's contract with the toolkit's
#: default prompts; the others ask each family in the format it answers natively.
PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            "nova-protocol",
            "the protocol's contract: default prompts, 'label: [ymin, xmin, ymax, xmax]' "
            "lines in 0..1000",
            box_convention="protocol",
            input_size_rule="original",
            max_new_tokens=_DEFAULT_MAX_NEW_TOKENS,
        ),
        Preset(
            "qwen2.5-vl",
            "Qwen2.5-VL: JSON bbox_2d [x1, y1, x2, y2] in pixels of its resized input",
            box_convention="qwen",
            input_size_rule="qwen2.5-vl",
            max_new_tokens=_JSON_TOKENS,
            prompt_resources={_BOX_TASK: "qwen2.5-vl_localization.txt"},
        ),
        Preset(
            "qwen2-vl",
            "Qwen2-VL: JSON bbox_2d [x1, y1, x2, y2] in 0..1000 (its box tokens read alike)",
            box_convention="xyxy_norm1000",
            input_size_rule="original",
            max_new_tokens=_JSON_TOKENS,
            prompt_resources={_BOX_TASK: "qwen-vl-norm1000_localization.txt"},
        ),
        Preset(
            "qwen3-vl",
            "Qwen3-VL: JSON bbox_2d [x1, y1, x2, y2] in 0..1000",
            box_convention="xyxy_norm1000",
            input_size_rule="original",
            max_new_tokens=_JSON_TOKENS,
            prompt_resources={_BOX_TASK: "qwen-vl-norm1000_localization.txt"},
        ),
        Preset(
            "gemini",
            "Gemini: JSON box_2d [ymin, xmin, ymax, xmax] in 0..1000",
            box_convention="protocol",
            input_size_rule="original",
            max_new_tokens=_JSON_TOKENS,
            prompt_resources={_BOX_TASK: "gemini_localization.txt"},
        ),
        Preset(
            "gpt-4o",
            'GPT-4o (follows the prompt): {"boxes": [[x1, y1, x2, y2]]} in 0..1000',
            box_convention="xyxy_norm1000",
            input_size_rule="original",
            max_new_tokens=_JSON_TOKENS,
            prompt_resources={_BOX_TASK: "gpt-4o_localization.txt"},
        ),
        Preset(
            "llava",
            "LLaVA-1.5 style: bare [x1, y1, x2, y2] lists in 0..1 of the image it saw",
            box_convention="xyxy_norm1",
            input_size_rule="original",
            max_new_tokens=_DEFAULT_MAX_NEW_TOKENS,
            prompt_resources={_BOX_TASK: "llava_localization.txt"},
        ),
    )
}


def list_presets() -> dict[str, str]:
    """Every preset's name (what ``preset=`` and ``--preset`` take) and its one-line description.

    Also ``novabench.list_presets()``; the README's table "Presets" gives the evidence.

    Example:
        >>> presets = list_presets()
        >>> "qwen2.5-vl" in presets and "gemini" in presets
        True
        >>> presets["nova-protocol"] == PRESETS["nova-protocol"].description
        True
    """
    return {name: preset.description for name, preset in PRESETS.items()}


def get_preset(name: str) -> Preset:
    """The preset called ``name``.

    Raises:
        NovaInputError: no preset has that name (the message lists them).

    Example:
        >>> get_preset("qwen3-vl").box_convention
        'xyxy_norm1000'
        >>> get_preset("qwen4")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        novabench.errors.NovaInputError: field 'preset': unknown preset 'qwen4'; choose one of ...
    """
    preset = PRESETS.get(str(name))
    if preset is None:
        raise NovaInputError(
            f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}", field="preset"
        )
    return preset


@dataclass(frozen=True)
class PresetChoice:
    """What a run uses once a preset and the options given explicitly are put together.

    Attributes:
        preset: the preset, or None when none was chosen.
        prompts: ``{task: TaskPrompt or prompt file}`` for :func:`~novabench.run.runner.run_model`.
        box_convention: how ``nova parse`` reads localisation answers.
        input_size_rule: the endpoint's input-size rule.
        max_new_tokens: answer length limit.
        temperature: sampling temperature.
        overridden: the parts of the preset an explicit option replaced (``"prompt:TASK"``,
            ``"box_convention"``, ``"input_size_rule"``, ``"max_new_tokens"``, ``"temperature"``).

    Example:
        >>> resolve_preset(None).record() is None
        True
    """

    preset: Preset | None
    prompts: dict[str, Any]
    box_convention: str
    input_size_rule: str
    max_new_tokens: int
    temperature: float
    overridden: tuple[str, ...] = ()

    def record(self) -> dict[str, Any] | None:
        """What the run's manifest keeps: the preset's name and the parts overridden.

        Example:
            >>> resolve_preset("llava", max_new_tokens=64).record()
            {'name': 'llava', 'overridden': ['max_new_tokens']}
        """
        if self.preset is None:
            return None
        return {"name": self.preset.name, "overridden": list(self.overridden)}


def resolve_preset(
    name: str | None,
    *,
    tasks: tuple[str, ...] = registry.TASK_NAMES,
    prompts: Mapping[str, Any] | None = None,
    box_convention: str | None = None,
    input_size_rule: str | None = None,
    max_new_tokens: int | None = None,
    temperature: float | None = None,
) -> PresetChoice:
    """Put a preset and the options given explicitly (not None) together.

    Without a preset the toolkit's defaults fill what is not given (box convention
    ``auto``, input size ``original``, 256 tokens, temperature 0) and nothing is recorded.

    Args:
        name: a preset name, or None.
        tasks: the tasks the run asks (the preset's prompts are given for these).
        prompts: ``{task: TaskPrompt or prompt file}`` given explicitly (``--prompt-file``).
        box_convention: ``--box-convention``, or None.
        input_size_rule: ``--input-size-rule``, or None.
        max_new_tokens: ``--max-new-tokens``, or None.
        temperature: ``--temperature``, or None.

    Returns:
        A :class:`PresetChoice`.

    Raises:
        NovaInputError: an unknown preset name.

    Example:
        >>> choice = resolve_preset("qwen2.5-vl", tasks=("localization",),
        ...                         prompts={"localization": "mine.txt"})
        >>> choice.prompts, choice.overridden, choice.max_new_tokens
        ({'localization': 'mine.txt'}, ('prompt:localization',), 512)
    """
    given_prompts = {registry.canonical_task(t): p for t, p in (prompts or {}).items()}
    if name is None:
        return PresetChoice(
            preset=None,
            prompts=given_prompts,
            box_convention=box_convention or _DEFAULT_BOX_CONVENTION,
            input_size_rule=input_size_rule or _DEFAULT_INPUT_SIZE_RULE,
            max_new_tokens=max_new_tokens or _DEFAULT_MAX_NEW_TOKENS,
            temperature=_DEFAULT_TEMPERATURE if temperature is None else temperature,
        )
    preset = get_preset(name)
    overridden = [f"prompt:{task}" for task in tasks if task in given_prompts]
    chosen_prompts = {
        task: given_prompts[task] if task in given_prompts else preset.prompt(task)
        for task in tasks
    }
    # Prompts given for tasks this run does not ask stay, so run_model names the mistake.
    chosen_prompts.update({t: p for t, p in given_prompts.items() if t not in chosen_prompts})
    settings = {
        "box_convention": box_convention,
        "input_size_rule": input_size_rule,
        "max_new_tokens": max_new_tokens,
        "temperature": temperature,
    }
    overridden += [key for key, value in settings.items() if value is not None]
    return PresetChoice(
        preset=preset,
        prompts=chosen_prompts,
        box_convention=box_convention or preset.box_convention,
        input_size_rule=input_size_rule or preset.input_size_rule,
        max_new_tokens=max_new_tokens or preset.max_new_tokens,
        temperature=preset.temperature if temperature is None else temperature,
        overridden=tuple(overridden),
    )
