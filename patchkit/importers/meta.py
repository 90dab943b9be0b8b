"""Metadata from what a source says about itself: DEP-3 headers (quilt, Debian), git mail
headers (format-patch), comments (run.sh, scripts), and the upstream issue and PR links in any
of them. Nothing is invented: a field the source does not state stays empty."""

from __future__ import annotations

import email
import email.errors
import email.header
import email.policy
import re
from collections.abc import Iterable

from patchkit.importers.model import Meta

_LINK = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+")
_DEP3_KEY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s?(.*)$")


def links(texts: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Upstream issue links and PR links found in ``texts``, each once, in order."""
    issues: list[str] = []
    prs: list[str] = []
    for text in texts:
        for match in _LINK.finditer(text):
            url = match.group(0)
            bucket = prs if match.group(1) == "pull" else issues
            if url not in bucket:
                bucket.append(url)
    return tuple(issues), tuple(prs)


def split_title(text: str) -> tuple[str, str]:
    """First line and the rest, stripped."""
    lines = text.strip().splitlines()
    if not lines:
        return "", ""
    return lines[0].strip(), "\n".join(lines[1:]).strip()


def parse_dep3(header: str) -> Meta:
    """DEP-3 fields of a patch header (``Key: value``, continuation lines indented)."""
    fields: dict[str, str] = {}
    key = ""
    free: list[str] = []
    for line in header.splitlines():
        match = _DEP3_KEY.match(line)
        if match:
            key = match.group(1)
            fields[key] = match.group(2).strip()
        elif line.startswith((" ", "\t")) and key:
            more = line.strip()
            fields[key] += "\n" + ("" if more == "." else more)
        elif line.strip() and line.strip() != "---":
            free.append(line.strip())
            key = ""
    title, why = split_title(fields.get("Description") or fields.get("Subject") or "")
    if not title and free:
        title, why = free[0], "\n".join(free[1:])
    issues, prs = links([header])
    bug = fields.get("Bug", "")
    if bug and bug not in issues and "/pull/" not in bug:
        issues = (*issues, bug)
    return Meta(
        title=title,
        why=why,
        author=fields.get("Author") or fields.get("From") or "",
        date=fields.get("Last-Update", ""),
        issues=issues,
        prs=prs,
        fields=fields,
    )


def _decode(value: str | None) -> str:
    """A header's text, its encoded words decoded; one in a charset Python does not know is
    kept as written."""
    if not value:
        return ""
    try:
        return str(email.header.make_header(email.header.decode_header(value)))
    except (LookupError, UnicodeError, ValueError, email.errors.HeaderParseError):
        return str(value)


def parse_mail(message: bytes) -> tuple[Meta, bytes]:
    """A ``git format-patch`` message: its metadata and its body (message text and diff)."""
    mail = email.message_from_bytes(message, policy=email.policy.compat32)
    subject = re.sub(r"^\s*(\[[^]]*\]\s*)+", "", _decode(mail["Subject"]).replace("\n", " "))
    payload = mail.get_payload(decode=True)
    body = payload if isinstance(payload, bytes) else str(mail.get_payload()).encode()
    text = re.split(rb"^---\r?$", body, maxsplit=1, flags=re.MULTILINE)[0].decode(
        "utf-8", "replace"
    )
    signed = re.findall(r"^Signed-off-by:\s*(.+)$", text, re.MULTILINE)
    why = re.sub(r"^(Signed-off-by|Co-authored-by|Reviewed-by):.*$\n?", "", text, flags=re.M)
    issues, prs = links([subject, text])
    fields = {k: _decode(mail[k]) for k in ("From", "Date", "Subject") if mail[k]}
    if signed:
        fields["Signed-off-by"] = "\n".join(signed)
    meta = Meta(
        title=subject.strip(),
        why=why.strip(),
        author=fields.get("From", ""),
        date=fields.get("Date", ""),
        issues=issues,
        prs=prs,
        fields=fields,
    )
    return meta, body


def comment_meta(comments: Iterable[str], *, fallback_title: str) -> Meta:
    """Metadata from a script's comments: their first sentence the title, the whole text the
    why (lines of a paragraph joined), links kept."""
    paragraphs: list[list[str]] = [[]]
    for comment in comments:
        text = comment.strip()
        if text.startswith("!"):
            continue
        if text:
            paragraphs[-1].append(text)
        elif paragraphs[-1]:
            paragraphs.append([])
    texts = [" ".join(p) for p in paragraphs if p]
    issues, prs = links(texts)
    if not texts:
        return Meta(title=fallback_title)
    title = re.split(r"(?<=[^.]{12})(?:\. |: )", texts[0], maxsplit=1)[0].rstrip(".")
    return Meta(title=title, why="\n\n".join(texts), issues=issues, prs=prs)
