"""Generate the target model's hidden states for offline draft-model training.

torchrun starts one process per GPU; each process holds one tensor-parallel shard of the
target model in an sglang ModelRunner. Tensor parallelism may span several nodes.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist
from sglang.bench_one_batch import load_model
from sglang.srt.managers.schedule_batch import Req, ScheduleBatch
from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode, ForwardBatch
from sglang.srt.sampling.sampling_params import SamplingParams
from sglang.srt.server_args import PortArgs, ServerArgs
from sglang.srt.speculative.spec_info import SpeculativeAlgorithm


class HiddenStatesGenerator:
    def __init__(self, args, tp_rank: int):
        self.server_args = ServerArgs.from_cli_args(args)
        self.server_args.enable_return_hidden_states = True
        self.port_args = PortArgs.init_new(self.server_args)
        # sglang's benchmark helper builds the ModelRunner for tensor-parallel rank tp_rank
        self.model_runner, _ = load_model(self.server_args, self.port_args, tp_rank)
        self.tp_rank = tp_rank

    @torch.no_grad()
    def _capture(self, input_ids):
        runner = self.model_runner
        req = Req(rid=0, origin_input_text="", origin_input_ids=input_ids,
                  sampling_params=SamplingParams(temperature=0, max_new_tokens=1))
        req.prefix_indices = []
        req.fill_ids = req.origin_input_ids
        req.extend_input_len = len(req.fill_ids)
        batch = ScheduleBatch.init_new(
            reqs=[req], req_to_token_pool=runner.req_to_token_pool,
            token_to_kv_pool_allocator=runner.token_to_kv_pool_allocator, tree_cache=None,
            model_config=runner.model_config, enable_overlap=False,
            spec_algorithm=SpeculativeAlgorithm.NONE,
        )
        batch.prepare_for_extend()
        forward_batch = ForwardBatch.init_new(batch.get_model_worker_batch(), runner)
        forward_batch.capture_hidden_mode = CaptureHiddenMode.FULL
        output, _ = runner.forward(forward_batch)
        runner.req_to_token_pool.clear()
        runner.token_to_kv_pool_allocator.clear()
        return output.hidden_states

    def generate(self, data_path: str, output_path: str) -> None:
        os.makedirs(output_path, exist_ok=True)
        with open(data_path) as f:
            samples = [json.loads(line) for line in f]
        for idx, sample in enumerate(samples):
            hidden = self._capture(sample["input_ids"])
            if self.tp_rank == 0:  # every TP rank holds the same gathered result
                torch.save(hidden.cpu(), os.path.join(output_path, f"data_{idx}.ckpt"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-path", required=True)
    parser.add_argument("--output-path", default="cache/hidden_states")
    ServerArgs.add_cli_args(parser)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    generator = HiddenStatesGenerator(args, tp_rank=dist.get_rank())
    generator.generate(args.data_path, args.output_path)


if __name__ == "__main__":
    main()
