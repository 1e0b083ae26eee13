"""Gradio demo: click on an object in the first frame, get its mask in every frame."""
import os

import gradio as gr
import numpy as np

from tracker import TrackingPipeline, parse_args

CHECKPOINTS = "./checkpoints"

args = parse_args()
sam_checkpoint = os.path.join(CHECKPOINTS, f"sam_{args.sam_model_type}.pth")
propagator_checkpoint = os.path.join(CHECKPOINTS, "propagator.pt")

args.port = 12212
args.device = "cuda:3"

model = TrackingPipeline(sam_checkpoint, propagator_checkpoint, args)


def segment(frame, x, y):
    mask = model.first_frame_mask(frame, np.array([[x, y]]), np.array([1]))
    return (frame * mask[..., None]).astype(np.uint8)


demo = gr.Interface(
    fn=segment,
    inputs=[gr.Image(), gr.Number(label="x"), gr.Number(label="y")],
    outputs=gr.Image(),
    title="Track an object",
)

if __name__ == "__main__":
    demo.launch(server_port=args.port)
