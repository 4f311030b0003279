"""Print the registry as a Markdown table: ``python -m tinynet.init`` (the README's table)."""

from __future__ import annotations

from ..activations import get_activation
from .registry import available, entries, get
from .schemes import Auto

ALIASES = {"glorot_": "xavier_", "kaiming_": "he_"}


def markdown_table() -> str:
    """One row per registered name (aliases folded into their entry's row)."""
    leaky = get_activation("leaky_relu", alpha=0.01)
    rows = ["| name | Var(w) | std, 2→2 layer | std, 100→10 layer | use | source |",
            "| --- | --- | --- | --- | --- | --- |"]
    registered = available()
    for entry in entries():
        if any(entry.name.startswith(alias) for alias in ALIASES):
            continue
        initializer = get(entry.name)
        names = [entry.name] + [alias_name for alias, real in ALIASES.items()
                                if (alias_name := entry.name.replace(real, alias, 1))
                                in registered and alias_name != entry.name]
        params = ", ".join(f"{k}={v!r}" for k, v in entry.parameters.items())
        label = " / ".join(f"`{name}`" for name in names) + (f" ({params})" if params else "")
        formula = ("by the layer's activation" if isinstance(initializer, Auto) else
                   initializer.describe((10, 100), leaky).formula.removeprefix("Var(w) = "))
        small, large = (initializer.std(shape, leaky) for shape in [(2, 2), (10, 100)])
        rows.append(f"| {label} | {formula} | {small:.4g} | {large:.4g} | {entry.summary} | "
                    f"{entry.source} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
