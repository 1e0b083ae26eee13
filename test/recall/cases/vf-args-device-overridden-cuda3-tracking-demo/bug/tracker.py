"""Interactive video object tracking: a SAM segmenter plus a mask propagator."""
import argparse

import torch
from segment_anything import SamPredictor, sam_model_registry


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=str, default="cuda:0")
    parser.add_argument("--sam_model_type", type=str, default="vit_h")
    parser.add_argument("--port", type=int, default=6080)
    return parser.parse_args()


class TrackingPipeline:
    def __init__(self, sam_checkpoint, propagator_checkpoint, args):
        self.device = torch.device(args.device)
        sam = sam_model_registry[args.sam_model_type](checkpoint=sam_checkpoint)
        self.segmenter = SamPredictor(sam.to(self.device))
        self.propagator = torch.jit.load(propagator_checkpoint, map_location=self.device)

    def first_frame_mask(self, frame, points, labels):
        self.segmenter.set_image(frame)
        masks, scores, _ = self.segmenter.predict(point_coords=points, point_labels=labels)
        return masks[scores.argmax()]

    @torch.no_grad()
    def track(self, frames, mask):
        masks = [mask]
        for frame in frames[1:]:
            image = torch.from_numpy(frame).permute(2, 0, 1).float().to(self.device) / 255
            masks.append(self.propagator(image, torch.from_numpy(masks[-1]).to(self.device)).cpu().numpy())
        return masks
