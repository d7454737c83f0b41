"""One key, one quantity: METEOR with and without the WordNet corpus installed.

``METEOR`` is nltk's METEOR with WordNet synonyms; the exact + stem reading is
``METEOR-exact+stem``. These tests install a small WordNet database of their own
(:mod:`tests.metrics.tiny_wordnet`) on nltk's data path, or an empty data path for "not
installed", so both machines are simulated whatever this one has.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from novabench.errors import NovaInputError
from novabench.metrics import meteor as meteor_module
from novabench.metrics import text
from novabench.metrics.captioning import score_captioning
from tests.metrics.tiny_wordnet import write_tiny_wordnet

NO_BERT = ["BERTScore-F1"]

# Captions where synonyms of the test corpus matter (tumour/neoplasm, oedema/swelling...).
PREDICTIONS = [
    "Axial FLAIR: large neoplasm in the left frontal lobe with surrounding swelling.",
    "Sagittal T1: tumor of the pons.",
    "Hemorrhage in the right thalamus.",
    "Normal study.",
    "",
]
REFERENCES = [
    "Axial FLAIR image: large tumour of the left frontal lobe with surrounding oedema.",
    "Sagittal T1-weighted: pontine neoplasm.",
    "Axial T2: haemorrhage in the right thalamus, no oedema.",
    "Coronal T2: no abnormality.",
    "Axial DWI: restricted diffusion in the left cerebellum.",
]


def _use_nltk_data(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """nltk searches only ``folder``, with a fresh (not yet loaded) WordNet loader."""
    import nltk.corpus
    import nltk.data
    from nltk.corpus.reader import CorpusReader, WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    monkeypatch.setattr(nltk.data, "path", [str(folder)])
    omw = LazyCorpusLoader("omw-1.4", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")
    monkeypatch.setattr(
        nltk.corpus, "wordnet", LazyCorpusLoader("wordnet", WordNetCorpusReader, omw)
    )


@pytest.fixture
def with_wordnet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A machine with nltk's WordNet corpus installed (the test corpus)."""
    write_tiny_wordnet(tmp_path / "nltk_data")
    _use_nltk_data(monkeypatch, tmp_path / "nltk_data")
    meteor_module._wordnet_reader.cache_clear()
    yield
    meteor_module._wordnet_reader.cache_clear()


@pytest.fixture
def without_wordnet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A machine without it: nltk's data path holds no corpus."""
    (tmp_path / "empty_nltk_data").mkdir()
    _use_nltk_data(monkeypatch, tmp_path / "empty_nltk_data")
    meteor_module._wordnet_reader.cache_clear()
    yield
    meteor_module._wordnet_reader.cache_clear()


def test_the_test_corpus_is_a_wordnet_nltk_loads(with_wordnet):
    from nltk.corpus import wordnet

    assert text.meteor_variant() == "wordnet"
    assert wordnet.get_version() == "3.0"
    # nltk's own morphology finds the plural's lemma in our index.
    assert [lemma.name() for lemma in wordnet.synsets("tumours")[0].lemmas()] == [
        "tumour",
        "tumor",
        "neoplasm",
    ]


def test_wordnet_meteor_equals_nltks_meteor_score_with_the_same_corpus(with_wordnet):
    from nltk.corpus import wordnet
    from nltk.translate.meteor_score import meteor_score

    expected = [
        meteor_score([text.tokenize_meteor(r)], text.tokenize_meteor(p), wordnet=wordnet)
        for p, r in zip(PREDICTIONS, REFERENCES)
    ]
    ours = text.meteor_scores(PREDICTIONS, REFERENCES, variant="wordnet")
    assert ours.tolist() == expected
    exact_stem = text.meteor_scores(PREDICTIONS, REFERENCES, variant="exact+stem")
    # The synonym stage matches words the other reading cannot: the quantities differ.
    assert ours[0] > exact_stem[0] and ours[1] > exact_stem[1]


