"""How a controller talks to the person: ask a yes-or-no question, tell something, show an
error. The main window is the one controllers are given; the real answers are message boxes
(`dialogs.MessageBoxes`), which tests and the self-test replace on the window."""

from __future__ import annotations

from typing import Protocol


class Prompter(Protocol):
    # buttons: what the two buttons do, the one that goes ahead first ("Roll back",
    # "Cancel"): never Yes and No. default_no: Enter (or a hurried click on the highlighted
    # button) answers the second, for questions whose first commits files the person
    # already has.
    def confirm(
        self,
        title: str,
        text: str,
        default_no: bool = False,
        *,
        buttons: tuple[str, str],
    ) -> bool: ...

    def tell(self, title: str, text: str) -> None: ...

    def show_error(self, error: BaseException) -> None: ...
