"""`evaluate_model` never hands back stale or empty answers as a model's score unannounced.

A resumed run says how many answers came from the file; a function whose code changed since
the file's answers is refused (or let through by the caller's choice, which the report says);
a function that cannot run at all stops the run at once, as an unreachable endpoint does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from novabench import evaluate_model
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.runner import EndpointUnusableError

DIAGNOSIS = '{"most_likely_diagnosis": "multiple sclerosis", "other_possible_diagnoses": ["ADEM"]}'
QUIET = dict(tasks="diagnosis", n_resamples=0, progress=False)


def _n_cases(release: Path) -> int:
    return len(read_release(release).cases())


def diagnose(image: Any, prompt: str) -> str:
    return DIAGNOSIS


def _user_module(folder: Path, body: str) -> Any:
    """The user's model file ``nova_user_model.py`` in ``folder``, imported as a user would.

    Each version lives in its own folder: same module and function name, other code.
    """
    folder.mkdir(parents=True)
    path = folder / "nova_user_model.py"
    path.write_text(body)
    spec = importlib.util.spec_from_file_location("nova_user_model", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


VERSION_1 = textwrap.dedent(
    """\
    def answer(image, prompt):
        return '{"most_likely_diagnosis": "glioma"}'
    """
)
VERSION_2 = textwrap.dedent(
    """\
    def answer(image, prompt):
        return '{"most_likely_diagnosis": "meningioma"}'
    """
)


def _manifest(run_file: Path) -> dict[str, Any]:
    return json.loads(run_file.with_name(run_file.name + ".manifest.json").read_text())


def test_a_resume_says_how_many_answers_came_from_the_file(
    sample_release, tmp_path, capsys, file_notes
):
    run_file = tmp_path / "run.jsonl"
    n_cases = _n_cases(sample_release)
    evaluate_model(diagnose, sample_release, run_file=run_file, limit=3, **QUIET)
    assert file_notes() == []  # a new file is no resume

    report = evaluate_model(diagnose, sample_release, run_file=run_file, **QUIET)
    said = f"resumed {run_file}: 3 answers from the file, {n_cases - 3} to ask now"
    assert file_notes() == [said]
    assert capsys.readouterr().err == ""  # told as a warning: a library prints nothing
    notes = report.report["tasks"]["diagnosis"]["notes"]
    assert notes[0] == (
        f"resumed {run_file}: 3 answers from the file (asked by an earlier call), "
        f"{n_cases - 3} asked now"
    )
    assert f"diagnosis: note: {notes[0]}" in report.to_text()
    runtime = _manifest(run_file)["runtime"]
    assert runtime["resumed"] == {"answers_from_file": 3, "asked_now": n_cases - 3}

    # Everything from the file: the same report as before, but never silently.
    evaluate_model(diagnose, sample_release, run_file=run_file, **QUIET)
    assert file_notes() == [f"resumed {run_file}: {n_cases} answers from the file, 0 to ask now"]
    assert _manifest(run_file)["runtime"]["resumed"] == {
        "answers_from_file": n_cases,
        "asked_now": 0,
    }

    # A smaller limit asks nothing, but the score reads every answer in the file: say all.
    trial = evaluate_model(diagnose, sample_release, run_file=run_file, limit=2, **QUIET)
    assert file_notes() == [f"resumed {run_file}: {n_cases} answers from the file, 0 to ask now"]
    assert capsys.readouterr().err == ""
    assert trial.report["tasks"]["diagnosis"]["coverage"]["scored"] == n_cases


def test_a_resume_says_so_before_the_model_is_asked(sample_release, tmp_path, file_notes):
    # input14: with progress=False a long resumed run said nothing until its end.
    run_file = tmp_path / "run.jsonl"
    n_cases = _n_cases(sample_release)
    said_when_asked: list[str] = []
    watching: list[bool] = []

    def diagnose_and_look(image: Any, prompt: str) -> str:
        if watching and not said_when_asked:  # the notes as they stood when first asked
            said_when_asked.extend(file_notes())
        return DIAGNOSIS

    evaluate_model(diagnose_and_look, sample_release, run_file=run_file, limit=2, **QUIET)
    file_notes()
    watching.append(True)
    evaluate_model(diagnose_and_look, sample_release, run_file=run_file, **QUIET)
    assert said_when_asked == [
        f"resumed {run_file}: 2 answers from the file, {n_cases - 2} to ask now"
    ]
    assert file_notes() == []  # said once, at the start


def test_a_changed_function_is_refused_naming_the_file_and_the_way_forward(
    sample_release, tmp_path, file_notes
):
    first = _user_module(tmp_path / "v1", VERSION_1).answer
    second = _user_module(tmp_path / "v2", VERSION_2).answer
    run_file = tmp_path / "run.jsonl"
    evaluate_model(first, sample_release, run_file=run_file, limit=2, **QUIET)
    before = run_file.read_bytes()
    recorded = _manifest(run_file)["backend"]
    # The digest is that of the function's source as written in its file.
    assert recorded["code_sha256"] == hashlib.sha256(VERSION_1.encode()).hexdigest()
    assert recorded["code_seen"] == "source"

    with pytest.raises(NovaInputError) as caught:
        evaluate_model(second, sample_release, run_file=run_file, **QUIET)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and message.startswith(f"{run_file}, ")
    assert "the code of nova_user_model.answer changed" in message
    assert "pass a new run_file" in message and "resume_changed_code=True" in message
    assert run_file.read_bytes() == before

    # The caller's choice: resumed, and every output says the answers may mix two versions.
    file_notes()
    mixed = evaluate_model(
        second, sample_release, run_file=run_file, resume_changed_code=True, **QUIET
    )
    (said,) = file_notes()
    assert said.endswith("the answers may mix two versions")
    warning = (
        "warning: the run file was resumed after the code of nova_user_model.answer changed "
        "(resume_changed_code=True): its answers may come from 2 versions"
    )
    assert warning in mixed.to_text().splitlines()
    assert "the run file was resumed after the code of" in mixed.to_markdown()  # escaped there
    [change] = _manifest(run_file)["code_changes"]
    assert change["code_sha256_before"] == hashlib.sha256(VERSION_1.encode()).hexdigest()
    assert change["code_sha256_after"] == hashlib.sha256(VERSION_2.encode()).hexdigest()
    answers = [json.loads(line)["raw_diagnoses"] for line in run_file.read_text().splitlines()]
    assert sum("glioma" in a for a in answers) == 2  # the first version's, kept
    assert sum("meningioma" in a for a in answers) == _n_cases(sample_release) - 2

    # Resumed again by the second version: no refusal, and the warning stays.
    again = evaluate_model(second, sample_release, run_file=run_file, **QUIET)
    assert warning in again.to_text().splitlines()


def test_a_file_without_a_code_digest_is_refused_as_unknown_code(sample_release, tmp_path):
    run_file = tmp_path / "run.jsonl"
    evaluate_model(diagnose, sample_release, run_file=run_file, limit=2, **QUIET)
    # As a novabench before the digest wrote it: the function's module and name only.
    manifest_path = run_file.with_name(run_file.name + ".manifest.json")
    manifest = json.loads(manifest_path.read_text())
    for key in ("code_sha256", "code_seen"):
        del manifest["backend"][key]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(NovaInputError, match="no digest of its code recorded") as caught:
        evaluate_model(diagnose, sample_release, run_file=run_file, **QUIET)
    assert "resume_changed_code=True" in str(caught.value)
    report = evaluate_model(
        diagnose, sample_release, run_file=run_file, resume_changed_code=True, **QUIET
    )
    assert report.report["tasks"]["diagnosis"]["coverage"]["answered"] == _n_cases(sample_release)


def _compiled(source: str, filename: str) -> Any:
    """A function with no source Python can find (as typed at a prompt or exec'd)."""
    scope: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), scope)
    return scope["answer"]


