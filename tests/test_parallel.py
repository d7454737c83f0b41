"""The worker pool: pieces computed by helper processes equal those computed here.

Every test that needs a helper to take a piece waits until one has (a queued piece asked
for is computed here instead, by design), so nothing depends on how fast helpers start.
"""

from __future__ import annotations

import json
import os
import pickle
import time
import warnings
from pathlib import Path

import pytest

from novabench.cli import main
from novabench.errors import NovaInputError
from novabench.parallel import Pending, WorkerPool, default_jobs
from novabench.report.scoring import ScoringOptions, resolved_jobs, score_predictions
from tests import parallel_pieces as pieces

HELPER_WAIT_S = 120  # a generous bound on a loaded machine; normally well under a second


def taken_by_helper(pending: Pending) -> Pending:  # type: ignore[type-arg]
    """Wait until a helper has taken ``pending`` (it is no longer queued)."""
    deadline = time.monotonic() + HELPER_WAIT_S
    while pending._state == "queued":
        assert time.monotonic() < deadline, "no helper took the piece"
        time.sleep(0.01)
    return pending


def test_pieces_run_in_helpers_and_give_the_values_computed_here() -> None:
    with WorkerPool(helpers=1) as pool:
        where = taken_by_helper(pool.submit(pieces.where))
        values = [taken_by_helper(pool.submit(pieces.seeded_sum, seed, 1000)) for seed in range(5)]
        assert where.result() != os.getpid()
        assert [piece.result() for piece in values] == [
            pieces.seeded_sum(seed, 1000) for seed in range(5)
        ]
        assert pool.helper_pieces == 6


def test_without_helpers_each_piece_is_computed_at_submit() -> None:
    with WorkerPool(helpers=0) as pool:
        piece = pool.submit(pieces.where)
        assert piece._state == "done" and piece.result() == os.getpid()
        assert pool.helpers == 0 and pool.helper_pieces == 0


def test_nothing_goes_to_a_helper_before_it_has_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The helper's start is held at an import until the gate file exists: meanwhile every
    # piece stays queued for this process, and closing does not wait for the helper.
    gate = tmp_path / "gate"
    monkeypatch.setenv("NOVABENCH_TEST_GATE", str(gate))
    started = time.monotonic()
    with WorkerPool(helpers=1, preload=["tests.parallel_gate"]) as pool:
        queued = [pool.submit(pieces.seeded_sum, seed, 10) for seed in range(5)]
        assert all(piece._state == "queued" for piece in queued)
        pool.run_queued()
        assert [piece.result() for piece in queued] == [
            pieces.seeded_sum(seed, 10) for seed in range(5)
        ]
        assert pool.helper_pieces == 0
    assert time.monotonic() - started < 30  # the gate would hold the helper for 60 s
    gate.touch()


def test_run_queued_takes_every_piece_left_from_the_end() -> None:
    with WorkerPool(helpers=1) as pool:
        busy = taken_by_helper(pool.submit(pieces.sleep_then, 1.0, 7))
        queued = [pool.submit(pieces.where) for _ in range(4)]
        pool.run_queued()
        assert [piece.result() for piece in queued] == [os.getpid()] * 4
        assert busy.result() == 7


def test_a_piece_failing_in_a_helper_raises_here_as_without_helpers() -> None:
    with WorkerPool(helpers=1) as pool:
        failing = taken_by_helper(pool.submit(pieces.fail_with, "bad box in record 3"))
        with pytest.raises(ValueError, match="bad box in record 3"):
            failing.result()
        assert pool.helpers == 1  # the helper survives a failed piece
        assert taken_by_helper(pool.submit(pieces.seeded_sum, 1, 10)).result() == (
            pieces.seeded_sum(1, 10)
        )


