"""Speed of the NOVA metric against the reference libraries, side by side in one run.

0. NOVA-size scoring (906 images, 281 cases, every metric but BERTScore) end to end:
   ``nova evaluate`` in a fresh process (scoring apart from process start and imports; with
   0 and 1,000 resamples, ``--no-breakdowns``, ``--items --html``), optionally beside
   another tree's (``--other-src``), and ``evaluate.load(..., "all").compute`` (apart from
   ``import evaluate``), every contender once per round in a rotated order, the best of
   ``--rounds``; then each task's headline bootstrap as a report draws it (whole cases for
   an image task) beside a bare-numpy floor of as many keys and the same draws
   (``numpy_case_bootstrap_floor``, ``numpy_bootstrap_floor``; ours draws afresh in every
   timed run, as a fresh process does), and for localisation also beside a floor that
   ranks each resample's detections for the COCO AP keys (``numpy_case_coco_ap_floor``),
   and each part apart (the mean keys alone against their floor, COCO AP alone against the
   ranking floor alone). Modules' bytecode is kept under ``WORK/pycache``
   between runs, as an installed package has it (``--no-bytecode-cache``: as the
   environment says);
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
        [--rounds 5] [--other-src OTHER_TREE/src] [--no-face] [--no-bytecode-cache]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

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


def child_environment(source: Path | None, bytecode: Path | None) -> dict[str, str]:
    """The environment of a measured child: offline, ``source`` first on the path, and with
    ``bytecode`` (a folder) the modules' compiled bytecode kept there between runs.

    An installed package has its bytecode compiled once; a checkout run with
    ``PYTHONDONTWRITEBYTECODE=1`` (set on some machines) compiles every module of every run
    anew, which is then measured as part of the command. ``bytecode=None`` leaves that as
    the environment says.

    Example:
        >>> environment = child_environment(None, Path("/tmp/pycache"))
        >>> environment["PYTHONPYCACHEPREFIX"], "PYTHONDONTWRITEBYTECODE" in environment
        ('/tmp/pycache', False)
    """
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    if source is not None:
        environment["PYTHONPATH"] = str(source)
    if bytecode is not None:
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        environment["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return environment


def run_nova_evaluate(
    release: Path,
    predictions: Path,
    resamples: int,
    *extra: str,
    source: Path | None = None,
    bytecode: Path | None = None,
) -> dict[str, float]:
    """``nova evaluate`` in a fresh interpreter: wall time, and where it went.

    Args:
        release: the release folder.
        predictions: the predictions file.
        resamples: ``--bootstrap``.
        *extra: further options (``--html``, ``--items`` take a path in a fresh folder:
            give them as ``"--html"`` / ``"--items"`` alone).
        source: the ``src`` folder of the tree to run (another checkout, for a before/after
            table); None: the one this script imports.
        bytecode: where compiled modules are kept between runs (see
            :func:`child_environment`); None: as the environment says.

    Returns:
        ``wall_s`` (the whole process), ``scoring_s`` (inside ``main``: reading the release
        and predictions, parsing, scoring, intervals, writing every output), ``scoring_cpu_s``
        (the CPU time of this process meanwhile: less disturbed by other load, and above
        ``scoring_s`` when several cores work), ``helpers_cpu_s`` (the CPU time of helper
        processes it started, if any) and ``start_s`` (interpreter start + imports + exit:
        ``wall_s - scoring_s``).
    """
    import json
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp())
    out = folder / "report.json"
    argv = [sys.executable, "-c", _CHILD, "evaluate", "--data", str(release), "--predictions"]
    argv += [str(predictions), "--out", str(out), "--bootstrap", str(resamples)]
    argv += ["--exclude", "BERTScore-F1", "--quiet"]
    for option in extra:
        argv.append(option)
        if option in ("--html", "--items"):
            argv.append(str(folder / ("report.html" if option == "--html" else "items")))
    environment = child_environment(source, bytecode)
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
            n_resamples=resamples,
        )
        computed = time.perf_counter() - begin
    return {"import_s": imported - start, "load_s": loaded - imported, "compute_s": computed}


def alternate_rounds(
    contenders: dict[str, Callable[[], dict[str, float]]], rounds: int
) -> dict[str, dict[str, float]]:
    """Run every contender once per round, in a rotated order; the minimum of each figure.

    No contender always runs first (cold caches, a quiet moment of a shared machine): round
    ``r`` starts with the ``r``-th contender. Each figure is the smallest over the rounds,
    the least disturbed by other load.

    Example:
        >>> calls = []
        >>> best = alternate_rounds({"a": lambda: calls.append("a") or {"s": len(calls)},
        ...                          "b": lambda: calls.append("b") or {"s": len(calls)}}, 2)
        >>> calls, best["a"]["s"], best["b"]["s"]
        (['a', 'b', 'b', 'a'], 1, 2)
    """
    names = list(contenders)
    best: dict[str, dict[str, float]] = {}
    for round_number in range(rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            figures = contenders[name]()
            kept = best.setdefault(name, dict(figures))
            for key, value in figures.items():
                kept[key] = min(kept[key], value)
    return best


def nova_size_arrays(release: Path, predictions: Path) -> dict[str, Any]:
    """The three tasks' prepared evaluations of the NOVA-size scoring (no intervals)."""
    from novabench.report.scoring import score_predictions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scored = score_predictions(
            release,
            predictions,
            n_resamples=0,
            breakdowns=False,
            caption_options={"exclude": ["BERTScore-F1"]},
        )
    return dict(scored.evaluations)


