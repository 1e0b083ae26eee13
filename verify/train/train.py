"""A real, short training run for the History panel's replay (verify/train/capture.sh).

A decoder-sized Transformer (16 layers, d_model 2048, about 0.8 B parameters) trained with AdamW
in bf16 autocast on random tokens: start-up (CUDA context, weights and optimizer state allocated),
5 epochs of 50 steps, each followed by a short evaluation and a checkpoint written to /tmp (the
GPU idles while the weights are copied out and saved), then exit. Each line it prints starts with
the time since its start in seconds, so that the replay can print them at the same offsets.
"""
import os
import sys
import time

T0 = time.time()


def say(text: str) -> None:
    print(f"{time.time() - T0:7.2f} {text}", flush=True)


say(f"START {int(T0 * 1000)}")
import torch  # noqa: E402
from torch import nn  # noqa: E402

torch.manual_seed(0)
dev = torch.device("cuda")
VOCAB, D, LAYERS, SEQ, BATCH = 32_000, 2048, 16, 1024, 16
emb = nn.Embedding(VOCAB, D)
layer = nn.TransformerEncoderLayer(D, 16, 4 * D, dropout=0.0, batch_first=True, norm_first=True)
body = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
head = nn.Linear(D, VOCAB)
model = nn.Sequential(emb, body, head).to(dev)
params = sum(p.numel() for p in model.parameters())
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
mask = nn.Transformer.generate_square_subsequent_mask(SEQ, device=dev)
say(f"model: {params / 1e9:.2f} B parameters on {torch.cuda.get_device_name(dev)}")


def batch():
    x = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device=dev)
    return x[:, :-1], x[:, 1:]


def loss_of(x, y):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        h = body(emb(x), mask=mask, is_causal=True)
        logits = head(h)
    return nn.functional.cross_entropy(logits.float().view(-1, VOCAB), y.reshape(-1))


EPOCHS, STEPS = 5, 50
for epoch in range(1, EPOCHS + 1):
    model.train()
    for step in range(1, STEPS + 1):
        x, y = batch()
        loss = loss_of(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 25 == 0:
            say(f"epoch {epoch}/{EPOCHS} step {step}/{STEPS} loss {loss.item():.3f}")
    model.eval()
    with torch.no_grad():
        val = sum(loss_of(*batch()).item() for _ in range(10)) / 10
    say(f"epoch {epoch}/{EPOCHS} eval loss {val:.3f}")
    state = {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    torch.save(state, "/tmp/train-checkpoint.pt")
    say(f"epoch {epoch}/{EPOCHS} checkpoint saved ({os.path.getsize('/tmp/train-checkpoint.pt') / 2**30:.1f} GiB)")
say(f"END {int(time.time() * 1000)}")
sys.exit(0)
