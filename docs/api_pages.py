"""MkDocs hook: the API reference, one page per module, written when the site is built.

``docs/api.md`` is the reference's index, and the one place that groups the modules: under each
``##`` heading, a bullet per module (``- tinynet.network``). This hook

- checks that every public module of tinynet (every module but ``__main__``) is listed there
  exactly once, and nothing else is, so a new module fails the build until it has a place;
- writes a page per module, ``api/<module>.md``, holding mkdocstrings' ``::: <module>``
  (for a package, only what it defines: its re-exports are documented where they are defined
  and linked from here);
- puts those pages in the navigation under "API reference", in the index's groups;
- turns each bullet of the index into a link to its page and the first sentence of the
  module's docstring.

Pages are generated rather than committed so that they cannot drift from the modules; the
module list and first sentences come from Griffe, which mkdocstrings already uses, with the
docstrings converted as mkdocstrings shows them (``docs/rst_docstrings.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

import griffe
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from rst_docstrings import RstDocstrings, scope_resolver

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "tinynet"
INDEX = "api.md"
NAV_TITLE = "API reference"
# "- tinynet.module" alone on its line in the index.
MODULE_ITEM = re.compile(rf"^- ({PACKAGE}(?:\.\w+)*)[ \t]*$", re.MULTILINE)
GROUP = re.compile(r"^## (.+?)[ \t]*$", re.MULTILINE)

_modules: dict[str, griffe.Module] = {}


def page_path(module: str) -> str:
    """Where a module's page is, relative to ``docs/``."""
    return f"api/{module}.md"


def public_modules(package: griffe.Module) -> dict[str, griffe.Module]:
    """Every module of ``package`` by path, subpackages' too, but none named with an ``_``
    (``__main__``, the command behind ``python -m``)."""
    found = {package.path: package}
    for module in package.modules.values():
        if not module.is_alias and not module.name.startswith("_"):
            found.update(public_modules(module))
    return found


def index_groups(index: str) -> list[tuple[str, list[str]]]:
    """The index's groups in order: each ``##`` heading and the modules listed under it."""
    headings = list(GROUP.finditer(index))
    ends = [heading.start() for heading in headings[1:]] + [len(index)]
    return [(heading.group(1), MODULE_ITEM.findall(index, heading.end(), end))
            for heading, end in zip(headings, ends)]


def check_listed(groups: list[tuple[str, list[str]]], modules: set[str]) -> None:
    """Fail the build unless the index lists each public module once and nothing else."""
    listed = [module for _, names in groups for module in names]
    problems = []
    if missing := sorted(modules - set(listed)):
        problems.append(f"not listed: {', '.join(missing)}")
    if unknown := sorted(set(listed) - modules):
        problems.append(f"not public modules of {PACKAGE}: {', '.join(unknown)}")
    if twice := sorted({module for module in listed if listed.count(module) > 1}):
        problems.append(f"listed more than once: {', '.join(twice)}")
    if problems:
        raise PluginError(f"docs/{INDEX}: " + "; ".join(problems))


def summary(module: griffe.Module) -> str:
    """The first sentence of a module's docstring (already Markdown), on one line."""
    text = module.docstring.value if module.docstring else ""
    paragraph = " ".join(text.split("\n\n")[0].split())
    return re.split(r"(?<=[.?!])\s+(?=[A-Z])", paragraph, maxsplit=1)[0]


def page_markdown(module: griffe.Module) -> str:
    """A module's page: mkdocstrings' directive, and for a package the names it re-exports."""
    directive = f"::: {module.path}\n"
    if not module.is_init_module:
        return directive
    own = [name for name, member in module.members.items()
           if not (member.is_alias or member.is_module or name.startswith("_"))]
    resolve = scope_resolver(module)
    exported = [f'<autoref identifier="{resolve(name)}" optional><code>{name}</code></autoref>'
                for name in module.exports or () if name not in own]
    page = f"{directive}    options:\n      members: [{', '.join(own)}]\n"
    if exported:
        page += (f"\n**Also exported here**, and documented in the modules that define them: "
                 f"{', '.join(exported)}.\n")
    return page


def on_config(config):
    """Load the package, check the index against it, and put the module pages in the nav."""
    loader = griffe.GriffeLoader(search_paths=[str(ROOT)],
                                 extensions=griffe.load_extensions(RstDocstrings))
    package = loader.load(PACKAGE)
    _modules.clear()
    _modules.update(public_modules(package))
    groups = index_groups((Path(config["docs_dir"]) / INDEX).read_text(encoding="utf-8"))
    check_listed(groups, set(_modules))
    section = [{"Overview": INDEX}] + [
        {title: [{module: page_path(module)} for module in modules]} for title, modules in groups]
    for item in config["nav"]:
        if isinstance(item, dict) and item.get(NAV_TITLE) == INDEX:
            item[NAV_TITLE] = section
            return config
    raise PluginError(f"mkdocs.yml's nav has no '{NAV_TITLE}: {INDEX}' for the module pages")


def on_files(files, config):
    """Add a page per module."""
    for module in _modules.values():
        files.append(File.generated(config, page_path(module.path),
                                    content=page_markdown(module)))
    return files


def on_page_markdown(markdown, page, config, files):
    """In the index, each module's bullet becomes its link and first sentence."""
    if page.file.src_uri != INDEX:
        return markdown
    return MODULE_ITEM.sub(
        lambda m: f"- [`{m.group(1)}`]({page_path(m.group(1))}): {summary(_modules[m.group(1)])}",
        markdown)
