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
is noted as a check, ``cmd || echo ...`` marks the patch as one the image build tolerated
failing. Steps that change nothing (``echo``, ``grep``, ``set``...) are skipped; any other step,
or one whose file is computed at run time, is listed as not translated, with its line.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from patchkit.errors import ImportRefused
from patchkit.importers.diffs import map_diff
from patchkit.importers.meta import comment_meta, parse_dep3
from patchkit.importers.model import Candidate, FileEdits, Form, Meta, Origin
from patchkit.importers.paths import repo_path
from patchkit.importers.scripts import read_script, script_comments
from patchkit.importers.sed import SedCommand, parse_sed
from patchkit.importers.series import inside_source
from patchkit.importers.shell import Script, Step, display, known, read_shell

QUIET = {
    "set", "echo", "exit", "true", ":", "printf", "trap", "grep", "test", "[", "[[", "ls",
    "mkdir", "which", "command", "type", "sleep", "wc", "head", "tail", "function", "return",
    "local", "shopt", "umask", "pushd", "popd", "unset", "env", "nproc", "date", "uname", "id",
    "apt-get", "apt", "yum", "dnf", "apk", "curl", "wget", "uv", "source", ".", "chmod", "chown",
    "nvidia-smi", "sha256sum", "md5sum", "du", "df", "free", "tar", "unzip", "cmake", "make",
    "ninja", "conda", "mamba", "ccache", "sync", "read", "wait", "kill", "tee", "xargs",
    "ps", "pgrep", "pkill", "nohup", "update-alternatives", "clang", "gcc", "nvcc", "ldconfig",
    "awk", "cut", "sort", "uniq", "basename", "dirname", "realpath", "readlink", "seq", "stat",
}  # fmt: skip  # steps that change no file of the target (setup, checks, output)
_GIT_QUIET = {"checkout", "submodule", "fetch", "pull", "config", "status", "log", "rev-parse",
              "describe", "reset", "clean", "init", "remote"}  # fmt: skip
_PIP = re.compile(r"^(?:uv )?pip3? install|^python[\d.]* -m pip install")


@dataclass
class _Mod:
    root: Path  # the mod directory
    target: str
    script: Script
    cwd: str = "/"
    found: list[Candidate] = field(default_factory=list)
    untranslated: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    noted: list[str] = field(default_factory=list)  # requirements and checks, as written
    clones: dict[str, str] = field(default_factory=dict)  # directory -> URL (git clone)
    checkout: str | None = None  # the target's checkout the script is in (a build script)

    @property
    def run_sh(self) -> Path:
        return self.script.path


def read_mod(root: Path, target: str, script: Path | None = None) -> list[Candidate]:
    """One candidate per change the mod's ``run.sh`` (or ``script``, a build script beside its
    patches) makes; the steps it does not translate ride on each candidate (and on a refusal,
    when it makes no change import can read)."""
    mod = _Mod(root, target, read_shell(script or inside_source(root, "run.sh", str(root))))
    for step in mod.script.steps:
        _step(mod, step)
    if not mod.found:
        steps = "; ".join(mod.untranslated + mod.noted) or "nothing"
        raise ImportRefused(
            f"{mod.run_sh}: makes no change import can read ({steps})",
            hint="import the diff or script itself, or record the change by hand",
        )
    extra = tuple(mod.untranslated)
    several = len(mod.found) > 1
    prefix = script.stem if script is not None and script.name != "run.sh" else root.name
    return [
        replace(
            c,
            name=f"{prefix}-{c.name}" if several else prefix,
            untranslated=extra,
            meta=_with_requirements(c.meta, mod),
            origin=(Origin.of(mod.run_sh), *c.origin),
        )
        for c in mod.found
    ]


def _with_requirements(meta: Meta, mod: _Mod) -> Meta:
    fields = dict(meta.fields)
    if mod.requires:
        fields["Requires"] = ", ".join(mod.requires)
    if mod.checks:
        fields["Self-Check"] = "; ".join(mod.checks)
    return replace(meta, fields=fields)


