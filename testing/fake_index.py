"""A tiny package index for the source tests: sdists of a fake vLLM built in memory, served as
PEP 503 HTML (or PEP 691 JSON) by ``http.server`` on 127.0.0.1 in a thread."""

from __future__ import annotations

import functools
import gzip
import hashlib
import html
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

PROJECT = "fake-vllm"
COMMITS = {  # version -> upstream commit its vllm/_version.py names
    "0.1.0": "1111111aaaaaaa",
    "0.2.0": "2222222bbbbbbb",
    "0.3.0rc1": "3333333ccccccc",
    "0.3.0": "4444444ddddddd",
}
MTIME = 1_767_225_600  # 2026-01-01


def sdist_files(version: str) -> dict[str, bytes]:
    """What the release of ``version`` holds, under its top-level directory."""
    top = f"fake_vllm-{version}"
    commit = COMMITS[version]
    return {
        f"{top}/PKG-INFO": f"Metadata-Version: 2.1\nName: {PROJECT}\nVersion: {version}\n".encode(),
        f"{top}/fake_vllm.egg-info/PKG-INFO": b"Metadata-Version: 2.1\n",
        f"{top}/vllm/_version.py": f"__commit_id__ = commit_id = 'g{commit}'\n".encode(),
        f"{top}/vllm/core.py": f"VERSION = {version!r}\n".encode(),
        f"{top}/README.md": b"fake vllm\n",
        f"{top}/setup.cfg": b"[egg_info]\ntag_build = \ntag_date = 0\n\n",  # setuptools adds it
    }


def make_tarball(
    files: dict[str, bytes], *, links: dict[str, str] | None = None, exec_: tuple[str, ...] = ()
) -> bytes:
    """A gzipped tarball with ``files`` (name -> content) and symlinks (name -> target)."""
    buf = io.BytesIO()
    # gzip stamps the time into its header: fix it, so the same files give the same bytes
    with (
        gzip.GzipFile(fileobj=buf, mode="wb", mtime=MTIME) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(content), MTIME
            info.mode = 0o755 if name in exec_ else 0o644
            tar.addfile(info, io.BytesIO(content))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mtime = tarfile.SYMTYPE, target, MTIME
            tar.addfile(info)
    return buf.getvalue()


def make_sdist(version: str) -> bytes:
    top = f"fake_vllm-{version}"
    return make_tarball(sdist_files(version), exec_=(f"{top}/README.md",))


@dataclass
class FakeFile:
    filename: str
    content: bytes
    sha256: str  # what the index page claims (may disagree with content, to test refusal)
    yanked: bool = False
    upload_time: str | None = None  # PEP 700, JSON pages only


@dataclass
class FakeIndex:
    """The index's files and the requests it has served; ``url`` is the simple API root."""

    files: list[FakeFile] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    json_pages: bool = False
    url: str = ""
    _server: ThreadingHTTPServer | None = None

    def add(self, filename: str, content: bytes, **kw: object) -> FakeFile:
        sha = str(kw.pop("sha256", hashlib.sha256(content).hexdigest()))
        item = FakeFile(filename, content, sha, **kw)  # type: ignore[arg-type]
        self.files.append(item)
        return item

    def add_release(self, version: str, **kw: object) -> FakeFile:
        return self.add(f"fake_vllm-{version}.tar.gz", make_sdist(version), **kw)

    def page(self) -> tuple[str, bytes]:
        if self.json_pages:
            return "application/vnd.pypi.simple.v1+json", self._json()
        return "text/html", self._html()

    def _html(self) -> bytes:
        links = []
        for f in self.files:
            yanked = " data-yanked=''" if f.yanked else ""
            href = html.escape(f"../../files/{f.filename}#sha256={f.sha256}")
            links.append(f'<a href="{href}"{yanked}>{html.escape(f.filename)}</a><br/>')
        return ("<!DOCTYPE html><html><body>" + "".join(links) + "</body></html>").encode()

    def _json(self) -> bytes:
        files = [
            {
                "filename": f.filename,
                "url": f"../../files/{f.filename}",
                "hashes": {"sha256": f.sha256},
                "yanked": f.yanked,
                **({"upload-time": f.upload_time} if f.upload_time else {}),
            }
            for f in self.files
        ]
        meta = {"api-version": "1.1"}
        return json.dumps({"meta": meta, "name": PROJECT, "files": files}).encode()

    def start(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        serve = functools.partial(self._server.serve_forever, poll_interval=0.02)
        threading.Thread(target=serve, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/simple/"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def _handler(index: FakeIndex) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            index.requests.append(self.path)
            if self.path.rstrip("/") == f"/simple/{PROJECT}":
                self._send(*index.page())
                return
            for f in index.files:
                if self.path == f"/files/{f.filename}":
                    self._send("application/octet-stream", f.content)
                    return
            self.send_error(404)

        def _send(self, ctype: str, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def fake_index() -> Iterator[FakeIndex]:
    """An index with 0.1.0, 0.2.0, 0.3.0rc1, 0.3.0 of fake-vllm, plus a wheel and a yanked
    sdist that must be ignored."""
    index = FakeIndex()
    for version in COMMITS:
        index.add_release(version)
    index.add("fake_vllm-0.2.0-py3-none-any.whl", b"not an sdist")
    index.add("fake_vllm-0.4.0.tar.gz", b"yanked", yanked=True)
    index.start()
    yield index
    index.stop()
