"""Speed of the NOVA metric against the reference libraries, side by side in one run.

0. NOVA-size scoring (906 images, 281 cases, every metric but BERTScore) end to end:
   ``nova evaluate`` in a fresh process (scoring apart from process start and imports) and
   ``evaluate.load(..., "all").compute`` (apart from ``import evaluate``), each with 0 and
   1,000 bootstrap resamples;
1. localisation: 10,000 and 100,000 images x 10 predictions, ours vs pycocotools and
   faster-coco-eval called directly (``bench_localization.py``), with our peak memory;
2. captioning: 1,000 pairs, ours vs sacrebleu, rouge_score, nltk and bert_score
   called directly (``bench_captioning.py``);
3. the evaluate face: ``evaluate.load("metrics/nova_metric", task).compute()`` vs the
   functional core on the same inputs (best of --repeats).

It prints seconds and ratios and asserts nothing: speed is never a test.

Usage:
    python scripts/bench_metric.py [--images 10000] [--large 100000] [--pairs 1000] [--repeats 3]
        [--no-bertscore] [--release NOVA_SIZE_RELEASE] [--only nova|localization|captioning|face]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from novabench.metrics.caption_pairs import random_caption_pairs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_captioning import run_captioning_benchmark  # noqa: E402
from bench_localization import make_synthetic_set, run_localization_benchmark  # noqa: E402


def best_of(repeats: int, function: Callable[[], Any]) -> float:
    """Fastest wall time of ``repeats`` calls (the least disturbed by other load)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def run_face_overhead(n_images: int, n_pairs: int, repeats: int) -> dict[str, float]:
    """Time the evaluate face against the functional core on the same inputs.

    Example:
        >>> figures = run_face_overhead(50, 20, 1)  # doctest: +ELLIPSIS
        evaluate face vs functional core...
        >>> sorted(key for key in figures if key.startswith("localization"))
        ['localization_core_s', 'localization_face_over_core', 'localization_face_s']
    """
    import evaluate

    from novabench.metrics.captioning import score_captioning
    from novabench.metrics.localization import LocalizationWarning, score_localization

    module = str(HERE.parent / "metrics" / "nova_metric")
    predictions, references = make_synthetic_set(n_images, 10, seed=0)
    captions, reference_captions = random_caption_pairs(n_pairs, seed=0)
    options = {"exclude": ["BERTScore-F1"]}
    localization = evaluate.load(module, "localization")
    captioning = evaluate.load(module, "captioning")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        figures = {
            "localization_core_s": best_of(
                repeats, lambda: score_localization(predictions, references)
            ),
            "localization_face_s": best_of(
                repeats,
                lambda: localization.compute(predictions=predictions, references=references),
            ),
            "captioning_core_s": best_of(
                repeats, lambda: score_captioning(captions, reference_captions, **options)
            ),
            "captioning_face_s": best_of(
                repeats,
                lambda: captioning.compute(
                    predictions=captions, references=reference_captions, **options
                ),
            ),
        }
    print(f"evaluate face vs functional core (best of {repeats})")
    for task, size in (
        ("localization", f"{n_images} images x 10 boxes"),
        ("captioning", f"{n_pairs} pairs, no BERTScore"),
    ):
        core, face = figures[f"{task}_core_s"], figures[f"{task}_face_s"]
        figures[f"{task}_face_over_core"] = face / core
        print(
            f"  {task:<13} {size:<28} core {core:7.3f} s   face {face:7.3f} s   face/core {face / core:5.2f}x"
        )
    return figures


# --------------------------------------------------------------------------- NOVA-size scoring

NOVA_CASES = 281  # write_sample_release(n_cases=281) reproduces the release's 906 images


def nova_size_inputs(release_dir: Path | None, work: Path) -> tuple[Path, Path]:
    """A NOVA-size release (given, or made with ``nova sample --cases 281``) and predictions.

    The predictions are synthetic but shaped like a model's: per image 1-4 scored boxes
    (jittered gold boxes and random ones), a caption made of another image's reference
    with some words dropped, and per case up to five diagnoses (the right one first in
    about a third of cases). Written parsed, as ``nova parse`` leaves them.

    Example:
        >>> import tempfile
        >>> from novabench.data.sample import write_sample_release
        >>> work = Path(tempfile.mkdtemp())
        >>> release = write_sample_release(work / "nova", n_cases=2, progress=False)
        >>> _, predictions = nova_size_inputs(release, work)
        >>> sum(1 for _ in predictions.open()) > 0
        True
    """
    import json
    import random

    from novabench.data.release import read_release

    if release_dir is None:
        from novabench.data.sample import write_sample_release

        release_dir = work / "nova"
        if not (release_dir / "data").is_dir():
            print(f"writing a NOVA-size sample release to {release_dir} (slow, once)")
            write_sample_release(release_dir, n_cases=NOVA_CASES, seed=0, progress=False)
    release = read_release(release_dir)
    rng = random.Random(0)
    captions = [image.caption or "" for image in release.images]
    diagnoses = sorted({c.final_diagnosis for c in release.cases() if c.final_diagnosis})
    lines = []
    for image in release.images:
        boxes = [
            [x + rng.uniform(-0.1, 0.1) * w, y + rng.uniform(-0.1, 0.1) * h, w, h]
            for x, y, w, h in image.boxes
            if rng.random() < 0.7
        ]
        boxes += [
            [rng.uniform(0, image.width / 2), rng.uniform(0, image.height / 2), 30.0, 30.0]
            for _ in range(rng.randint(0, 2))
        ]
        scores = [round(rng.random(), 3) for _ in boxes]
        lines.append({"filename": image.filename, "boxes": boxes, "scores": scores})
        words = rng.choice(captions).split()
        caption = " ".join(word for word in words if rng.random() < 0.8)
        lines.append({"filename": image.filename, "caption": caption})
    for case in release.cases():
        guesses = rng.sample(diagnoses, min(4, len(diagnoses)))
        if case.final_diagnosis and rng.random() < 0.35:
            guesses.insert(0, case.final_diagnosis)
        lines.append({"case_id": case.case_id, "diagnoses": guesses[:5]})
    predictions = work / "nova-size-predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return Path(release_dir), predictions