def test_without_source_the_digest_reads_the_bytecode_of_nested_code_too():
    from novabench.evaluator import code_digest  # here: the module's other tests run without it

    body = textwrap.dedent(
        """\
        def answer(image, prompt):
            def label():
                return "{word}" if prompt in {{"a", "b", "c"}} else "none"
            return label()
        """
    )
    glioma = _compiled(body.format(word="glioma"), "<cell-1>")
    moved = _compiled("\n\n\n" + body.format(word="glioma"), "<cell-7>")  # other lines, file
    edited = _compiled(body.format(word="meningioma"), "<cell-1>")  # only the nested function
    assert code_digest(glioma)[1] == "bytecode"
    assert code_digest(glioma) == code_digest(moved)
    assert code_digest(glioma) != code_digest(edited)


def test_a_lambda_is_read_from_its_bytecode_not_from_the_line_around_it(tmp_path):
    from novabench.evaluator import code_digest

    # inspect.getsource gives a lambda's whole line: the call around it is no part of it.
    module = _user_module(
        tmp_path / "lambdas",
        'first = (lambda image, prompt: "no target", 1)[0]\n'
        'second = (lambda image, prompt: "no target", 2)[0]\n'
        'other = (lambda image, prompt: "lesion: [1, 2, 3, 4]", 1)[0]\n',
    )
    assert code_digest(module.first) == code_digest(module.second)
    assert code_digest(module.first)[1] == "bytecode"
    assert code_digest(module.first) != code_digest(module.other)