def _step(mod: _Mod, step: Step) -> None:
    name, words = step.name, step.words
    if _PIP.match(" ".join(words)):
        mod.requires += [w for w in words[words.index("install") + 1 :] if not w.startswith("-")]
        mod.noted.append(f"line {step.line}: a requirement, not a change: {step.text.strip()}")
    elif step.stdout_file is not None and _writes_target(mod, step):
        _written(mod, step)
    elif name == "cd" and len(words) == 2:
        mod.cwd = _join(mod.cwd, words[1])
        if mod.clones.get(mod.cwd, "").rstrip("/").removesuffix(".git").endswith(f"/{mod.target}"):
            mod.checkout = mod.cwd
    elif name == "git" and words[1:2] == ("clone",):
        _clone(mod, step)
    elif name == "git" and len(words) > 1 and words[1] in _GIT_QUIET:
        return  # the checkout's state, not its files
    elif name in ("rm", "mv") and not _touches_target(mod, words[1:]):
        return  # build directories and the like
    elif name == "patch" and "--dry-run" in words:
        return  # a check whether it applies
    elif name == "patch" and ("-R" in words or "--reverse" in words):
        _refuse(mod, step, "takes a patch back out (an uninstall step)")
    elif name == "patch" or (name == "cat" and "patch" in step.text):
        _patch(mod, step)
    elif name == "git" and words[1:2] == ("apply",):
        _git_apply(mod, step)
    elif re.fullmatch(r"python[\d.]*", name):
        _python(mod, step)
    elif name == "sed":
        _sed(mod, step)
    elif name in ("cp", "install"):
        _copy(mod, step)
    elif name == "sudo" and len(words) > 1:
        rest = list(words[1:])
        while rest and rest[0].startswith("-"):  # sudo -n, -E, -u USER
            rest = rest[2:] if rest[0] in ("-u", "-g") else rest[1:]
        if rest:
            _step(mod, replace(step, words=tuple(rest)))
    elif name not in QUIET and name != "cat" and name not in mod.script.functions:
        _refuse(mod, step, "not translated")


def _refuse(mod: _Mod, step: Step, why: str) -> None:
    line = f"line {step.line}: {display(why)}: {step.text.strip()}"
    if line not in mod.untranslated:  # the commands of one pipeline: said once
        mod.untranslated.append(line)


def _mod_file(mod: _Mod, name: str, step: Step) -> Path | None:
    """A file of the mod that the step names (by its path in the mod, or its name there)."""
    if not known(name):
        _refuse(mod, step, "a file computed at run time")
        return None
    root = mod.root.resolve()
    candidates = [Path(name), root / name, root / posixpath.basename(name)]
    for found in candidates:
        try:
            resolved = found.resolve()
        except OSError:
            continue
        if resolved.is_file() and resolved.is_relative_to(root) and not found.is_symlink():
            return resolved
    _refuse(mod, step, f"names {name}, which is not a file of {mod.root}")
    return None


def _in_mod(mod: _Mod, name: str) -> bool:
    path = mod.root / name
    return known(name) and path.is_file() and path.resolve().is_relative_to(mod.root.resolve())


def _comments(mod: _Mod, line: int) -> list[str]:
    """The comment block right above ``line``, then the script's header comments."""
    above: list[str] = []
    at = line - 1
    while at in mod.script.comments:
        above.insert(0, mod.script.comments[at])
        at -= 1
    first = min((s.line for s in mod.script.steps), default=line)
    header = [
        t for n, t in sorted(mod.script.comments.items()) if n < first and not t.startswith("!")
    ]
    return above + [h for h in header if h not in above]


def _meta(mod: _Mod, step: Step, preamble: str, stem: str) -> Meta:
    from_patch = parse_dep3(preamble) if preamble.strip() else Meta()
    own = comment_meta(_comments(mod, step.line), fallback_title=stem)
    meta = own
    if from_patch.title:
        meta = replace(from_patch, issues=from_patch.issues + own.issues, prs=own.prs)
    if step.tolerated:
        fields = {**meta.fields, "Tolerated": f"run.sh line {step.line} goes on when it fails"}
        meta = replace(meta, fields=fields)
    return meta


