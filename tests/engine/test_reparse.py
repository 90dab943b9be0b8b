"""A result parsed from its target's tree has the scope tree a full parse gives; a result
placed by its verbatim context is not parsed at all."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from patchkit.engine.structure import languages, parse_scopes, scopes, scopes_for
from patchkit.ops.port import port
from patchkit.outcome import Outcome
from testing.builders import Upstream, run_git
from tests.conftest import dedent

PY = dedent(
    """
    import os


    @decorate
    def first(a):
        return a


    class Outer:
        x = 1

        def method(self):
            if self.x:
                return 1
            return 2

        @property
        def prop(self):
            return 3


    def last():
        s = '''
    def not_a_def():
    '''
        return s
    """
)
CPP = dedent(
    """
    #include <vector>

    namespace ns {

    template <class V>
    void sort(V const& v, bool f = false) {
      if (f) {
        run(v);
      }
    }

    struct Foo {
      int bar() { return 1; }
    };

    }  // namespace ns

    TEST_F(Suite, Name) {
      check();
    }

    #if defined(X)
    int guarded() { return 2; }
    #endif
    """
)
EDITS = [
    b"",
    b"\n",
    b"def inserted():\n    pass\n",
    b"    y = 2\n",
    b"class New:\n    def m(self):\n        pass\n",
    b"}\n",
    b"int added() { return 0; }\n",
    b"'''\n",
    b"namespace other {\n",
]


def _edited(text: bytes, rng: random.Random) -> bytes:
    lines = text.splitlines(keepends=True)
    a = rng.randrange(len(lines) + 1)
    b = min(len(lines), a + rng.randrange(4))
    return b"".join([*lines[:a], *rng.sample(EDITS, rng.randrange(3)), *lines[b:]])


@pytest.mark.parametrize(("path", "text"), [("m.py", PY), ("m.cc", CPP)])
def test_scopes_parsed_from_the_targets_tree_are_a_full_parses(path: str, text: str) -> None:
    rng = random.Random(27)
    language = "python" if path.endswith(".py") else "cpp"
    before = text.encode()
    for _ in range(150):
        after = _edited(before, rng)
        scopes_for(path, before)  # the target, parsed (its tree kept)
        got = scopes_for(path, after, near=before)
        want = parse_scopes(language, after)
        assert got is not None
        assert (got.scopes, got.has_errors, got.line_count) == (
            want.scopes,
            want.has_errors,
            want.line_count,
        ), after.decode()
        before = after if rng.random() < 0.5 else text.encode()


def test_a_renamed_file_placed_by_its_verbatim_context_is_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's rename partner holds the hunk's context verbatim, once: the result is the
    patched base's own lines there, as in a file that did not move; no file is parsed for
    the check (a large file cost a moved port ten times its placement)."""
    parsed: list[str] = []
    real = languages.grammar

    def counted(language: str) -> languages.Grammar:
        parsed.append(language)
        return real(language)

    monkeypatch.setattr(scopes, "grammar", counted)
    up = Upstream(tmp_path / "up")
    body = "".join(f"def f{i}(a):\n    return a + {i}\n\n\n" for i in range(20))
    up.commit({"pkg/mod.py": body}, "base")
    patch = tmp_path / "bump.patch"
    patch.write_bytes(up.diff_of({"pkg/mod.py": body.replace("a + 7\n", "a + 70\n")}))
    base = up.head()
    run_git(up.path, "mv", "pkg/mod.py", "pkg/core.py")
    up.commit({"pkg/core.py": "# moved\n" + body})
    report = port(patch_file=patch, base_commit=base, checkout=up.path)
    assert report.outcome is Outcome.CARRIED
    assert (up.path / "pkg/core.py").read_text() == "# moved\n" + body.replace(
        "a + 7\n", "a + 70\n"
    )
    assert parsed == []