def test_a_pair_matched_only_by_a_synonym_by_hand(with_wordnet):
    # 1 word each side, matched in the synonym stage: P = R = 1, Fmean = 1, one chunk,
    # penalty 0.5 * (1/1) ** 3 = 0.5 -> 0.5; exact + stem find nothing -> 0.
    assert text.meteor_scores(["neoplasm"], ["tumour"]).tolist() == [0.5]
    assert text.meteor_scores(["neoplasm"], ["tumour"], variant="exact+stem").tolist() == [0.0]


def test_auto_gives_meteor_when_the_corpus_is_installed(with_wordnet):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no warning: METEOR is what was asked
        result = score_captioning(PREDICTIONS, REFERENCES, exclude=NO_BERT)
    assert result["METEOR_variant"] == "wordnet"
    assert result["METEOR_nltk"] == __import__("nltk").__version__  # nltk's code computes it
    assert "METEOR-exact+stem" not in result
    assert result["METEOR"] == pytest.approx(
        float(text.meteor_scores(PREDICTIONS, REFERENCES, variant="wordnet").mean()), abs=0
    )


def test_auto_without_the_corpus_gives_the_other_key_and_says_so(without_wordnet):
    with pytest.warns(UserWarning, match=r"METEOR not computed: the nltk WordNet corpus"):
        result = score_captioning(PREDICTIONS, REFERENCES, exclude=NO_BERT)
    assert "METEOR" not in result  # never a different quantity under METEOR
    assert result["METEOR_variant"] == "exact+stem"
    assert result["METEOR-exact+stem"] == float(
        text.meteor_scores(PREDICTIONS, REFERENCES, variant="exact+stem").mean()
    )


def test_wordnet_setting_refuses_without_the_corpus(without_wordnet):
    with pytest.raises(NovaInputError, match=r"meteor.*not installed.*meteor=\"exact\+stem\""):
        score_captioning(PREDICTIONS, REFERENCES, exclude=NO_BERT, meteor="wordnet")
    with pytest.raises(NovaInputError, match="not installed"):
        text.meteor_scores(["a"], ["a"])  # the functions' default is METEOR itself
    # Left out, METEOR needs no corpus: nothing to refuse.
    result = score_captioning(["a"], ["a"], exclude=[*NO_BERT, "METEOR"], meteor="wordnet")
    assert "METEOR" not in result and "METEOR-exact+stem" not in result


def test_an_unknown_setting_is_refused_even_when_meteor_is_left_out():
    with pytest.raises(NovaInputError, match="field 'meteor'.*auto, wordnet, exact\\+stem"):
        score_captioning(["a"], ["a"], exclude=[*NO_BERT, "METEOR"], meteor="synonyms")


