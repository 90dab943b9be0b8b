"""A source release is upstream's data: a tarball whose headers claim more than any release
holds (a gzip bomb: a few kB that would write gigabytes) is refused before anything is
extracted, and a download that grows past ``MAX_DOWNLOAD_BYTES`` or outlives
``PATCHKIT_DOWNLOAD_TIMEOUT`` is stopped: a SourceError naming it (exit 3), never a full disk
or a wait without end."""

from __future__ import annotations

import contextlib
import gzip
import io
import tarfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from patchkit.errors import SourceError
from patchkit.upstream import index, sdist


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, made as they are read."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def _bomb(path: Path, size: int) -> None:
    with gzip.open(path, "wb", compresslevel=1) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        info = tarfile.TarInfo("pkg-1.0/zeros.bin")
        info.size = size
        tar.addfile(info, _Zeros(size))


def test_a_release_claiming_more_than_any_release_holds_is_not_extracted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sdist, "MAX_RELEASE_BYTES", 1 << 20)  # (a real bomb of 8 GB: 8 MB here)
    archive = tmp_path / "pkg-1.0.tar.gz"
    _bomb(archive, 8 << 20)
    dest = tmp_path / "out"
    dest.mkdir()

    with pytest.raises(SourceError, match=r"over .* bytes \(MAX_MEMBERS, MAX_RELEASE_BYTES\)"):
        sdist.extract_sdist(archive, dest)
    assert not list(dest.iterdir())


def _forever(chunk: bytes, pause: float = 0.0) -> Iterator[bytes]:
    while True:
        time.sleep(pause)
        yield chunk


def test_a_download_past_its_size_limit_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index, "MAX_DOWNLOAD_BYTES", 1 << 20)
    with pytest.raises(SourceError, match=r"larger than 1048576 bytes \(MAX_DOWNLOAD_BYTES\)"):
        index._copy(
            _forever(b"x" * 65536),
            tmp_path / "r.tar.gz.part",
            index.hashlib.sha256(),
            lambda n: None,
        )


def test_a_download_that_trickles_is_stopped_at_its_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATCHKIT_DOWNLOAD_TIMEOUT", "1")
    started = time.monotonic()
    with pytest.raises(SourceError, match=r"r\.tar\.gz: it did not end within"):
        index._copy(
            _forever(b"x", 0.05), tmp_path / "r.tar.gz.part", index.hashlib.sha256(), lambda n: None
        )
    assert time.monotonic() - started < 5


class _Trickle(BaseHTTPRequestHandler):
    """An index that answers a page a byte at a time, without end."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body>")
        with contextlib.suppress(OSError):
            while not self.server.done:  # type: ignore[attr-defined]
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.05)

    def log_message(self, *args: object) -> None:
        pass


def test_an_index_page_that_trickles_is_stopped_at_its_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.done = False  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PATCHKIT_DOWNLOAD_TIMEOUT", "1")
    url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    started = time.monotonic()
    try:
        with pytest.raises(SourceError, match=r"index page .* is too slow"):
            index.PackageIndex(index.IndexConfig(url, "test")).releases("fake-vllm")
    finally:
        server.done = True  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
    assert time.monotonic() - started < 10
