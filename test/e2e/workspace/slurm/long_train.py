"""A long 'training' job: prints its GPUs, then works until cancelled."""
import os
import time

if __name__ == "__main__":
    print(f"training on CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}", flush=True)
    for step in range(600):
        print(f"step {step}", flush=True)
        time.sleep(1)
