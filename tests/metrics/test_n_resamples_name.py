"""One setting, one name in Python (trust28): the bootstrap's resamples are ``n_resamples=``
in ``compute_task`` as in ``evaluate_predictions``; the old ``bootstrap_resamples=`` still
works with a FutureWarning; the command line's ``--bootstrap`` is named where it differs.
"""

from __future__ import annotations

import argparse
import warnings

import pytest

from novabench.cli.evaluate import add_scoring_options
from novabench.errors import N_RESAMPLES, NovaInputError
from novabench.metrics.tasks import compute_task
from novabench.report.scoring import ScoringOptions

PREDICTIONS = [["Glioma"], ["Meningioma"], ["Lymphoma"], ["Glioma"]]
REFERENCES = ["Glioma", "Glioma", "Lymphoma", "Multiple sclerosis"]


def test_compute_task_takes_n_resamples_and_the_old_name_with_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name warns of nothing
        new = compute_task("diagnosis", PREDICTIONS, REFERENCES, n_resamples=40, seed=2)
    with pytest.warns(FutureWarning, match="pass n_resamples=40") as caught:
        old = compute_task("diagnosis", PREDICTIONS, REFERENCES, bootstrap_resamples=40, seed=2)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert new["top1-lexicon"] == old["top1-lexicon"] == 0.5  # 2 of 4 cases (by hand)
    assert new["confidence_intervals"] == old["confidence_intervals"]
    assert set(new["confidence_intervals"]) >= {"top1-lexicon", "top5-lexicon"}
    with pytest.raises(NovaInputError, match="name the same setting"):
        compute_task("diagnosis", PREDICTIONS, REFERENCES, n_resamples=4, bootstrap_resamples=4)
    # No resamples: no intervals, under either name.
    assert "confidence_intervals" not in compute_task("diagnosis", PREDICTIONS, REFERENCES)


def test_the_python_api_names_the_old_spelling_and_the_cli_names_its_flag() -> None:
    with pytest.raises(
        TypeError, match=r"bootstrap_resamples \(the bootstrap's resamples are n_resamples="
    ):
        ScoringOptions.build(bootstrap_resamples=10)
    with pytest.raises(NovaInputError) as caught:
        ScoringOptions(n_resamples=-1)
    assert caught.value.field == "n_resamples" and caught.value.field_option is N_RESAMPLES
    assert "'--bootstrap'" in caught.value.in_words(lambda option: option.flag)
    parser = argparse.ArgumentParser()
    add_scoring_options(parser)
    (bootstrap,) = [a for a in parser._actions if "--bootstrap" in a.option_strings]
    assert bootstrap.help is not None and "n_resamples=" in bootstrap.help


def test_the_docs_name_python_faces_that_exist_and_no_script_passes_the_old_name() -> None:
    """user31: the README and CHANGELOG listed a face ``evaluate`` that novabench has not
    (it is ``evaluate_model``), and scripts/bench_metric.py still passed the old name."""
    import re
    from pathlib import Path

    import novabench
    from novabench.report import scoring

    root = Path(__file__).resolve().parents[2]
    faces = {"evaluate_predictions": scoring, "evaluate_model": novabench}
    for doc in ("README.md", "CHANGELOG.md"):
        text = " ".join((root / doc).read_text(encoding="utf-8").split())
        lists = re.findall(r"`n_resamples=` \((`[^)]*)", text)
        assert lists, doc  # the sentence listing the Python faces is still there
        for listed in lists:
            names = re.findall(r"`([A-Za-z_]+)`", listed.split(", the ")[0])
            assert "evaluate" not in names, (doc, listed)
            for name in names:
                if name in faces:
                    assert hasattr(faces[name], name), (doc, name)
    for script in sorted((root / "scripts").glob("*.py")):
        assert "bootstrap_resamples=" not in script.read_text(encoding="utf-8"), script.name