_CHILD = """
import json, resource, sys, time, warnings
started = time.perf_counter()
warnings.simplefilter("ignore")
from novabench.cli import main
imported = time.perf_counter()
cpu = time.process_time()
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
done = time.perf_counter()
helpers = resource.getrusage(resource.RUSAGE_CHILDREN)  # helper processes, all reaped
print(json.dumps({"code": code, "import_s": imported - started, "command_s": done - imported,
                  "command_cpu_s": time.process_time() - cpu,
                  "helpers_cpu_s": helpers.ru_utime + helpers.ru_stime}))
"""


def run_nova_evaluate(
    release: Path, predictions: Path, resamples: int, *extra: str
) -> dict[str, float]:
    """``nova evaluate`` in a fresh interpreter: wall time, and where it went.

    Returns:
        ``wall_s`` (the whole process), ``scoring_s`` (inside ``main``: reading the release
        and predictions, parsing, scoring, intervals, writing the report), ``scoring_cpu_s``
        (the CPU time of all threads meanwhile: less disturbed by other load, and above
        ``scoring_s`` when several cores work), ``helpers_cpu_s`` (the CPU time of its
        helper processes, ``--jobs``) and ``start_s`` (interpreter start + imports + exit:
        ``wall_s - scoring_s``).
    """
    import json
    import os
    import subprocess
    import tempfile

    out = Path(tempfile.mkdtemp()) / "report.json"
    argv = [sys.executable, "-c", _CHILD, "evaluate", "--data", str(release), "--predictions"]
    argv += [str(predictions), "--out", str(out), "--bootstrap", str(resamples)]
    argv += ["--exclude", "BERTScore-F1", *extra]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    start = time.perf_counter()
    finished = subprocess.run(argv, capture_output=True, text=True, env=environment)
    wall = time.perf_counter() - start
    if finished.returncode != 0:
        raise RuntimeError(finished.stderr[-2000:])
    child = json.loads(finished.stdout.strip().splitlines()[-1])
    return {
        "wall_s": wall,
        "scoring_s": child["command_s"],
        "scoring_cpu_s": child["command_cpu_s"],
        "helpers_cpu_s": child["helpers_cpu_s"],
        "start_s": wall - child["command_s"],
    }


