"""The BERTScore model's identity is its files, not its folder's name: a report records the
content fingerprint of a local model folder (``BERTScore_model_sha256``) beside bert_score's
hash, which names the folder by its last two path parts only.

The models are tiny random BERTs written here (2 layers, hidden size 32, a word vocabulary):
two folders with the same last two path parts and one changed weight give one hash and two
fingerprints; the same files under another folder give the same fingerprint.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from novabench.metrics import bertscore
from novabench.metrics.tasks import compute_task

WORDS = "axial coronal t2 flair image of the brain with a small cyst mass lesion in left right"
CAPTIONS = (
    ["axial t2 image of the brain with a small cyst", "coronal flair image with a mass"],
    ["axial t2 image with a cyst in the left brain", "coronal flair image of a right lesion"],
)
OTHER_METRICS = [
    "BLEU-4",
    "ROUGE-L",
    "METEOR",
    "ClinicalF1",
    "ModalityF1",
    "SequencePlaneF1",
    "BinaryF1",
]


def _write_tiny_bert(folder: Path, *, seed: int) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    folder.mkdir(parents=True)
    vocab = folder / "vocab.txt"
    vocab.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS.split()]) + "\n",
        encoding="utf-8",
    )
    # A bound on the length, as a real model card gives (bert_score truncates to it).
    transformers.BertTokenizer(str(vocab), model_max_length=512).save_pretrained(folder)
    config = transformers.BertConfig(
        vocab_size=5 + len(WORDS.split()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
    )
    torch.manual_seed(seed)
    transformers.BertModel(config).save_pretrained(folder)
    (folder / "README.md").write_text("# tiny test model\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    original = _write_tiny_bert(root / "a" / "m1" / "enc", seed=0)
    # The reviewer's case: the same last two path parts, other weights.
    perturbed = _write_tiny_bert(root / "b" / "m1" / "enc", seed=1)
    # The original's files under another folder name.
    copy = root / "c" / "copy" / "enc"
    shutil.copytree(original, copy)
    return {"original": original, "perturbed": perturbed, "copy": copy}


def _captioning(model: Path) -> dict:
    bertscore.clear_bertscore_cache()
    return compute_task(
        "captioning",
        CAPTIONS[0],
        CAPTIONS[1],
        exclude=OTHER_METRICS,
        bertscore_model=str(model),
        bertscore_num_layers=2,
    )


def test_a_folder_of_the_same_name_with_other_weights_records_another_fingerprint(
    models: dict[str, Path],
) -> None:
    original, perturbed = _captioning(models["original"]), _captioning(models["perturbed"])
    # The hash cannot tell them apart: both are m1/enc, layer 2.
    assert original["BERTScore_hash"] == perturbed["BERTScore_hash"]
    assert original["BERTScore_hash"].startswith("m1/enc_L2_no-idf")
    assert original["BERTScore-F1[enc-L2]"] != perturbed["BERTScore-F1[enc-L2]"]
    assert original["BERTScore_model_sha256"] != perturbed["BERTScore_model_sha256"]
    copied = _captioning(models["copy"])
    assert copied["BERTScore_hash"].startswith("copy/enc_L2_no-idf")
    assert copied["BERTScore_model_sha256"] == original["BERTScore_model_sha256"]
    assert copied["BERTScore-F1[enc-L2]"] == original["BERTScore-F1[enc-L2]"]


def test_the_fingerprint_is_the_files_by_name_and_content(models: dict[str, Path]) -> None:
    folder = models["original"]
    # Derived here from its definition: one "name NUL sha256" line per file, in name order,
    # leaving out the model card (README.md) that bert_score never reads.
    lines = "".join(
        f"{path.name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n"
        for path in sorted(folder.iterdir())
        if path.name != "README.md"
    )
    assert bertscore.model_folder_sha256(folder) == hashlib.sha256(lines.encode()).hexdigest()
    names = sorted(path.name for path in folder.iterdir())
    assert {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"} <= set(names)


def test_a_hub_model_id_records_no_fingerprint() -> None:
    """The Hub cache is not hashed: nothing is recorded beside the id's hash."""
    assert bertscore.bertscore_model_sha256("roberta-large_L17_no-idf_version=0.3.12") is None
