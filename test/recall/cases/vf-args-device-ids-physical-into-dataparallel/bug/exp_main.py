import torch
import torch.nn as nn

from exp_basic import ExpBasic
from model import Forecaster


class ExpMain(ExpBasic):
    def _build_model(self):
        model = Forecaster(self.args.seq_len, self.args.pred_len, self.args.enc_in).float()
        if self.args.use_multi_gpu and self.args.use_gpu:
            model = nn.DataParallel(model, device_ids=self.args.device_ids)
        return model

    def train(self, setting):
        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        criterion = nn.MSELoss()
        for epoch in range(self.args.train_epochs):
            x = torch.randn(32, self.args.seq_len, self.args.enc_in, device=self.device)
            y = torch.randn(32, self.args.pred_len, self.args.enc_in, device=self.device)
            optimizer.zero_grad()
            loss = criterion(self.model(x), y)
            loss.backward()
            optimizer.step()
            print(f"{setting} epoch {epoch + 1}: loss {loss.item():.4f}")
