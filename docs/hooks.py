"""MkDocs hook: the pages link the repository's files where they lie (``../examples/figures/
xor_notes.png`` from ``docs/xor.md``), so that they read the same on a forge as on the site.

MkDocs serves only what is inside ``docs/``; this hook copies each such file into the site under
``repo/`` and points the link there. A link to a file that does not exist stops the build with
the page and the link named: the link check for everything outside ``docs/`` (MkDocs's own
validation, strict in ``mkdocs.yml``, checks the links and anchors between pages).
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, InclusionLevel

ROOT = Path(__file__).resolve().parents[1]
SITE_FOLDER = "repo"
# ](../path) in Markdown, and src="../path" in the few HTML images.
OUTSIDE = re.compile(r"(\]\(|src=\")\.\./([^)\"#\s]+)")


def _targets(markdown: str) -> set[str]:
    return {match.group(2) for match in OUTSIDE.finditer(markdown)}


def on_files(files, config):
    """Add every repository file a page links to the site, or fail on one that is missing."""
    docs = Path(config["docs_dir"])
    wanted: dict[str, list[str]] = {}
    for page in docs.glob("*.md"):
        for target in _targets(page.read_text(encoding="utf-8")):
            wanted.setdefault(target, []).append(page.name)
    for target, pages in sorted(wanted.items()):
        path = ROOT / target
        if not path.is_file():
            raise PluginError(f"{', '.join(sorted(pages))}: the link ../{target} names no file "
                              f"of the repository ({path} does not exist)")
        # A Markdown file (a committed benchmark table) becomes a page of its own, outside the
        # navigation; anything else is copied as it is.
        files.append(File.generated(config, f"{SITE_FOLDER}/{target}", abs_src_path=str(path),
                                    inclusion=InclusionLevel.NOT_IN_NAV))
    return files


def on_page_markdown(markdown, page, config, files):
    """Point ``../path`` links at the copies :func:`on_files` added."""
    return OUTSIDE.sub(lambda m: f"{m.group(1)}{SITE_FOLDER}/{m.group(2)}", markdown)
