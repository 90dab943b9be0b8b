#!/usr/bin/env python3
# Smaller scheduler defaults for DGX Spark (GB10): 128 GB of unified memory is shared
# with the CPU, so the default batch budget starves the KV cache on large models.
# Made for vLLM 0.19.0. Discussed in https://github.com/vllm-project/vllm/issues/39809
import os

import vllm

PATH = os.path.join(os.path.dirname(vllm.__file__), "config", "scheduler.py")

with open(PATH) as f:
    code = f.read()

for name, old, new in [
    ("DEFAULT_MAX_NUM_BATCHED_TOKENS", "2048", "1024"),
    ("DEFAULT_MAX_NUM_SEQS", "128", "64"),
]:
    before = f"    {name}: ClassVar[int] = {old}\n"
    after = f"    {name}: ClassVar[int] = {new}  # GB10: " + "unified memory\n"
    assert before in code, f"{name} not found; is this vLLM 0.19?"
    code = code.replace(before, after)

with open(PATH, "w") as f:
    f.write(code)
print("patched", PATH)
