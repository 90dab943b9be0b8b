"""``patchkit watch``'s internals: which upstream versions are newer than the lock
(:mod:`~patchkit.watch.newer`), the patch repository's watch branch (:mod:`~patchkit.watch.branch`),
the report people read (:mod:`~patchkit.watch.report`) and where it goes: a push, a pull request
and an issue through the GitHub CLI (:mod:`~patchkit.watch.publish`). The verb that strings them
together with rebase, the matrix and verify is :mod:`patchkit.ops.watch`."""
