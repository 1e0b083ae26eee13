"""GPU option handling shared by the refine and predict commands."""
import os


def parse_gpu(gpu_id=None):
    """Resolve --gpuID into (count, id string, id list) and make those GPUs visible."""
    if gpu_id is None:
        # keep the GPUs this process was given (Slurm, a launcher, the shell)
        import torch

        count = torch.cuda.device_count()
        print(f"using the {count} visible GPU(s): {os.environ.get('CUDA_VISIBLE_DEVICES', 'all')}")
        return count, None, list(range(count))
    gpu_list = sorted({int(g) for g in str(gpu_id).split(",") if g.strip()})
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpu_list)
    return len(gpu_list), gpu_id, gpu_list
