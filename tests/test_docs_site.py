"""The documentation site as a reader gets it: built once with ``mkdocs build --strict`` (any
warning, a broken link among them, fails the build) into a temporary folder, then read.

- No Sphinx role is left raw in any page (the docstrings' ``:func:`...``` are links or code),
  and the converter that does it (``docs/rst_docstrings.py``) on docstrings of its own.
- The API reference has a page per public module, each module documented on exactly one.
- The site loads nothing from the internet (no Google Fonts, no CDN).
- Ordered lists show the numbers their Markdown is written with.
- Every figure the pages show has labels of at least 9 px on the screen, in Chromium at a
  1280-px window: the smallest text the figure is drawn with, times the displayed width over
  the PNG's width.

``pytest -m docs`` (needs the ``docs`` and ``browser`` extras, and Chromium: CI runs them).
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):")


def docs_module(name: str):
    """A module of docs/ (the hooks and the Griffe extension are not a package)."""
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(DOCS))  # api_pages imports rst_docstrings, as MkDocs lets it
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(DOCS))
    return module


@pytest.fixture(scope="module")
def rst():
    """docs/rst_docstrings.py, imported when a test needs it: Griffe comes with the docs extra,
    and the fast suite, which only collects this file, runs without it."""
    return docs_module("rst_docstrings")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                            str(out)], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stderr
    return out


def pages(site: Path) -> dict[str, str]:
    return {str(path.relative_to(site)): path.read_text(encoding="utf-8")
            for path in sorted(site.rglob("*.html"))}


def text_of(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


# --- roles -------------------------------------------------------------------------------

def test_no_page_shows_a_raw_sphinx_role(site):
    raw = {name: RAW_ROLE.findall(text_of(html)) for name, html in pages(site).items()}
    assert {name: found for name, found in raw.items() if found} == {}


def test_the_roles_of_the_docstrings_became_links(site):
    network = (site / "api" / "tinynet.network" / "index.html").read_text(encoding="utf-8")
    # :func:`tinynet.step.forward` in the module's docstring, :func:`tinynet.fit` a re-export.
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="../tinynet.step/'
                     r'#tinynet.step.forward"><code>tinynet.step.forward</code></a>', network)
    assert re.search(r'href="../tinynet.training/#tinynet.training.fit"><code>tinynet.fit</code>',
                     network)
    links = sum(html.count('class="autorefs autorefs-internal"') for html in pages(site).values())
    assert links > 1000


LOOKUP = {"tinynet.Network": "tinynet.network.Network", "fit": "tinynet.training.fit",
          "xor.depth": "tinynet.xor.depth", "parameters": "tinynet.network.Network.parameters"}


def test_a_role_becomes_an_optional_cross_reference_with_sphinx_titles(rst):
    convert = functools.partial(rst.convert_roles, resolve=LOOKUP.get)
    assert convert(":class:`~tinynet.Network`") == (
        '<autoref identifier="tinynet.network.Network" optional><code>Network</code></autoref>')
    assert convert(":func:`fit`") == (
        '<autoref identifier="tinynet.training.fit" optional><code>fit</code></autoref>')
    assert convert(":mod:`the study <xor.depth>`") == (
        '<autoref identifier="tinynet.xor.depth" optional><code>the study</code></autoref>')
    assert convert(":meth:`.parameters`") == (
        '<autoref identifier="tinynet.network.Network.parameters" optional>'
        '<code>parameters</code></autoref>')
    assert convert(":py:func:`!fit` and :data:`NOWHERE`") == (
        "<code>fit</code> and <code>NOWHERE</code>")
    # A target wrapped over two lines is one name.
    assert 'identifier="tinynet.network.Network"' in convert(":class:`tinynet.\nNetwork`")


def test_tables_and_literal_colons_become_markdown(rst):
    docstring = """Two kinds::

    >>> code

======  ====================
xor     the four corners
moons   two half circles,
        interleaved
======  ====================

=====  =====
name   gain
=====  =====
tanh   5/3
=====  =====
"""
    assert rst.to_markdown(docstring, LOOKUP.get) == """Two kinds:

    >>> code

