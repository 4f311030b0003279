"""Griffe extension: tinynet's docstrings are written for Sphinx (reStructuredText roles such as
``:func:`tinynet.fit``` and ``:class:`~tinynet.Network```, ``text::`` before a literal block,
simple tables ruled with ``=``), and mkdocstrings renders them as Markdown. This extension
rewrites each docstring into the Markdown that means the same, when mkdocstrings loads the
package, so the modules keep their Sphinx spelling (and ``help()`` its plain text):

- a role becomes an *optional* mkdocs-autorefs cross-reference,
  ``<autoref identifier="tinynet.training.fit" optional><code>fit</code></autoref>``: a link
  where the site documents the target, plain code where it does not (a private helper, NumPy),
  never a broken-link warning. The target is resolved as Sphinx and Python would: a dotted name
  as written, a short one (``:func:`fit```, ``:meth:`parameters```) in the scope of the object
  whose docstring it is, re-exports to where they are defined. ``~`` shows the last component,
  ``!`` only the code, ``title <target>`` the title;
- ``text::`` becomes ``text:`` (the indented block after it is already Markdown's code block);
- a simple table becomes a Markdown table.

Why this is written here: mkdocstrings understands Google, NumPy and Sphinx *sections*
(``Args:``, ``:param x:``), none of which these docstrings use, but no docstring style converts
inline roles. mkdocstrings-python's own ``scoped_crossrefs`` resolves names the same way, but
only in ``[title][name]`` syntax, which fails a strict build on any name the site does not
document; resolving with the same Griffe call (``Object.resolve``) and emitting autorefs'
``optional`` form keeps links where they exist and plain code elsewhere.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator

import griffe

# :func:`target`, :py:class:`~a.b`, ... (the Python domain's roles; the target may wrap a line).
ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`([^`]+)`")
# An rST paragraph ending in "::" announces the indented literal block after a blank line.
LITERAL_INTRO = re.compile(r"(\S)::(?=\n[ \t]*\n[ \t]+\S)")
# A simple table's rule: columns of "=" separated by spaces.
TABLE_RULE = re.compile(r"=+(?: +=+)+")

Resolver = Callable[[str], "str | None"]


def role_markdown(content: str, resolve: Resolver) -> str:
    """The Markdown for a role's content, ``~tinynet.Network`` or ``fit`` or ``title <target>``.

    ``resolve`` maps the written target (leading dots dropped) to the identifier to link, or
    None for plain code.
    """
    explicit = re.fullmatch(r"(.+?)\s*<([^>]+)>", content, flags=re.DOTALL)
    written = re.sub(r"\s+", "", explicit.group(2) if explicit else content)
    no_link = written.startswith("!")
    target = written.lstrip("!~").lstrip(".")
    if explicit:
        title = " ".join(explicit.group(1).split())
    else:
        title = target.rsplit(".", 1)[-1] if written.lstrip("!").startswith("~") else target
    code = f"<code>{html.escape(title)}</code>"
    identifier = None if no_link else resolve(target)
    if identifier is None:
        return code
    return f'<autoref identifier="{html.escape(identifier)}" optional>{code}</autoref>'


def convert_roles(text: str, resolve: Resolver) -> str:
    """Every Sphinx role in ``text`` as an optional cross-reference (see :func:`role_markdown`)."""
    return ROLE.sub(lambda match: role_markdown(match.group(1), resolve), text)


def _table_rows(lines: list[str], starts: list[int]) -> list[list[str]]:
    """A simple table's body lines as rows of cells; a line whose first cell is blank
    continues the row above it."""
    rows: list[list[str]] = []
    for line in lines:
        ends = starts[1:] + [len(line)]
        cells = [line[start:end].strip() for start, end in zip(starts, ends)]
        if rows and not cells[0]:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    return rows


def _markdown_table(rule: str, block: list[str]) -> list[str]:
    """One simple table (its lines between and including its rules) as a Markdown table.

    A table with a rule under its first row has that row as its header; one without gets an
    empty header (Markdown tables need one; docs/extra.css hides it).
    """
    starts = [match.start() for match in re.finditer("=+", rule)]
    rules = [index for index, line in enumerate(block) if line.strip() == rule.strip()]
    if len(rules) == 3:
        header = _table_rows(block[rules[0] + 1:rules[1]], starts)[0]
        body = block[rules[1] + 1:rules[2]]
    else:
        header, body = [""] * len(starts), block[rules[0] + 1:rules[-1]]
    body = [line for line in body if line.strip()]
    rows = [header, ["---"] * len(starts), *_table_rows(body, starts)]
    return ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]


def convert_tables(text: str) -> str:
    """Every rST simple table in ``text`` (two rules, or three with a header) as Markdown."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not TABLE_RULE.fullmatch(line.strip()):
            out.append(line)
            index += 1
            continue
        # The table ends at the rule followed by a blank line (or the end of the text).
        end = index + 1
        while end < len(lines) and not (
                lines[end].strip() == line.strip()
                and (end + 1 == len(lines) or not lines[end + 1].strip())):
            end += 1
        if end == len(lines):  # no closing rule: not a table; the text stays as written
            out.append(line)
            index += 1
            continue
        out.extend(_markdown_table(line, lines[index:end + 1]))
        index = end + 1
    return "\n".join(out)


def to_markdown(text: str, resolve: Resolver) -> str:
    """A Sphinx-flavoured docstring as Markdown: its tables, literal-block colons and roles."""
    return convert_roles(LITERAL_INTRO.sub(r"\1:", convert_tables(text)), resolve)


def scope_resolver(obj: griffe.Object) -> Resolver:
    """Resolve a role's target as written in ``obj``'s docstring: the first name in ``obj``'s
    scope (its members, then its parents', imports included), then through re-exports to the
    object's canonical path; a name Griffe does not know (NumPy's) is returned as written, for
    autorefs to link if anything on the site answers to it."""

    def resolve(target: str) -> str:
        head, _, rest = target.partition(".")
        try:
            head = obj.resolve(head)
        except griffe.NameResolutionError:
            pass  # absolute (tinynet.fit), or from outside the package
        path = f"{head}.{rest}" if rest else head
        try:
            return obj.modules_collection[path].canonical_path
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return path

    return resolve


def _defined(obj: griffe.Object) -> Iterator[griffe.Object]:
    """``obj`` and every object defined inside it (re-exports are the objects they name)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _defined(member)


class RstDocstrings(griffe.Extension):
    """Rewrite each docstring of a package to Markdown once the package is loaded (so that
    names resolve across all its modules)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        for obj in _defined(pkg):
            if obj.docstring is not None:
                obj.docstring.value = to_markdown(obj.docstring.value, scope_resolver(obj))
