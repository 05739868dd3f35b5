"""The command line of a benchmark script whose options are all plain values with defaults."""

from __future__ import annotations

import argparse

Value = int | float | str


def arguments(doc: str, **options: Value | tuple[Value, str]) -> argparse.Namespace:
    """The parsed command line: per keyword an option ``--name`` of its default's type, the default
    alone or with its help text as ``(default, help)``; ``--help`` prints ``doc`` as it is written."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, option in options.items():
        default, help_text = option if isinstance(option, tuple) else (option, None)
        parser.add_argument(f"--{name}", type=type(default), default=default, help=help_text)
    return parser.parse_args()
