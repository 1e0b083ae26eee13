import os
import sys

import modules.img2img
import modules.txt2img
from modules import shared

# GPU 1 has more memory than GPU 0 on this machine.
os.environ["CUDA_VISIBLE_DEVICES"] = "1"

from modules import face_restore


def main():
    face_restore.setup_model(shared.models_path)
    print("model on", shared.device, file=sys.stderr)
    modules.txt2img.serve()


if __name__ == "__main__":
    main()
