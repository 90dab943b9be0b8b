"""trust.gitargs: refs, commits, ranges and URLs from files or upstream never reach git as
options; URL schemes are allow-listed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchkit.errors import ConfigError
from patchkit.trust.gitargs import check_commit, check_range, check_rev, check_url, url_problem

HOSTILE_URLS = [
    "--upload-pack=touch /tmp/pwned",
    "-oProxyCommand=x",
    "ext::sh -c touch% /tmp/pwned",
    "fd::17",
    "ssh://-oProxyCommand=x/repo",
    "-host:repo",
    "git://example.com/repo",
    "ftp://example.com/repo",
    "https://example.com/a b",
    "https://example.com/a\nb",
    "",
]


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_hostile_urls_are_refused_naming_file_and_key(url: str) -> None:
    with pytest.raises(ConfigError, match=r"upstream\.lock: \[targets\.vllm\.source\]: url") as e:
        check_url(url, where="upstream.lock: [targets.vllm.source]")
    assert e.value.exit_code == 2


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/vllm-project/vllm",
        "https://github.com/vllm-project/vllm.git",
        "ssh://git@github.com/vllm-project/vllm",
        "git@github.com:vllm-project/vllm.git",
        "file:///srv/mirror/vllm",
        "/srv/mirror/vllm",
        "../mirror",
    ],
)
def test_ordinary_urls_pass(url: str) -> None:
    assert check_url(url, where="x") == url


HOSTILE_REVS = ["-x", "--output=/tmp/x", "a..b", "HEAD:x", "a b", "a\0", "x.lock", "@{-1}", ""]


@pytest.mark.parametrize("rev", HOSTILE_REVS)
def test_hostile_revisions_are_refused(rev: str) -> None:
    with pytest.raises(ConfigError, match="refused"):
        check_rev(rev, where="--onto")


@pytest.mark.parametrize("rev", ["v0.19.0", "main", "origin/main", "HEAD~2", "2a69949bd", "v1^{}"])
def test_ordinary_revisions_pass(rev: str) -> None:
    assert check_rev(rev, where="x") == rev


def test_ranges_check_both_ends() -> None:
    assert check_range("v1..v2", where="DIR@v1..v2") == ("v1", "v2")
    for bad in ("--all..v2", "v1..--all", "v1...v2", "v1"):
        with pytest.raises(ConfigError):
            check_range(bad, where="DIR@" + bad)


def test_commits_are_hex() -> None:
    assert check_commit("2a69949bd", where="x") == "2a69949bd"
    with pytest.raises(ConfigError, match=r"upstream\.lock: commit"):
        check_commit("--all", where="upstream.lock")


@given(st.text(max_size=30))
def test_nothing_accepted_starts_with_a_dash(value: str) -> None:
    if url_problem(value) is None:
        assert not value.startswith("-") and "::" not in value.split("/", 1)[0]