def test_failures_while_working_through_the_queue_are_raised_in_submission_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The helper is held at its start, so run_queued computes every piece here, from the
    # end: the later failure happens first, yet result() in submission order raises the
    # earlier one first, as computing each piece at submission would.
    monkeypatch.setenv("NOVABENCH_TEST_GATE", str(tmp_path / "gate"))
    with WorkerPool(helpers=1, preload=["tests.parallel_gate"]) as pool:
        first = pool.submit(pieces.seeded_sum, 1, 10)
        earlier = pool.submit(pieces.fail_with, "earlier")
        later = pool.submit(pieces.fail_with, "later")
        pool.run_queued()  # does not raise: each error waits for its piece's result()
        assert first.result() == pieces.seeded_sum(1, 10)
        for piece, message in ((earlier, "earlier"), (later, "later"), (earlier, "earlier")):
            with pytest.raises(ValueError, match=message):
                piece.result()


def test_a_piece_failing_here_when_asked_for_raises_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVABENCH_TEST_GATE", str(tmp_path / "gate"))
    with WorkerPool(helpers=1, preload=["tests.parallel_gate"]) as pool:
        failing = pool.submit(pieces.fail_with, "asked twice")  # queued: computed when asked
        for _ in range(2):
            with pytest.raises(ValueError, match="asked twice"):
                failing.result()


def test_a_reply_that_cannot_be_read_here_is_computed_here() -> None:
    with WorkerPool(helpers=1) as pool:
        piece = taken_by_helper(pool.submit(pieces.unloadable))
        assert isinstance(piece.result(), pieces.Unloadable)
        assert pool.helper_pieces == 0
        deadline = time.monotonic() + HELPER_WAIT_S
        while pool.helpers:  # the channel is not trusted after it: the helper is let go
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert pool._helpers[0].process.wait(timeout=HELPER_WAIT_S) is not None  # and killed


def test_a_helper_whose_preload_fails_ends_quietly_and_leaves_the_work_here(capfd) -> None:  # type: ignore[no-untyped-def]
    with WorkerPool(helpers=1, preload=["tests.no_such_module_for_the_pool"]) as pool:
        deadline = time.monotonic() + HELPER_WAIT_S
        while pool.helpers:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert pool.submit(pieces.where).result() == os.getpid()
    assert "Traceback" not in capfd.readouterr().err


def test_closing_kills_and_reaps_every_helper() -> None:
    with WorkerPool(helpers=2) as pool:
        running = [taken_by_helper(pool.submit(pieces.sleep_then, 30.0, n)) for n in range(2)]
        processes = [helper.process for helper in pool._helpers]
    assert all(process.returncode is not None for process in processes)
    assert pool.helpers == 0
    # What the helpers held is given back, to be computed here if it is asked for after all.
    assert [piece._state for piece in running] == ["failed", "failed"]


def test_warnings_of_a_helper_piece_are_given_here_through_the_filters() -> None:
    with WorkerPool(helpers=1) as pool:
        piece = taken_by_helper(pool.submit(pieces.warn_and_return, "careful", 3))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert piece.result() == 3
        assert [(str(w.message), w.category) for w in caught] == [("careful", UserWarning)]
        assert caught[0].filename == pieces.__file__
        ignored = taken_by_helper(pool.submit(pieces.warn_and_return, "quiet", 4))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", message="quiet", module="tests.parallel_pieces")
            assert ignored.result() == 4
        assert caught == []


def test_a_warning_is_shown_once_per_place_wherever_its_pieces_ran() -> None:
    # Under "default" a warning is shown once per place in one process; replayed warnings
    # share the giving module's registry with warnings given here, so the same holds.
    with WorkerPool(helpers=1) as pool:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            assert taken_by_helper(pool.submit(pieces.warn_and_return, "once", 1)).result() == 1
            assert pieces.warn_and_return("once", 2) == 2
            later = [
                taken_by_helper(pool.submit(pieces.warn_and_return, "once", n)) for n in (3, 4)
            ]
            assert [piece.result() for piece in later] == [3, 4]
            assert pool.helper_pieces == 3
        assert [str(w.message) for w in caught] == ["once"]


def test_a_stray_print_in_a_helper_does_not_break_the_channel(capfd) -> None:  # type: ignore[no-untyped-def]
    with WorkerPool(helpers=1) as pool:
        assert taken_by_helper(pool.submit(pieces.print_and_return, 5)).result() == 5
        assert taken_by_helper(pool.submit(pieces.seeded_sum, 2, 10)).result() == (
            pieces.seeded_sum(2, 10)
        )
    assert "a stray print" in capfd.readouterr().err


