import multiprocessing as mp
import os


def worker(gpu, paths):
    # One process per GPU: the variable is set before torch or ultralytics load.
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    from ultralytics import YOLO

    model = YOLO("yolov8s.pt")
    for path in paths:
        result = model([path], save=False, conf=0.5, device=0)[0]
        print(gpu, path, result.boxes.data.device)


if __name__ == "__main__":
    paths = [f"frames/{i:05d}.jpg" for i in range(300)]
    gpus = (0, 1, 2)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(gpu, paths[k::len(gpus)])) for k, gpu in enumerate(gpus)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
