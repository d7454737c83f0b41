"""Tests of the task prompts: defaults, hashes, user files, diagnosis rendering."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.run.prompts import (
    DIAGNOSIS_PLACEHOLDERS,
    TASKS,
    TaskPrompt,
    default_prompt,
    load_prompt,
    prompt_hash,
    render_diagnosis_prompt,
)


@pytest.mark.parametrize("task", TASKS)
def test_default_prompt_hash_is_sha256_of_its_text(task: str) -> None:
    prompt = default_prompt(task)
    assert prompt.task == task
    assert prompt.name == "default"
    assert prompt.sha256 == hashlib.sha256(prompt.text.encode("utf-8")).hexdigest()


PROMPT_FILES = Path(__file__).resolve().parents[2] / "src" / "novabench" / "resources" / "prompts"


@pytest.mark.parametrize("task", TASKS)
def test_default_prompt_is_the_shipped_file_and_loads_alike_as_a_user_file(task: str) -> None:
    # The default wording is the packaged file, verbatim but for its final newline(s); read
    # as a user prompt file, the same text gives the same hash (only the name differs).
    path = PROMPT_FILES / f"{task}.txt"
    raw = path.read_bytes().decode("utf-8")
    prompt = default_prompt(task)
    assert prompt.text == raw.rstrip("\n") and prompt.text.strip()
    assert prompt.sha256 == hashlib.sha256(raw.rstrip("\n").encode("utf-8")).hexdigest()
    as_user_file = load_prompt(task, path)
    assert (as_user_file.text, as_user_file.sha256) == (prompt.text, prompt.sha256)
    assert as_user_file.name == str(path) != prompt.name


def test_default_hashes_differ_between_tasks() -> None:
    hashes = {default_prompt(task).sha256 for task in TASKS}
    assert len(hashes) == len(TASKS)


def test_localization_prompt_keeps_the_output_contract() -> None:
    text = default_prompt("localization").text
    assert "label: [ymin, xmin, ymax, xmax]" in text
    assert "0 to 1000" in text
    assert "no target" in text


def test_captioning_prompt_asks_for_sequence_plane_location() -> None:
    text = default_prompt("captioning").text.lower()
    for word in ("sequence", "plane", "axial", "located", "abnormal"):
        assert word in text


def test_diagnosis_prompt_has_placeholders_and_json_contract() -> None:
    text = default_prompt("diagnosis").text
    for placeholder in DIAGNOSIS_PLACEHOLDERS:
        assert text.count(placeholder) == 1
    assert '"most_likely_diagnosis"' in text
    assert '"other_possible_diagnoses"' in text


@pytest.mark.parametrize(
    "alias, task",
    [
        ("localisation", "localization"),
        ("Caption", "captioning"),
        ("reasoning", "diagnosis"),
        ("DIAGNOSIS", "diagnosis"),
    ],
)
def test_task_aliases(alias: str, task: str) -> None:
    assert default_prompt(alias).task == task


def test_unknown_task_is_an_input_error() -> None:
    with pytest.raises(NovaInputError, match="unknown task 'segmentation'"):
        default_prompt("segmentation")


def test_prompt_hash_known_value_and_line_ends() -> None:
    # FIPS 180-2 test vector: SHA-256("abc").
    assert prompt_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert prompt_hash("one\r\ntwo\rthree") == prompt_hash("one\ntwo\nthree")
    assert prompt_hash("one two") != prompt_hash("one  two")


def test_load_prompt_none_gives_the_default() -> None:
    assert load_prompt("captioning", None) == default_prompt("captioning")


def test_load_prompt_reads_user_file_verbatim(tmp_path: Path) -> None:
    path = tmp_path / "official_localization.txt"
    text = "Find the anomaly. Answer label: [ymin, xmin, ymax, xmax] or no target."
    path.write_text(text + "\n\n", encoding="utf-8")
    prompt = load_prompt("localisation", path)
    assert prompt.task == "localization"
    assert prompt.text == text  # final newlines dropped, nothing else
    assert prompt.name == str(path)
    assert prompt.sha256 == prompt_hash(text)
    assert prompt.sha256 != default_prompt("localization").sha256


def test_load_prompt_ignores_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffDescribe the slice.".encode("utf-8"))
    assert load_prompt("captioning", str(path)).text == "Describe the slice."


@pytest.mark.parametrize(
    "content, missing",
    [
        ("History: {clinical_history}", "{findings}"),
        ("Findings: {findings}", "{clinical_history}"),
        ("History: {history}\nFindings: {finding}", "{clinical_history}, {findings}"),
    ],
)
def test_diagnosis_file_missing_placeholder_names_file_and_placeholder(
    tmp_path: Path, content: str, missing: str
) -> None:
    path = tmp_path / "paper_dx_prompt.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(NovaInputError) as info:
        load_prompt("diagnosis", path)
    message = str(info.value)
    assert "paper_dx_prompt.txt" in message
    assert missing in message


def test_missing_and_empty_files_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(NovaInputError, match="does not exist"):
        load_prompt("captioning", tmp_path / "nope.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(NovaInputError, match="empty"):
        load_prompt("captioning", empty)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(NovaInputError, match="UTF-8"):
        load_prompt("captioning", binary)


def test_from_text_validates() -> None:
    with pytest.raises(NovaInputError, match=r"\{findings\}"):
        TaskPrompt.from_text("diagnosis", "only {clinical_history}")
    prompt = TaskPrompt.from_text("caption", "Describe.", name="inline")
    assert (prompt.task, prompt.name, prompt.short_hash) == (
        "captioning",
        "inline",
        prompt.sha256[:12],
    )


def test_render_includes_history_and_every_caption_numbered() -> None:
    captions = [
        "Axial FLAIR shows a right frontal hyperintense lesion.",
        "Sagittal T1 post-contrast: ring enhancement.",
        "DWI: restricted diffusion centrally.",
    ]
    text = render_diagnosis_prompt(
        default_prompt("diagnosis"), "62-year-old man with headache.", captions
    )
    assert "62-year-old man with headache." in text
    for number, caption in enumerate(captions, start=1):
        assert f"Image {number}: {caption}" in text
    assert "{clinical_history}" not in text and "{findings}" not in text
    # The JSON example's braces survive the substitution.
    assert '{"most_likely_diagnosis":' in text


def test_render_substitutes_once_and_keeps_other_braces() -> None:
    template = 'H={clinical_history} F={findings} keep {"a": 1} and {other}'
    text = render_diagnosis_prompt(template, "history mentions {findings}", ["cap"])
    assert text == 'H=history mentions {findings} F=Image 1: cap keep {"a": 1} and {other}'


def test_render_handles_missing_history_single_string_and_no_captions() -> None:
    template = "{clinical_history}|{findings}"
    assert render_diagnosis_prompt(template, None, []) == "(not provided)|(not provided)"
    assert render_diagnosis_prompt(template, "  ", "one caption\nwrapped") == (
        "(not provided)|Image 1: one caption wrapped"
    )


def test_render_rejects_other_task_prompt() -> None:
    with pytest.raises(NovaInputError, match="localization prompt"):
        render_diagnosis_prompt(default_prompt("localization"), "h", ["c"])
    with pytest.raises(NovaInputError, match="placeholder"):
        render_diagnosis_prompt("no placeholders here", "h", ["c"])
