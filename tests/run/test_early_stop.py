"""`nova run` stops early when the endpoint cannot answer anything, and only then."""

from __future__ import annotations

import json
import re
import socket

import pytest

from novabench.cli import main
from novabench.data.release import read_release
from novabench.run.backends import ENDPOINT_SERVER_ERRORS_BEFORE_STOP, OpenAIEndpointBackend
from novabench.run.predictions import read_manifest, read_predictions
from novabench.run.runner import EndpointUnusableError, run_model
from tests.fake_openai_server import FakeOpenAIServer, Reply
from tests.release_factory import write_v1_release


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory):
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=6, image_size=(36, 30))


def closed_port() -> int:
    with socket.socket() as probe:  # nobody listens on it once closed
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def backend(base_url: str, **kwargs):
    settings = {"max_concurrency": 2, "timeout": 120.0, "max_retries": 1, "backoff": 0.01}
    settings.update(kwargs)
    return OpenAIEndpointBackend(base_url, "fake-vlm", **settings)


def n_items(release) -> int:
    return 2 * len(release.images) + len(release.cases())


def test_a_refused_connection_stops_the_run_after_the_requests_in_flight(release_dir, tmp_path):
    release = read_release(release_dir)
    out = tmp_path / "raw.jsonl"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(EndpointUnusableError) as info:
        run_model(release, tasks="all", backend=backend(url), out_path=out, progress=False)
    message = str(info.value)
    assert message.startswith(f"cannot reach {url}/chat/completions: connection refused; ")
    assert "nothing was answered" in message and str(out) in message
    # Only the two requests in flight when the first failure came back were asked: each is
    # recorded as a failure (a rerun asks it again), nothing else was tried.
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert 1 <= len(lines) <= 2 < n_items(release)
    assert all("Connection refused" in line["error"] for line in lines)
    summary = info.value.summary
    assert summary.n_errors == len(lines) and summary.n_answered == 0
    assert f"stopped after {len(lines)} of {n_items(release)} items" in message
    manifest = read_manifest(out)
    assert manifest["status"] == "stopped"
    assert manifest["runtime"]["stopped_because"] == info.value.problem

    # Once the server is up, the same command asks everything, the failed items included.
    with FakeOpenAIServer() as server:
        rerun = run_model(
            release, tasks="all", backend=backend(server.base_url), out_path=out, progress=False
        )
        assert server.n_requests == n_items(release)
    assert rerun.complete and rerun.n_answered == n_items(release)
    records = read_predictions(out, release).records
    assert all(record.error is None for task in records for record in records[task].values())


def test_a_host_that_never_answers_stops_the_run(release_dir, tmp_path, monkeypatch):
    # Connecting times out (packets dropped): without the early stop a run would wait out
    # every item's timeout and retries.
    def silent_host(address, timeout=None, *args):
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent_host)
    release = read_release(release_dir)
    out = tmp_path / "raw.jsonl"
    with pytest.raises(EndpointUnusableError) as info:
        run_model(
            release,
            tasks="all",
            backend=backend("http://10.0.0.9:8000/v1", timeout=5.0),
            out_path=out,
            progress=False,
        )
    assert str(info.value).startswith(
        "cannot reach http://10.0.0.9:8000/v1/chat/completions: "
        "no connection within 5 s (the host does not answer); nothing was answered"
    )
    assert 1 <= info.value.summary.n_errors <= 2 < n_items(release)


@pytest.mark.parametrize("status", [401, 403, 404])
def test_an_endpoint_refusing_every_request_stops_the_run(release_dir, tmp_path, status):
    release = read_release(release_dir)
    replies = [Reply(status=status, body='{"error": "no"}') for _ in range(n_items(release))]
    with FakeOpenAIServer(script=replies) as server:
        with pytest.raises(EndpointUnusableError, match=f"answers HTTP {status}: "):
            run_model(
                release,
                tasks="all",
                backend=backend(server.base_url),
                out_path=tmp_path / "raw.jsonl",
                progress=False,
            )
        # Not retried, and no item asked beyond those already in flight: a few, not all.
        assert 1 <= server.n_requests <= 2


def test_nova_run_says_why_in_one_line_and_exits_2(release_dir, tmp_path, capsys):
    port = closed_port()
    out = tmp_path / "raw.jsonl"
    code = main(
        ["run", "--data", str(release_dir), "--task", "all", "--no-progress", "--out", str(out)]
        + ["--endpoint", f"http://127.0.0.1:{port}/v1", "--model-name", "my-model"]
        + ["--max-concurrency", "2", "--max-retries", "0"]
    )
    assert code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert re.match(
        rf"nova run: error: cannot reach http://127\.0\.0\.1:{port}/v1/chat/completions: "
        r"connection refused; nothing was answered, so the run stopped after [12] of \d+ items",
        line,
    )

    with FakeOpenAIServer(script=[Reply(status=401, body='{"error": "bad key"}')]) as server:
        code = main(
            ["run", "--data", str(release_dir), "--task", "diagnosis", "--no-progress"]
            + ["--out", str(tmp_path / "k.jsonl"), "--endpoint", server.base_url]
            + ["--model-name", "my-model", "--max-concurrency", "1"]
        )
        assert code == 2 and server.n_requests == 1
    err = capsys.readouterr().err
    assert "answers HTTP 401: " in err and "bad key" in err and "(check the API key)" in err


