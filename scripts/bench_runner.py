"""Benchmark of `nova run --endpoint` beside a plain client, against local fake servers.

Both clients ask the same questions of a NOVA-size synthetic release (``nova sample``'s
factory, 281 cases / 906 images by default: 2,093 requests over the three tasks) with the
same number of requests in flight, against the test suite's OpenAI-compatible fake server
run in its own process (HTTP/1.1 keep-alive, as vLLM's server):

- ``nova``: :func:`novabench.run.runner.run_model` with the endpoint backend, in process
  (the release is read before the clock starts; the process start-up is not included);
  answers are written to a JSONL file as they arrive, as ``nova run`` does;
- ``plain``: a ``ThreadPoolExecutor`` of the same size, each thread with one kept-alive
  ``http.client`` connection, reading each release PNG and sending its own bytes as a base64
  data URL (body built with ``json.dumps``), writing nothing: what a short script does;
- ``ideal``: the cheapest client we could write, the floor: every request body encoded
  before the clock starts, the same number of threads each with one kept-alive socket,
  taking the next ready body from a shared counter, sending pre-built bytes and reading
  the reply's status line, headers and ``Content-Length`` bytes, nothing decoded.

Contenders alternate (the order rotates each round) and the best of ``--repeat`` rounds is
kept, with CPU seconds per request beside the rates.

Two servers: one that answers at once (client cost decides) and one that takes
``--latency`` seconds per request (the server decides; the ideal time is
``requests / concurrency x latency``). Targets (issue 11): nova >= 0.8x plain at every
concurrency, and within 10% of the ideal with latency; nova / ideal client is printed
beside them. It asserts nothing.

Usage:
    python scripts/bench_runner.py [--release DIR] [--cases 281] [--concurrency 4 16 32]
        [--latency 0.2] [--latency-limit 128] [--repeat 1]
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# Run in a child process so the server does not share the clients' interpreter lock.
_SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.fake_openai_server import FakeOpenAIServer
latency = float(sys.argv[2])
server = FakeOpenAIServer(keep_alive=True, record=False, max_requests=10**9, lifetime=7200,
                          latency=(lambda body: latency) if latency > 0 else None)
with server:
    print(server.base_url, flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
"""


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The fake server in a child process, and its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(ROOT), str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def questions(release: Any, limit: int | None) -> list[tuple[str, Path | bytes | None]]:
    """(prompt text, image file or embedded bytes or None) of every request nova run sends."""
    from novabench.registry import TASK_NAMES
    from novabench.run.prompts import default_prompt, render_diagnosis_prompt

    asked: list[tuple[str, Path | bytes | None]] = []
    for task in TASK_NAMES:
        prompt = default_prompt(task)
        if task == "diagnosis":
            for case in release.cases()[:limit]:
                findings = [caption for caption in case.captions if caption]
                text = render_diagnosis_prompt(prompt, case.clinical_history, findings)
                asked.append((text, None))
        else:
            for image in release.images[:limit]:
                source = image.image_path if image.image_path is not None else image.image_bytes
                asked.append((prompt.text, source))
    return asked


def plain_client(
    base_url: str, asked: list[tuple[str, Any]], concurrency: int
) -> tuple[float, float]:
    """Wall and CPU seconds for a plain thread pool to ask everything (the release's PNGs)."""
    parts = urllib.parse.urlsplit(base_url)
    target = parts.path.rstrip("/") + "/chat/completions"
    local = threading.local()

    def ask(question: tuple[str, Any]) -> str:
        text, image = question
        if image is None:
            content: Any = text
        else:
            data = image if isinstance(image, bytes) else Path(image).read_bytes()
            url = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
            content = [
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": text},
            ]
        message = {"role": "user", "content": content}
        body = json.dumps(
            {"model": "bench", "messages": [message], "max_tokens": 256, "stream": False}
        ).encode()
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = local.connection = http.client.HTTPConnection(
                parts.hostname or "127.0.0.1", parts.port, timeout=60
            )
            connection.connect()  # as nova's client: no Nagle delay on the body's tail
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.request("POST", target, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        reply = json.loads(response.read())
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}")
        return str(reply["choices"][0]["message"]["content"])

    started, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        answers = list(pool.map(ask, asked))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(answers) == len(asked)
    return elapsed, cpu


def request_bodies(asked: list[tuple[str, Any]]) -> list[bytes]:
    """Every request body, encoded once (outside any timing): the ideal client's input.

    Example:
        >>> body = request_bodies([("Describe.", None)])[0]
        >>> json.loads(body)["messages"][0]["content"]
        'Describe.'
    """
    bodies = []
    for text, image in asked:
        if image is None:
            content: Any = text
        else:
            data = image if isinstance(image, bytes) else Path(image).read_bytes()
            url = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
            content = [
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": text},
            ]
        message = {"role": "user", "content": content}
        bodies.append(
            json.dumps(
                {"model": "bench", "messages": [message], "max_tokens": 256, "stream": False}
            ).encode()
        )
    return bodies


def ideal_client(base_url: str, bodies: list[bytes], concurrency: int) -> tuple[float, float]:
    """Wall and CPU seconds for the cheapest client: pre-built requests on raw sockets."""
    import itertools

    parts = urllib.parse.urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    target = parts.path.rstrip("/") + "/chat/completions"
    head = f"POST {target} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    requests = [
        head.encode() + f"Content-Length: {len(body)}\r\n\r\n".encode() + body for body in bodies
    ]
    following = itertools.count()  # next() is atomic under the interpreter lock
    failures: list[str] = []

    def worker() -> None:
        with socket.create_connection((host, port), timeout=60) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader = sock.makefile("rb")
            while (position := next(following)) < len(requests):
                sock.sendall(requests[position])
                status = reader.readline()
                length = 0
                while (line := reader.readline()) not in (b"\r\n", b""):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                reader.read(length)
                if status.split()[1:2] != [b"200"]:
                    failures.append(status.decode("latin-1").strip())

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started, cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if failures:
        raise RuntimeError(f"{len(failures)} failed requests, e.g. {failures[0]}")
    return elapsed, cpu


