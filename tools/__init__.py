"""Tools that work on cowbird's output."""
