"""tinynet.text.fold: what a lesson prints, fitted to a notebook's lines."""

from tinynet.text import fold, table

WIDE = table([["arm", *(f"column {i}" for i in range(12))],
              ["normal", *(f"{i}.5%" for i in range(12))],
              ["He", *(f"{10 * i}%" for i in range(12))]])


def test_lines_that_fit_stay_as_they_are_tables_too():
    text = "a short line\n" + table([["arm", "rate"], ["normal", "38.6%"]]) + "\n\n  indented"
    assert fold(text, 40) == text


def test_a_long_line_breaks_at_spaces_under_a_hanging_indent():
    line = "  " + " ".join(f"word{i}" for i in range(30))
    folded = fold(line, 40).splitlines()
    assert all(len(part) <= 40 for part in folded)
    assert folded[0].startswith("  word0") and all(part.startswith("    w") for part in folded[1:])
    assert " ".join(part.strip() for part in folded) == line.strip()


def test_a_word_longer_than_the_width_stays_whole():
    assert fold("x" * 50 + " y", 40) == "x" * 50 + "\n  y"


def test_a_wide_table_is_cut_into_tables_that_each_start_with_its_first_column():
    assert len(WIDE.splitlines()[0]) > 100
    parts = [part.splitlines() for part in fold(WIDE, 40).split("\n\n")]
    assert len(parts) > 1
    for part in parts:
        assert [row.split()[0] for row in part] == ["arm", "normal", "He"]
        assert all(len(row) <= 40 for row in part)
        assert len({row.index(row.split()[1]) for row in part[1:]}) == 1  # a column, aligned
    headers = " ".join(" ".join(part[0].split()[1:]) for part in parts)
    assert headers == " ".join(f"column {i}" for i in range(12))  # every column, in order
    cells = [cell for part in parts for cell in part[1].split()[1:]]
    assert cells == [f"{i}.5%" for i in range(12)]
