"""cowbird's version, as installed (one distribution, ``pyproject.toml``'s ``[project] version``).

``cowbird`` is a namespace package spread over the design card's folders (``docs/architecture.md``),
so it has no ``__init__`` to carry the version: the installed distribution's metadata does.
"""

from importlib.metadata import version

__version__ = version("cowbird")