def nova_client(
    base_url: str, release: Any, concurrency: int, limit: int | None, workdir: Path
) -> tuple[float, float, float]:
    """Seconds for run_model with the endpoint backend: in all, asking, and CPU in all."""
    from novabench.run.backends import OpenAIEndpointBackend
    from novabench.run.runner import run_model

    out = Path(tempfile.mkdtemp(dir=workdir)) / "raw.jsonl"
    backend = OpenAIEndpointBackend(
        base_url, "bench", max_concurrency=concurrency, max_retries=0, timeout=60
    )
    started, cpu = time.perf_counter(), time.process_time()
    summary = run_model(
        release, tasks="all", backend=backend, out_path=out, limit=limit, progress=False
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert summary.n_errors == 0 and summary.complete, summary.counts
    return elapsed, summary.asking_s, cpu


def ensure_release(path: Path | None, cases: int, workdir: Path) -> Path:
    """A synthetic release of ``cases`` cases (made once; reused when ``path`` exists)."""
    from novabench.data.sample import write_sample_release

    target = path or workdir / f"nova-sample-{cases}"
    if not (target / "data").is_dir():
        print(f"writing a {cases}-case sample release to {target} ...", flush=True)
        write_sample_release(target, n_cases=cases, progress=False)
    return target


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, help="release folder (made here when absent)")
    parser.add_argument("--cases", type=int, default=281, help="cases of the synthetic release")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16, 32])
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds per request (0: instant server only)"
    )
    parser.add_argument(
        "--latency-limit",
        type=int,
        default=128,
        help="items per task with latency (3 x 128 = 384 requests, a multiple of 4, 16, 32; "
        "0: instant server only)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    args = parser.parse_args(argv)

    from novabench.data.release import read_release

    workdir = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    release_dir = ensure_release(args.release, args.cases, Path(tempfile.gettempdir()))
    release = read_release(release_dir)
    print(f"release {release_dir}: {len(release.images)} images, {len(release.cases())} cases")
    rows = []
    servers: list[tuple[float, int | None]] = [(0.0, None)]
    if args.latency > 0 and args.latency_limit > 0:
        servers.append((args.latency, args.latency_limit))
    for latency, limit in servers:
        server, base_url = start_server(latency)
        try:
            asked = questions(release, limit)
            bodies = request_bodies(asked)
            nova_client(base_url, release, 4, 2, workdir)  # warm up every path
            plain_client(base_url, asked[:8], 4)
            ideal_client(base_url, bodies[:8], 4)
            for concurrency in args.concurrency:
                contenders = {
                    "plain": lambda c=concurrency: plain_client(base_url, asked, c),
                    "ideal": lambda c=concurrency: ideal_client(base_url, bodies, c),
                    "nova": lambda c=concurrency: nova_client(base_url, release, c, limit, workdir),
                }
                runs: dict[str, list[Any]] = {name: [] for name in contenders}
                names = list(contenders)
                for round_number in range(args.repeat):  # rotated: none always first
                    shift = round_number % len(names)
                    for name in names[shift:] + names[:shift]:
                        runs[name].append(contenders[name]())
                plain = min(runs["plain"])
                ideal = min(runs["ideal"])
                nova = min(runs["nova"], key=lambda times: times[1])
                rows.append((latency, concurrency, len(asked), nova, plain, ideal))
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=30)

    print(
        "\nnova run --endpoint (run_model in process) beside a plain and an ideal client; items ="
        "\nrequests. 'asking' is from the first question to the last answer; 'setup' is the rest"
        "\nof run_model (release fingerprint, resume check, manifest writes); cpu ms/it is the"
        "\nclient process's CPU time per request (nova: all of run_model), the load-proof figure."
        f"\nBest of {args.repeat} alternated rounds."
    )
    print(
        f"{'latency':>7} {'conc':>4} {'items':>5} {'ideal it/s':>10} {'plain it/s':>10} "
        f"{'nova it/s':>9} {'nova/ideal':>10} {'nova/plain':>10} {'cpu ms/it ideal':>15} "
        f"{'plain':>5} {'nova':>5} {'setup s':>7} {'ideal s':>7} {'asking s':>8} {'/ideal':>7}"
    )
    for latency, concurrency, n, (total, asking, nova_cpu), plain, ideal in rows:
        (plain_s, plain_cpu), (ideal_s, ideal_cpu) = plain, ideal
        server_ideal = n / concurrency * latency
        print(
            f"{latency * 1000:>5.0f}ms {concurrency:>4} {n:>5} {n / ideal_s:>10.1f} "
            f"{n / plain_s:>10.1f} {n / asking:>9.1f} {ideal_s / asking:>9.2f}x "
            f"{plain_s / asking:>9.2f}x {ideal_cpu / n * 1000:>15.2f} "
            f"{plain_cpu / n * 1000:>5.2f} {nova_cpu / n * 1000:>5.2f} {total - asking:>7.2f} "
            + (
                f"{server_ideal:>7.2f} {asking:>8.2f} {asking / server_ideal:>6.3f}x"
                if server_ideal
                else ""
            )
        )


if __name__ == "__main__":
    main()
