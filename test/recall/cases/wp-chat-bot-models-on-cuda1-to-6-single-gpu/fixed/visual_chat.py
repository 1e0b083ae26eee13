"""Chat assistant that hands image requests to several vision models."""
import argparse

import torch
from diffusers import StableDiffusionInpaintPipeline, StableDiffusionPipeline
from transformers import BlipForConditionalGeneration, BlipProcessor


class ImageCaptioning:
    def __init__(self, device):
        self.device = device
        name = "Salesforce/blip-image-captioning-base"
        self.processor = BlipProcessor.from_pretrained(name)
        self.model = BlipForConditionalGeneration.from_pretrained(name).to(device)

    def describe(self, image):
        inputs = self.processor(image, return_tensors="pt").to(self.device)
        return self.processor.decode(self.model.generate(**inputs)[0], skip_special_tokens=True)


class TextToImage:
    def __init__(self, device):
        self.pipe = StableDiffusionPipeline.from_pretrained(
            "runwayml/stable-diffusion-v1-5", torch_dtype=torch.float16).to(device)

    def draw(self, prompt):
        return self.pipe(prompt).images[0]


class Inpainting:
    def __init__(self, device):
        self.pipe = StableDiffusionInpaintPipeline.from_pretrained(
            "runwayml/stable-diffusion-inpainting", torch_dtype=torch.float16).to(device)

    def replace(self, image, mask, prompt):
        return self.pipe(prompt=prompt, image=image, mask_image=mask).images[0]


class ChatBot:
    def __init__(self, device):
        print(f"Loading the vision models on {device}")
        self.captioner = ImageCaptioning(device=device)
        self.painter = TextToImage(device=device)
        self.editor = Inpainting(device=device)

    def answer(self, request):
        if request.startswith("draw "):
            return self.painter.draw(request[5:])
        return "I can draw, describe and edit images."


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=7860)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    bot = ChatBot(args.device)
    print(bot.answer("draw a lighthouse at dusk"))
