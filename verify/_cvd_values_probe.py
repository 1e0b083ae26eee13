import json, os, subprocess, sys
vals = ["0", "1", "0  # comment", "1  # the second GPU", "0 #c,1", "0x", "1a,0", "0,1 # c", " 0", "0 1", "[0, 1]", "GPU-bogus", "0,GPU-bogus", "# 1", "0,0", "2", "0,2,1", ""]
out = {}
for v in vals:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=v)
    p = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"], env=env, capture_output=True, text=True)
    out[v] = p.stdout.strip() or p.stderr.strip()[-200:]
    print(repr(v), "->", out[v], flush=True)
import torch; print("torch", torch.__version__)
