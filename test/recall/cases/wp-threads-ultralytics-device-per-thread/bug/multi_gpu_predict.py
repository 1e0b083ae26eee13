import queue
import threading

from ultralytics import YOLO

frames = queue.Queue()
for i in range(300):
    frames.put(f"frames/{i:05d}.jpg")


def worker(gpu):
    model = YOLO("yolov8s.pt")
    while True:
        try:
            path = frames.get_nowait()
        except queue.Empty:
            return
        result = model([path], save=False, conf=0.5, device=gpu)[0]
        print(gpu, path, result.boxes.data.device)


threads = [threading.Thread(target=worker, args=(gpu,)) for gpu in (0, 1, 2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
