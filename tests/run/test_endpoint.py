"""The OpenAI-compatible endpoint backend against a scripted local server (127.0.0.1, free port)."""

from __future__ import annotations

import base64
import io
import json
import socket

import pytest
from PIL import Image

from novabench.cli import main
from novabench.data.release import read_release
from novabench.errors import NovaInputError
from novabench.run.backends import OpenAIEndpointBackend, Request
from novabench.run.predictions import read_manifest, read_predictions
from novabench.run.prompts import TaskPrompt
from novabench.run.runner import run_model
from tests.fake_openai_server import FakeOpenAIServer, Reply
from tests.release_factory import write_v1_release


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory):
    return write_v1_release(tmp_path_factory.mktemp("release"), n_cases=3, image_size=(36, 30))


def backend_for(server, **kwargs):
    settings = {
        "max_concurrency": 2,
        "timeout": 120.0,  # generous: a loaded test machine must not look like a timeout
        "max_retries": 2,
        "backoff": 0.01,
        "max_tokens": 64,
    }
    settings.update(kwargs)
    return OpenAIEndpointBackend(server.base_url, "fake-vlm", **settings)


def image_request(prompt="Describe.", item="case0001_001.png", size=(36, 30)):
    return Request(item, "captioning", prompt, Image.new("RGB", size, (20, 40, 60)))


def test_a_normal_reply_with_and_without_an_image():
    with FakeOpenAIServer() as server:
        backend = backend_for(server, api_key="sk-test")
        answers = backend.generate(
            [image_request(), Request("case0001", "diagnosis", "History: headache.")]
        )
        assert [a.ok for a in answers] == [True, True]
        assert answers[0].text.endswith("(with image)") and answers[1].text.endswith("(text only)")
        assert answers[0].input_size == (36, 30) and answers[1].input_size is None
        assert all(a.latency_s >= 0 for a in answers)

        bodies = sorted(
            server.bodies, key=lambda body: isinstance(body["messages"][0]["content"], str)
        )
        image_body, text_body = bodies
        assert (
            image_body["model"] == "fake-vlm"
            and image_body["max_tokens"] == 64
            and image_body["temperature"] == 0.0
        )
        parts = image_body["messages"][0]["content"]
        url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
        assert url.startswith("data:image/png;base64,")
        decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        assert (
            decoded.format == "PNG"
            and decoded.size == (36, 30)
            and decoded.getpixel((0, 0)) == (20, 40, 60)
        )
        assert text_body["messages"][0]["content"] == "History: headache."
        assert all(h.get("Authorization") == "Bearer sk-test" for h in server.headers)
    assert "sk-test" not in json.dumps(backend.describe())


@pytest.mark.parametrize("mode", ["500-once", "429-once"])
def test_a_transient_error_is_retried(mode):
    with FakeOpenAIServer() as server:
        [answer] = backend_for(server).generate([image_request(f"Describe. MODE:{mode}")])
        assert answer.ok and answer.text.startswith("answer to")
        assert server.n_requests == 2


def test_a_persistent_server_error_becomes_an_error_after_the_retries():
    with FakeOpenAIServer() as server:
        [answer] = backend_for(server, max_retries=2).generate([image_request("MODE:always-500")])
        assert not answer.ok and answer.text is None
        assert "HTTP 500" in answer.error and "3 attempts" in answer.error
        assert server.n_requests == 3


def test_a_timeout_is_retried_then_recorded():
    with FakeOpenAIServer(slow_seconds=1.5) as server:
        [answer] = backend_for(server, timeout=0.3, max_retries=1).generate(
            [image_request("MODE:slow")]
        )
        assert not answer.ok and "timed out" in answer.error and "2 attempts" in answer.error
        assert server.n_requests == 2


