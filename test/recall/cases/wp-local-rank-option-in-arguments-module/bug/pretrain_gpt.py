"""Pretrain a GPT model."""
import torch

from megatron.initialize import initialize_megatron


def add_data_args(parser):
    group = parser.add_argument_group(title="data")
    group.add_argument("--data-path", required=True)
    group.add_argument("--seq-length", type=int, default=1024)
    return parser


def main():
    args = initialize_megatron(extra_args_provider=add_data_args)
    model = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, batch_first=True), num_layers=4).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for _ in range(args.train_iters):
        x = torch.randn(args.micro_batch_size, args.seq_length, 512, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
