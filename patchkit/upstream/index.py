"""The package index pip is configured with: which one it is, the source releases it lists,
verified downloads of them into the cache (extracted by :mod:`patchkit.upstream.sdist`).

The index URL is never hard-coded: ``PATCHKIT_INDEX_URL``, else ``PIP_INDEX_URL``, else the
``index-url`` of ``pip config`` (global, user and site files merged as pip merges them), else
pip's own default. Only the main index counts; ``extra-index-url`` entries are ignored.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from patchkit import progress
from patchkit.cache import Cache
from patchkit.errors import SourceError, shown
from patchkit.trust.envvars import seconds

if TYPE_CHECKING:  # the index client (and rich's bar) load when the index is asked, not before
    import requests
    from pypi_simple import DistributionPackage, ProjectPage
    from rich.console import Console

log = logging.getLogger("patchkit.upstream.index")

TIMEOUT_S = 60.0
CHUNK = 1 << 16
MAX_DOWNLOAD_BYTES = 4 << 30  # a source release larger is no release of vLLM or FlashInfer
MAX_PAGE_BYTES = 64 << 20  # an index page listing a project's files (vLLM's: ~1 MB)
DOWNLOAD_S = 3600.0  # PATCHKIT_DOWNLOAD_TIMEOUT overrides it: one download, start to end
# pip config sections in the order pip itself lets them win for `pip download`/`pip install`.
_PIP_SECTIONS = ("download", "install", "global")


# -- which index -------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexConfig:
    url: str  # the simple API root, e.g. "https://pypi.org/simple"
    origin: str  # where the URL came from, for messages ("PIP_INDEX_URL", "pip config", ...)
    cert: str | None = None  # CA bundle pip is configured with, if any


def parse_pip_config(text: str, key: str) -> str | None:
    """The value of ``key`` in ``pip config list`` output, from the section that wins for pip."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, raw = line.partition("=")
        section, dot, option = name.strip().partition(".")
        if sep and dot and option == key:
            values[section] = raw.strip().strip("'\"")
    return next((values[s] for s in _PIP_SECTIONS if values.get(s)), None)