@pytest.mark.parametrize(
    ("body", "raised"),
    [
        (
            "def answer(image, prompt):\n    return proccessor(image, prompt)\n",
            "NameError: name 'proccessor' is not defined",
        ),
        (
            "def answer(image, prompt):\n    import nova_no_such_module\n    return ''\n",
            "ModuleNotFoundError: No module named 'nova_no_such_module'",
        ),
        (
            "import os\ndef answer(image, prompt):\n    return os.no_such_function(prompt)\n",
            "AttributeError: module 'os' has no attribute 'no_such_function'",
        ),
        (
            "def answer(prompt):\n    return ''\n",
            "TypeError: answer() takes 1 positional argument but 2 were given",
        ),
    ],
    ids=["misspelt-name", "missing-module", "missing-module-attribute", "signature"],
)
def test_a_function_that_cannot_run_stops_at_once_with_its_error(
    sample_release, tmp_path, body, raised
):
    answer = _compiled(body, "<notebook>")
    run_file = tmp_path / "run.jsonl"
    with pytest.raises(EndpointUnusableError) as caught:
        evaluate_model(answer, sample_release, run_file=run_file, **QUIET)
    message = str(caught.value)
    assert len(message.splitlines()) == 1
    assert f"the function answer cannot run: {raised}; nothing was answered" in message
    assert f"stopped after 1 of {_n_cases(sample_release)} items" in message
    [line] = [json.loads(text) for text in run_file.read_text().splitlines()]
    assert line["error"] == raised
    assert _manifest(run_file)["status"] == "stopped"


def test_after_a_first_answer_a_failing_function_is_tried_on_every_item(sample_release, tmp_path):
    # The endpoint's rule: once something was answered, failures never stop the run.
    calls = []

    def answers_once(image: Any, prompt: str) -> str:
        calls.append(prompt)
        if len(calls) == 1:
            return DIAGNOSIS
        return proccessor(image, prompt)  # type: ignore[name-defined]  # noqa: F821

    report = evaluate_model(answers_once, sample_release, run_file=tmp_path / "r.jsonl", **QUIET)
    coverage = report.report["tasks"]["diagnosis"]["coverage"]
    assert len(calls) == coverage["items"] == _n_cases(sample_release)
    assert coverage["errors"] == coverage["items"] - 1


def _raised(function: Any) -> BaseException:
    try:
        function(None, "prompt")
    except Exception as error:
        return error
    raise AssertionError("the function did not raise")


def test_failures_that_may_be_one_items_do_not_count_as_the_code_unable_to_run():
    from novabench.evaluator import function_cannot_run

    def unbound(image: Any, prompt: str) -> str:
        if image is not None:
            size = image.size
        return str(size)  # fails only when there is no image: one path, not every call

    def attribute_of_the_input(image: Any, prompt: str) -> str:
        return image.mode  # None for diagnosis: the input's attribute, not the code's

    assert not function_cannot_run(_raised(unbound))
    assert not function_cannot_run(_raised(attribute_of_the_input))
    assert not function_cannot_run(_raised(lambda image, prompt: 1 + prompt))  # a TypeError inside


def test_a_source_inspect_fails_to_read_falls_back_to_the_bytecode(tmp_path, monkeypatch):
    import inspect

    from novabench.evaluator import code_digest

    answer = _user_module(tmp_path / "v1", VERSION_1).answer

    def unreadable(_: Any) -> str:
        raise IndexError("list index out of range")  # as inspect's tokenizer may on odd files

    monkeypatch.setattr(inspect, "getsource", unreadable)
    digest = code_digest(answer)
    assert digest is not None and digest[1] == "bytecode"


BROKEN = textwrap.dedent(
    """\
    def answer(image, prompt):
        return proccessor(image, prompt)
    """
)


