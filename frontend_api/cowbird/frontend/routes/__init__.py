"""Public HTTP resources of the front end, one module each."""
