"""A Workflow's operations together (`Operations`), and how the Workflow's own attributes
and former methods reach them: `Shared` keeps an attribute on the context (what a front end
sets on the Workflow, every operation sees), `Delegated` makes a former method the
operation it now is, in one line, typed as the operation is (its signature and defaults
written once, there)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Concatenate, Generic, ParamSpec, Protocol, TypeVar, cast, overload

from gam_desktop.engine.operations.ask import AskOperations
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.operations.conversations import ConversationOperations
from gam_desktop.engine.operations.facts import FactOperations
from gam_desktop.engine.operations.history import HistoryOperations
from gam_desktop.engine.operations.ingest import IngestOperations
from gam_desktop.engine.operations.organize import OrganizeOperations
from gam_desktop.engine.operations.search import SearchOperations
from gam_desktop.engine.operations.watch import WatchOperations

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Operations:
    """A Workflow's operations, one object per domain, all on its one context."""

    ingest: IngestOperations
    organize: OrganizeOperations
    history: HistoryOperations
    ask: AskOperations
    conversations: ConversationOperations
    facts: FactOperations
    search: SearchOperations
    watch: WatchOperations


class Host(Protocol):
    """What holds a context and its operations: the Workflow."""

    context: OperationContext
    ops: Operations


class Shared(Generic[T]):
    """An attribute kept on the host's context (`name` there, else its own name)."""

    def __init__(self, name: str = "") -> None:
        self.name = name

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    @overload
    def __get__(self, host: None, owner: type) -> Shared[T]: ...
    @overload
    def __get__(self, host: Host, owner: type) -> T: ...
    def __get__(self, host: Host | None, owner: type) -> Shared[T] | T:
        return self if host is None else cast(T, getattr(host.context, self.name))

    def __set__(self, host: Host, value: T) -> None:
        setattr(host.context, self.name, value)


class Delegated(Generic[P, R]):
    """A former method, now the operation `get` names. Read on the class, it is a function
    taking the host first (`Workflow.summarize_again` handed to a task runner); a test may
    still replace it on the class (monkeypatch)."""

    def __init__(self, get: Callable[[Operations], Callable[P, R]]) -> None:
        self.get = get
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, host: None, owner: type) -> Callable[Concatenate[Host, P], R]: ...
    @overload
    def __get__(self, host: Host, owner: type) -> Callable[P, R]: ...
    def __get__(
        self, host: Host | None, owner: type
    ) -> Callable[Concatenate[Host, P], R] | Callable[P, R]:
        if host is not None:
            return self.get(host.ops)
        get = self.get

        def unbound(host: Host, /, *args: P.args, **kwargs: P.kwargs) -> R:
            return get(host.ops)(*args, **kwargs)

        unbound.__name__, unbound.__qualname__ = self.name, f"{owner.__name__}.{self.name}"
        return unbound
