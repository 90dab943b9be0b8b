#!/bin/bash
# Disable vLLM's custom all-reduce on GB10 (SM121): the two Sparks have no P2P,
# so its IPC buffers fail at start-up; NCCL over ConnectX does the reduction.
# Made on the image's vLLM 0.20.0 wheel.
set -euo pipefail
patch -p1 -d / < /workspace/mods/gb10-custom-allreduce/custom-allreduce-sm12x.patch
# the image also needs a newer NCCL
pip install --no-deps nvidia-nccl-cu12==2.27.7
