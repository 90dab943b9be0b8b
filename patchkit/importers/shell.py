"""A container mod's ``run.sh`` read with tree-sitter's bash grammar, never run.

The script becomes a flat list of :class:`Step` values: each simple command with its words
evaluated statically, its standard input (a here-document's text, a ``< file``, or the command
piped into it), whether a failure is tolerated (``|| echo ...``, ``|| true``), and its line.
Assignments, ``export``, ``for x in GLOB`` over the mod's files and both branches of an ``if``
are followed. Values are only what can be known without running anything: literals, variables
assigned above, and the idioms mods use to find things: the mod's own directory
(``$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)``, ``$(dirname "$0")``), site-packages
(``python3 -c 'import site; ...'``, ``pip show ... | grep Location``), a package's directory
(``os.path.dirname(vllm.__file__)``) or a module's file (``import vllm.x.y as m;
print(m.__file__)``). Anything else is :data:`UNKNOWN` inside the word, and the step that uses
it is refused by its reader, naming the line.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from patchkit.errors import ImportRefused
from patchkit.importers.script_values import MAX_STEPS as MAX_LOOPS
from patchkit.importers.script_values import MAX_VALUE_CHARS, SITE, UNKNOWN_WORD
from patchkit.importers.shellflow import errexit, is_soft, stops

UNKNOWN = UNKNOWN_WORD  # a part of a word whose value cannot be known without running it
MAX_STEPS = 2000  # simple commands in one script, loops unrolled
MAX_SOURCE = 1 << 20  # bytes of run.sh read
MAX_LINE = 64 * 1024  # bytes of one line of a run.sh: a longer one is no command a person wrote
MAX_DEPTH = 200  # nesting of the syntax tree followed
_LANGUAGE = Language(tree_sitter_bash.language())
_MOD_DIR = re.compile(
    r"^\s*(cd\s+.*dirname.*(&&|;)\s*pwd|dirname\b|realpath\b.*dirname|readlink\b)"
)
_ECHO = re.compile(r'^\s*echo\s+"?\$\{?(\w+)\}?"?\s*(?:\|\s*(?:tail|head)\s+-n\s*1\s*)?$')
_SITE = re.compile(r"site-?packages|getsitepackages|get_paths|purelib|platlib|Location")
_FILE_OF = re.compile(
    r"import\s+([\w.]+)(?:\s+as\s+(\w+))?.*print\(\s*(?:os\.path\.(dirname|abspath)\()?"
    r"\s*(?:os\.path\.(?:abspath|realpath)\()?\s*(\w[\w.]*)\.__(file|path)__"
)


@dataclass(frozen=True)
class Step:
    """One simple command of the script, evaluated."""

    line: int
    text: str  # the command as written (its first line)
    words: tuple[str, ...]  # evaluated; a word holding UNKNOWN is not known
    stdin: str | None = None  # a here-document's text
    stdin_file: str | None = None  # ``< file``
    piped_from: tuple[str, ...] = ()  # the words of the command piped into this one
    tolerated: bool = False  # ``|| echo ...``: the script goes on when it fails
    stdout_file: str | None = None  # ``> file`` (or ``>> file``: ``append``)
    append: bool = False
    asserted: bool = False  # the script stops with an error when it fails (``|| exit 1``, set -e)

    @property
    def name(self) -> str:
        return posixpath.basename(self.words[0]) if self.words else ""


@dataclass
class Script:
    """What reading a run.sh gives: its steps, the comment lines and where they stand."""

    path: Path  # the script
    steps: list[Step] = field(default_factory=list)
    comments: dict[int, str] = field(default_factory=dict)  # line -> comment text
    functions: set[str] = field(default_factory=set)  # defined in the script (read in place)
    loops: int = 0  # loop bodies read so far (nested ones included): MAX_LOOPS
    env: dict[str, str] = field(default_factory=dict)


def read_shell(
    path: Path, source: bytes | None = None, env: dict[str, str] | None = None
) -> Script:
    """The steps of ``path`` (a mod's run.sh), or of ``source`` said to be at ``path`` (a
    Dockerfile's shell, a ``bash -c`` script, with the ``env`` set before it); ImportRefused
    when it is too large to read."""
    source = path.read_bytes() if source is None else source
    if len(source) > MAX_SOURCE:
        raise ImportRefused(
            f"{path}: {len(source)} bytes, more than the {MAX_SOURCE} import reads",
            hint="import the diffs or scripts the mod applies one by one",
        )
    for number, line in enumerate(source.split(b"\n"), 1):
        if len(line) > MAX_LINE:
            raise ImportRefused(
                f"{path} line {number}: {len(line)} bytes, more than the {MAX_LINE} (MAX_LINE) "
                "import reads in one line",
                hint="import the diffs or scripts the mod applies one by one",
            )
    tree = Parser(_LANGUAGE).parse(source)
    script = Script(path, env={"0": str(path), "BASH_SOURCE": str(path), **(env or {})})
    _Reader(script).block(tree.root_node, 0)
    return script


class _Reader:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.errexit = False  # ``set -e`` in force: a failing plain command stops the script

    def block(self, node: Node, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ImportRefused(f"{self.script.path}: nested deeper than {MAX_DEPTH}")
        for child in node.named_children:
            count = len(self.script.steps)
            self.statement(child, depth + 1, tolerated=False)
            if self.errexit and child.type in ("command", "redirected_statement"):
                self._assert_from(count)  # a plain command of the script under set -e

    def _assert_from(self, count: int) -> None:
        for i in range(count, len(self.script.steps)):
            if not self.script.steps[i].tolerated:
                self.script.steps[i] = replace(self.script.steps[i], asserted=True)

    def statement(self, node: Node, depth: int, *, tolerated: bool) -> None:
        kind = node.type
        if kind == "comment":
            self.script.comments[node.start_point[0] + 1] = _text(node).lstrip("#").strip()
        elif kind == "variable_assignment":
            self.assign(node)
        elif kind == "declaration_command":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child)
        elif kind in ("command", "redirected_statement"):
            self.command(node, tolerated=tolerated)
        elif kind == "pipeline":
            self.pipeline(node, tolerated)
        elif kind == "list":
            self.list_(node, depth, tolerated)
        elif kind == "for_statement":
            self.for_(node, depth)
        elif kind in ("if_statement", "elif_clause", "else_clause", "do_group", "subshell",
                      "compound_statement", "negated_command", "while_statement"):  # fmt: skip
            for child in node.named_children:
                if child.type not in ("test_command",) and child.is_named:
                    self.statement(child, depth + 1, tolerated=tolerated)
        elif kind == "function_definition":  # read where defined: build scripts call them
            self.script.functions.add(_text(node.child_by_field_name("name")))
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, depth + 1, tolerated=tolerated)

    def list_(self, node: Node, depth: int, tolerated: bool) -> None:
        """``a && b || c``: each command; one followed by ``|| echo/true/:`` is tolerated."""
        parts = node.children
        for i, part in enumerate(parts):
            if not part.is_named:
                continue
            nxt = parts[i + 1].type if i + 1 < len(parts) else ""
            after = parts[i + 2] if i + 2 < len(parts) else None
            soft = nxt == "||" and after is not None and is_soft(_text(after))
            if i > 0 and parts[i - 1].type == "||" and is_soft(_text(part)):
                continue  # the fallback itself: nothing to translate
            count = len(self.script.steps)
            self.statement(part, depth + 1, tolerated=tolerated or soft)
            if nxt == "||" and after is not None and stops(_text(after)):
                self._assert_from(count)

    def pipeline(self, node: Node, tolerated: bool) -> None:
        commands = [c for c in node.named_children if c.type in ("command", "redirected_statement")]
        before: tuple[str, ...] = ()
        whole = _text(node).splitlines()[0] if _text(node) else ""
        for command in commands:
            count = len(self.script.steps)
            self.command(command, tolerated=tolerated, piped_from=before)
            for i in range(count, len(self.script.steps)):  # a step of a pipeline: show it all
                self.script.steps[i] = replace(self.script.steps[i], text=whole)
            before = self.script.steps[-1].words if self.script.steps else ()

    def for_(self, node: Node, depth: int) -> None:
        name = _text(node.child_by_field_name("variable"))
        values = [c for c in node.children_by_field_name("value")]
        items: list[str] = []
        for value in values:
            items += self.glob(self.word(value))
        body = node.child_by_field_name("body")
        for item in items:
            self.script.loops += 1
            if self.script.loops > MAX_LOOPS:
                raise ImportRefused(
                    f"{self.script.path}: line {node.start_point[0] + 1}: loops run more than "
                    f"{MAX_LOOPS} bodies (MAX_LOOPS): import reads no script that large"
                )
            self.script.env[name] = item
            if body is not None:
                self.block(body, depth + 1)

    def glob(self, word: str) -> list[str]:
        """A loop's word: the mod's files its glob matches, else the word itself."""
        if not any(ch in word for ch in "*?["):
            return [word]
        base = posixpath.basename(word)
        root = self.script.path.parent
        names = sorted(p.name for p in root.iterdir() if p.is_file() and not p.is_symlink())
        return [str(root / n) for n in names if fnmatch.fnmatch(n, base)]

    def assign(self, node: Node) -> None:
        name = _text(node.child_by_field_name("name"))
        value = node.child_by_field_name("value")
        text = self.word(value) if value is not None else ""
        if len(text) > MAX_VALUE_CHARS:
            raise ImportRefused(
                f"{self.script.path}: line {node.start_point[0] + 1}: {name} grows over "
                f"{MAX_VALUE_CHARS} characters (MAX_VALUE_CHARS)"
            )
        self.script.env[name] = text

    def command(self, node: Node, *, tolerated: bool, piped_from: tuple[str, ...] = ()) -> None:
        stdin = stdin_file = stdout_file = None
        append = False
        inner = node
        if node.type == "redirected_statement":
            inner = node.child_by_field_name("body") or node.named_children[0]
            for redirect in node.named_children[1:]:
                if redirect.type == "heredoc_redirect":
                    stdin = _heredoc(redirect)
                elif redirect.type == "file_redirect":
                    dest = redirect.child_by_field_name("destination")
                    value = self.word(dest) if dest is not None else None
                    operator = _text(redirect).lstrip("0123456789&")
                    if operator.startswith("<"):
                        stdin_file = value
                    elif operator.startswith(">") and not _text(redirect).startswith("2"):
                        stdout_file, append = value, operator.startswith(">>")
        if inner.type != "command":
            self.statement(inner, 1, tolerated=tolerated)
            return
        for assignment in (c for c in inner.named_children if c.type == "variable_assignment"):
            self.assign(assignment)
        words = [self.word(c) for c in _command_words(inner)]
        if node is not inner and _lone_dash(node, inner):
            words.append("-")  # ``python3 - <<'PY'``: the grammar drops a lone ``-`` here
        if words:
            self.step(node, tuple(words), tolerated, stdin, stdin_file, piped_from)
            if stdout_file is not None:
                last = self.script.steps[-1]
                self.script.steps[-1] = replace(last, stdout_file=stdout_file, append=append)

    def step(
        self,
        node: Node,
        words: tuple[str, ...],
        tolerated: bool,
        stdin: str | None = None,
        stdin_file: str | None = None,
        piped_from: tuple[str, ...] = (),
    ) -> None:
        if len(self.script.steps) >= MAX_STEPS:
            raise ImportRefused(
                f"{self.script.path}: more than {MAX_STEPS} commands (loops unrolled)"
            )
        line = node.start_point[0] + 1
        text = _text(node).splitlines()[0] if _text(node) else ""
        self.script.steps.append(Step(line, text, words, stdin, stdin_file, piped_from, tolerated))
        if words[0] == "set":
            self.errexit = errexit(words[1:], self.errexit)

    # -- words -------------------------------------------------------------------------------
    def word(self, node: Node) -> str:
        kind = node.type
        if kind in ("word", "number"):
            return _unescape(_text(node))
        if kind == "raw_string":
            return _text(node)[1:-1]
        if kind == "string_content" or kind == "heredoc_body":
            return _text(node)
        if kind in ("string", "concatenation"):
            return "".join(self.part(c) for c in node.children)
        return self.part(node)

    def part(self, node: Node) -> str:
        kind = node.type
        if kind == '"':
            return ""
        if kind == "simple_expansion":
            return self.variable(_text(node)[1:])
        if kind == "expansion":
            return self.expansion(node)
        if kind == "command_substitution":
            return self.substitution(node)
        if kind in ("string", "concatenation", "word", "raw_string", "string_content", "number"):
            return self.word(node)
        return _text(node) if node.child_count == 0 else UNKNOWN

    def variable(self, name: str) -> str:
        """Its value; unset, a marker naming it (two uses of one unknown are one path)."""
        return self.script.env.get(name, f"{UNKNOWN}{name}{UNKNOWN}")

    def expansion(self, node: Node) -> str:
        """``${NAME}``, ``${BASH_SOURCE[0]}``, ``${NAME:-default}`` (the default when unset)."""
        inner = _text(node)[2:-1]
        match = re.fullmatch(r"(\w+)(?:\[0\])?(?::?-(.*))?", inner)
        if match is None:
            return UNKNOWN
        known = self.script.env.get(match.group(1))
        if known is not None:
            return known
        return match.group(2) if match.group(2) is not None else self.variable(match.group(1))

    def substitution(self, node: Node) -> str:
        """``$(...)``: the idioms a mod uses to find itself, site-packages or a module."""
        text = _text(node)[2:-1]
        echoed = _ECHO.match(text)
        if echoed:  # $(echo "$X" | tail -n 1): X
            value = self.script.env.get(echoed.group(1), UNKNOWN)
            return value if "\n" not in value else UNKNOWN
        if _MOD_DIR.match(text) and ("BASH_SOURCE" in text or "$0" in text):
            return str(self.script.path.parent)
        located = _file_of(text)
        if located is not None:
            return located
        if _SITE.search(text) and ("python" in text or "pip" in text):
            return SITE
        return UNKNOWN


def _file_of(code: str) -> str | None:
    """``python3 -c "import vllm.x.y as m; print(m.__file__)"`` -> its installed path."""
    if "python" not in code:
        return None
    match = _FILE_OF.search(code.replace("\\n", ";"))
    if match is None:
        return None
    module, alias, wrap, printed, attr = match.groups()
    if printed.split(".")[0] not in {alias or module.split(".")[0], module}:
        return None
    printed_module = module if printed == alias else printed
    parts = printed_module.split(".")
    path = posixpath.join(SITE, *parts)
    if attr == "path" or (wrap == "dirname" and len(parts) == 1):
        return path  # a package's directory
    return path + ".py" if len(parts) > 1 else posixpath.join(path, "__init__.py")


def _lone_dash(node: Node, inner: Node) -> bool:
    """``-`` between a command and its redirections, which tree-sitter-bash leaves out of
    both (``python3 - <<'PY'``, the program read from standard input)."""
    after = [c for c in node.children if c.start_byte >= inner.end_byte]
    if not after or node.text is None:
        return False
    gap = node.text[inner.end_byte - node.start_byte : after[0].start_byte - node.start_byte]
    return gap.strip() == b"-"


def _command_words(node: Node) -> Iterator[Node]:
    for child in node.named_children:
        if child.type == "command_name":
            yield child.named_children[0] if child.named_children else child
        elif child.type not in ("variable_assignment", "file_redirect", "herestring_redirect"):
            yield child


def _heredoc(node: Node) -> str:
    body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
    return _text(body) if body is not None else ""


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def known(word: str) -> bool:
    return UNKNOWN not in word


def display(word: str) -> str:
    """``word`` for people: an unknown variable as ``$NAME``, anything else unknown as ``?``."""
    return re.sub(
        f"{UNKNOWN}(\\w*){UNKNOWN}|{UNKNOWN}",
        lambda m: f"${m.group(1)}" if m.group(1) else "?",
        word,
    )