@pytest.mark.parametrize(
    ("mode", "words"), [("malformed", "no choices[0].message.content"), ("not-json", "not JSON")]
)
def test_a_malformed_reply_is_an_error_without_retrying(mode, words):
    with FakeOpenAIServer() as server:
        answers = backend_for(server).generate(
            [image_request(f"MODE:{mode}"), image_request("fine", item="b.png")]
        )
        assert (
            not answers[0].ok
            and "malformed reply" in answers[0].error
            and words in answers[0].error
        )
        assert answers[1].ok  # the other item is unaffected
        assert server.n_requests == 2


def test_the_shared_client_rules_apply_to_the_backend():
    # 408 is retried like 5xx (the one retryable-status rule); a null content is an error
    # naming the finish reason, not an empty answer that would parse as a model failure.
    null_content = '{"choices": [{"message": {"content": null}, "finish_reason": "length"}]}'
    script = [Reply(status=408), Reply(content="second try"), Reply(body=null_content)]
    with FakeOpenAIServer(script=script) as server:
        backend = backend_for(server, max_concurrency=1)
        retried, null = backend.generate([image_request("a"), image_request("b")])
    assert retried.ok and retried.text == "second try"
    assert not null.ok and "content is null, finish_reason 'length'" in null.error
    assert server.n_requests == 3


def test_a_refused_connection_is_retried_then_recorded():
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = OpenAIEndpointBackend(
        f"http://127.0.0.1:{port}/v1", "m", max_retries=1, backoff=0.01, timeout=2
    )
    [answer] = backend.generate([image_request()])
    assert not answer.ok and "connection failed" in answer.error and "2 attempts" in answer.error


def test_requests_really_overlap_up_to_the_bound_and_never_beyond():
    # The server holds each request until three are in flight together (or fails them after
    # a bounded wait), so every answer being fine proves three ran concurrently.
    with FakeOpenAIServer(barrier_parties=3) as server:
        requests = [image_request(f"MODE:barrier {i}", item=f"{i}.png") for i in range(6)]
        answers = backend_for(server, max_concurrency=3).generate(requests)
        assert all(a.ok for a in answers)
        assert server.max_in_flight == 3
    with FakeOpenAIServer(hold_seconds=0.05) as server:
        answers = backend_for(server, max_concurrency=2).generate(
            [image_request(f"{i}") for i in range(7)]
        )
        assert all(a.ok for a in answers) and server.max_in_flight <= 2
        # Answers keep the request order whatever order the server finished in.
        assert [a.text for a in answers] == [
            backend_for(server).generate([image_request(f"{i}")])[0].text for i in range(7)
        ]


def test_bad_settings_are_refused():
    with pytest.raises(NovaInputError, match="http") as info:
        OpenAIEndpointBackend("localhost:8000", "m")
    assert info.value.field == "base_url"
    with pytest.raises(NovaInputError, match="max_concurrency >= 1"):
        OpenAIEndpointBackend("http://localhost:8000/v1", "m", max_concurrency=0)
    description = OpenAIEndpointBackend("http://user:secret@localhost:8000/v1/", "m").describe()
    assert description["endpoint"] == "http://localhost:8000/v1/chat/completions"
    assert "secret" not in json.dumps(description)


def test_a_run_through_the_endpoint_records_failures_and_continues(release_dir, tmp_path):
    release = read_release(release_dir)
    out = tmp_path / "raw.jsonl"
    broken_captions = {"captioning": TaskPrompt.from_text("captioning", "Describe. MODE:malformed")}
    with FakeOpenAIServer() as server:
        summary = run_model(
            release,
            tasks="all",
            backend=backend_for(server),
            out_path=out,
            prompts=broken_captions,
            progress=False,
        )
    n_images = len(release.images)
    assert summary.counts["localization"]["answered"] == n_images
    assert summary.counts["captioning"] == {
        "items": n_images,
        "done_before": 0,
        "answered": 0,
        "errors": n_images,
    }
    assert summary.counts["diagnosis"]["answered"] == len(release.cases())
    predictions = read_predictions(out, release)
    assert len(predictions.errors("captioning")) == n_images
    assert all("malformed" in message for message in predictions.errors("captioning").values())
    manifest = read_manifest(out)
    assert manifest["status"] == "complete-with-errors"
    assert (
        manifest["backend"]["type"] == "openai-endpoint"
        and manifest["backend"]["model"] == "fake-vlm"
    )
    assert manifest["runtime"]["max_concurrency"] == 2


