"""The ``cowbird`` command (``cli``) and ``cowbird demo`` (``demo``): the top layer, which may import
every part (``docs/architecture.md``)."""
