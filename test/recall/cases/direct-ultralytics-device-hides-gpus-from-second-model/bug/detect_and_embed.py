"""Find people with YOLO, then embed every crop with a re-ID network split over two GPUs."""
import torch
import torchvision
from ultralytics import YOLO

detector = YOLO("yolo11n.pt")
results = detector.predict("frames/", device=0, classes=[0], verbose=False)

crops = []
for r in results:
    image = torch.from_numpy(r.orig_img).permute(2, 0, 1).float() / 255
    for x1, y1, x2, y2 in r.boxes.xyxy.int().tolist():
        crop = image[:, y1:y2, x1:x2][None]
        crops.append(torch.nn.functional.interpolate(crop, size=(256, 128))[0])

# Re-identification runs on both cards of the box.
reid = torchvision.models.resnet50(num_classes=512).to("cuda:0").eval()
reid = torch.nn.DataParallel(reid, device_ids=[0, 1])
with torch.no_grad():
    embeddings = reid(torch.stack(crops).to("cuda:0"))
print(embeddings.shape, torch.cuda.device_count())
