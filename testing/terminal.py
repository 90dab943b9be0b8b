"""A command run on a pseudo-terminal, as a person runs it (rich draws for a terminal only)."""

from __future__ import annotations

import os
import pty
import subprocess


def on_a_terminal(argv: list[str], env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """The exit code (None when it ran past ``timeout`` seconds and was killed) and everything
    it wrote, stdout and stderr together, as the terminal got it."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, env=env, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    try:
        return proc.wait(timeout=timeout), out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        proc.kill()
        return None, out.decode(errors="replace")
