"""Diffs, stage by stage: ``parse`` reads a unified diff into files and hunks (``paths`` unquotes
and checks each path, ``hunks`` reads a hunk's body lines, ``check`` refuses what patchkit does not
write), ``apply`` places and applies one file's part (its values in ``result``), ``make`` writes
diffs from before/after contents."""
