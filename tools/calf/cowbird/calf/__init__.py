"""Calf: re-find each line of an exported concordance on the web and add its context."""