def numpy_bootstrap_floor(
    table: np.ndarray, n_resamples: int, seed: int = 0, confidence: float = 0.95
) -> np.ndarray:
    """The least a bootstrap of ``table.shape[1]`` per-item keys can do, in bare numpy.

    The same draws as ``novabench.metrics.stats`` (one ``default_rng(seed).integers`` call,
    rows sorted), each key the mean of its per-item column over the drawn items (one
    matrix product of draw counts), and the two percentiles of every key. A metric that
    is a ratio of per-item counts needs this much and a little more; COCO AP needs more.

    Example:
        >>> intervals = numpy_bootstrap_floor(np.array([[0.0], [1.0]]), 200)
        >>> intervals.shape, bool(0.0 <= intervals[0, 0] <= intervals[1, 0] <= 1.0)
        ((2, 1), True)
    """
    n_items = len(table)
    rows = np.random.default_rng(seed).integers(0, n_items, size=(n_resamples, n_items))
    rows.sort(axis=1)
    flat = rows + (np.arange(n_resamples) * n_items)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * n_items)
    means = counts.reshape(n_resamples, n_items) @ table / n_items
    tail = (1 - confidence) / 2 * 100
    return np.percentile(means, [tail, 100 - tail], axis=0)


def numpy_case_bootstrap_floor(
    table: np.ndarray, codes: np.ndarray, n_resamples: int, seed: int = 0, confidence: float = 0.95
) -> np.ndarray:
    """The least a bootstrap of whole cases can do for ``table.shape[1]`` per-image keys.

    The same draws as ``novabench.metrics.stats`` with ``clusters`` (one
    ``default_rng(seed).integers(0, n_cases, size=n_cases)`` per resample, ``codes``: each
    image's case number), each key the mean of its per-image column over the images of the
    drawn cases: per-case totals taken once, then one matrix product of the cases' draw
    counts for the totals and one for the image counts, and the two percentiles of every
    key. Nothing is expanded to images per draw.

    Example:
        The same draws as a report's: on 0/1 hits every sum is exact, so the floor's
        interval of the hit rate is the bootstrap's own (20 images in 8 cases of 2-3).

        >>> from novabench.metrics.localization import prepare_localization
        >>> from novabench.metrics.stats import bootstrap_confidence_intervals, cluster_codes
        >>> hit = [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1]
        >>> cases = [f"c{i // 3 if i < 12 else i // 2}" for i in range(20)]
        >>> box, far = [0, 0, 10, 10], [50, 50, 10, 10]
        >>> evaluation = prepare_localization(
        ...     [{"boxes": [box if h else far]} for h in hit], [{"boxes": [box]}] * 20)
        >>> ours = bootstrap_confidence_intervals(evaluation, n_resamples=300, clusters=cases)
        >>> floor = numpy_case_bootstrap_floor(
        ...     np.array(hit, dtype=float)[:, None], cluster_codes(cases, 20), 300)
        >>> (float(floor[0, 0]), float(floor[1, 0])) == ours["mAP@30"]
        True
    """
    n_cases = int(codes.max()) + 1
    drawn = np.random.default_rng(seed).integers(0, n_cases, size=(n_resamples, n_cases))
    flat = drawn + (np.arange(n_resamples) * n_cases)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * n_cases).reshape(n_resamples, -1)
    case_totals = np.zeros((n_cases, table.shape[1]))
    np.add.at(case_totals, codes, table)
    case_sizes = np.bincount(codes, minlength=n_cases).astype(np.float64)
    weights = counts.astype(np.float64)
    means = (weights @ case_totals) / (weights @ case_sizes)[:, None]
    tail = (1 - confidence) / 2 * 100
    return np.percentile(means, [tail, 100 - tail], axis=0)


