"""What the build stages and the agent use of an LLM: `LLMClient` is the one that talks
to a server; tests hand the stages an in-process fake with the same shape."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from gam_desktop.engine.llm.capabilities import Capabilities
from gam_desktop.engine.llm.settings import LLMSettings
from gam_desktop.engine.llm.usage import UsageMeter
from gam_desktop.engine.progress import CancelToken

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
Messages = list[dict[str, Any]]
# Each call names its stage ("memorize", "read", ...) in this header: a proxy's logs, and
# the scripted server that tests talk to, tell the calls apart by it, never by the wording
# of a prompt. Servers ignore headers they do not know.
STAGE_HEADER = "X-Gam-Stage"


@runtime_checkable
class LLM(Protocol):
    """An OpenAI-compatible chat model as the stages see it.

    `settings` names the model (commit trailers) and the server (remembered capabilities);
    `usage` counts calls and tokens per stage; `caps` says whether native tool calls are
    worth trying (`llm.tools.chat_with_tools`)."""

    settings: LLMSettings
    usage: UsageMeter

    @property
    def caps(self) -> Capabilities: ...

    def complete(
        self, messages: Messages, *, stage: str, cancel: CancelToken | None = None, **extra: Any
    ) -> Any:
        """One chat completion (the SDK's response object: `.choices[0].message`)."""
        ...

    def text(
        self,
        messages: Messages,
        *,
        stage: str,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """The reply's text."""
        ...

    def structured(
        self,
        messages: Messages,
        model_cls: type[T],
        *,
        stage: str,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> T:
        """A validated `model_cls` from the reply."""
        ...

    def parallel_map(
        self,
        fn: Callable[[Any], R],
        items: Iterable[Any],
        *,
        cancel: CancelToken | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> list[R]:
        """`fn` over `items` (each usually one call), results in order; stops early on an
        error or a cancel; `on_done(n)` after each of them."""
        ...