def test_a_dead_helper_leaves_its_piece_and_the_rest_to_this_process() -> None:
    with WorkerPool(helpers=1) as pool:
        running = taken_by_helper(pool.submit(pieces.sleep_then, 1.0, 9))
        pool._helpers[0].process.kill()
        assert running.result() == 9  # computed again here
        # The next piece sent meets the dead helper and comes back here too; from then on
        # pieces are computed at submit.
        assert taken_by_helper(pool.submit(pieces.where)).result() == os.getpid()
        assert pool.helpers == 0
        assert pool.submit(pieces.where)._state == "done"


def test_large_pieces_and_replies_do_not_block_the_pipes() -> None:
    # Each piece and reply is far larger than a pipe's buffer, and the helper holds two
    # pieces at once: the helper reads its input in a thread, so neither side waits on the
    # other's write. Waiting by polling, with a deadline, so a deadlock fails the test.
    blobs = [bytes([n]) * (3 << 20) for n in range(6)]
    with WorkerPool(helpers=1) as pool:
        sent = [pool.submit(pieces.echo, blob) for blob in blobs]
        deadline = time.monotonic() + HELPER_WAIT_S
        while any(piece._state != "done" for piece in sent):
            assert time.monotonic() < deadline, [piece._state for piece in sent]
            time.sleep(0.01)
        assert [piece.result() for piece in sent] == blobs
        assert pool.helper_pieces == len(blobs)


def test_an_unpicklable_piece_is_computed_here() -> None:
    with WorkerPool(helpers=1) as pool:
        piece = pool.submit(lambda: os.getpid())
        deadline = time.monotonic() + HELPER_WAIT_S
        while piece._state in ("queued", "sent"):  # the helper's thread tries, then gives up
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert piece.result() == os.getpid()


def test_closing_on_an_error_does_not_wait_for_the_helpers() -> None:
    started = time.monotonic()
    with pytest.raises(KeyError), WorkerPool(helpers=1) as pool:
        taken_by_helper(pool.submit(pieces.sleep_then, 60.0, 1))
        raise KeyError("stop")
    assert time.monotonic() - started < 30


def test_pending_done_holds_its_value_and_jobs_default_is_bounded() -> None:
    assert Pending.done({"a": 1}).result() == {"a": 1}
    assert 1 <= default_jobs() <= 4
    assert pickle.loads(pickle.dumps(pieces.seeded_sum)) is pieces.seeded_sum


def test_jobs_must_be_a_positive_integer_or_auto() -> None:
    for bad in (0, -1, 2.0, True, "two", "AUTO"):
        with pytest.raises(NovaInputError, match="jobs"):
            ScoringOptions(jobs=bad)  # type: ignore[arg-type]
    assert ScoringOptions(jobs="auto").jobs == "auto"
    assert resolved_jobs("auto") == default_jobs() and resolved_jobs(3) == 3


def _without_time(report: dict) -> dict:  # type: ignore[type-arg]
    return {key: value for key, value in report.items() if key != "created_at"}


