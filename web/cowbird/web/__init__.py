"""Templates and static files of the browser interface (package data, found next to this file)."""

from pathlib import Path

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
