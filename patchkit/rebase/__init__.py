"""The rebase wing: a target's patches carried onto a moved upstream.

``bisect`` finds the release that absorbed or broke a patch. The verb is
:mod:`patchkit.ops.rebase`.
"""
