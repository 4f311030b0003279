"""Print the registry as a Markdown table: ``python -m tinynet.init`` (docs/initializers.md's
table)."""

from __future__ import annotations

from ..activations import get_activation
from ..text import reader_gone
from .registry import distinct, entries as _entries, get
from .schemes import Auto


def markdown_table() -> str:
    """One row per distinct scheme (:func:`tinynet.init.distinct`: aliases folded into it)."""
    leaky = get_activation("leaky_relu", alpha=0.01)
    rows = ["| name | Var(w) | std, 2→2 layer | std, 100→10 layer | use | source |",
            "| --- | --- | --- | --- | --- | --- |"]
    entries = {entry.name: entry for entry in _entries()}
    for name, aliases in distinct().items():
        entry = entries[name]
        initializer = get(name)
        params = ", ".join(f"{k}={v!r}" for k, v in entry.parameters.items())
        label = " / ".join(f"`{n}`" for n in [name, *aliases]) + (f" ({params})" if params else "")
        formula = ("by the layer's activation" if isinstance(initializer, Auto) else
                   initializer.describe((10, 100), leaky).formula.removeprefix("Var(w) = "))
        small, large = (initializer.std(shape, leaky) for shape in [(2, 2), (10, 100)])
        rows.append(f"| {label} | {formula} | {small:.4g} | {large:.4g} | {entry.summary} | "
                    f"{entry.source} |")
    return "\n".join(rows)


if __name__ == "__main__":
    try:
        print(markdown_table(), flush=True)
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as Unix tools do
        reader_gone()