|  |  |
| --- | --- |
| xor | the four corners |
| moons | two half circles, interleaved |

| name | gain |
| --- | --- |
| tanh | 5/3 |
"""


def test_the_extension_resolves_names_in_the_scope_of_the_docstring(rst, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""See :func:`train`."""\nfrom .core import Net, train\n')
    (package / "core.py").write_text(
        '"""Core."""\nfrom numpy import zeros\n\n\ndef train():\n'
        '    """Calls :meth:`Net.step`, :func:`zeros` and :class:`~pkg.Net`."""\n\n\n'
        'class Net:\n    """A net: :meth:`step`."""\n\n'
        '    def step(self):\n        """One step."""\n')
    loaded = rst.griffe.load("pkg", search_paths=[tmp_path],
                         extensions=rst.griffe.load_extensions(rst.RstDocstrings))
    assert loaded.docstring.value == ('See <autoref identifier="pkg.core.train" optional>'
                                      '<code>train</code></autoref>.')
    assert loaded["core.train"].docstring.value == (
        'Calls <autoref identifier="pkg.core.Net.step" optional><code>Net.step</code></autoref>, '
        '<autoref identifier="numpy.zeros" optional><code>zeros</code></autoref> and '
        '<autoref identifier="pkg.core.Net" optional><code>Net</code></autoref>.')
    assert 'identifier="pkg.core.Net.step"' in loaded["core.Net"].docstring.value


# --- the API pages -------------------------------------------------------------------------

def public_modules() -> set[str]:
    """Every module of tinynet, read from the files (not as the hook finds them)."""
    modules = set()
    for path in (ROOT / "tinynet").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(part.startswith("_") for part in parts):
            modules.add(".".join(parts))
    return modules


def test_the_api_reference_has_a_page_per_public_module(site):
    modules = public_modules()
    assert {"tinynet", "tinynet.network", "tinynet.xor.bench", "tinynet.compiled.lanes",
            "tinynet.init.gains", "tinynet.playground.server"} <= modules
    assert {path.parent.name for path in (site / "api").glob("*/index.html")} == modules
    index = (site / "api" / "index.html").read_text(encoding="utf-8")
    api = {name: html for name, html in pages(site).items() if name.startswith("api/")}
    for module in modules:
        assert f'href="{module}/"' in index, module
        # Documented once: the module's heading is on its own page and no other.
        headed = [name for name, html in api.items() if f'id="{module}"' in html]
        assert headed == [f"api/{module}/index.html"], module


def test_the_index_must_list_every_module_once():
    api_pages = docs_module("api_pages")
    modules = {"tinynet", "tinynet.network", "tinynet.step"}
    api_pages.check_listed([("A", ["tinynet", "tinynet.network"]), ("B", ["tinynet.step"])],
                           modules)
    with pytest.raises(Exception, match=r"not listed: tinynet.step; not public modules of "
                                        r"tinynet: tinynet.gone; listed more than once: tinynet"):
        api_pages.check_listed([("A", ["tinynet", "tinynet.network", "tinynet.gone"]),
                                ("B", ["tinynet"])], modules)


def test_a_package_page_documents_only_what_it_defines(site):
    package = (site / "api" / "tinynet.xor" / "index.html").read_text(encoding="utf-8")
    assert 'id="tinynet.xor.run_study"' not in package  # documented in tinynet.xor.bench
    assert 'href="../tinynet.xor.bench/#tinynet.xor.bench.run_study"' in package


# --- offline --------------------------------------------------------------------------------

