"""Serve the PDF parser on every GPU of the machine: LitServe starts one worker per device."""
import gc
import os
import uuid
from pathlib import Path

import litserve as ls
import torch
from magic_pdf.model.doc_analyze_by_custom_model import ModelSingleton
from magic_pdf.tools.cli import do_parse


class PdfParserAPI(ls.LitAPI):
    def __init__(self, output_dir="/tmp/parsed"):
        self.output_dir = Path(output_dir)

    def setup(self, device):
        if device.startswith("cuda"):
            os.environ["CUDA_VISIBLE_DEVICES"] = device.split(":")[-1]
        models = ModelSingleton()
        models.get_model(True, False)
        print(f"models loaded for {device}")

    def decode_request(self, request):
        return request["file"], request.get("kwargs", {})

    def predict(self, inputs):
        name = str(uuid.uuid4())
        do_parse(self.output_dir, name, inputs[0], [], **inputs[1])
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        gc.collect()
        return self.output_dir / name

    def encode_response(self, output):
        return {"output_dir": str(output)}


if __name__ == "__main__":
    server = ls.LitServer(PdfParserAPI(), accelerator="cuda", devices="auto", workers_per_device=1)
    server.run(port=8000)
