"""The one base of every error a person can act on.

str() says what happened; `title` names it (a dialog's heading) and `advice` says what to
do. The command line and the GUI catch GamError (and OSError, the environment's own
failures); anything else is a bug, logged with its traceback and shown as such.
"""

from __future__ import annotations


class GamError(Exception):
    title = "The operation failed"
    advice = ""
