"""The ``lance-ns`` command: ``lance-ns --help``."""

from .app import build_parser, exit_code, main

__all__ = ["build_parser", "exit_code", "main"]
