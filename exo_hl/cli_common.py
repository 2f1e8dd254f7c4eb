"""What the command-line modules share: the error reported as one line."""
from __future__ import annotations


class UserError(Exception):
    """A problem to report to the user as a one-line (or few-line) message."""
