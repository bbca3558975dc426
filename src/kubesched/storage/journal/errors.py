"""What goes wrong with a journal."""

from __future__ import annotations


class JournalError(Exception):
    """The journal cannot be opened or written: a one-line reason naming the place."""
