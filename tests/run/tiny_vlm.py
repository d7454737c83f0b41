"""Build a tiny random-weight LLaVA checkpoint offline, to exercise the real transformers path.

The checkpoint is a CLIP vision tower (28 px images, 14 px patches, so 4 image tokens)
in front of a 2-layer Llama with hidden size 32, plus a byte-level BPE tokenizer trained
here on a few sentences, a ``LlavaImageProcessorPil`` and a ``LlavaProcessor`` carrying a
chat template. Everything is saved with ``save_pretrained`` so it loads through
``transformers.pipeline("image-text-to-text", model=<folder>)`` like a Hub model.

The answers are random bytes: tests assert on types, counts and manifests, never on text.

Use it as a session fixture::

    @pytest.fixture(scope="session")
    def tiny_llava(tmp_path_factory):
        return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))
"""

from __future__ import annotations

from pathlib import Path

IMAGE_TOKEN = "<image>"
SPECIAL_TOKENS = ("<unk>", "<pad>", "<s>", "</s>", IMAGE_TOKEN)
IMAGE_SIDE = 28
PATCH_SIDE = 14

# Enough text for the BPE trainer to learn a few merges; the content is irrelevant.
_TRAINING_TEXT = (
    "Axial T2 weighted image shows a hyperintense lesion in the right frontal lobe.",
    "Locate every abnormal region: label: [ymin, xmin, ymax, xmax] or no target.",
    "Describe the modality, plane, location and abnormalities of this brain MRI.",
    "Clinical history: headache and seizures. Most likely diagnosis and four others.",
    '{"most_likely_diagnosis": "glioma", "other_possible_diagnoses": ["abscess"]}',
)

# A small chat template in the usual shape: images become the image token, text is kept.
_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] | upper }}: "
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>\n{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def _train_tokenizer():  # -> transformers.PreTrainedTokenizerFast
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_TRAINING_TEXT, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        extra_special_tokens={"image_token": IMAGE_TOKEN},
        padding_side="left",
    )


def build_tiny_llava(folder: Path | str, *, seed: int = 0) -> Path:
    """Write a tiny random LLaVA (model, tokenizer, processor) into ``folder`` and return it.

    Args:
        folder: where to save; created if needed.
        seed: torch seed for the random weights.

    Returns:
        The folder, loadable with ``pipeline("image-text-to-text", model=folder)``.
    """
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaImageProcessorPil,
        LlavaProcessor,
    )

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _train_tokenizer()
    image_processor = LlavaImageProcessorPil(
        size={"shortest_edge": IMAGE_SIDE},
        crop_size={"height": IMAGE_SIDE, "width": IMAGE_SIDE},
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIDE,
        vision_feature_select_strategy="default",
        chat_template=_CHAT_TEMPLATE,
        image_token=IMAGE_TOKEN,
        num_additional_image_tokens=1,
    )
    vision_config = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=4,
        image_size=IMAGE_SIDE,
        patch_size=PATCH_SIDE,
        projection_dim=32,
    )
    text_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config = LlavaConfig(
        vision_config=vision_config,
        text_config=text_config,
        image_token_index=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        projector_hidden_act="gelu",
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder
