"""Trainer for the GRU phoneme decoder."""
import logging

import torch
from torch import nn


class PhonemeDecoderTrainer:
    def __init__(self, args):
        self.args = args
        self.logger = logging.getLogger(__name__)

        # device for training
        if torch.cuda.is_available():
            try:
                gpu_num = int(self.args.get("gpu_number", 0))
            except ValueError:
                self.logger.warning("gpu_number is not an integer; using GPU 0")
                gpu_num = 0
            if gpu_num >= torch.cuda.device_count():
                self.logger.warning("GPU %d is not available; using GPU 0", gpu_num)
                gpu_num = 0
            self.device = torch.device("cuda", gpu_num)
        else:
            self.device = torch.device("cpu")
        self.logger.info("Using device: %s", self.device)

        if self.args["seed"] != -1:
            torch.manual_seed(self.args["seed"])
        self.model = nn.GRU(args["n_input_features"], args["n_units"], args["n_layers"], batch_first=True)
        self.head = nn.Linear(args["n_units"], args["n_classes"])
        self.model.to(self.device)
        self.head.to(self.device)

    def train(self):
        params = list(self.model.parameters()) + list(self.head.parameters())
        optim = torch.optim.AdamW(params, lr=self.args["lr"])
        ctc = nn.CTCLoss(blank=0)
        for step in range(self.args["num_training_batches"]):
            x = torch.randn(self.args["batch_size"], 200, self.args["n_input_features"], device=self.device)
            targets = torch.randint(1, self.args["n_classes"], (self.args["batch_size"], 30), device=self.device)
            logits = self.head(self.model(x)[0]).log_softmax(-1).transpose(0, 1)
            lengths = torch.full((self.args["batch_size"],), 200, dtype=torch.long)
            loss = ctc(logits, targets, lengths, torch.full_like(lengths, 30))
            optim.zero_grad()
            loss.backward()
            optim.step()
            if step % 500 == 0:
                self.logger.info("step %d: ctc loss %.3f", step, loss.item())
