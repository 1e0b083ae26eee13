#!/bin/bash
# one remote desktop container per GPU of this host
for gpu in 0 1; do
  docker run -d --name "desktop-$gpu" --runtime=nvidia \
    -e NVIDIA_VISIBLE_DEVICES="$gpu" -e SIZEW=1920 -e SIZEH=1080 \
    -p "$((8080 + gpu)):8080" glx-desktop:latest
done
