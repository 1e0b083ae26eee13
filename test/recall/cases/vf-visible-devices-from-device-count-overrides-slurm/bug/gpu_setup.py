"""GPU option handling shared by the refine and predict commands."""
import os


def parse_gpu(gpu_id=None):
    """Resolve --gpuID into (count, id string, id list) and make those GPUs visible."""
    if gpu_id is None:
        import torch

        gpu_id = ",".join(str(i) for i in range(torch.cuda.device_count()))
        print(f"using all GPUs in this node: {gpu_id}")
    gpu_list = sorted({int(g) for g in str(gpu_id).split(",") if g.strip()})
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpu_list)
    return len(gpu_list), gpu_id, gpu_list
