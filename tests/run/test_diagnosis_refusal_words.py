"""A diagnosis answer that declines is a refusal even when it names the image (dxparse21).

dxparse19 counted "I cannot provide a diagnosis" as ``refusal`` with the captioning parser's
detector, which takes any imaging word as a description: "I cannot provide a diagnosis from
this axial T2 MRI image; please consult a radiologist" was ``unparseable``, and refusals the
bare-answer rule read first became diagnoses ("I won't diagnose from this MRI image",
"Diagnosis: I cannot provide one from this MRI image"). They are ``refusal`` now, and the
warning on unusable answers says what to do about them.
"""

from __future__ import annotations

import pytest

from novabench.report.render import unusable_answers_line
from novabench.run.parsers import parse_diagnoses
from novabench.run.parsers.stats import ParseStats

DECLINED_WITH_IMAGING_WORDS = [
    # the reviewers' answer (a refusal before too) and its forms that were not
    "I cannot provide a diagnosis from this MRI image; consult a radiologist",
    "I cannot provide a diagnosis from this axial T2 MRI image; please consult a radiologist.",
    "I'm unable to diagnose the lesion on this MRI image. Please consult a radiologist.",
    "Sorry, I can't diagnose from an MRI image. A radiologist should review the enhancing lesion.",
    "As an AI, I cannot interpret this MRI image or the ring-enhancing lesion; consult a "
    "radiologist.",
    "Unable to provide a diagnosis from the MRI image. Please consult a radiologist.",
    "I\u2019m unable to provide a diagnosis from this T2 image.",
]
# Read as diagnoses before: the bare-answer rule took them as names.
DECLINED_READ_AS_NAMES = [
    "I won't diagnose from this MRI image; consult a radiologist.",
    "I must decline to diagnose this MRI image; please consult a radiologist.",
    "I apologise, but diagnosing from an MRI image requires a radiologist.",
    "Diagnosis: I cannot provide one from this MRI image.",
    "Diagnosis: cannot be made from this MRI image",
]


@pytest.mark.parametrize("answer", DECLINED_WITH_IMAGING_WORDS + DECLINED_READ_AS_NAMES)
def test_a_declined_diagnosis_is_a_refusal_whatever_image_it_names(answer: str) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("refusal", [])
    assert str(parsed.error).startswith("the model declined to give a diagnosis: ")


@pytest.mark.parametrize(
    ("answer", "names"),
    [
        ("I cannot be certain, but the most likely diagnosis is glioblastoma.", ["glioblastoma"]),
        ("Diagnosis: I cannot be certain, but glioblastoma is most likely", ["glioblastoma"]),
        ("I cannot exclude glioblastoma; the most likely diagnosis is abscess", ["abscess"]),
        (
            "Diagnosis: Unable to determine; differentials: lymphoma, abscess",
            ["lymphoma", "abscess"],
        ),
    ],
)
def test_a_hedge_before_a_diagnosis_is_no_refusal(answer: str, names: list[str]) -> None:
    parsed = parse_diagnoses(answer)
    assert (parsed.status, parsed.diagnoses) == ("fallback_list", names)


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        # declines nothing diagnostic and names a finding: unreadable, as before
        ("I cannot see the lesion clearly on this T2 image.", "unparseable"),
        ("Diagnosis: cannot be determined", "empty"),  # dxparse19: no diagnosis, counted empty
    ],
)
def test_a_remark_that_declines_no_diagnosis_keeps_its_status(answer: str, status: str) -> None:
    assert parse_diagnoses(answer).status == status


def test_refusals_are_counted_and_the_warning_says_what_to_do() -> None:
    answers = [*DECLINED_READ_AS_NAMES[:3], "1- Glioma\n2- Lymphoma"]
    stats = ParseStats.from_results(parse_diagnoses(answer) for answer in answers)
    # By hand: three refusals and one dash-numbered list of two names.
    assert stats.status_counts == {"refusal": 3, "fallback_list": 1}
    assert stats.n_failed == 3
    coverage: dict[str, object] = {"items": 4, "answered": 4, "missing": 0, "errors": 0}
    coverage["parse_status"] = stats.status_counts
    line = unusable_answers_line("diagnosis", coverage)
    assert line is not None
    assert line.startswith("diagnosis: 3 of 4 items (75%) have no usable answer")
    assert "refusal 3" in line and "the model declined the task" in line