@pytest.fixture(scope="module")
def floor_answers(sample_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("parallel") / "floor.jsonl"
    arguments = ["run", "--data", str(sample_release), "--task", "all", "--baseline", "floor"]
    assert main([*arguments, "--out", str(out), "--no-progress"]) == 0
    return out


@pytest.fixture
def made_pools(monkeypatch: pytest.MonkeyPatch) -> list[tuple[WorkerPool, int]]:
    """Every pool ``score_predictions`` makes, with the helpers it started."""
    from novabench.report import scoring

    made: list[tuple[WorkerPool, int]] = []
    make_pool = scoring._scoring_pool

    def recorded(options: ScoringOptions) -> WorkerPool:
        pool = make_pool(options)
        made.append((pool, pool.helpers))
        return pool

    monkeypatch.setattr(scoring, "_scoring_pool", recorded)
    return made


def test_a_report_scored_with_helpers_equals_one_scored_alone(
    sample_release: Path, floor_answers: Path, made_pools: list[tuple[WorkerPool, int]]
) -> None:
    settings = {"n_resamples": 150, "seed": 3, "caption_options": {"exclude": ["BERTScore-F1"]}}
    alone = score_predictions(sample_release, floor_answers, jobs=1, **settings)
    shared = score_predictions(sample_release, floor_answers, jobs=3, **settings)
    # Which pieces the helpers take depends on timing; the next test forces them all.
    assert [helpers for _, helpers in made_pools] == [0, 2]
    assert _without_time(shared.report) == _without_time(alone.report)
    assert shared.human is not None and alone.human is not None
    assert shared.human.best_iou == alone.human.best_iou
    assert shared.report["breakdowns"]["localization"]["gold_box_size"]
    human = shared.report["human_reference"]["localization"]
    assert human["rater_1_vs_gold"]["confidence_intervals"]


def _wait_for_helpers(pool: WorkerPool) -> None:
    """In place of ``run_queued``: leave every queued piece to the helpers."""
    deadline = time.monotonic() + HELPER_WAIT_S
    while pool._queue:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_every_piece_of_a_report_computed_by_helpers_gives_the_same_report(
    sample_release: Path,
    floor_answers: Path,
    made_pools: list[tuple[WorkerPool, int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # This process takes nothing from the queue: every localisation cell and human
    # comparison comes back from a helper, through pickling both ways.
    monkeypatch.setattr(WorkerPool, "run_queued", _wait_for_helpers)
    settings = {"n_resamples": 60, "seed": 5, "caption_options": {"exclude": ["BERTScore-F1"]}}
    shared = score_predictions(sample_release, floor_answers, jobs=2, **settings)
    alone = score_predictions(sample_release, floor_answers, jobs=1, **settings)
    cells = sum(len(rows) for rows in alone.report["breakdowns"]["localization"].values())
    assert made_pools[0][0].helper_pieces == cells + 3  # every cell and three comparisons
    assert _without_time(shared.report) == _without_time(alone.report)


def test_no_helper_starts_without_resamples_or_localisation() -> None:
    from novabench.report.scoring import _scoring_pool

    assert _scoring_pool(ScoringOptions(jobs=4, n_resamples=0)).helpers == 0
    assert _scoring_pool(ScoringOptions(jobs=4, tasks=("diagnosis",))).helpers == 0
    assert _scoring_pool(ScoringOptions(jobs=1)).helpers == 0
    with _scoring_pool(ScoringOptions(jobs=2, tasks=("localization",))) as pool:
        assert pool.helpers == 1


def test_nova_evaluate_jobs_option(
    sample_release: Path, floor_answers: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(floor_answers)]
    arguments += ["--bootstrap", "40", "--exclude", "BERTScore-F1"]
    reports = {}
    for jobs in ("1", "2", "auto"):
        out = tmp_path / f"report-{jobs}.json"
        assert main([*arguments, "--jobs", jobs, "--out", str(out)]) == 0
        reports[jobs] = _without_time(json.loads(out.read_text()))
    assert reports["1"] == reports["2"] == reports["auto"]
    capsys.readouterr()
    for bad in ("0", "abc"):
        assert main([*arguments, "--jobs", bad, "--out", str(tmp_path / "bad.json")]) == 2
        err = capsys.readouterr().err
        assert "--jobs" in err and "or auto" in err and not (tmp_path / "bad.json").exists()


def test_more_jobs_than_cpus_is_said_to_slow_the_scoring(
    sample_release: Path,
    floor_answers: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("novabench.parallel.usable_cpus", lambda: 1)
    arguments = ["evaluate", "--data", str(sample_release), "--predictions", str(floor_answers)]
    arguments += ["--bootstrap", "0", "--exclude", "BERTScore-F1", "--out"]
    assert main([*arguments, str(tmp_path / "one.json"), "--jobs", "1"]) == 0
    assert "--jobs" not in capsys.readouterr().err
    assert main([*arguments, str(tmp_path / "three.json"), "--jobs", "3"]) == 0
    assert "--jobs 3 is more processes than the 1 CPUs" in capsys.readouterr().err


def test_nova_compare_offers_no_jobs(
    sample_release: Path, floor_answers: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # compare has no breakdowns nor human reference to share: the option would do nothing.
    arguments = ["compare", "--data", str(sample_release), "--a", str(floor_answers)]
    arguments += ["--b", str(floor_answers), "--bootstrap", "20", "--exclude", "BERTScore-F1"]
    arguments += ["--out", str(tmp_path / "c.json")]
    assert main(arguments) == 0
    capsys.readouterr()
    assert main([*arguments, "--jobs", "2"]) == 2
    assert "unrecognized arguments: --jobs 2" in capsys.readouterr().err


def test_without_an_interpreter_to_start_every_piece_is_computed_here(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    not_python = tmp_path / "not-python"
    not_python.write_text("#!/bin/sh\nexit 3\n")
    not_python.chmod(0o755)
    for executable in ("", str(tmp_path / "missing"), str(not_python)):
        monkeypatch.setattr("sys.executable", executable)
        with WorkerPool(helpers=1) as pool:
            queued = [pool.submit(pieces.seeded_sum, seed, 10) for seed in range(3)]
            pool.run_queued()
            assert [piece.result() for piece in queued] == [
                pieces.seeded_sum(seed, 10) for seed in range(3)
            ]
            assert pool.helper_pieces == 0


def test_a_helper_ignores_ctrl_c_which_the_parent_answers() -> None:
    import signal

    with WorkerPool(helpers=1) as pool:
        taken_by_helper(pool.submit(pieces.sleep_then, 0.5, 1)).result()
        process = pool._helpers[0].process
        process.send_signal(signal.SIGINT)
        assert taken_by_helper(pool.submit(pieces.where)).result() == process.pid


def _cgroup(tmp_path: Path, membership: str, files: dict[str, str]) -> float | None:
    from novabench.parallel import cgroup_cpu_quota

    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "membership").write_text(membership)
    return cgroup_cpu_quota(root, tmp_path / "membership")


@pytest.mark.parametrize(
    ("membership", "files", "quota"),
    [
        # cgroup v2: the process's own cgroup, else the root of the container's view
        ("0::/app.slice/job\n", {"app.slice/job/cpu.max": "150000 100000\n"}, 1.5),
        ("0::/host/path\n", {"cpu.max": "200000 100000\n"}, 2.0),
        ("0::/\n", {"cpu.max": "max 100000\n"}, None),
        # cgroup v1, with the controllers mounted together or apart
        (
            "4:cpu,cpuacct:/docker/abc\n",
            {
                "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n",
                "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            },
            0.5,
        ),
        (
            "1:cpu:/\n",
            {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
            None,
        ),
        # nothing readable, or nonsense: no quota
        ("0::/\n", {}, None),
        ("0::/\n", {"cpu.max": "lots\n"}, None),
        ("not a cgroup line\n", {"cpu.max": "0 100000\n"}, None),
    ],
)
def test_cgroup_cpu_quota_reads_v1_and_v2(
    tmp_path: Path, membership: str, files: dict[str, str], quota: float | None
) -> None:
    assert _cgroup(tmp_path, membership, files) == quota


def test_a_cpu_quota_caps_the_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    from novabench import parallel

    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    for quota, cpus in ((None, 4), (1.0, 1), (1.5, 2), (0.2, 1), (16.0, 4)):
        monkeypatch.setattr(parallel, "cgroup_cpu_quota", lambda quota=quota: quota)
        assert parallel.usable_cpus() == cpus
        assert parallel.default_jobs() == min(cpus, parallel.MAX_AUTO_JOBS)


def test_modules_in_the_working_folder_do_not_shadow_the_helpers_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # `python -c` puts the working folder first on the path; a user's signal.py or
    # pickle.py there must not be what the helper imports before it has the parent's path.
    for name in ("signal", "pickle"):
        (tmp_path / f"{name}.py").write_text("raise ImportError('a user file, not the stdlib')\n")
    monkeypatch.chdir(tmp_path)
    with WorkerPool(helpers=1) as pool:
        piece = taken_by_helper(pool.submit(pieces.seeded_sum, 4, 10))
        assert piece.result() == pieces.seeded_sum(4, 10)
        assert pool.helper_pieces == 1
    assert "Traceback" not in capfd.readouterr().err
