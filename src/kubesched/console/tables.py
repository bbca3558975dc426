"""Tables on the console: fitted to a terminal; piped or redirected, as wide as their cells need,
so that no name is cut or folded for the program (or file) reading them."""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table


def print_table(console: Console, table: Table) -> None:
    if console.is_terminal:
        console.print(table)
        return
    width = console.width
    console.width = max(width, Measurement.get(console, console.options.update(width=10_000), table).maximum)
    try:
        console.print(table)
    finally:
        console.width = width
