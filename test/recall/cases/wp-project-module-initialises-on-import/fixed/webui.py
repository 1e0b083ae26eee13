import os
import sys

# GPU 1 has more memory than GPU 0 on this machine. This must run before any
# module of the project is imported: modules.shared loads the model on import.
os.environ["CUDA_VISIBLE_DEVICES"] = "1"

import modules.img2img
import modules.txt2img
from modules import face_restore, shared


def main():
    face_restore.setup_model(shared.models_path)
    print("model on", shared.device, file=sys.stderr)
    modules.txt2img.serve()


if __name__ == "__main__":
    main()
