import torch

from pose import PoseEstimator

# one estimator per garment category, each meant for its own GPU
pose_upper = PoseEstimator(0)
pose_full = PoseEstimator(1)


def run(image, category):
    estimator = pose_upper if category == "upper" else pose_full
    return estimator(image)


if __name__ == "__main__":
    frame = torch.rand(1, 3, 256, 192)
    print(run(frame, "upper").shape)
    print(run(frame, "full").shape)