def test_a_run_stopped_by_broken_code_resumes_once_the_code_is_fixed(
    sample_release, tmp_path, file_notes
):
    # user12: the stop says "fix it and run the same command again"; that must work as
    # written, though the fix changed the code: the file holds failures only, no answers.
    run_file = tmp_path / "fn2.jsonl"
    n_cases = _n_cases(sample_release)
    broken = _user_module(tmp_path / "broken", BROKEN).answer
    with pytest.raises(EndpointUnusableError, match="fix it and run the same command again"):
        evaluate_model(broken, sample_release, run_file=run_file, **QUIET)
    fixed = _user_module(tmp_path / "fixed", VERSION_1).answer
    file_notes()

    report = evaluate_model(fixed, sample_release, run_file=run_file, **QUIET)
    assert file_notes() == [f"resumed {run_file}: 0 answers from the file, {n_cases} to ask now"]
    assert "resumed after the code" not in report.to_text()
    manifest = _manifest(run_file)
    assert "code_changes" not in manifest
    assert manifest["backend"]["code_sha256"] == hashlib.sha256(VERSION_1.encode()).hexdigest()
    assert report.report["tasks"]["diagnosis"]["coverage"]["answered"] == n_cases


def test_changed_code_that_answers_nothing_mixes_nothing(sample_release, tmp_path, file_notes):
    # Let through with resume_changed_code, the new version fails on every item: the file's
    # answers are all the first version's, so no warning, and that version resumes as before.
    run_file = tmp_path / "run.jsonl"
    first = _user_module(tmp_path / "v1", VERSION_1).answer
    evaluate_model(first, sample_release, run_file=run_file, limit=2, **QUIET)
    failing = _user_module(
        tmp_path / "v2", "def answer(image, prompt):\n    raise RuntimeError('no GPU')\n"
    ).answer
    with pytest.raises(EndpointUnusableError, match="RuntimeError: no GPU"):
        evaluate_model(
            failing, sample_release, run_file=run_file, resume_changed_code=True, **QUIET
        )
    manifest = _manifest(run_file)
    assert "code_changes" not in manifest
    assert manifest["backend"]["code_sha256"] == hashlib.sha256(VERSION_1.encode()).hexdigest()
    file_notes()

    report = evaluate_model(first, sample_release, run_file=run_file, **QUIET)  # no refusal
    (said,) = file_notes()
    assert said.startswith(f"resumed {run_file}: ") and "mix" not in said
    assert "resumed after the code" not in report.to_text()


def test_a_function_failing_on_every_item_stops_after_the_first_few(sample_release, tmp_path):
    # user12: an AttributeError on a model left as None is no "cannot run" kind, but when
    # the first items all fail with nothing answered the run stops, as for an endpoint.
    from novabench.evaluator import FUNCTION_FAILURES_BEFORE_STOP

    model = None

    def f(image: Any, prompt: str) -> str:
        return model.generate(image, prompt)  # type: ignore[attr-defined]

    run_file = tmp_path / "none.jsonl"
    with pytest.raises(EndpointUnusableError) as caught:
        evaluate_model(f, sample_release, run_file=run_file, **QUIET)
    raised = "AttributeError: 'NoneType' object has no attribute 'generate'"
    assert str(caught.value) == (
        f"the function f failed on all of the first {FUNCTION_FAILURES_BEFORE_STOP} new items "
        f"asked (last failure: {raised}); nothing was answered, so the run stopped after "
        f"{FUNCTION_FAILURES_BEFORE_STOP} of {_n_cases(sample_release)} items (recorded as "
        f"failures in {run_file}); fix it and run the same command again"
    )
    lines = [json.loads(text) for text in run_file.read_text().splitlines()]
    assert [line["error"] for line in lines] == [raised] * FUNCTION_FAILURES_BEFORE_STOP
    assert _manifest(run_file)["status"] == "stopped"


def test_a_failing_lambda_is_named_as_one(sample_release, tmp_path):
    # user21: "the function function failed on all of the first 5 new items asked".
    with pytest.raises(EndpointUnusableError) as caught:
        evaluate_model(lambda image, prompt: b"no target", sample_release, **QUIET)
    assert str(caught.value).startswith("the lambda function failed on all of the first ")
    with pytest.raises(EndpointUnusableError) as caught:  # a name given is its name
        evaluate_model(lambda i, p: b"x", sample_release, name="mine", **QUIET)
    assert str(caught.value).startswith("the function mine failed on all of the first ")


