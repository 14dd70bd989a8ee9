"""The site's documentation pages, written as MyST sources beside the lessons' (course_lib.instructor.site):

- the guides, ``docs/NAME.md`` in the repository (students, instructors, contributors), as written;
- ARCHITECTURE.md, read at build time: its "Threat model" section on a page of its own, the rest on another;
- an API reference of course_lib, read from the package's source with ``ast`` (nothing is imported, so it
  costs well under a second and needs no torch): every public module, function, class and method, with its
  signature and docstring (the site's search finds them).

Links between the guides stay as written (``instructors.md``); a link to ARCHITECTURE.md goes to its page, a
link to any other file of the repository to that file on GitHub at the release's tag.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

GUIDES = ("students", "instructors", "contributing")  # docs/NAME.md, in the order of the sidebar
THREAT_HEADING = re.compile(r"^## +Threat model\b.*$", re.M)
FOLDER = "docs"  # where the pages go on the site: docs/NAME.html
FLOORS = (
    ("", "Floor 0: what the lessons teach"),
    ("notebook", "Floor 1: the notebook runtime"),
    ("checks", "Floor 2: the exercise checks"),
    ("instructor", "Floor 3: instructor tools"),
)


def pages(root: Path, release=None) -> dict[str, str]:
    """{docname: MyST source} for every documentation page, in the sidebar's order; {} for a folder without
    docs/ (a course being built elsewhere, or a test's own small repository)."""
    if not (root / FOLDER).is_dir():
        return {}
    found = {}
    for name in GUIDES:
        path = root / FOLDER / f"{name}.md"
        if not path.exists():
            raise ValueError(f"the site's guide {path} is missing (the site publishes docs/{{{','.join(GUIDES)}}}.md)")
        found[f"{FOLDER}/{name}"] = relink(path.read_text(encoding="utf-8"), release)
    architecture, threats = split_architecture((root / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    found[f"{FOLDER}/threat-model"] = relink(threats, release)
    found[f"{FOLDER}/architecture"] = relink(architecture, release)
    found[f"{FOLDER}/api"] = api_reference(root / "course_lib")
    return found


def split_architecture(text: str) -> tuple[str, str]:
    """ARCHITECTURE.md as two pages: everything but its threat-model section, and that section with its
    headings one level up (its "## Threat model ..." becomes the page's title)."""
    start = THREAT_HEADING.search(text)
    if start is None:
        raise ValueError("ARCHITECTURE.md has no '## Threat model' section: the site's threat-model page comes from it")
    end = re.compile(r"^## ", re.M).search(text, start.end())
    section = text[start.start() : end.start() if end else len(text)]
    rest = text[: start.start()] + (text[end.start() :] if end else "")
    section = re.sub(r"^#(#+ )", r"\1", section, flags=re.M)
    return rest.rstrip() + "\n", section.rstrip() + "\n"


LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s]+)\)")


def relink(text: str, release=None) -> str:
    """Markdown links written for the repository (docs/NAME.md beside each other, ../FILE for the rest) made
    to work on the site: guides stay, ARCHITECTURE.md goes to its pages, other files to GitHub at the tag."""

    def target(match: re.Match) -> str:
        link = match.group(1)
        path, _, anchor = link.partition("#")
        name = Path(path).name
        if path.endswith(".md") and "/" not in path and Path(path).stem in GUIDES:
            return match.group(0)
        if name == "ARCHITECTURE.md":
            page = "threat-model.md" if anchor.startswith("threat-model") else "architecture.md"
            return f"]({page})"
        repo_path = re.sub(r"^(\.\./)+", "", path) if path.startswith("../") else f"{FOLDER}/{path}"
        if release is None or not getattr(release, "repository", None):
            return f"]({link})"
        return f"]({release.repository}/blob/{release.tag}/{repo_path}{'#' + anchor if anchor else ''})"

    return LINK.sub(target, text)


# --- the API reference, from the source ---


def api_reference(package: Path) -> str:
    """The API reference (MyST): a section per floor, a subsection per public module."""
    parts = [
        "# API reference\n",
        "Every public module, function, class and method of `course_lib`, with the docstring its source gives "
        "it (read from the source when the site was built). The floors are those of the architecture page: "
        "imports run from floor 3 down to floor 0.\n",
    ]
    for folder, title in FLOORS:
        where = package / folder if folder else package
        modules = sorted(p for p in where.glob("*.py") if not p.stem.startswith("_") or p.stem == "__init__")
        sections = [module_md(p, package) for p in modules]
        sections = [s for s in sections if s]
        if sections:
            parts.append(f"## {title}\n")
            parts += sections
    return "\n".join(parts)


