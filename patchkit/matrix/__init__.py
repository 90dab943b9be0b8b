"""The compatibility matrix: every patch of a target x every upstream release, each cell the
outcome the engine gives there, computed on blobs in memory.

``cells`` computes one cell (a plain, picklable job in, a plain value out: it runs in this
process, a process pool or a Ray task alike); ``store`` keeps computed cells; ``execute`` runs
jobs (serially, in a local process pool, or on Ray); ``table`` assembles the matrix and its
JSON; ``markdown`` and ``page`` render it.
"""
