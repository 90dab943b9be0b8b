"""upstream.lock values that would reach git as options or paths are refused when the lock is
read (exit 2, naming the file and the key), before any git command runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchkit.cli import main
from patchkit.errors import ConfigError
from patchkit.project.lock import load_lock
from patchkit.upstream.sources import GitMirror

GOOD = {
    "repository": '"https://github.com/vllm-project/vllm"',
    "version": '"0.19.0"',
    "commit": '"2a69949bd"',
}


def lock_text(
    name: str = "vllm", source: str = 'url = "https://example.com/vllm"', **keys: str
) -> str:
    fields = {**GOOD, **keys}
    body = "".join(f"{k} = {v}\n" for k, v in fields.items())
    return f'[targets."{name}"]\n{body}source = {{ kind = "git", {source} }}\n'


def test_upload_pack_url_is_refused_and_never_reaches_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "pwned"
    source = f'url = "--upload-pack=touch {marker}"'
    (tmp_path / "upstream.lock").write_text(lock_text(source=source))
    code = main(["fetch", "--target", "vllm", "--project", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "upstream.lock: targets.vllm.source: url '--upload-pack=touch" in err
    assert not marker.exists()


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("source", 'url = "ext::sh -c touch% /tmp/x"', "targets.vllm.source: url"),
        ("source", 'url = "ssh://-oProxyCommand=touch/x"', "targets.vllm.source: url"),
        ("source", 'url = "https://example.com/a b"', "targets.vllm.source: url"),
        ("commit", '"--all"', "targets.vllm: commit"),
        ("commit", '"HEAD~1"', "targets.vllm: commit"),
        ("version", '"../../x"', "targets.vllm: version"),
        ("repository", '"--upload-pack=x"', "targets.vllm: url"),
    ],
)
def test_hostile_lock_values_are_refused_naming_the_key(
    tmp_path: Path, key: str, value: str, named: str
) -> None:
    text = lock_text(source=value) if key == "source" else lock_text(**{key: value})
    (tmp_path / "upstream.lock").write_text(text)
    with pytest.raises(ConfigError, match="refused") as info:
        load_lock(tmp_path / "upstream.lock")
    assert f"upstream.lock: {named}" in info.value.message
    assert info.value.exit_code == 2


@pytest.mark.parametrize("name", ["../../x", "a/b", "-x", ".."])
def test_hostile_target_names_are_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "upstream.lock").write_text(lock_text(name=name))
    with pytest.raises(ConfigError, match=r"upstream\.lock: \[targets\..*target .* is refused"):
        load_lock(tmp_path / "upstream.lock")


def test_a_git_mirror_never_takes_an_option_as_its_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="the git source of vllm: url"):
        GitMirror("vllm", "--upload-pack=touch x", path=tmp_path / "repo")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            lock_text(source='url = "https://example.com/vllm", ref = "--upload-pack=x"'),
            "source has unknown keys 'ref'",
        ),
        (lock_text(comit='"abc"'), "targets.vllm has unknown keys 'comit'"),
    ],
)
def test_a_key_the_lock_does_not_know_is_refused_not_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    (tmp_path / "upstream.lock").write_text(text)
    code = main(["fetch", "--target", "vllm", "--project", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "upstream.lock" in err and said in err and "unknown keys" in err
