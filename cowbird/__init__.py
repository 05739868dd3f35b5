"""cowbird: query web corpora of many billions of tokens over HTTP."""

__version__ = "0.1.0"