def run_nova_face(release: Path, predictions: Path, resamples: int) -> dict[str, float]:
    """The same scoring through ``evaluate.load(..., "all").compute`` (rows of the release).

    Returns:
        ``import_s`` (``import evaluate``), ``load_s`` (``evaluate.load``), ``compute_s``.
    """
    import json

    from novabench.data.release import read_release

    start = time.perf_counter()
    import evaluate

    imported = time.perf_counter()
    module = evaluate.load(str(HERE.parent / "metrics" / "nova_metric"), "all")
    loaded = time.perf_counter()
    release_data = read_release(release)
    answers: dict[str, dict[str, Any]] = {}
    case_answers: dict[str, list[str]] = {}
    for line in predictions.open():
        record = json.loads(line)
        if "case_id" in record:
            case_answers[record["case_id"]] = record["diagnoses"]
        else:
            answers.setdefault(record["filename"], {}).update(record)
    rows_in, rows_ref = [], []
    for image in release_data.images:
        answer = answers.get(image.filename, {})
        rows_in.append(
            {
                "boxes": answer.get("boxes", []),
                "scores": answer.get("scores", []),
                "caption": answer.get("caption", ""),
                "diagnoses": case_answers.get(image.case_id, []),
            }
        )
        rows_ref.append(
            {
                "boxes": image.boxes,
                "caption": image.caption,
                "case_id": image.case_id,
                "final_diagnosis": image.final_diagnosis,
            }
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        begin = time.perf_counter()
        module.compute(
            predictions=rows_in,
            references=rows_ref,
            exclude=["BERTScore-F1"],
            bootstrap_resamples=resamples,
        )
        computed = time.perf_counter() - begin
    return {"import_s": imported - start, "load_s": loaded - imported, "compute_s": computed}


def _cpu(figures: dict[str, float]) -> str:
    """CPU seconds of a ``nova evaluate`` run, its helpers' share apart when it had some."""
    own = f"{figures['scoring_cpu_s']:5.2f}"
    helpers = figures["helpers_cpu_s"]
    return f"{own} + {helpers:4.2f}" if helpers > 0 else own


def run_nova_size(release_dir: Path | None, work: Path) -> dict[str, Any]:
    """NOVA-size scoring end to end, with and without 1,000 resamples; prints a table."""
    import json
    import subprocess

    release, predictions = nova_size_inputs(release_dir, work)
    figures: dict[str, Any] = {}
    for resamples in (0, 1000):
        figures[f"evaluate_{resamples}"] = run_nova_evaluate(release, predictions, resamples)
    # The breakdowns (every group of every dimension resampled) are most of the interval time.
    figures["evaluate_1000_no_breakdowns"] = run_nova_evaluate(
        release, predictions, 1000, "--no-breakdowns"
    )
    # One process (no helpers), beside the default --jobs auto above.
    figures["evaluate_1000_jobs_1"] = run_nova_evaluate(release, predictions, 1000, "--jobs", "1")
    # The face in its own interpreter too, so that `import evaluate` is measured cold.
    for resamples in (0, 1000):
        code = (
            f"import json, sys; sys.path.insert(0, {str(HERE)!r}); "
            "from bench_metric import run_nova_face; "
            f"print(json.dumps(run_nova_face(__import__('pathlib').Path({str(release)!r}), "
            f"__import__('pathlib').Path({str(predictions)!r}), {resamples:d})))"
        )
        finished = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        figures[f"face_{resamples}"] = json.loads(finished.stdout.strip().splitlines()[-1])
    print(
        "906 images / 281 cases, all metrics but BERTScore (seconds; CPU: this process + helpers)"
    )
    for resamples in (0, 1000):
        cli = figures[f"evaluate_{resamples}"]
        face = figures[f"face_{resamples}"]
        print(
            f"  {resamples:>4} resamples  nova evaluate: scoring {cli['scoring_s']:6.2f}"
            f" (CPU {_cpu(cli)})"
            f"  process start+imports {cli['start_s']:5.2f}  wall {cli['wall_s']:6.2f}"
            f"   | evaluate face: compute {face['compute_s']:6.2f}"
            f"  import evaluate {face['import_s']:5.2f}  load {face['load_s']:5.2f}"
        )
    for name, label in (
        ("evaluate_1000_no_breakdowns", "--no-breakdowns"),
        ("evaluate_1000_jobs_1", "--jobs 1"),
    ):
        quick = figures[name]
        print(
            f"  1000 resamples  nova evaluate {label}: scoring {quick['scoring_s']:6.2f}"
            f" (CPU {_cpu(quick)})  process start+imports {quick['start_s']:5.2f}"
            f"  wall {quick['wall_s']:6.2f}"
        )
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-bertscore", action="store_true")
    parser.add_argument(
        "--large", type=int, default=100000, help="second localisation size (0: skip)"
    )
    parser.add_argument("--release", type=Path, help="a NOVA-size release to reuse (else made)")
    parser.add_argument("--work", type=Path, default=Path("build/bench"), help="scratch folder")
    parser.add_argument("--only", choices=("nova", "localization", "captioning", "face"))
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")

    if args.only in (None, "nova"):
        print("\n== 0. NOVA-size scoring end to end")
        run_nova_size(args.release, args.work)
    if args.only in (None, "localization"):
        print("\n== 1. localisation: ours vs pycocotools vs faster-coco-eval")
        for size in (args.images, args.large):
            if size:
                run_localization_benchmark(size, 10, 0)
    if args.only in (None, "captioning"):
        print("\n== 2. captioning: ours vs the reference libraries")
        result = run_captioning_benchmark(args.pairs, 0, bertscore=not args.no_bertscore)
        print(
            f"{'metric':<14}{'ours s':>10}{'library s':>11}{'library/ours':>14}{'ours':>12}"
            f"{'library':>12}"
        )
        for row in result["rows"]:
            print(
                f"{row['metric']:<14}{row['ours_s']:>10.3f}{row['reference_s']:>11.3f}"
                f"{row['speedup']:>13.1f}x{row['ours']:>12.6f}{row['reference']:>12.6f}"
            )
        print(f"bootstrap, 1000 resamples of BLEU-4 + ROUGE-L: {result['bootstrap_1000_s']:.3f} s")
    if args.only in (None, "face"):
        print("\n== 3. the evaluate face")
        run_face_overhead(args.images, args.pairs, args.repeats)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