def test_failures_after_a_first_answer_never_stop_the_run(release_dir, tmp_path):
    # The first request is answered, then the endpoint refuses everything: every item is
    # still tried and its failure recorded, as before, for a rerun to retry.
    release = read_release(release_dir)
    n_cases = len(release.cases())
    replies = [Reply(content="Glioma.")] + [Reply(status=401) for _ in range(n_cases)]
    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer(script=replies) as server:
        summary = run_model(
            release,
            tasks="diagnosis",
            backend=backend(server.base_url, max_concurrency=1),
            out_path=out,
            progress=False,
        )
        assert server.n_requests == n_cases
    assert summary.counts["diagnosis"]["answered"] == 1
    assert summary.counts["diagnosis"]["errors"] == n_cases - 1
    assert read_manifest(out)["status"] == "complete-with-errors"


def test_failures_of_one_request_never_stop_the_run(release_dir, tmp_path):
    # A few server errors (after their retries) may be those requests' own: every item is
    # tried, though nothing was answered before them.
    release = read_release(release_dir)
    n_cases = len(release.cases())
    few = ENDPOINT_SERVER_ERRORS_BEFORE_STOP - 1
    assert few < n_cases
    with FakeOpenAIServer(script=[Reply(status=500) for _ in range(2 * few)]) as server:
        summary = run_model(
            release,
            tasks="diagnosis",
            backend=backend(server.base_url, max_concurrency=1),
            out_path=tmp_path / "raw.jsonl",
            progress=False,
        )
        assert server.n_requests == 2 * few + n_cases - few  # a failed item: two attempts
    assert summary.counts["diagnosis"]["errors"] == few
    assert summary.counts["diagnosis"]["answered"] == n_cases - few


def test_a_server_failing_every_request_with_http_500_stops_after_the_first_few(
    release_dir, tmp_path, capsys, monkeypatch
):
    # user13: an endpoint answering HTTP 500 to everything was asked every item of the run
    # (each with its retries); a function failing everything stopped after a few.
    # The CLI has no backoff option; its 1 s wait before each retry only costs the suite time.
    init = OpenAIEndpointBackend.__init__
    monkeypatch.setattr(init, "__kwdefaults__", {**init.__kwdefaults__, "backoff": 0.0})
    release = read_release(release_dir)
    n_images = len(release.images)
    assert n_images > ENDPOINT_SERVER_ERRORS_BEFORE_STOP
    out = tmp_path / "raw.jsonl"
    with FakeOpenAIServer(script=[Reply(status=500) for _ in range(2 * n_images)]) as server:
        command = ["run", "--data", str(release_dir), "--task", "captioning", "--endpoint",
                   server.base_url, "--model-name", "fake-vlm", "--out", str(out),
                   "--max-retries", "1", "--max-concurrency", "1", "-q"]  # fmt: skip
        assert main(command) == 2
        # One at a time: exactly the first N items were asked (each twice), nothing more.
        assert server.n_requests == 2 * ENDPOINT_SERVER_ERRORS_BEFORE_STOP
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1
    assert error[0].startswith(
        f"nova run: error: the endpoint {server.base_url}/chat/completions failed on all of "
        f"the first {ENDPOINT_SERVER_ERRORS_BEFORE_STOP} new items asked (last failure: POST "
    )
    assert "HTTP 500" in error[0] and "nothing was answered, so the run stopped" in error[0]
    manifest = read_manifest(out)
    assert manifest["status"] == "stopped" and "HTTP 500" in manifest["runtime"]["stopped_because"]
    assert len(out.read_text().splitlines()) == ENDPOINT_SERVER_ERRORS_BEFORE_STOP


def test_rate_limits_on_every_request_do_not_stop_the_run(release_dir, tmp_path):
    # HTTP 429 after every retry is the client's pace, not a broken server: all are tried.
    release = read_release(release_dir)
    n_cases = len(release.cases())
    assert n_cases > ENDPOINT_SERVER_ERRORS_BEFORE_STOP
    limited = [Reply(status=429, headers={"Retry-After": "0"}) for _ in range(n_cases)]
    with FakeOpenAIServer(script=limited) as server:
        summary = run_model(
            release,
            tasks="diagnosis",
            backend=backend(server.base_url, max_concurrency=1, max_retries=0),
            out_path=tmp_path / "raw.jsonl",
            progress=False,
        )
        assert server.n_requests == n_cases
    assert summary.counts["diagnosis"]["errors"] == n_cases


def test_a_rerun_that_sets_a_cut_off_line_aside_says_so_even_when_it_stops(
    release_dir, tmp_path, capsys
):
    # user13: with no server the rerun ended "cannot reach ...", and the fragment it had
    # moved to <file>.partial-<time> was named nowhere (only a finished run said it).
    out = tmp_path / "raw.jsonl"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    command = ["run", "--data", str(release_dir), "--task", "diagnosis", "--endpoint", url,
               "--model-name", "fake-vlm", "--out", str(out), "--max-retries", "0", "-q"]  # fmt: skip
    assert main(command) == 2
    with out.open("a") as handle:
        handle.write('{"case_id": "case0001", "task": "diag')  # a kill mid-line
    capsys.readouterr()
    assert main(command) == 2
    said = capsys.readouterr().err.splitlines()
    (fragment,) = tmp_path.glob("raw.jsonl.partial-*")
    assert fragment.read_text() == '{"case_id": "case0001", "task": "diag'
    assert said[0] == (
        f"nova: the cut-off last line of {out} (left by an interrupted writer) was set aside "
        f"in {fragment}; every complete line is kept"
    )
    # The rerun resumes the file (its failed lines are asked again), and says so at once.
    assert said[1] == f"resumed {out}: 0 answers from the file, 6 to ask now"
    assert said[2].startswith(f"nova run: error: cannot reach {url}/chat/completions")
    assert len(said) == 3
