"""Benchmark of the localisation metric against pycocotools and faster-coco-eval.

Times, on the same seeded synthetic set (default 10,000 images x 10 predictions):

- ours, full: ``score_localization`` (COCO-AP@50:95, @30, @50 + protocol hit rates + counts);
- ours, AP only: ``coco_average_precision`` (thresholds 0.50:0.05:0.95 only), the
  like-for-like counterpart of one default COCOeval run;
- pycocotools ``COCOeval`` evaluate + accumulate (stdout suppressed), and separately the
  time to build its COCO objects from the same Python lists;
- faster-coco-eval ``COCOeval_faster`` evaluate + accumulate, same split.

Each library runs twice: with COCOeval's default four area ranges (all, small, medium,
large: the usual "x times pycocotools" setting, but three quarters of that run is
evaluating the three size ranges we never compute) and with the one range "all", the same
work as ``coco_average_precision`` (10 IoU thresholds, 100 detections, one category, every
box): the like-for-like ratio.

Every contender runs once per round, the order rotated each round (so none is always
first and cold), and each figure is the best of ``--rounds``; CPU seconds are printed
beside wall seconds. It prints seconds, ratios, the peak memory of our full run
(tracemalloc) and whether the COCO-AP@50:95 values agree to 1e-9. It asserts nothing:
speed is not a test.

Usage:
    python scripts/bench_localization.py [--images 10000] [--per-image 10] [--seed 0] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
import tracemalloc
import warnings
from typing import Any

import numpy as np

from novabench.metrics.localization import (
    LocalizationWarning,
    coco_average_precision,
    score_localization,
)


def make_synthetic_set(
    n_images: int, dets_per_image: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Seeded NOVA-like set: 1-3 gold boxes per 480 px image, jittered and random predictions.

    Args:
        n_images: number of images.
        dets_per_image: predicted boxes per image.
        seed: seed of numpy's default_rng.

    Returns:
        ``(predictions, references)`` as plain Python lists, as a user would pass them.

    Example:
        >>> predictions, references = make_synthetic_set(3, 2, seed=0)
        >>> len(predictions), len(predictions[0]["boxes"])
        (3, 2)
    """
    rng = np.random.default_rng(seed)
    predictions, references = [], []
    for _ in range(n_images):
        n_gold = int(rng.integers(1, 4))
        gold = np.column_stack((rng.uniform(0, 400, (n_gold, 2)), rng.uniform(10, 80, (n_gold, 2))))
        near = gold[rng.integers(0, n_gold, dets_per_image)]
        jitter = rng.normal(0, 0.08, (dets_per_image, 4)) * near[:, [2, 3, 2, 3]]
        boxes = np.abs(near + jitter)
        random_boxes = rng.random(dets_per_image) < 0.4
        n_random = int(random_boxes.sum())
        boxes[random_boxes] = np.column_stack(
            (rng.uniform(0, 400, (n_random, 2)), rng.uniform(10, 80, (n_random, 2)))
        )
        predictions.append({"boxes": boxes.tolist(), "scores": rng.random(dets_per_image).tolist()})
        references.append({"boxes": gold.tolist()})
    return predictions, references


def _coco_inputs(predictions: list[dict[str, Any]], references: list[dict[str, Any]]):
    images = [{"id": i + 1} for i in range(len(references))]
    annotations, detections = [], []
    for i, reference in enumerate(references):
        for box in reference["boxes"]:
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": i + 1,
                    "category_id": 1,
                    "bbox": box,
                    "area": box[2] * box[3],
                    "iscrowd": 0,
                }
            )
    for i, prediction in enumerate(predictions):
        for box, score in zip(prediction["boxes"], prediction["scores"]):
            detections.append({"image_id": i + 1, "category_id": 1, "bbox": box, "score": score})
    dataset = {"images": images, "annotations": annotations, "categories": [{"id": 1}]}
    return dataset, detections


