"""``patchkit import``'s internals: reading the patches people already carry (container mods,
replace scripts, plain and git diffs, quilt series, format-patch mail, commit ranges), finding
each one's base, carrying it to the lock with the engine, and writing it into a patch set; and
the way back, a set written as a quilt series or format-patch mail (:mod:`.formats`).

Nothing here runs imported code or writes to a target tree."""
