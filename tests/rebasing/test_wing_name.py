"""The wing's package does not hide the API's ``patchkit.rebase`` verb."""

from __future__ import annotations

import patchkit
import patchkit.rebasing.bisect
from patchkit.ops.rebase import rebase


def test_patchkit_rebase_is_the_verb_once_the_wing_is_imported() -> None:
    assert patchkit.rebasing.bisect.first_change is not None
    assert patchkit.rebase is rebase