def module_name(path: Path, package: Path) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_md(path: Path, package: Path) -> str:
    """One module's section: its docstring, then its public functions and classes, as written in the source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path, package)
    objects = [object_md(node) for node in tree.body if _public(node)]
    doc = ast.get_docstring(tree)
    if not doc and not objects:
        return ""
    parts = [f"### `{name}`\n"]
    if doc:
        parts.append(docstring_md(doc) + "\n")
    parts += objects
    return "\n".join(parts)


def _public(node) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_")


def _decorators(node) -> set[str]:
    return {ast.unparse(d).split("(")[0] for d in node.decorator_list}


def signature(args: ast.arguments, drop_first: bool = False) -> str:
    """The argument list as written (annotations and defaults), without self or cls for a method."""
    args = ast.arguments(**{field: getattr(args, field) for field in args._fields})
    positional = [*args.posonlyargs, *args.args]
    if drop_first and positional:
        if args.posonlyargs:
            args.posonlyargs = args.posonlyargs[1:]
        else:
            args.args = args.args[1:]
    return " ".join(ast.unparse(args).split())


def _returns(node) -> str:
    return f" -> {' '.join(ast.unparse(node.returns).split())}" if node.returns is not None else ""


def object_md(node, owner: str = "") -> str:
    """A function, class or method: its signature as code (what a call looks like), then its docstring.
    Plain paragraphs, not Sphinx's Python objects: those cost the site build about a minute for 500 objects."""
    doc = docstring_md(ast.get_docstring(node) or "")
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is not None:
            args = f"({signature(init.args, drop_first=True)})"
        elif "dataclass" in {d.split(".")[-1] for d in _decorators(node)}:
            fields = [n for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
            args = "(" + ", ".join(" ".join(ast.unparse(f).split()).replace(" = ", "=") for f in fields) + ")"
        else:
            args = ""
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        head = f"**class {_code(node.name + args)}**" + (f" (a {_code(bases)})" if bases else "")
        members = [object_md(n, node.name) for n in node.body if _public(n) and not isinstance(n, ast.ClassDef)]
        return "\n\n".join([head, *([doc] if doc else []), *(m for m in members if m)]) + "\n"
    decorators = {d.split(".")[-1] for d in _decorators(node)}
    if decorators & {"setter", "deleter", "overload"}:
        return ""  # a property's setter belongs to the property; an overload's stub to the function
    name = f"{owner}.{node.name}" if owner else node.name
    if "property" in decorators or "cached_property" in decorators:
        head = f"**{_code(name)}** (property" + (f": {_code(_returns(node)[4:])}" if node.returns else "") + ")"
    else:
        method = bool(owner) and "staticmethod" not in decorators
        head = f"**{_code(f'{name}({signature(node.args, drop_first=method)}){_returns(node)}')}**"
    return "\n\n".join([head, *([doc] if doc else [])]) + "\n"


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


CODE_SPAN = re.compile(r"``(.+?)``|`([^`\n]+)`")
SPECIAL = re.compile(r"([\\*_<>\[\]$|{}~#`!])")


def docstring_md(doc: str) -> str:
    """A plain-text docstring as MyST that shows it as written: ``x`` and `x` become code, indented blocks code
    blocks, every other character that markdown would read as markup is escaped (a docstring is not markdown)."""
    blocks, current = [], []
    for line in doc.splitlines() + [""]:
        if line.strip():
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    out = []
    for block in blocks:
        if all(line.startswith("    ") for line in block):
            body = "\n".join(line[4:] for line in block)
            out.append(f"```text\n{body}\n```")
        else:
            out.append("\n".join(_escape_line(line.strip()) for line in block))
    return "\n\n".join(out)


def _escape_line(line: str) -> str:
    parts, last = [], 0
    for match in CODE_SPAN.finditer(line):
        parts.append(SPECIAL.sub(r"\\\1", line[last : match.start()]))
        code = match.group(1) if match.group(1) is not None else match.group(2)
        parts.append(f"``{code}``" if "`" in code else f"`{code}`")
        last = match.end()
    parts.append(SPECIAL.sub(r"\\\1", line[last:]))
    text = "".join(parts)
    # a line of dashes or equals signs under a line of text would make it a heading
    return re.sub(r"^([-=])(?=[-=]*$)", r"\\\1", text)