def _run_coco(
    coco_module, make_evaluator, dataset, detections, *, all_areas_only: bool = False
) -> tuple[float, float, float, float]:
    """(build s, evaluate+accumulate s, its CPU s, mAP@50:95) for one COCO implementation.

    ``all_areas_only`` evaluates the one area range "all" instead of COCOeval's four.
    """
    with contextlib.redirect_stdout(io.StringIO()):
        start = time.perf_counter()
        gt = coco_module.COCO()
        gt.dataset = {key: list(value) for key, value in dataset.items()}
        gt.createIndex()
        dt = gt.loadRes([dict(d) for d in detections])
        built = time.perf_counter()
        cpu_start = time.process_time()
        evaluator = make_evaluator(gt, dt)
        evaluator.params.maxDets = [100]
        if all_areas_only:
            evaluator.params.areaRng = [[0**2, 1e5**2]]  # COCOeval's own "all" range
            evaluator.params.areaRngLbl = ["all"]
        evaluator.evaluate()
        evaluator.accumulate()
        done = time.perf_counter()
        cpu = time.process_time() - cpu_start
    area_all = list(evaluator.params.areaRngLbl).index("all")
    precision = evaluator.eval["precision"][:, :, 0, area_all, -1]
    return built - start, done - built, cpu, float(np.mean(precision[precision > -1]))


