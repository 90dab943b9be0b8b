"""The trust boundary: every value that comes from a patch set, a lock, an upstream file, a
cache or a tool's answer crosses one of these checks before it becomes a path (``paths``), a
file or directory name (``names``) or a git argument (``gitargs``). Bottom layer: it knows
only the error family."""