def test_exact_stem_is_the_same_result_with_or_without_the_corpus(monkeypatch, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    _use_nltk_data(monkeypatch, empty)
    meteor_module._wordnet_reader.cache_clear()
    without = score_captioning(PREDICTIONS, REFERENCES, exclude=NO_BERT, meteor="exact+stem")
    write_tiny_wordnet(tmp_path / "installed")
    _use_nltk_data(monkeypatch, tmp_path / "installed")
    meteor_module._wordnet_reader.cache_clear()
    try:
        assert text.meteor_variant() == "wordnet"
        with_corpus = score_captioning(
            PREDICTIONS, REFERENCES, exclude=NO_BERT, meteor="exact+stem"
        )
    finally:
        meteor_module._wordnet_reader.cache_clear()
    assert with_corpus == without  # what the user chose, whatever is installed


# --------------------------------------------------------------------------- #
# The with/without-WordNet part of the determinism check, through nova evaluate
# --------------------------------------------------------------------------- #

_VOLATILE = ("created_at", "updated_at", "path", "paths")


def _stable(value):
    """A report without its timestamps and paths (which differ between two runs anyway)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _score_twice(monkeypatch, tmp_path, release, predictions, meteor):
    from novabench.report import evaluate_predictions

    options = {"exclude": NO_BERT, "meteor": meteor}
    reports = {}
    for machine in ("without", "with"):
        folder = tmp_path / f"nltk_{machine}"
        if machine == "with":
            write_tiny_wordnet(folder)
        else:
            folder.mkdir()
        _use_nltk_data(monkeypatch, folder)
        meteor_module._wordnet_reader.cache_clear()
        try:
            reports[machine] = evaluate_predictions(
                release, predictions, n_resamples=20, tasks=("captioning",), caption_options=options
            )
        finally:
            meteor_module._wordnet_reader.cache_clear()
    return _stable(reports["without"]), _stable(reports["with"])


def _caption_predictions(release: Path, path: Path) -> Path:
    from novabench.data.release import read_release

    images = read_release(release).images
    # Realistic rewordings: synonyms of the test corpus, a dropped clause, an empty answer.
    swaps = {"tumour": "neoplasm", "oedema": "swelling", "haemorrhage": "bleeding"}
    lines = []
    for index, image in enumerate(images):
        caption = image.caption
        for word, synonym in swaps.items():
            caption = caption.replace(word, synonym)
        if index % 5 == 0:
            caption = caption.split(",")[0]
        if index % 11 == 0:
            caption = ""
        lines.append(json.dumps({"filename": image.filename, "caption": caption}))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_auto_scored_with_and_without_wordnet_differs_only_in_the_meteor_key(
    monkeypatch, tmp_path, sample_release
):
    predictions = _caption_predictions(sample_release, tmp_path / "pred.jsonl")
    without, with_corpus = _score_twice(monkeypatch, tmp_path, sample_release, predictions, "auto")
    metrics_without = without["tasks"]["captioning"]["metrics"]
    metrics_with = with_corpus["tasks"]["captioning"]["metrics"]
    # Where the setting differs, the keys differ: never two quantities under METEOR.
    assert "METEOR" in metrics_with and "METEOR" not in metrics_without
    assert "METEOR-exact+stem" in metrics_without and "METEOR-exact+stem" not in metrics_with
    assert metrics_without["METEOR_variant"] == "exact+stem"
    assert metrics_with["METEOR_variant"] == "wordnet"
    assert "METEOR_nltk" in metrics_with and "METEOR_nltk" not in metrics_without
    assert without["tasks"]["captioning"]["notes"][0].startswith("METEOR not computed:")
    assert not any("METEOR not computed" in n for n in with_corpus["tasks"]["captioning"]["notes"])

    # Everything else is equal: drop the METEOR keys, their variant, notes and CIs.
    def rest(report):
        meteor = {"METEOR", "METEOR-exact+stem", "METEOR_variant", "METEOR_nltk"}
        task = dict(report["tasks"]["captioning"])
        task["metrics"] = {k: v for k, v in task["metrics"].items() if k not in meteor}
        task["confidence_intervals"] = {
            k: v for k, v in task["confidence_intervals"].items() if k not in meteor
        }
        task["notes"] = [n for n in task["notes"] if not n.startswith("METEOR not computed")]
        breakdowns = {
            dimension: [
                {k: v for k, v in row.items() if k.removesuffix("_ci") not in meteor}
                for row in rows
            ]
            for dimension, rows in report["breakdowns"]["captioning"].items()
        }
        return {**report, "tasks": {"captioning": task}, "breakdowns": {"captioning": breakdowns}}

    assert rest(without) == rest(with_corpus)


def test_exact_stem_chosen_gives_equal_reports_with_and_without_wordnet(
    monkeypatch, tmp_path, sample_release
):
    predictions = _caption_predictions(sample_release, tmp_path / "pred.jsonl")
    without, with_corpus = _score_twice(
        monkeypatch, tmp_path, sample_release, predictions, "exact+stem"
    )
    assert "METEOR-exact+stem" in without["tasks"]["captioning"]["metrics"]
    assert without == with_corpus


def test_the_evaluate_face_refuses_wordnet_before_the_data_is_consumed(without_wordnet):
    import evaluate

    module = str(Path(__file__).resolve().parents[2] / "metrics" / "nova_metric")
    metric = evaluate.load(module, "captioning")
    metric.add_batch(predictions=PREDICTIONS[:2], references=REFERENCES[:2])
    with pytest.raises(
        NovaInputError, match="WordNet 3.0 corpus, but the nltk WordNet corpus is not installed"
    ):
        metric.compute(exclude=NO_BERT, meteor="wordnet")
    result = metric.compute(exclude=NO_BERT, meteor="exact+stem")  # the batches are still there
    assert result["n_captions"] == 2 and "METEOR" not in result
    assert result["METEOR-exact+stem"] == float(
        text.meteor_scores(PREDICTIONS[:2], REFERENCES[:2], variant="exact+stem").mean()
    )


def test_nova_evaluate_meteor_option(without_wordnet, tmp_path, sample_release, capsys):
    from novabench.cli import main

    predictions = _caption_predictions(sample_release, tmp_path / "pred.jsonl")
    common = ["evaluate", "--data", str(sample_release), "--predictions", str(predictions)]
    common += ["--exclude", "BERTScore-F1", "--bootstrap", "0", "--task", "captioning", "-q"]
    out = tmp_path / "report.json"
    # wordnet asked for, not installed: one line, exit 2, in the command's words, nothing written
    assert main([*common, "--out", str(out), "--meteor", "wordnet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--meteor exact+stem" in error and "Traceback" not in error
    assert not out.exists()
    # the default: the other key, and the warning as the terminal table's first line
    markdown = tmp_path / "report.md"
    assert main([*common, "--out", str(out), "--markdown", str(markdown)]) == 0
    table = capsys.readouterr().out
    # first after the notice the synthetic sample carries
    first = table.splitlines()[1]
    assert first.startswith("warning: captioning: METEOR not computed: the nltk WordNet corpus")
    assert "--meteor exact+stem" in first
    assert "captioning    METEOR-exact+stem" in table
    assert "**warning: captioning: METEOR not computed" in markdown.read_text().split("|")[0]
    report = json.loads(out.read_text())
    assert "METEOR" not in report["tasks"]["captioning"]["metrics"]
    # exact+stem chosen: the same key and number, no warning
    chosen = tmp_path / "chosen.json"
    assert main([*common, "--out", str(chosen), "--meteor", "exact+stem"]) == 0
    assert "METEOR not computed" not in capsys.readouterr().out
    metrics = json.loads(chosen.read_text())["tasks"]["captioning"]["metrics"]
    assert metrics == report["tasks"]["captioning"]["metrics"]


def test_nova_compare_scores_both_sides_with_one_variant_and_says_so(
    without_wordnet, tmp_path, sample_release
):
    from novabench.report import compare_predictions
    from novabench.report.render import render_comparison

    a = _caption_predictions(sample_release, tmp_path / "a.jsonl")
    b = tmp_path / "b.jsonl"
    b.write_text(a.read_text().replace("neoplasm", "mass"))
    comparison = compare_predictions(
        sample_release,
        a,
        b,
        n_resamples=20,
        tasks=("captioning",),
        caption_options={"exclude": NO_BERT},
    )
    rows = comparison["tasks"]["captioning"]
    assert "METEOR-exact+stem" in rows and "METEOR" not in rows
    assert comparison["settings"]["captioning"]["METEOR_variant"] == "exact+stem"
    # first after the notice the synthetic sample carries
    assert (
        render_comparison(comparison)
        .splitlines()[1]
        .startswith("warning: captioning: METEOR not computed: the nltk WordNet corpus")
    )


def test_another_wordnet_version_is_not_taken_for_wordnet_3(monkeypatch, tmp_path):
    # A WordNet 3.1 under corpora/wordnet has other synonym sets: another METEOR.
    write_tiny_wordnet(tmp_path / "nltk_data", version="3.1")
    _use_nltk_data(monkeypatch, tmp_path / "nltk_data")
    meteor_module._wordnet_reader.cache_clear()
    try:
        assert text.meteor_variant() == "exact+stem"
        with pytest.raises(NovaInputError, match="version 3.1, not 3.0"):
            score_captioning(["a"], ["a"], exclude=NO_BERT, meteor="wordnet")
        with pytest.warns(UserWarning, match="METEOR not computed: the WordNet corpus nltk finds"):
            result = score_captioning(["a"], ["a"], exclude=NO_BERT)
        assert "METEOR" not in result and result["METEOR_variant"] == "exact+stem"
    finally:
        meteor_module._wordnet_reader.cache_clear()