class Fetches(HTMLParser):
    """The URLs a page makes the browser fetch: stylesheets, scripts, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link":
            self.urls.append(attrs.get("href") or "")
        for name in ("src", "srcset", "poster", "data"):
            if attrs.get(name):
                self.urls.append(attrs[name])


def external(url: str) -> bool:
    return re.match(r"(?:[a-z]+:)?//", url.strip(), flags=re.IGNORECASE) is not None


def test_the_site_fetches_nothing_from_the_internet(site):
    for name, html in pages(site).items():
        parser = Fetches()
        parser.feed(html)
        assert [url for url in parser.urls if external(url)] == [], name
        assert "fonts.googleapis" not in html and "fonts.gstatic" not in html, name
    for path in site.rglob("*.css"):
        css = path.read_text(encoding="utf-8")
        imports = re.findall(r"@import\s+(?:url\()?['\"]?([^'\")\s;]+)", css)
        urls = re.findall(r"url\(\s*['\"]?([^'\")]+)", css)
        assert [url for url in imports + urls if external(url)] == [], path


def test_the_fetch_check_sees_a_google_font():
    parser = Fetches()
    parser.feed('<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
                '<a href="https://example.org">a link is not a fetch</a><img src="//cdn/x.png">')
    assert [url for url in parser.urls if external(url)] == [
        "https://fonts.googleapis.com/css?family=Roboto", "//cdn/x.png"]


# --- ordered lists --------------------------------------------------------------------------

class OrderedNumbers(HTMLParser):
    """The numbers a browser shows on the items of every ordered list, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: list[int] = []
        self.lists: list[list[int] | None] = []  # per open list: [next number], None for <ul>

    def handle_starttag(self, tag, attrs):
        if tag == "ol":
            self.lists.append([int(dict(attrs).get("start") or 1)])
        elif tag == "ul":
            self.lists.append(None)
        elif tag == "li" and self.lists and self.lists[-1] is not None:
            self.numbers.append(self.lists[-1][0])
            self.lists[-1][0] += 1

    def handle_endtag(self, tag):
        if tag in ("ol", "ul"):
            self.lists.pop()


def written_numbers(markdown: str) -> list[int]:
    """The numbers of a page's ordered-list items as its Markdown writes them (code left out)."""
    prose = re.sub(r"^(```|~~~).*?^\1", "", markdown, flags=re.MULTILINE | re.DOTALL)
    return [int(number) for number in re.findall(r"^ *(\d+)\. ", prose, flags=re.MULTILINE)]


def shown_numbers(html: str) -> list[int]:
    article = html[html.index("<article"):html.index("</article>")]
    parser = OrderedNumbers()
    parser.feed(article)
    return parser.numbers


@pytest.mark.parametrize("page", sorted(path.stem for path in DOCS.glob("*.md")))
def test_ordered_lists_show_the_numbers_they_are_written_with(site, page):
    built = site / ("index.html" if page == "index" else f"{page}/index.html")
    written = written_numbers((DOCS / f"{page}.md").read_text(encoding="utf-8"))
    assert sorted(shown_numbers(built.read_text(encoding="utf-8"))) == sorted(written)


def test_the_list_check_sees_lessons_all_numbered_one():
    assert shown_numbers("<article><ol><li>a</li></ol><p>x</p><ol><li>b</li></ol></article>") \
        == [1, 1]
    assert written_numbers("1. a\n\n   x\n\n2. b\n```\n3. code\n```\n") == [1, 2]


# --- figures ----------------------------------------------------------------------------------

