#!/bin/bash
set -e
# Run the X server on the first GPU given to this container (renumbered from 0 inside it)
export GPU_SELECT="$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -n1)"
echo "X server on ${GPU_SELECT}"
Xvfb :0 -screen 0 "${SIZEW}x${SIZEH}x24" &
exec x11vnc -display :0 -forever -rfbport 8080