def test_nova_run_with_an_endpoint_exit_codes(release_dir, tmp_path, capsys, monkeypatch):
    common = ["run", "--data", str(release_dir), "--no-progress"]
    with FakeOpenAIServer() as server:
        endpoint = [
            "--endpoint",
            server.base_url,
            "--model-name",
            "fake-vlm",
            "--max-concurrency",
            "2",
        ]
        out = tmp_path / "raw.jsonl"
        assert main([*common, *endpoint, "--task", "diagnosis", "--out", str(out)]) == 0
        assert len(read_predictions(out, read_release(release_dir)).records["diagnosis"]) == 3

        prompt = tmp_path / "caption.txt"
        prompt.write_text("Describe. MODE:always-500")
        failing = [
            "--task",
            "captioning",
            "--out",
            str(tmp_path / "c.jsonl"),
            "--max-retries",
            "0",
            "--prompt-file",
            f"captioning={prompt}",
            "--limit",
            "2",
        ]
        assert (
            main([*common, *endpoint, *failing]) == 1
        )  # some items failed; the file keeps the errors
        assert "rerun" in capsys.readouterr().err
        assert len(read_predictions(tmp_path / "c.jsonl").errors("captioning")) == 2

        monkeypatch.delenv("NOVA_TEST_KEY", raising=False)
        keyed = [
            "--task",
            "diagnosis",
            "--out",
            str(tmp_path / "k.jsonl"),
            "--api-key-env",
            "NOVA_TEST_KEY",
        ]
        assert main([*common, *endpoint, *keyed]) == 2
        monkeypatch.setenv("NOVA_TEST_KEY", "sk-from-env")
        assert main([*common, *endpoint, *keyed]) == 0
        assert server.headers[-1]["Authorization"] == "Bearer sk-from-env"


def test_qwen_input_size_rule_matches_hand_arithmetic():
    from novabench.run.backends import qwen2_5_vl_input_size

    # 480 / 28 = 17.14 -> 17 * 28 = 476 on both sides.
    assert qwen2_5_vl_input_size(480, 480) == (476, 476)
    # 1024 / 28 = 36.57 -> 37 * 28 = 1036 (the "up to 1036 for a 1024 input" seen in real answers);
    # 768 / 28 = 27.43 -> 27 * 28 = 756.
    assert qwen2_5_vl_input_size(1024, 768) == (1036, 756)
    # 20 x 20 rounds to 28 x 28 = 784 px < 3136: grown by sqrt(3136 / 400) = 2.8 -> ceil(56 / 28) * 28 = 56.
    assert qwen2_5_vl_input_size(20, 20) == (56, 56)
    # Over max_pixels=1000*28*28: shrink = sqrt(4000*4000 / 784000) = 4.517; floor(4000 / 4.517 / 28) * 28 = 868.
    assert qwen2_5_vl_input_size(4000, 4000, max_pixels=1000 * 28 * 28) == (868, 868)


def test_endpoint_records_the_qwen_input_size_when_asked(tmp_path):
    with FakeOpenAIServer() as server:
        backend = backend_for(server, input_size_rule="qwen2.5-vl")
        answer = backend.generate([image_request("find the lesion", size=(480, 480))])[0]
        assert answer.ok and answer.input_size == (476, 476)
        original = backend_for(server).generate(
            [image_request("find the lesion", size=(480, 480))]
        )[0]
        assert original.input_size == (480, 480)
        assert backend.describe()["input_size_rule"] == "qwen2.5-vl"
    with pytest.raises(NovaInputError, match="input size rule"):
        OpenAIEndpointBackend("http://127.0.0.1:9/v1", "m", input_size_rule="qwen3")