WINDOW = {"width": 1280, "height": 800}  # a laptop's browser window
LEGIBLE_PX = 9.0
# The smallest text each figure is drawn with, in points (matplotlib's default is 10: tick
# labels; "small" is 8.33; tinynet.plots.TEXT_POINTS is 9), read from the code that draws it
# and measured on the drawn Figure when it was committed, at the DPI the PNG records.
FIGURE_TEXT_PT = {
    # tinynet.plots.histograms: ticks, labels and notes plots.TEXT_POINTS
    "examples/figures/activation_histograms.png": 9,
    "examples/figures/datasets.png": 9,  # tinynet.boundary.output_colorbar: 9
    "examples/figures/depth_relu.png": 9,  # tinynet.plots.legend_below: plots.TEXT_POINTS
    "examples/figures/depth_tanh.png": 9,
    "examples/figures/fan_average.png": 9,  # legend 9
    "examples/figures/fixes.png": 10,  # figures.against_baseline: defaults
    "examples/figures/look_boundaries.png": 9,  # output_colorbar
    "examples/figures/look_curves.png": 9,  # figures.loss_curves: legend 9
    "examples/figures/look_failed.png": 9,  # figures.seed_gallery: plots.TEXT_POINTS
    "examples/figures/look_gallery.png": 9,
    "examples/figures/residual_depth.png": 9,  # figures.residual_depth: legends 9
    "examples/figures/signal_relu.png": 9,  # tinynet.plots.signal: legend_below
    "examples/figures/textbooks_dlfs.png": 9,  # examples/textbooks.py: legend_below
    "examples/figures/textbooks_histograms.png": 9,  # examples/textbooks.py: ticks, labels 9
    "examples/figures/textbooks_mnist1d_mlp.png": 9,
    "examples/figures/textbooks_nielsen.png": 9,
    "examples/figures/xor_notes.png": 9,  # figures.rates of one study: its legend 9
    "examples/figures/xor_widths.png": 9,  # figures.rates of a sweep: its legend 9
    "tutorial/figures/01_boundaries.png": 9,  # output_colorbar, the boundaries' legends
    "tutorial/figures/02_studies_of_100.png": 10,  # defaults
    "tutorial/figures/03_widths.png": 9,  # figures.rates of a sweep
    "tutorial/figures/04_depth.png": 9,  # figures.depth
    "tutorial/figures/05_fans.png": 9,  # tinynet.plots.signal
    "tutorial/figures/06_fixes.png": 10,  # figures.against_baseline
    "tutorial/figures/07_digits_curves.png": 9,  # tinynet.xor.bands: legend_below
    "tutorial/figures/08_residual_depth.png": 9,  # figures.residual_depth
}
# A browser's screenshot records no DPI: its smallest text in its own pixels (the playground's
# tables and canvas labels, 12 px, in a 1280 x 720 window: examples/playground_screenshot.py).
SCREENSHOT_TEXT_PX = {"examples/figures/playground.png": 12}


def shown_figures() -> list[str]:
    """Every repository PNG a page shows, as the pages link it (../examples/figures/x.png)."""
    found = {link for page in DOCS.glob("*.md")
             for link in re.findall(r"\(\.\./([^)\s]+\.png)\)", page.read_text(encoding="utf-8"))}
    return sorted(found)


def test_every_shown_figure_has_its_text_size_recorded():
    assert set(shown_figures()) == set(FIGURE_TEXT_PT) | set(SCREENSHOT_TEXT_PX)


@pytest.fixture(scope="module")
def displayed_widths(site) -> dict[str, float]:
    """Each figure's width on screen in Chromium, by its repository path (the narrowest where
    a figure is shown twice)."""
    from playwright.sync_api import sync_playwright  # the browser extra: not in the fast suite

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    widths: dict[str, float] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--headless", "--no-sandbox", "--disable-gpu",
                      "--disable-background-networking", "--disable-component-update",
                      "--no-first-run"])
            page = browser.new_page(viewport=WINDOW)
            for html in sorted(site.glob("*/index.html")):
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/{html.parent.name}/",
                          wait_until="load")
                for src, width in page.evaluate(
                        "() => [...document.querySelectorAll('.md-content img')]"
                        ".map(img => [img.getAttribute('src'), img.getBoundingClientRect().width])"):
                    figure = src.split("repo/", 1)[-1]
                    widths[figure] = min(width, widths.get(figure, width))
            browser.close()
    finally:
        server.shutdown()
    return widths


def smallest_text_px(figure: str, displayed: float) -> float:
    with Image.open(ROOT / figure) as image:
        native, dpi = image.width, image.info.get("dpi", (None,))[0]
    if figure in SCREENSHOT_TEXT_PX:
        return SCREENSHOT_TEXT_PX[figure] * displayed / native
    return FIGURE_TEXT_PT[figure] * dpi / 72 * displayed / native


@pytest.mark.parametrize("figure", shown_figures())
def test_a_figure_is_legible_at_its_displayed_width(displayed_widths, figure):
    displayed = displayed_widths[figure]
    assert displayed >= 900, f"{figure} shown {displayed:.0f} px wide, not the column's width"
    size = smallest_text_px(figure, displayed)
    assert size >= LEGIBLE_PX, f"{figure}: its smallest text is {size:.1f} px on screen"
