"""Plain settings for the pose regressor (no framework imports)."""

GPU_IDS = "1"
IMAGE_SIZE = 224
CHECKPOINT = "checkpoints/regressor_best.pt"
