# A script import must refuse: where it writes depends on the machine it runs on.
# ruff: noqa: SIM115
import glob

for path in glob.glob("/usr/local/lib/python3*/dist-packages/vllm/config/scheduler.py"):
    code = open(path).read()
    code = code.replace("= 2048", "= 1024")
    open(path, "w").write(code)