# -- diffs ------------------------------------------------------------------------------------
def _patch(mod: _Mod, step: Step) -> None:
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


def _git_apply(mod: _Mod, step: Step) -> None:
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


def _diff(mod: _Mod, step: Step, name: str, strip: int, directory: str) -> None:
    if not name:
        _refuse(mod, step, "a patch read from no file import can see")
        return
    if mod.checkout and (directory + "/").startswith(mod.checkout + "/"):
        directory = "./" + directory[len(mod.checkout) :].lstrip("/")  # in the target's clone
    elif not known(directory):
        _refuse(mod, step, "a -d directory computed at run time")
        return
    path = _mod_file(mod, name, step)
    if path is None:
        return
    try:
        mapped = map_diff(
            path.read_bytes(), mod.target, strip=strip, directory=directory, source=str(path)
        )
    except ImportRefused as exc:
        _refuse(mod, step, exc.message)
        return
    meta = _meta(mod, step, mapped.preamble, path.stem)
    mod.found.append(
        Candidate(path.stem, Form.MOD, path, meta, diff=mapped.text, origin=(Origin.of(path),))
    )


# -- programs ---------------------------------------------------------------------------------
def _python(mod: _Mod, step: Step) -> None:
    args = [w for w in step.words[1:] if w not in ("-u", "-B", "-E", "-s", "-I")]
    if not args:
        _refuse(mod, step, "python reading a program import cannot see")
        return
    if args[0] == "-c" and len(args) > 1:
        code = args[1]
        if not re.search(r"\.write|write_text|write_bytes|replace\(|shutil", code):
            if "assert" in code:  # a self-check after patching
                mod.checks.append(f"line {step.line}: {code.strip()}")
                mod.noted.append(f"line {step.line}: a self-check, not a change: {step.text}")
            return  # reads or prints: no file of the target changes
        _program(mod, step, code.encode(), f"run.sh line {step.line}", ("-c", *args[2:]))
    elif args[0] == "-" and step.stdin is not None:
        _program(mod, step, step.stdin.encode(), f"run.sh line {step.line}", tuple(args))
    elif args[0] == "setup.py":
        return  # building or installing the package: no file of the target changes
    elif args[0] == "-m" and len(args) > 1 and args[1] in ("pip", "build", "venv", "ensurepip"):
        return  # building or installing: no file of the target changes
    elif args[0] == "-m":
        _refuse(mod, step, f"python -m {args[1] if len(args) > 1 else ''} runs a module")
    elif mod.checkout and mod.cwd.startswith(mod.checkout) and not _in_mod(mod, args[0]):
        _refuse(mod, step, f"runs the target's own {args[0]}, which import does not redo")
    else:
        path = _mod_file(mod, args[0], step)
        if path is not None:
            _program(mod, step, path.read_bytes(), path.name, tuple(args), path)