def test_items_that_failed_before_cannot_stop_a_rerun_again(sample_release, tmp_path):
    # The stop's failed items are asked first on the rerun; if they fail for their own
    # reason (inputs the fixed function still cannot take), the rerun goes on to the rest.
    from novabench.evaluator import FUNCTION_FAILURES_BEFORE_STOP

    first_prompts: list[str] = []

    def answer(image: Any, prompt: str) -> str:
        first_prompts.append(prompt)
        raise RuntimeError("model not loaded")

    run_file = tmp_path / "run.jsonl"
    with pytest.raises(EndpointUnusableError):
        evaluate_model(answer, sample_release, run_file=run_file, **QUIET)
    assert len(first_prompts) == FUNCTION_FAILURES_BEFORE_STOP

    def answer(image: Any, prompt: str) -> str:  # the same function, fixed
        if prompt in first_prompts:
            raise ValueError("history too long")
        return DIAGNOSIS

    report = evaluate_model(answer, sample_release, run_file=run_file, **QUIET)
    coverage = report.report["tasks"]["diagnosis"]["coverage"]
    assert coverage["errors"] == FUNCTION_FAILURES_BEFORE_STOP
    assert coverage["answered"] == _n_cases(sample_release) - FUNCTION_FAILURES_BEFORE_STOP


def test_a_limited_call_over_a_complete_file_says_none_was_left_out(sample_release, tmp_path):
    # user12: "23 of 23 images scored, the rest left out" named a rest that was not there.
    run_file = tmp_path / "run.jsonl"
    n_cases = _n_cases(sample_release)
    evaluate_model(diagnose, sample_release, run_file=run_file, **QUIET)
    trial = evaluate_model(diagnose, sample_release, run_file=run_file, limit=3, **QUIET)
    line = (
        f"answered items only: diagnosis {n_cases} of {n_cases} cases ({n_cases} of them answers "
        "from the run file, asked by an earlier call; this call asked at most 3) scored, none "
        "left out"
    )
    assert line in trial.to_text().splitlines()


def test_a_limited_resume_says_first_how_many_it_scores_and_how_many_the_file_gave(
    sample_release, tmp_path
):
    """trust13: limit=2 on a file of 5 answers scored 5 under a first line that said only
    "5 of N cases scored": nothing said the call's limit was 2 or where the 5 came from."""
    run_file = tmp_path / "run.jsonl"
    n_cases = _n_cases(sample_release)
    evaluate_model(diagnose, sample_release, run_file=run_file, limit=5, **QUIET)
    smaller = evaluate_model(diagnose, sample_release, run_file=run_file, limit=2, **QUIET)
    first = (
        f"answered items only: diagnosis 5 of {n_cases} cases (5 of them answers from the run "
        "file, asked by an earlier call; this call asked at most 2) scored, the rest left out"
    )
    assert smaller.report["tasks"]["diagnosis"]["coverage"]["scored"] == 5
    assert smaller.to_text().splitlines()[1] == first  # under the synthetic-data notice only
    assert f"**{first}**" in smaller.to_markdown()
    # A larger limit asks 2 more: 7 scored, 5 of them from the file.
    larger = evaluate_model(diagnose, sample_release, run_file=run_file, limit=7, **QUIET)
    coverage = larger.report["tasks"]["diagnosis"]["coverage"]
    assert (coverage["scored"], coverage["answers_from_run_file"], coverage["limit"]) == (7, 5, 7)
    assert (
        f"answered items only: diagnosis 7 of {n_cases} cases (5 of them answers from the run "
        "file, asked by an earlier call; this call asked at most 7) scored, the rest left out"
    ) in larger.to_text().splitlines()


def test_the_function_backend_is_imported_from_the_package_as_the_readme_does():
    import novabench
    from novabench import CallableBackend
    from novabench.evaluator import CallableBackend as defined

    assert CallableBackend is defined and "CallableBackend" in novabench.__all__


def test_a_parse_output_is_refused_as_run_file(sample_release, tmp_path):
    from novabench.cli import main

    run_file, parsed = tmp_path / "run.jsonl", tmp_path / "run.parsed.jsonl"
    evaluate_model(diagnose, sample_release, run_file=run_file, limit=2, **QUIET)
    assert main(["parse", str(run_file), "--data", str(sample_release), "--out", str(parsed)]) == 0
    manifest = parsed.with_name(parsed.name + ".manifest.json")
    before = (parsed.read_bytes(), manifest.read_bytes())
    with pytest.raises(NovaInputError, match="is a `nova parse` output") as refused:
        evaluate_model(diagnose, sample_release, run_file=parsed, **QUIET)
    assert refused.value.source == str(parsed) and str(run_file) in str(refused.value)
    assert (parsed.read_bytes(), manifest.read_bytes()) == before