def numpy_case_coco_ap_floor(
    det_image: np.ndarray,
    det_matched: np.ndarray,
    gold_counts: np.ndarray,
    codes: np.ndarray,
    n_resamples: int,
    seed: int = 0,
    confidence: float = 0.95,
    rows_at_once: int = 64,
) -> np.ndarray:
    """The least a case bootstrap of the three COCO AP keys can do, in bare numpy.

    :func:`numpy_case_bootstrap_floor` takes every key as a mean of per-image values; COCO
    AP is none: each resample ranks its drawn images' detections again. This floor does the
    least of that: detections sorted by score once (``det_image``: each detection's image,
    in that order; ``det_matched``: ``(n_thresholds, n_detections)``, matched or not, row 0
    IoU 0.30, rows 1-10 IoU 0.50:0.05:0.95), each weighted by its image's draw count in a
    resample, then per resample and threshold the cumulative true and false positives, the
    precision envelope and its 101 recall points, all as 2-D arrays over a block of
    resamples (a threshold with the same matches as an earlier one copies its AP, as ours
    does). It is not exactly COCO's AP (a detection of an image drawn twice counts as
    one entry of weight 2, not two entries, and ties are not resolved), only its cost.

    Returns:
        ``(2, 3)``: the low and high bounds of COCO-AP@30, @50 and @50:95.

    Example:
        One image, one matched detection, one gold box: AP 1 in every resample (COCO's
        precision ``tp / (tp + fp + eps)`` keeps it an ulp below 1).

        >>> floor = numpy_case_coco_ap_floor(
        ...     np.array([0]), np.ones((11, 1), dtype=bool), np.array([1]), np.array([0]), 20)
        >>> floor.round(12).tolist()
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    n_cases = int(codes.max()) + 1
    drawn = np.random.default_rng(seed).integers(0, n_cases, size=(n_resamples, n_cases))
    flat = drawn + (np.arange(n_resamples) * n_cases)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * n_cases).reshape(n_resamples, -1)
    weights = counts[:, codes].astype(np.float64)  # (resamples, images)
    points = np.linspace(0.0, 1.0, 101)
    scores = np.empty((n_resamples, len(det_matched)))
    for start in range(0, n_resamples, rows_at_once):
        block = weights[start : start + rows_at_once]
        n_rows = len(block)
        per_detection = block[:, det_image]
        gold = np.maximum(block @ gold_counts, 1.0)[:, None]
        offsets = np.arange(n_rows)[:, None] * 2.0  # recalls lie in [0, 1]: rows kept apart
        done: dict[bytes, int] = {}
        for threshold, matched in enumerate(det_matched):
            key = np.packbits(matched).tobytes()
            if key in done:  # the same matches as an earlier threshold: the same AP
                scores[start : start + n_rows, threshold] = scores[
                    start : start + n_rows, done[key]
                ]
                continue
            done[key] = threshold
            true_positives = np.cumsum(per_detection * matched, axis=1)
            false_positives = np.cumsum(per_detection * ~matched, axis=1)
            precision = true_positives / (true_positives + false_positives + np.spacing(1))
            envelope = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
            recall = true_positives / gold + offsets
            at = np.searchsorted(recall.ravel(), (points + offsets).ravel()) - (
                np.arange(n_rows)[:, None] * recall.shape[1]
            ).ravel().repeat(len(points))
            inside = at < recall.shape[1]
            sampled = np.zeros(at.shape)
            rows = np.repeat(np.arange(n_rows), len(points))
            sampled[inside] = envelope[rows[inside], at[inside]]
            scores[start : start + n_rows, threshold] = sampled.reshape(n_rows, -1).mean(axis=1)
    keys = np.column_stack([scores[:, 0], scores[:, 1], scores[:, 1:].mean(axis=1)])
    tail = (1 - confidence) / 2 * 100
    return np.percentile(keys, [tail, 100 - tail], axis=0)


def forget_draws() -> None:
    """Empty the bootstrap's per-process store of draws (``novabench.metrics.stats``), so
    that a timed bootstrap draws as a fresh process does.

    Example:
        >>> forget_draws()
    """
    from novabench.metrics import stats

    draws = getattr(stats, "_DRAWS", None)  # trees from before it kept none
    if draws is not None:
        draws.forget()


def run_bootstrap_floor(
    release: Path, predictions: Path, resamples: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Each task's headline bootstrap, as a report runs it, against a bare-numpy floor of as
    many keys.

    An image task's intervals resample whole cases (``clusters``: each image's case id), so
    its floor is :func:`numpy_case_bootstrap_floor`; a case task's items are cases, drawn
    one by one, beside :func:`numpy_bootstrap_floor`. Both run in this process on the
    NOVA-size evaluations, alternated, best of ``rounds``; CPU seconds beside wall seconds.
    Prints one line per task; for localisation a second line against a floor that ranks
    each resample's detections for its COCO AP keys (:func:`numpy_case_coco_ap_floor`),
    which a mean of per-image values cannot give.
    """
    from novabench import registry
    from novabench.data.release import read_release
    from novabench.metrics.stats import bootstrap_confidence_intervals, cluster_codes

    evaluations = nova_size_arrays(release, predictions)
    cases = [image.case_id for image in read_release(release).images]
    figures: dict[str, dict[str, float]] = {}
    print(
        f"bootstrap, {resamples} resamples of the headline keys, as a report draws them (best"
        f" of {rounds}, alternated)"
    )
    for task, evaluation in evaluations.items():
        keys = [k for k, v in evaluation.aggregate().items() if isinstance(v, float)]
        table = np.random.default_rng(1).random((evaluation.n_items, len(keys)))
        clusters = cases if registry.TASKS[task].unit == "image" else None
        unit = "cases" if clusters is not None else "items"

        def timed(function: Callable[[], Any]) -> Callable[[], dict[str, float]]:
            def run() -> dict[str, float]:
                # Ours keeps a process's draws for its next bootstrap of the same size; a
                # report's first bootstrap of a size draws afresh, as the floor always does.
                forget_draws()
                start, cpu = time.perf_counter(), time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    function()
                return {"s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}

            return run

        floor: Callable[[], Any] = (
            partial(numpy_bootstrap_floor, table, resamples)
            if clusters is None
            else partial(
                numpy_case_bootstrap_floor,
                table,
                cluster_codes(clusters, evaluation.n_items),
                resamples,
            )
        )
        coco_keys = [key for key in keys if key.startswith("COCO-AP")]
        contenders = {
            "ours": timed(
                lambda evaluation=evaluation, clusters=clusters: bootstrap_confidence_intervals(
                    evaluation, n_resamples=resamples, clusters=clusters
                )
            ),
            "floor": timed(floor),
        }
        if coco_keys and clusters is not None:
            # The floor above takes COCO AP as a mean of per-image values, which it is not:
            # beside it, a floor that ranks each resample's detections (weighted by draws)
            # for those keys and takes the others as means.
            codes = cluster_codes(clusters, evaluation.n_items)
            coco_inputs = coco_floor_inputs(evaluation)
            ratio_table = table[:, : len(keys) - len(coco_keys)]

            def ranked_floor(
                coco_inputs: tuple[np.ndarray, np.ndarray, np.ndarray] = coco_inputs,
                codes: np.ndarray = codes,
            ) -> None:
                det_image, det_matched, gold_counts = coco_inputs
                numpy_case_bootstrap_floor(ratio_table, codes, resamples)
                numpy_case_coco_ap_floor(det_image, det_matched, gold_counts, codes, resamples)

            contenders["floor ranking COCO AP"] = timed(ranked_floor)
            # Each part apart: the mean keys alone (ours without COCO AP, as a report's
            # breakdown cells run it, against the mean floor of as many keys) and COCO AP
            # alone (ours with it less ours without, against the ranking floor alone).
            from novabench.report.breakdowns import result_without_coco_ap

            contenders["ours without COCO AP"] = timed(
                lambda evaluation=evaluation, clusters=clusters: bootstrap_confidence_intervals(
                    result_without_coco_ap(evaluation), n_resamples=resamples, clusters=clusters
                )
            )
            contenders["floor of the mean keys"] = timed(
                partial(numpy_case_bootstrap_floor, ratio_table, codes, resamples)
            )
            contenders["floor ranking COCO AP alone"] = timed(
                lambda codes=codes, coco_inputs=coco_inputs: numpy_case_coco_ap_floor(
                    *coco_inputs, codes, resamples
                )
            )
        best = alternate_rounds(contenders, rounds)
        ratio = best["ours"]["s"] / best["floor"]["s"]
        cpu_ratio = best["ours"]["cpu_s"] / best["floor"]["cpu_s"]
        figures[task] = {**{f"{k}_{f}": v for k, d in best.items() for f, v in d.items()}}
        figures[task].update(ratio=ratio, cpu_ratio=cpu_ratio)
        print(
            f"  {task:<13} {evaluation.n_items:>4} items, {len(keys):>2} keys, {unit:<5} drawn:"
            f"  ours {best['ours']['s']:6.3f} s (CPU {best['ours']['cpu_s']:6.3f})"
            f"  floor {best['floor']['s']:6.3f} s (CPU {best['floor']['cpu_s']:6.3f})"
            f"  ours/floor {ratio:5.1f}x (CPU {cpu_ratio:5.1f}x)"
        )
        ranked = best.get("floor ranking COCO AP")
        if ranked is not None:
            ranked_ratio = best["ours"]["s"] / ranked["s"]
            ranked_cpu_ratio = best["ours"]["cpu_s"] / ranked["cpu_s"]
            figures[task].update(ranked_ratio=ranked_ratio, ranked_cpu_ratio=ranked_cpu_ratio)
            print(
                f"  {'':<13} {len(coco_keys)} of them COCO AP, ranked per resample:"
                f"  floor {ranked['s']:6.3f} s (CPU {ranked['cpu_s']:6.3f})"
                f"  ours/floor {ranked_ratio:5.1f}x (CPU {ranked_cpu_ratio:5.1f}x)"
            )
            means, mean_floor = best["ours without COCO AP"], best["floor of the mean keys"]
            coco_floor = best["floor ranking COCO AP alone"]
            coco_cpu = best["ours"]["cpu_s"] - means["cpu_s"]
            figures[task].update(
                means_cpu_s=means["cpu_s"],
                means_floor_cpu_s=mean_floor["cpu_s"],
                coco_cpu_s=coco_cpu,
                coco_floor_cpu_s=coco_floor["cpu_s"],
            )
            print(
                f"  {'':<13} the {len(keys) - len(coco_keys)} mean keys alone: ours CPU"
                f" {means['cpu_s']:6.3f}  floor CPU {mean_floor['cpu_s']:6.3f}"
                f"  ours/floor {means['cpu_s'] / mean_floor['cpu_s']:5.1f}x;"
                f" COCO AP alone (ours less the mean keys): ours CPU {coco_cpu:6.3f}"
                f"  ranking floor CPU {coco_floor['cpu_s']:6.3f}"
                f"  ours/floor {coco_cpu / coco_floor['cpu_s']:5.2f}x"
            )
    return figures


def coco_floor_inputs(evaluation: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A localisation evaluation's detections as :func:`numpy_case_coco_ap_floor` takes them:
    each detection's image and its matches per threshold in COCO's order (score, then image),
    and the gold boxes per image. The matching is done once before any bootstrap, by ours
    and the floor alike, so the floor reads it from the evaluation."""
    det_image = np.repeat(evaluation._block_image, evaluation._block_length)
    return det_image, evaluation._sorted_matched, evaluation._gold_counts.astype(np.float64)


def _cpu(figures: dict[str, float]) -> str:
    """CPU seconds of a ``nova evaluate`` run, its helpers' share apart when it had some."""
    own = f"{figures['scoring_cpu_s']:5.2f}"
    helpers = figures["helpers_cpu_s"]
    return f"{own} + {helpers:4.2f}" if helpers > 0 else own


# The nova evaluate runs compared, as (label, resamples, extra options).
EVALUATE_RUNS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("no intervals", 0, ()),
    ("1000 resamples", 1000, ()),
    ("1000, --no-breakdowns", 1000, ("--no-breakdowns",)),
    ("1000, --items --html", 1000, ("--items", "--html")),
)


def run_nova_size(
    release_dir: Path | None,
    work: Path,
    *,
    rounds: int = 5,
    other_source: Path | None = None,
    face: bool = True,
    bytecode: Path | None = None,
) -> dict[str, Any]:
    """NOVA-size scoring end to end, alternated over ``rounds``; prints a table.

    With ``other_source`` (another tree's ``src``), every ``nova evaluate`` run is also made
    with that tree, alternating with this one, so both columns share the machine's moods.
    With ``bytecode`` (a folder), compiled modules are kept there: the first round compiles
    them, the minimum over rounds leaves that out (give at least 2 rounds).
    """
    import json
    import subprocess

    release, predictions = nova_size_inputs(release_dir, work)
    trees: dict[str, Path | None] = {"this tree": None}
    if other_source is not None:
        trees = {"other tree": other_source, **trees}
    contenders: dict[str, Callable[[], dict[str, float]]] = {}
    runs = {tree: list(EVALUATE_RUNS) for tree in trees}
    if other_source is not None and (other_source / "novabench" / "parallel.py").exists():
        # A tree from before scoring became one process: its one-process figure too.
        runs["other tree"].append(("1000, --jobs 1", 1000, ("--jobs", "1")))
    for tree, source in trees.items():
        for label, resamples, extra in runs[tree]:
            contenders[f"{tree}|{label}"] = lambda resamples=resamples, extra=extra, source=source: (
                run_nova_evaluate(
                    release, predictions, resamples, *extra, source=source, bytecode=bytecode
                )
            )

    def face_run(resamples: int) -> dict[str, float]:
        # In its own interpreter, so that `import evaluate` is measured cold.
        code = (
            f"import json, sys; sys.path.insert(0, {str(HERE)!r}); "
            "from bench_metric import run_nova_face; "
            f"print(json.dumps(run_nova_face(__import__('pathlib').Path({str(release)!r}), "
            f"__import__('pathlib').Path({str(predictions)!r}), {resamples:d})))"
        )
        finished = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env=child_environment(None, bytecode),
        )
        return dict(json.loads(finished.stdout.strip().splitlines()[-1]))

    if face:
        for resamples in (0, 1000):
            contenders[f"face|{resamples}"] = lambda resamples=resamples: face_run(resamples)
    best = alternate_rounds(contenders, rounds)
    print(
        f"906 images / 281 cases, all metrics but BERTScore; best of {rounds} rounds, contenders"
        " alternated (seconds; CPU of the command, + its helper processes' if any)"
    )
    compiled = (
        f"modules' bytecode kept in {bytecode} between runs, as an installed package has it"
        if bytecode is not None
        else "bytecode as the environment says"
        + (
            " (PYTHONDONTWRITEBYTECODE: every run compiles every module)"
            if os.environ.get("PYTHONDONTWRITEBYTECODE")
            else ""
        )
    )
    print(f"  {compiled}")
    for tree in trees:
        print(f"  {tree}{'' if trees[tree] is None else ' (' + str(trees[tree]) + ')'}")
        for label, _, _ in runs[tree]:
            run = best[f"{tree}|{label}"]
            print(
                f"    nova evaluate, {label:<22} scoring {run['scoring_s']:5.2f}"
                f" (CPU {_cpu(run)})  start+imports {run['start_s']:5.2f}"
                f"  whole command {run['wall_s']:5.2f}"
            )
    if face:
        for resamples in (0, 1000):
            run = best[f"face|{resamples}"]
            print(
                f"  evaluate face, {resamples:>4} resamples: compute {run['compute_s']:5.2f}"
                f"  import evaluate {run['import_s']:5.2f}  load {run['load_s']:5.2f}"
            )
    bootstrap = run_bootstrap_floor(release, predictions, 1000, rounds)
    return {"runs": best, "bootstrap": bootstrap}


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
    parser.add_argument("--rounds", type=int, default=5, help="rounds of alternated runs")
    parser.add_argument(
        "--other-src",
        type=Path,
        help="another tree's src folder: its nova evaluate runs beside this tree's",
    )
    parser.add_argument("--no-face", action="store_true", help="skip the evaluate face runs")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="leave compiled bytecode as the environment says (by default it is kept under "
        "WORK/pycache between runs, as an installed package has it)",
    )
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start")

    if args.only in (None, "nova"):
        print("\n== 0. NOVA-size scoring end to end")
        run_nova_size(
            args.release,
            args.work,
            rounds=args.rounds,
            other_source=args.other_src,
            face=not args.no_face,
            bytecode=None if args.no_bytecode_cache else (args.work / "pycache").resolve(),
        )
    if args.only in (None, "localization"):
        print("\n== 1. localisation: ours vs pycocotools vs faster-coco-eval")
        for size in (args.images, args.large):
            if size:
                run_localization_benchmark(size, 10, 0, rounds=args.rounds)
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