def pip_config_text() -> str:
    """``python -m pip config list`` (merged global, user and site files); empty if pip fails."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("pip config list failed: %s", exc)
        return ""
    return proc.stdout if proc.returncode == 0 else ""


def pip_default_index() -> str | None:
    try:
        from pip._internal.models.index import PyPI
    except ImportError:
        return None
    return str(PyPI.simple_url)


def resolve_index(env: dict[str, str] | None = None, pip_config: str | None = None) -> IndexConfig:
    """Find the index URL the way pip would (plus ``PATCHKIT_INDEX_URL`` first)."""
    env = dict(os.environ) if env is None else env
    text = pip_config_text() if pip_config is None else pip_config
    cert = env.get("PIP_CERT") or parse_pip_config(text, "cert")
    for var in ("PATCHKIT_INDEX_URL", "PIP_INDEX_URL"):
        if env.get(var):
            return IndexConfig(env[var].strip(), var, cert)
    url = parse_pip_config(text, "index-url")
    if url:
        return IndexConfig(url, "pip config", cert)
    url = pip_default_index()
    if url:
        return IndexConfig(url, "pip's default", cert)
    raise SourceError(
        "no package index configured: pip is not importable and no index URL is set",
        hint="set PATCHKIT_INDEX_URL (or PIP_INDEX_URL) to the simple API of your package index",
    )


# -- what it lists -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Release:
    """One source release (sdist) of a project on the index."""

    project: str  # the name as asked for ("flashinfer-python")
    version: str  # as the index spells it ("0.6.6")
    filename: str  # "flashinfer_python-0.6.6.tar.gz"; a plain file name, no directories
    url: str
    sha256: str | None  # hex digest from the index; None when the index gives none
    upload_time: datetime | None  # PEP 700, JSON pages only

    @property
    def parsed(self) -> Version:
        return Version(self.version)

    def git_date(self) -> str | None:
        """The upload time as a git date (``<unix seconds> +0000``), if the index gave one."""
        return None if self.upload_time is None else f"{int(self.upload_time.timestamp())} +0000"


def _release(project: str, pkg: DistributionPackage) -> Release | None:
    if pkg.package_type != "sdist" or pkg.is_yanked or not pkg.version:
        return None
    try:
        Version(pkg.version)
    except InvalidVersion:
        return None
    if Path(pkg.filename).name != pkg.filename or pkg.filename.startswith("."):
        return None
    sha = pkg.digests.get("sha256")
    return Release(project, pkg.version, pkg.filename, pkg.url, sha, pkg.upload_time)


def _console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


class PackageIndex:
    """A package index, reached lazily: building one does no network access, not even pip."""

    def __init__(self, config: IndexConfig | None = None) -> None:
        self._config = config

    @functools.cached_property
    def config(self) -> IndexConfig:
        return self._config or resolve_index()

    @property
    def url(self) -> str:
        return self.config.url

    @functools.cached_property
    def session(self) -> requests.Session:
        import requests

        session = requests.Session()
        if self.config.cert:
            session.verify = self.config.cert
        return session

    def releases(self, project: str, *, include_prereleases: bool = True) -> list[Release]:
        """Source releases of ``project``, not yanked, oldest first."""
        page = self._project_page(project)
        found = (_release(project, pkg) for pkg in page.packages)
        kept = [r for r in found if r and (include_prereleases or not r.parsed.is_prerelease)]
        return sorted(kept, key=lambda r: (r.parsed, r.filename))

    def release(self, project: str, version: str) -> Release:
        """The tarball sdist of ``project`` at ``version`` (as versions: 0.19 == 0.19.0)."""
        want = parse_version(project, version)
        releases = self.releases(project)
        matches = [r for r in releases if r.parsed == want]
        tarballs = [r for r in matches if _is_tarball(r.filename)]
        if tarballs:
            return tarballs[0]
        if matches:
            raise SourceError(
                f"{project} {version} on {self.url} has no .tar.gz source release "
                f"(only {', '.join(r.filename for r in matches)})",
                hint="pick another release, or use a git source for this target in upstream.lock",
            )
        raise SourceError(
            f"{project} {version} has no source release on {self.url} (or it was yanked)",
            hint=f"check the version in upstream.lock; the newest there: {_newest(releases)}",
        )

    def _project_page(self, project: str) -> ProjectPage:
        import requests
        from pypi_simple import NoSuchProjectError, ProjectPage, PyPISimple

        with PyPISimple(endpoint=self.url, session=self.session) as client:
            url = client.get_project_url(project)
            try:
                with self.session.get(
                    url, timeout=TIMEOUT_S, headers={"Accept": client.accept}, stream=True
                ) as resp:
                    if resp.status_code == 404:
                        raise NoSuchProjectError(project, url)
                    resp.raise_for_status()
                    resp._content = _page(_arriving(resp), url)  # read, bounded
                    return ProjectPage.from_response(resp, project)
            except NoSuchProjectError as exc:
                raise SourceError(
                    f"project {shown(project)} not found on the package index {self.url}",
                    hint=f"check the package name; the index comes from {self.config.origin}",
                ) from exc
            except (requests.RequestException, ValueError) as exc:
                raise _unreachable(self.config, f"listing {project}", exc) from exc

    # -- downloads -----------------------------------------------------------------------------
    def download(self, release: Release, dest: Path | None = None) -> Path:
        """``release`` in ``dest`` (default: the download cache), its sha256 verified.

        A file already there with the right digest is used as is, without any network access.
        """
        target = (dest or Cache.current().downloads()) / release.filename
        if target.is_file() and release.sha256 and file_sha256(target) == release.sha256:
            return target
        partial = target.with_name(target.name + ".part")
        try:
            digest = self._stream_to(release, partial)
            _check_digest(release, digest, partial)
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
        return target

    def _stream_to(self, release: Release, path: Path) -> str:
        import requests

        try:
            with self.session.get(release.url, stream=True, timeout=TIMEOUT_S) as resp:
                resp.raise_for_status()
                size = int(resp.headers.get("content-length") or 0) or None
                return _write_with_progress(_arriving(resp), path, release.filename, size)
        except requests.RequestException as exc:
            raise _unreachable(self.config, f"downloading {release.url}", exc) from exc


def _write_with_progress(chunks: Iterator[bytes], path: Path, label: str, size: int | None) -> str:
    """Write ``chunks`` to ``path``; a bar on a terminal, two timestamped lines in a log, nothing
    with --quiet (``patchkit.progress``)."""
    digest = hashlib.sha256()
    shown = progress.mode()
    if shown is not progress.Mode.TERMINAL:
        with progress.step(f"downloading {label}" + (f" ({size / 1e6:.1f} MB)" if size else "")):
            _copy(chunks, path, digest, lambda n: None)
        return digest.hexdigest()
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn())
    more = (TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, *more, console=_console()) as bar:
        task = bar.add_task(escape(f"downloading {label}"), total=size)  # names are no markup
        _copy(chunks, path, digest, lambda n: bar.advance(task, n))
    return digest.hexdigest()


def _arriving(resp: requests.Response) -> Iterator[bytes]:
    """A streamed response's bytes as they arrive (whatever came, not a full chunk: a server
    sending a byte now and then is seen doing so, and stopped by the caller's time limit)."""
    read1 = getattr(resp.raw, "read1", None)  # urllib3 >= 2
    if read1 is None:
        yield from resp.iter_content(CHUNK)
        return
    while chunk := read1(CHUNK):
        yield chunk


