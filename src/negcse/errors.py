"""The base of every error a user can cause and fix (bad config, missing or corrupted file,
unloadable model): ``python -m negcse`` prints its message in one or two lines, without a
traceback (``--debug`` shows it)."""

from __future__ import annotations


class UserError(Exception):
    """An expected error; its message names the file, line or key and the fix."""


class ModelFilesError(UserError, OSError):
    """A model folder whose files cannot be loaded (missing, truncated or corrupted)."""