def _program(
    mod: _Mod,
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
        _refuse(mod, step, exc.message)
        return
    stem = path.stem if path else f"line{step.line}"
    meta = _meta(mod, step, "\n".join(script_comments(source)), stem)
    origin = (Origin.of(path),) if path else (Origin(f"{label}.py".replace(" ", "-"), source),)
    mod.found.append(Candidate(stem, Form.MOD, where, meta, edits=edits, origin=origin))


# -- a checkout the script clones ---------------------------------------------------------------
def _clone(mod: _Mod, step: Step) -> None:
    args = [w for w in step.words[2:] if not w.startswith("-")]
    if args and known(args[0]):
        url = args[0]
        name = (
            args[1] if len(args) > 1 else posixpath.basename(url.rstrip("/")).removesuffix(".git")
        )
        mod.clones[_join(mod.cwd, name)] = url


def _writes_target(mod: _Mod, step: Step) -> bool:
    """A redirection into a file of the target: a here-document or a line written there, or
    any other command's output (a report, a checksum of a tool in QUIET is not)."""
    writer = step.name in ("cat", "echo", "printf") or step.name not in QUIET
    return writer and _touches_target(mod, (step.stdout_file or "",))


def _join(cwd: str, name: str) -> str:
    """``name`` from ``cwd``; one starting with an unknown variable (``$INSTALL_DIR/x``) is
    taken as absolute, as such variables hold."""
    if not known(name[:1]):
        return posixpath.normpath("/" + name)
    return posixpath.normpath(posixpath.join(cwd, name))


def _touches_target(mod: _Mod, words: tuple[str, ...]) -> bool:
    """Whether any of ``words`` is (or may be) a file of the target."""
    paths = [w for w in words if not w.startswith("-")]
    return any(_target_path(mod, w) is not None or _may_be_target(mod, w) for w in paths)


def _may_be_target(mod: _Mod, name: str) -> bool:
    """An unknown path may be the target's, unless it sits beside the checkout the script
    cloned under the same unknown directory (``$INSTALL_DIR/vllm_env.sh``)."""
    if known(name):
        return False
    full = _join(mod.cwd, name)
    return not (mod.checkout and full.split("/")[1] == mod.checkout.split("/")[1])


def _target_path(mod: _Mod, name: str) -> str | None:
    """The repository path of a file the script names: inside the target's checkout it cloned,
    or an installed file."""
    full = _join(mod.cwd, name)
    if mod.checkout and full.startswith(mod.checkout + "/"):
        inside = full[len(mod.checkout) + 1 :]
        return inside if known(inside) else None
    found = repo_path(full, mod.target)
    return found if found is not None and known(found) else None


# -- writes by redirection: ``cat > f <<EOF``, ``echo line >> f`` -------------------------------
def _written(mod: _Mod, step: Step) -> None:
    dest = step.stdout_file or ""
    if step.name == "cat" and step.stdin is not None and not step.append:
        content = step.stdin.encode()
        _file_change(mod, step, [dest], lambda path: FileEdits(path, (), content=content))
    elif step.name in ("echo", "printf") and step.append and len(step.words) >= 2:
        text = " ".join(w for w in step.words[1:] if w not in ("-e", "-n"))
        line = SedCommand("a", "$", replacement=text, line=step.line)
        _file_change(mod, step, [dest], lambda path: FileEdits(path, (), sed=(line,)))
    else:
        _refuse(mod, step, "writes a file by redirection in a way import does not redo")


# -- sed -i and copies ------------------------------------------------------------------------
def _sed(mod: _Mod, step: Step) -> None:
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
            _refuse(mod, step, f"sed option {word} is not read")
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
        _refuse(mod, step, exc.message)
        return
    _file_change(mod, step, files, lambda path: FileEdits(path, (), sed=commands))


def _copy(mod: _Mod, step: Step) -> None:
    args = [w for w in step.words[1:] if not w.startswith("-")]
    if len(args) != 2:
        _refuse(mod, step, "a copy of several files (or none)")
        return
    if not _touches_target(mod, (args[1],)):
        return  # a copy to somewhere else than the target's files
    source = _mod_file(mod, args[0], step)
    if source is None:
        return
    dest = args[1]
    if known(dest) and dest.endswith("/"):
        dest = posixpath.join(dest, source.name)
    content = source.read_bytes()
    _file_change(mod, step, [dest], lambda path: FileEdits(path, (), content=content))


def _file_change(mod: _Mod, step: Step, files: list[str], make: Callable[[str], FileEdits]) -> None:
    """One candidate for a step that edits ``files`` (installed paths) with ``make(path)``."""
    edits = []
    for name in files:
        path = _target_path(mod, name)
        if path is None:
            unknown = _may_be_target(mod, name)
            why = "a file computed at run time" if unknown else f"{name} is no file of {mod.target}"
            _refuse(mod, step, why)
            return
        edits.append(make(path))
    if not edits:
        _refuse(mod, step, "names no file")
        return
    stem = f"line{step.line}"
    meta = _meta(mod, step, "", f"{step.name} {', '.join(e.path for e in edits)}")
    origin = (Origin(f"run.sh-line{step.line}.sh", step.text.encode()),)
    mod.found.append(Candidate(stem, Form.MOD, mod.run_sh, meta, edits=tuple(edits), origin=origin))
