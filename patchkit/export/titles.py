"""Pull-request titles in the upstream's style, at most 72 characters: vLLM's bracket tags
stacked without spaces (``[Bugfix][Hardware][NVIDIA] ...``), FlashInfer's conventional commits
(``fix(decode): dispatch ...``, lowercase after the colon, acronyms kept)."""

from __future__ import annotations

from patchkit.errors import ConfigError
from patchkit.model import PatchMeta

MAX_TITLE = 72


def vllm_title(meta: PatchMeta) -> str:
    tags = "".join(f"[{tag.strip('[]')}]" for tag in meta.pr_tags)
    return f"{tags} {meta.title}" if tags else meta.title


def conventional_title(meta: PatchMeta) -> str:
    prefix = (meta.pr_scope or "fix").rstrip(":").strip()
    first, _, rest = meta.title.strip().rstrip(".").partition(" ")
    if not (first.isupper() or any(ch.isdigit() for ch in first)):
        first = first.lower()
    return f"{prefix}: {first} {rest}".rstrip()


def title_for(meta: PatchMeta, style: str) -> str:
    """The title, refused (naming the metadata file) when longer than upstream's 72 columns."""
    title = vllm_title(meta) if style == "vllm" else conventional_title(meta)
    if len(title) > MAX_TITLE:
        raise ConfigError(
            f"{meta.meta_file}: the PR title of {meta.id} is {len(title)} characters, over the "
            f"{MAX_TITLE} upstream's history keeps: {title!r}",
            hint="shorten `title` (or the `[pr] tags` / `scope` before it)",
        )
    return title
