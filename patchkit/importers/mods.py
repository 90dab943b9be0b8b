"""Container mods: a directory whose ``run.sh`` patches an installed package.

The script is read (:mod:`patchkit.importers.shell`, tree-sitter's bash grammar), never run.
Every step that changes a file of the target becomes a patch, or a named refusal:

- ``patch`` (``-pN``, ``-d DIR``, ``-i FILE``, ``< FILE``, ``cat FILE | patch``) and
  ``git apply`` (``-pN``, ``--directory``): the diff, its paths mapped from the installed layout;
- ``python3 script.py ARGS`` (a script beside the mod, found through ``$MOD_DIR``),
  ``python3 - ARGS <<'PY' ... PY`` and ``python3 -c '...'`` replace programs, read statically
  with ``sys.argv`` as the script passes it (:mod:`patchkit.importers.scripts`);
- ``sed -i`` expressions (:mod:`patchkit.importers.sed`);
- ``cp``/``install`` of a file of the mod over a file of the package (an overlay, a chat
  template): the file's new content.

``pip install`` becomes the patch's declared requirement, a ``python3 -c 'assert ...'`` self-check
the test of the patch it checks (:mod:`patchkit.importers.selfcheck`), ``cmd || echo ...`` marks the patch as one the image build tolerated
failing. Steps that change nothing (``echo``, ``grep``, ``set``...) are skipped; any other step,
or one whose file is computed at run time, is listed as not translated, with its line.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from pathlib import Path

from patchkit.errors import ImportRefused
from patchkit.importers.diffs import map_diff
from patchkit.importers.dockerfile import is_dockerfile, to_shell
from patchkit.importers.grepcheck import read_grep
from patchkit.importers.modchecks import attach
from patchkit.importers.model import Candidate, Form, Meta, Origin
from patchkit.importers.modfiles import (
    clone,
    copy_step,
    is_target_url,
    join_path,
    sed_step,
    touches_target,
    writes_target,
    written,
)
from patchkit.importers.modshell import MAX_INLINE, inline_script, is_pip, requirements, wrapped
from patchkit.importers.modstate import QUIET, Mod, in_mod, mod_file, refuse, step_meta
from patchkit.importers.scripts import package_names, read_script, script_comments
from patchkit.importers.selfcheck import is_check, read_check
from patchkit.importers.series import inside_source
from patchkit.importers.shell import Step, known, read_shell

_GIT_QUIET = {"checkout", "submodule", "fetch", "pull", "config", "status", "log", "rev-parse",
              "describe", "reset", "clean", "init", "remote", "ls-remote", "show", "rev-list",
              "tag", "branch"}  # fmt: skip
_DOCKER_QUIET = {"build", "buildx", "pull", "push", "tag", "inspect", "images", "image", "logs",
                 "rm", "rmi", "stop", "ps", "network", "volume", "login", "compose", "version",
                 "info"}  # fmt: skip  # docker run, exec and cp do something: not translated
_WRITES = re.compile(r"\.write|write_text|write_bytes|replace\(|shutil")


def read_mod(root: Path, target: str, script: Path | None = None) -> list[Candidate]:
    """One candidate per change the mod's ``run.sh`` (or ``script``, a build script beside its
    patches) makes; the steps it does not translate ride on each candidate (and on a refusal,
    when it makes no change import can read)."""
    path = script or inside_source(root, "run.sh", str(root))
    shell = to_shell(path.read_bytes()) if is_dockerfile(path) else None
    mod = Mod(root, target, read_shell(path, shell))
    for step in mod.script.steps:
        _step(mod, step)
    if not mod.found:  # refused, its steps said one by one (none: it changes nothing)
        steps = "; ".join(mod.untranslated + mod.noted) or "nothing"
        why = f"{mod.run_sh}: makes no change import can read ({steps})"
        name = path.stem if script is not None else root.name
        return [
            Candidate(
                name, Form.MOD, path, Meta(), refused=why, untranslated=tuple(mod.untranslated)
            )
        ]
    found, not_tests = attach(mod.found, mod.checks, target)
    extra = tuple(mod.untranslated + not_tests)
    several = len(found) > 1
    prefix = script.stem if script is not None and script.name != "run.sh" else root.name
    return [
        replace(
            c,
            name=f"{prefix}-{c.name}" if several else prefix,
            untranslated=extra,
            meta=_with_requirements(c.meta, mod),
            origin=(Origin.of(mod.run_sh), *c.origin),
        )
        for c in found
    ]


def _with_requirements(meta: Meta, mod: Mod) -> Meta:
    fields = dict(meta.fields)
    if mod.requires:
        fields["Requires"] = ", ".join(mod.requires)
    return replace(meta, fields=fields)


def _step(mod: Mod, step: Step) -> None:
    name, words = step.name, step.words
    if is_pip(name, words):
        _pip(mod, step)
    elif (script := inline_script(name, words)) is not None:
        _inline(mod, step, script)
    elif step.stdout_file is not None and writes_target(mod, step):
        written(mod, step)
    elif name == "cd" and len(words) == 2:
        mod.cwd = join_path(mod.cwd, words[1])
        if is_target_url(mod, mod.clones.get(mod.cwd, "")):
            mod.checkout = mod.cwd
    elif name == "git" and words[1:2] == ("clone",):
        clone(mod, step)
    elif name == "git" and len(words) > 1 and words[1] in _GIT_QUIET:
        return  # the checkout's state, not its files
    elif name == "docker" and len(words) > 1 and words[1] in _DOCKER_QUIET:
        return  # images and containers: the Dockerfile is a source of its own
    elif name in ("rm", "mv") and not touches_target(mod, words[1:]):
        return  # build directories and the like
    elif name == "grep" and step.asserted:
        _grep(mod, step)
    elif name == "patch" and "--dry-run" in words:
        return  # a check whether it applies
    elif name == "patch" and ("-R" in words or "--reverse" in words):
        refuse(mod, step, "takes a patch back out (an uninstall step)")
    elif name == "patch" or (name == "cat" and "patch" in step.text):
        _patch(mod, step)
    elif name == "git" and words[1:2] == ("apply",):
        _git_apply(mod, step)
    elif re.fullmatch(r"python[\d.]*", name):
        _python(mod, step)
    elif name == "sed":
        sed_step(mod, step)
    elif name in ("cp", "install"):
        copy_step(mod, step)
    elif name in ("sudo", "exec") and wrapped(name, words):
        _step(mod, replace(step, words=wrapped(name, words)))
    elif name not in QUIET and name != "cat" and name not in mod.script.functions:
        refuse(mod, step, "not translated")


def _pip(mod: Mod, step: Step) -> None:
    """``pip install X``: X is the patch's declared requirement; other pip commands (freeze,
    uninstall, show) set up the environment and change no file of the target."""
    if "install" not in step.words:
        return
    mod.requires += [r for r in requirements(step.words) if r not in mod.requires]
    mod.noted.append(f"line {step.line}: a requirement, not a change: {step.text.strip()}")


def _inline(mod: Mod, step: Step, script: str) -> None:
    """``bash -c 'SCRIPT'``: its steps read as the mod's own, at the step's lines."""
    if not known(script):
        refuse(mod, step, "a shell script computed at run time")
        return
    if mod.depth >= MAX_INLINE:
        refuse(mod, step, f"bash -c nested deeper than {MAX_INLINE} (MAX_INLINE)")
        return
    try:
        inner = read_shell(mod.run_sh, script.encode(), env=mod.script.env)
    except ImportRefused as exc:
        refuse(mod, step, exc.message)
        return
    mod.depth += 1
    try:
        for s in inner.steps:
            line = step.line + s.line - 1
            _step(mod, replace(s, line=line, tolerated=s.tolerated or step.tolerated))
    finally:
        mod.depth -= 1


# -- diffs ------------------------------------------------------------------------------------
def _patch(mod: Mod, step: Step) -> None:
    words = list(step.words)
    infile = step.stdin_file or ""
    if step.piped_from[:1] == ("cat",) and len(step.piped_from) > 1:
        infile = step.piped_from[1]
    if words[0] == "cat" and len(words) > 1:
        infile = words[1]
    strip, directory = 0, mod.cwd
    args = words[words.index("patch") + 1 :] if "patch" in words else []
    i = 0
    while i < len(args):
        word = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if word in ("-p", "-d", "-i", "--input", "--directory", "--strip"):
            i += 1
        if word.startswith(("-p", "--strip")):
            strip = int((word.split("=", 1)[1] if "=" in word else word[2:]) or value or 0)
        elif word.startswith(("-d", "--directory")):
            given = (word.split("=", 1)[1] if "=" in word else word[2:]) or value
            directory = posixpath.join(mod.cwd, given)
        elif word.startswith(("-i", "--input")):
            infile = (word.split("=", 1)[1] if "=" in word else word[2:]) or value
        i += 1
    _diff(mod, step, infile, strip, directory)


def _git_apply(mod: Mod, step: Step) -> None:
    strip, directory, files = 1, mod.cwd, []
    for word in step.words[2:]:
        if word.startswith("-p"):
            strip = int(word[2:] or 1)
        elif word.startswith("--directory="):
            directory = posixpath.join(mod.cwd, word.split("=", 1)[1])
        elif not word.startswith("-"):
            files.append(word)
    for name in files or ([step.stdin_file] if step.stdin_file else []):
        _diff(mod, step, name, strip, directory)


def _diff(mod: Mod, step: Step, name: str, strip: int, directory: str) -> None:
    if not name:
        refuse(mod, step, "a patch read from no file import can see")
        return
    if mod.checkout and (directory + "/").startswith(mod.checkout + "/"):
        directory = "./" + directory[len(mod.checkout) :].lstrip("/")  # in the target's clone
    elif not known(directory):
        refuse(mod, step, "a -d directory computed at run time")
        return
    path = mod_file(mod, name, step)
    if path is None:
        return
    try:
        mapped = map_diff(
            path.read_bytes(), mod.target, strip=strip, directory=directory, source=str(path)
        )
    except ImportRefused as exc:
        refuse(mod, step, exc.message)
        return
    meta = step_meta(mod, step, mapped.preamble, path.stem)
    mod.found.append(
        Candidate(path.stem, Form.MOD, path, meta, diff=mapped.text, origin=(Origin.of(path),))
    )


# -- programs ---------------------------------------------------------------------------------
def _python(mod: Mod, step: Step) -> None:
    args = [w for w in step.words[1:] if w not in ("-u", "-B", "-E", "-s", "-I")]
    if not args:
        refuse(mod, step, "python reading a program import cannot see")
        return
    if args[0] == "-c" and len(args) > 1:
        code = args[1]
        if not _WRITES.search(code):
            _check(mod, step, code)
            return  # reads or prints: no file of the target changes
        _program(mod, step, code.encode(), f"run.sh line {step.line}", ("-c", *args[2:]))
    elif args[0] == "-" and step.stdin is not None and not _WRITES.search(step.stdin):
        _check(mod, step, step.stdin)
    elif args[0] == "-" and step.stdin is not None:
        _program(mod, step, step.stdin.encode(), f"run.sh line {step.line}", tuple(args))
    elif args[0] == "setup.py":
        return  # building or installing the package: no file of the target changes
    elif args[0] == "-m" and len(args) > 1 and args[1] in ("pip", "build", "venv", "ensurepip"):
        return  # building or installing: no file of the target changes
    elif args[0] == "-m" and len(args) > 1 and args[1].split(".")[0] in package_names(mod.target):
        return  # runs the target (a server): none of its files changes
    elif args[0] == "-m":
        refuse(mod, step, f"python -m {args[1] if len(args) > 1 else ''} runs a module")
    elif mod.checkout and mod.cwd.startswith(mod.checkout) and not in_mod(mod, args[0]):
        refuse(mod, step, f"runs the target's own {args[0]}, which import does not redo")
    else:
        path = mod_file(mod, args[0], step)
        if path is not None:
            _program(mod, step, path.read_bytes(), path.name, tuple(args), path)


def _check(mod: Mod, step: Step, code: str) -> None:
    """A program that asserts after patching: a self-check, made the test of the patch it
    checks (``modchecks``); one that asserts nothing only reads or prints."""
    if not is_check(code):
        return
    text = step.text.strip() if step.stdin is None else f"{step.text.strip()} ({code.strip()})"
    package = (package_names(mod.target) or (mod.target,))[0]
    check = read_check(code, line=step.line, text=text, package=package)
    mod.checks.append((len(mod.found), check))
    mod.noted.append(f"line {step.line}: a self-check, not a change: {step.text.strip()}")


def _grep(mod: Mod, step: Step) -> None:
    """``grep -q MARKER FILE || exit 1``: a self-check of the file's text once patched."""
    text = step.text.strip()
    check = read_grep(step.words, line=step.line, text=text, target=mod.target, cwd=mod.cwd)
    mod.checks.append((len(mod.found), check))
    mod.noted.append(f"line {step.line}: a self-check, not a change: {text}")


def _program(
    mod: Mod,
    step: Step,
    source: bytes,
    label: str,
    argv: tuple[str, ...],
    path: Path | None = None,
) -> None:
    where = path or mod.run_sh
    try:
        edits = read_script(source, where, mod.target, argv=argv)
    except ImportRefused as exc:
        refuse(mod, step, exc.message)
        return
    stem = path.stem if path else f"line{step.line}"
    meta = step_meta(mod, step, "\n".join(script_comments(source)), stem)
    origin = (Origin.of(path),) if path else (Origin(f"{label}.py".replace(" ", "-"), source),)
    mod.found.append(Candidate(stem, Form.MOD, where, meta, edits=edits, origin=origin))
