"""Gradio Space: browse NOVA images with their gold and rater boxes, caption, history and diagnosis.

Set NOVA_SOURCE to a release folder, an exported folder or a Hub id; without it
the Space builds the toolkit's synthetic sample release (the real images are
not redistributed here).
"""

import os
import tempfile

import gradio as gr

from novabench.data.hf import load_nova
from novabench.data.render import draw_annotations


def load_rows(source=None):
    """The `images` rows of NOVA_SOURCE, or of a freshly built sample release."""
    source = source or os.environ.get("NOVA_SOURCE")
    if not source:
        from novabench.data.sample import write_sample_release

        source = write_sample_release(
            os.path.join(tempfile.mkdtemp(), "nova-sample"), n_cases=8, seed=0
        )
    return load_nova(source, "images", split="test")


def show(rows, filename):
    """The drawn slice and a Markdown panel for one filename."""
    index = rows["filename"].index(filename)
    row = rows[index]
    image = draw_annotations(row["image"], boxes=row["boxes"], rater_boxes=row["rater_boxes"])
    raters = ", ".join(f"{r['rater']}: {len(r['boxes'])}" for r in row["rater_boxes"]) or "none"
    panel = (
        f"### {row['filename']} ({row['case_id']})\n"
        f"**Caption.** {row['caption']}\n\n"
        f"**Clinical history.** {row['clinical_history']}\n\n"
        f"**Final diagnosis.** {row['final_diagnosis']}\n\n"
        f"Gold boxes (green): {len(row['boxes'])}; rater boxes: {raters}"
    )
    return image, panel


def build_demo(rows=None) -> gr.Blocks:
    """The Space's interface over `rows` (loaded on first use when None)."""
    rows = rows if rows is not None else load_rows()
    names = rows["filename"]
    with gr.Blocks(title="NOVA explorer") as demo:
        gr.Markdown("# NOVA explorer\nEvaluation-only benchmark: never train on these images.")
        choice = gr.Dropdown(names, value=names[0], label="image")
        with gr.Row():
            picture = gr.Image(type="pil", label="slice (gold green, raters thin)")
            details = gr.Markdown()
        choice.change(lambda name: show(rows, name), inputs=choice, outputs=[picture, details])
        demo.load(lambda: show(rows, names[0]), outputs=[picture, details])
    return demo


if __name__ == "__main__":
    build_demo().launch()
