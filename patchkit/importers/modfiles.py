"""The steps of a container mod that write a file of the target: ``sed -i``, a copy of one of
the mod's files over a package file, ``cat > f <<EOF`` and ``echo line >> f``; and where such a
file is: inside the target's clone the script made (``git clone`` then ``cd``), or installed."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from patchkit.errors import ImportRefused
from patchkit.importers.model import Candidate, FileEdits, Form, Origin
from patchkit.importers.modstate import QUIET, Mod, mod_file, refuse, step_meta
from patchkit.importers.paths import repo_path
from patchkit.importers.sed import SedCommand, parse_sed
from patchkit.importers.shell import Step, known

_CLONE_VALUE = {"-b", "--branch", "--depth", "-o", "--origin", "--reference", "-c", "--config",
                "-j", "--jobs", "--separate-git-dir", "--template", "--shallow-since",
                "--shallow-exclude", "-u", "--upload-pack", "--filter", "--bundle-uri"}  # fmt: skip


def clone(mod: Mod, step: Step) -> None:
    """``git clone [OPTIONS] URL [DIR]``: where the clone of URL is (a value of an option is
    neither)."""
    args, skip = [], False
    for word in step.words[2:]:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _CLONE_VALUE
        else:
            args.append(word)
    if args and known(args[0]):
        url = args[0]
        name = (
            args[1] if len(args) > 1 else posixpath.basename(url.rstrip("/")).removesuffix(".git")
        )
        mod.clones[join_path(mod.cwd, name)] = url


def is_target_url(mod: Mod, url: str) -> bool:
    return url.rstrip("/").removesuffix(".git").endswith(f"/{mod.target}")


def target_clones(mod: Mod) -> list[str]:
    """The directories holding a clone of the target: the one the script is in first."""
    clones = [d for d, url in mod.clones.items() if is_target_url(mod, url)]
    return ([mod.checkout] if mod.checkout else []) + [d for d in clones if d != mod.checkout]


def writes_target(mod: Mod, step: Step) -> bool:
    """A redirection into a file of the target: a here-document or a line written there, or
    any other command's output (a report, a checksum of a tool in QUIET is not)."""
    writer = step.name in ("cat", "echo", "printf") or step.name not in QUIET
    return writer and touches_target(mod, (step.stdout_file or "",))


def join_path(cwd: str, name: str) -> str:
    """``name`` from ``cwd``; one starting with an unknown variable (``$INSTALL_DIR/x``) is
    taken as absolute, as such variables hold."""
    if not known(name[:1]):
        return posixpath.normpath("/" + name)
    return posixpath.normpath(posixpath.join(cwd, name))


def touches_target(mod: Mod, words: tuple[str, ...]) -> bool:
    """Whether any of ``words`` is (or may be) a file of the target."""
    paths = [w for w in words if not w.startswith("-")]
    return any(_target_path(mod, w) is not None or _may_be_target(mod, w) for w in paths)


def _may_be_target(mod: Mod, name: str) -> bool:
    """An unknown path may be the target's, unless it sits beside the checkout the script
    cloned under the same unknown directory (``$INSTALL_DIR/vllm_env.sh``)."""
    if known(name):
        return False
    full = join_path(mod.cwd, name)
    return not (mod.checkout and full.split("/")[1] == mod.checkout.split("/")[1])


def _target_path(mod: Mod, name: str) -> str | None:
    """The repository path of a file the script names: inside the target's checkout it cloned,
    or an installed file."""
    full = join_path(mod.cwd, name)
    for root in target_clones(mod):
        if full.startswith(root + "/"):
            inside = full[len(root) + 1 :]
            return inside if known(inside) else None
    found = repo_path(full, mod.target)
    return found if found is not None and known(found) else None


# -- writes by redirection: ``cat > f <<EOF``, ``echo line >> f`` -------------------------------
def written(mod: Mod, step: Step) -> None:
    dest = step.stdout_file or ""
    if step.name == "cat" and step.stdin is not None and not step.append:
        content = step.stdin.encode()
        _file_change(mod, step, [dest], lambda path: FileEdits(path, (), content=content))
    elif step.name in ("echo", "printf") and step.append and len(step.words) >= 2:
        text = " ".join(w for w in step.words[1:] if w not in ("-e", "-n"))
        line = SedCommand("a", "$", replacement=text, line=step.line)
        _file_change(mod, step, [dest], lambda path: FileEdits(path, (), sed=(line,)))
    else:
        refuse(mod, step, "writes a file by redirection in a way import does not redo")


# -- sed -i and copies ------------------------------------------------------------------------
def sed_step(mod: Mod, step: Step) -> None:
    words = list(step.words[1:])
    in_place, extended = False, False
    expressions: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith(("-i", "--in-place")):
            in_place = True
        elif word in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif word in ("-e", "--expression"):
            expressions.append(words[i + 1] if i + 1 < len(words) else "")
            i += 1
        elif word.startswith("-"):
            refuse(mod, step, f"sed option {word} is not read")
            return
        elif not expressions and not files:
            expressions.append(word)
        else:
            files.append(word)
        i += 1
    if not in_place:
        return  # sed without -i prints: it changes no file
    try:
        commands = tuple(parse_sed(e, extended=extended, line=step.line) for e in expressions)
    except ImportRefused as exc:
        refuse(mod, step, exc.message)
        return
    _file_change(mod, step, files, lambda path: FileEdits(path, (), sed=commands))


def copy_step(mod: Mod, step: Step) -> None:
    args = [w for w in step.words[1:] if not w.startswith("-")]
    if len(args) != 2:
        refuse(mod, step, "a copy of several files (or none)")
        return
    if not touches_target(mod, (args[1],)):
        return  # a copy to somewhere else than the target's files
    source = mod_file(mod, args[0], step)
    if source is None:
        return
    dest = args[1]
    if known(dest) and dest.endswith("/"):
        dest = posixpath.join(dest, source.name)
    content = source.read_bytes()
    _file_change(mod, step, [dest], lambda path: FileEdits(path, (), content=content))


def _file_change(mod: Mod, step: Step, files: list[str], make: Callable[[str], FileEdits]) -> None:
    """One candidate for a step that edits ``files`` (installed paths) with ``make(path)``."""
    edits = []
    for name in files:
        path = _target_path(mod, name)
        if path is None:
            unknown = _may_be_target(mod, name)
            why = "a file computed at run time" if unknown else f"{name} is no file of {mod.target}"
            refuse(mod, step, why)
            return
        edits.append(make(path))
    if not edits:
        refuse(mod, step, "names no file")
        return
    stem = f"line{step.line}"
    meta = step_meta(mod, step, "", f"{step.name} {', '.join(e.path for e in edits)}")
    origin = (Origin(f"run.sh-line{step.line}.sh", step.text.encode()),)
    mod.found.append(Candidate(stem, Form.MOD, mod.run_sh, meta, edits=tuple(edits), origin=origin))
