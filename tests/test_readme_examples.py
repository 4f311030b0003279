"""Every Python block of the README and of the documentation pages runs alone, as a new user
would paste it, and prints what the page shows.

A block is one of two kinds:

* a script: it runs in a new Python process; if the README follows it with the line "prints"
  and a plain fenced block, its standard output must equal that block, numbers included; if
  not, it must print nothing;
* a doctest (its first line starts with ``>>>``): it runs through ``python -m doctest``, which
  compares every output with the one shown.

Each runs in an empty folder (what it writes stays there), with matplotlib headless.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import page, pages, run_python

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    """A Python block of the README: where it starts, its code, and the output it shows
    (None: it prints nothing, or it is a doctest)."""

    line: int
    code: str
    shown: str | None

    @property
    def doctest(self) -> bool:
        return self.code.lstrip().startswith(">>>")


def python_blocks(text: str) -> list[Block]:
    """The Python blocks of ``text``, each with the plain block that follows it after a line
    "prints", if any."""
    fences = list(FENCE.finditer(text))
    blocks = []
    for fence, following in zip(fences, fences[1:] + [None]):
        if fence.group(1) != "python":
            continue
        shown = None
        if following is not None and following.group(1) == "" and \
                text[fence.end():following.start()].strip() == "prints":
            shown = following.group(2)
        blocks.append(Block(text.count("\n", 0, fence.start()) + 1, fence.group(2), shown))
    return blocks


BLOCKS = [(name, block) for name, text in pages().items() for block in python_blocks(text)]


def check(block: Block, folder: Path, name: str = "README.md") -> None:
    """Run ``block`` of page ``name`` in ``folder``; fail unless it succeeds and prints what it
    shows."""
    if block.doctest:
        (folder / "block.txt").write_text(block.code)
        done = run_python(["-m", "doctest", "block.txt"], folder)
        assert done.returncode == 0, f"{name} line {block.line}:\n{done.stdout}{done.stderr}"
        return
    (folder / "block.py").write_text(block.code)
    done = run_python(["block.py"], folder)
    assert done.returncode == 0, f"{name} line {block.line} failed:\n{done.stderr}"
    assert done.stdout == (block.shown or ""), (
        f"{name} line {block.line}: what the block prints is not what the page shows"
        if block.shown is not None else
        f"{name} line {block.line} prints, but the page shows no output after it")


def slow(name: str, block: Block) -> bool:
    """The README's blocks run in the fast suite, except a study (the first block's 2 x 1,000
    seeds take about 3 s); the docs pages' run with the slow tests."""
    return name != "README.md" or "run_study(" in block.code


@pytest.mark.parametrize("name,block", [
    pytest.param(name, block, id=f"{name} line {block.line}",
                 marks=pytest.mark.slow if slow(name, block) else ())
    for name, block in BLOCKS])
def test_the_block_runs_alone_and_prints_what_the_page_shows(name, block, tmp_path):
    check(block, tmp_path, name)


def test_the_pages_have_python_blocks_of_both_kinds_with_outputs():
    for name, text in pages().items():  # none lost to a bad fence
        assert sum(found == name for found, _ in BLOCKS) == text.count("\n```python\n"), name
    blocks = [block for _, block in BLOCKS]
    assert any(block.doctest for block in blocks)
    assert sum(block.shown is not None for block in blocks) >= 3
    assert [block for block in python_blocks(page("README.md")) if block.shown]
    assert not all(slow("README.md", block) for block in python_blocks(page("README.md")))


def changed(text: str) -> str:
    """``text`` with the first digit after "final_loss=" or "std = " changed."""
    edited = re.sub(r"(final_loss=|std = )(\d)",
                    lambda m: f"{m.group(1)}{(int(m.group(2)) + 1) % 10}", text, count=1)
    assert edited != text
    return edited


def test_a_script_whose_shown_output_stops_matching_fails(tmp_path):
    block = next(block for _, block in BLOCKS if block.shown and "final_loss=" in block.shown)
    with pytest.raises(AssertionError, match="not what the page shows"):
        check(Block(block.line, block.code, changed(block.shown)), tmp_path)


def test_a_doctest_whose_shown_output_stops_matching_fails(tmp_path):
    block = next(block for _, block in BLOCKS if block.doctest and "std = " in block.code)
    with pytest.raises(AssertionError, match="Failed example"):
        check(Block(block.line, changed(block.code), None), tmp_path)


def test_a_script_that_prints_without_a_shown_output_fails(tmp_path):
    with pytest.raises(AssertionError, match="shows no output"):
        check(Block(1, "print('hello')\n", None), tmp_path)


def test_blocks_are_found_with_their_outputs():
    text = ("intro\n```python\nprint(1)\n```\n\nprints\n\n```\n1\n```\n"
            "```python\n>>> 1 + 1\n2\n```\n```bash\nls\n```\n```python\nx = 1\n```\n")
    blocks = python_blocks(text)
    assert [(b.line, b.shown, b.doctest) for b in blocks] == \
        [(2, "1\n", False), (11, None, True), (18, None, False)]