def _page(chunks: Iterator[bytes], url: str) -> bytes:
    """An index page's bytes, read as they come: SourceError past :data:`MAX_PAGE_BYTES` or
    past ``PATCHKIT_DOWNLOAD_TIMEOUT``."""
    deadline = time.monotonic() + seconds("PATCHKIT_DOWNLOAD_TIMEOUT", DOWNLOAD_S)
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > MAX_PAGE_BYTES or time.monotonic() > deadline:
            why = f"over {MAX_PAGE_BYTES} bytes" if len(body) > MAX_PAGE_BYTES else "too slow"
            raise SourceError(
                f"the index page {url} is {why} (MAX_PAGE_BYTES, PATCHKIT_DOWNLOAD_TIMEOUT); "
                "stopped",
                hint="check the index (PATCHKIT_INDEX_URL / PIP_INDEX_URL) and the network",
            )
    return bytes(body)


def _copy(chunks: Iterator[bytes], path: Path, digest: Any, advance: Callable[[int], None]) -> None:
    """Write ``chunks``; SourceError past :data:`MAX_DOWNLOAD_BYTES` or past
    ``PATCHKIT_DOWNLOAD_TIMEOUT`` (a server that sends a byte now and then never ends)."""
    deadline = time.monotonic() + seconds("PATCHKIT_DOWNLOAD_TIMEOUT", DOWNLOAD_S)
    written = 0
    with path.open("wb") as out:
        for chunk in chunks:
            written += len(chunk)
            if written > MAX_DOWNLOAD_BYTES or time.monotonic() > deadline:
                why = (
                    f"is larger than {MAX_DOWNLOAD_BYTES} bytes (MAX_DOWNLOAD_BYTES)"
                    if written > MAX_DOWNLOAD_BYTES
                    else "did not end within PATCHKIT_DOWNLOAD_TIMEOUT seconds"
                )
                raise SourceError(
                    f"downloading {path.name.removesuffix('.part')}: it {why}; stopped",
                    hint="check the index (PATCHKIT_INDEX_URL / PIP_INDEX_URL) and the network",
                )
            out.write(chunk)
            digest.update(chunk)
            advance(len(chunk))


def _check_digest(release: Release, digest: str, path: Path) -> None:
    if release.sha256 is None:
        log.warning("%s: the index gives no sha256; the download is not verified", release.url)
    elif digest != release.sha256:
        raise SourceError(
            f"{release.project} {release.version}: {release.url} has sha256 {digest}, "
            f"but the index says {release.sha256}; the download was refused and deleted",
            hint="retry; if it persists the index or a proxy serves a corrupted file",
        )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _newest(releases: list[Release], n: int = 5) -> str:
    versions = list(dict.fromkeys(r.version for r in reversed(releases)))
    return ", ".join(versions[:n]) or "none"


def _is_tarball(filename: str) -> bool:
    return filename.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar"))


def parse_version(project: str, version: str) -> Version:
    try:
        return Version(version)
    except InvalidVersion as exc:
        raise SourceError(
            f"{project}: {shown(version)} is not a valid version", hint="use a PEP 440 version"
        ) from exc


def _unreachable(config: IndexConfig, doing: str, exc: Exception) -> SourceError:
    return SourceError(
        f"package index {config.url} (from {config.origin}) failed while {doing}: {exc}",
        hint="check the network or proxy, or set PATCHKIT_INDEX_URL to a reachable index",
    )
