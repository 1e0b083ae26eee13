import torch
from ultralytics import YOLO

if not torch.cuda.is_available():
    raise SystemExit("this pipeline needs a GPU")
print("visible GPUs:", torch.cuda.device_count())

model = YOLO("yolov8m-pose.pt")

# GPU 2 is free on the shared box; GPU 0 runs someone else's job.
results = model.predict(source="clips/gait_session.mp4", device=2, stream=True, conf=0.4)
for frame in results:
    if frame.keypoints is not None:
        print(frame.keypoints.xy.shape)
