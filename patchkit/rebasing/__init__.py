"""The rebase wing: a target's patches carried onto a moved upstream (named ``rebasing``:
``patchkit.rebase`` is the API's verb, which a subpackage of that name would hide).

``bisect`` finds the release that absorbed or broke a patch. The verb is
:mod:`patchkit.ops.rebase`.
"""