def _best_of_alternated(
    contenders: dict[str, Any], rounds: int
) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Each contender once per round, the order rotated; the smallest of each figure.

    A contender returns ``(figures, value)``; the value of its last run is kept.

    Example:
        >>> best, values = _best_of_alternated({"a": lambda: ({"s": 2.0}, 1)}, 2)
        >>> best["a"]["s"], values["a"]
        (2.0, 1)
    """
    names = list(contenders)
    best: dict[str, dict[str, float]] = {}
    values: dict[str, Any] = {}
    for round_number in range(rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            figures, values[name] = contenders[name]()
            kept = best.setdefault(name, dict(figures))
            for key, value in figures.items():
                kept[key] = min(kept[key], value)
    return best, values


def run_localization_benchmark(
    n_images: int = 10000, dets_per_image: int = 10, seed: int = 0, rounds: int = 3
) -> dict[str, Any]:
    """Time ours, pycocotools and faster-coco-eval on one synthetic set; print and return figures.

    Every contender runs once per round, in an order rotated each round (none always first
    and cold), and each figure is the best of ``rounds``; CPU seconds are kept beside wall
    seconds (steadier on a shared machine).

    Args:
        n_images: number of synthetic images.
        dets_per_image: predictions per image.
        seed: seed of the synthetic set.
        rounds: rounds of alternated runs.

    Returns:
        A dict of seconds (``ours_full_s``, ``ours_ap_only_s``, ``pycocotools_build_s``,
        ``pycocotools_eval_s``, ``faster_build_s``, ``faster_eval_s``, ``*_all_area_*`` for
        the one area range "all"), their ``*_cpu_s``, ratios, peak memory
        (``ours_peak_mib``) and ``ap_agree`` (all COCO-AP@50:95 within 1e-9).

    Example:
        >>> figures = run_localization_benchmark(20, 3, rounds=1)  # doctest: +ELLIPSIS
        images: 20, ...
        >>> figures["ap_agree"]
        True
    """
    predictions, references = make_synthetic_set(n_images, dets_per_image, seed)
    figures: dict[str, Any] = {"n_images": n_images, "dets_per_image": dets_per_image}

    def ours(function: Any) -> Any:
        def run() -> tuple[dict[str, float], Any]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LocalizationWarning)
                start, cpu_start = time.perf_counter(), time.process_time()
                value = function(predictions, references)
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            return {"s": wall, "cpu_s": cpu}, value

        return run

    contenders: dict[str, Any] = {
        "ours_full": ours(score_localization),
        "ours_ap_only": ours(coco_average_precision),
    }
    dataset, detections = _coco_inputs(predictions, references)
    libraries: list[tuple[str, Any, Any]] = []
    try:
        from pycocotools import coco as pycoco
        from pycocotools.cocoeval import COCOeval

        libraries.append(("pycocotools", pycoco, lambda gt, dt: COCOeval(gt, dt, "bbox")))
    except ImportError:
        print("pycocotools not installed: skipped")
    try:
        import faster_coco_eval

        libraries.append(
            (
                "faster",
                faster_coco_eval,
                lambda gt, dt: faster_coco_eval.COCOeval_faster(
                    gt, dt, "bbox", print_function=lambda *args: None
                ),
            )
        )
    except ImportError:
        print("faster-coco-eval not installed: skipped")
    for name, module, make_evaluator in libraries:
        for suffix, all_areas_only in (("", False), ("_all_area", True)):

            def library(
                module: Any = module,
                make_evaluator: Any = make_evaluator,
                only: bool = all_areas_only,
            ) -> tuple[dict[str, float], float]:
                build, evaluate, cpu, ap = _run_coco(
                    module, make_evaluator, dataset, detections, all_areas_only=only
                )
                return {"build_s": build, "eval_s": evaluate, "eval_cpu_s": cpu}, ap

            contenders[f"{name}{suffix}"] = library
    best, values = _best_of_alternated(contenders, rounds)
    for name in ("ours_full", "ours_ap_only"):
        figures[f"{name}_s"], figures[f"{name}_cpu_s"] = best[name]["s"], best[name]["cpu_s"]
    aps = {"ours": values["ours_full"]["COCO-AP@50:95"], "ours_ap_only": values["ours_ap_only"]}
    for name, _, _ in libraries:
        for suffix in ("", "_all_area"):
            for figure, value in best[f"{name}{suffix}"].items():
                figures[f"{name}{suffix}_{figure}"] = value
            library_name = "faster_coco_eval" if name == "faster" else name
            aps[f"{library_name}{suffix}"] = values[f"{name}{suffix}"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LocalizationWarning)
        tracemalloc.start()
        score_localization(predictions, references)
        figures["ours_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()

    values_list = list(aps.values())
    figures["ap_values"] = aps
    figures["ap_agree"] = bool(max(values_list) - min(values_list) <= 1e-9)

    print(
        f"images: {n_images}, predictions per image: {dets_per_image}, seed: {seed};"
        f" best of {rounds} alternated rounds"
    )
    print(
        f"  ours  score_localization (all keys)      {figures['ours_full_s']:8.3f} s"
        f"  CPU {figures['ours_full_cpu_s']:.3f} s"
    )
    print(
        f"  ours  coco_average_precision (50:95)     {figures['ours_ap_only_s']:8.3f} s"
        f"  CPU {figures['ours_ap_only_cpu_s']:.3f} s"
    )
    print(f"  ours  peak memory (tracemalloc)          {figures['ours_peak_mib']:8.1f} MiB")
    for name, label in (("pycocotools", "pycocotools"), ("faster", "faster-coco-eval")):
        if f"{name}_eval_s" not in figures:
            continue
        evaluate, build = figures[f"{name}_eval_s"], figures[f"{name}_build_s"]
        print(
            f"  {label:17s} evaluate+accumulate    {evaluate:8.3f} s"
            f"  (+ {build:.3f} s building COCO objects; 4 area ranges)"
        )
        figures[f"{name}_over_ours_full"] = evaluate / figures["ours_full_s"]
        figures[f"{name}_over_ours_ap_only"] = evaluate / figures["ours_ap_only_s"]
        figures[f"{name}_with_build_over_ours_full"] = (evaluate + build) / figures["ours_full_s"]
        print(
            f"    ratio {label}/ours: {figures[f'{name}_over_ours_ap_only']:.2f}x vs AP only, "
            f"{figures[f'{name}_over_ours_full']:.2f}x vs all keys, "
            f"{figures[f'{name}_with_build_over_ours_full']:.2f}x incl. building vs all keys"
        )
        # CPU time: the fairer ratio when other processes share the cores.
        figures[f"{name}_cpu_over_ours_full"] = (
            figures[f"{name}_eval_cpu_s"] / figures["ours_full_cpu_s"]
        )
        print(
            f"    CPU time: {label} {figures[f'{name}_eval_cpu_s']:.3f} s vs ours (all keys) "
            f"{figures['ours_full_cpu_s']:.3f} s = {figures[f'{name}_cpu_over_ours_full']:.2f}x"
        )
        # The same work as ours: area range "all" only, against our AP-only run.
        evaluate, cpu = figures[f"{name}_all_area_eval_s"], figures[f"{name}_all_area_eval_cpu_s"]
        figures[f"{name}_all_area_over_ours_ap_only"] = evaluate / figures["ours_ap_only_s"]
        figures[f"{name}_all_area_cpu_over_ours_ap_only"] = cpu / figures["ours_ap_only_cpu_s"]
        print(
            f'  {label:17s} area "all" only         {evaluate:8.3f} s'
            f"  = {figures[f'{name}_all_area_over_ours_ap_only']:.2f}x vs AP only (like for like);"
            f" CPU {cpu:.3f} s vs {figures['ours_ap_only_cpu_s']:.3f} s"
            f" = {figures[f'{name}_all_area_cpu_over_ours_ap_only']:.2f}x"
        )
    print("  COCO-AP@50:95: " + ", ".join(f"{k}={v:.12f}" for k, v in aps.items()))
    print(f"  agree to 1e-9: {figures['ap_agree']}")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--per-image", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of alternated runs")
    args = parser.parse_args(argv)
    run_localization_benchmark(args.images, args.per_image, args.seed, args.rounds)


if __name__ == "__main__":
    main()
