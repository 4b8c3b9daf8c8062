"""An in-process LLM for unit tests of the build stages (gam_desktop.engine.llm.LLM).

A structured call is answered by the pydantic model it asks for, a text call by its
stage: never by the prompt's wording, so rewording a prompt breaks no test of a stage's
logic. The scripted HTTP server stays for the client, the end-to-end tests and
--self-test.

    llm = FakeLLM({TaxonomyPlan: [broken_plan, good_plan], MemoryDraft: draft_for})

A reply is a model instance, a dict (validated into the model asked for), an exception
(raised, as a failed call would be) or a callable given the messages that returns one of
these. A list is answered in order, its last entry repeating. Every call is recorded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, TypeVar

from pydantic import BaseModel

from gam_desktop.engine.llm import LLMSettings, UsageMeter
from gam_desktop.engine.llm.capabilities import Capabilities
from gam_desktop.engine.progress import CancelToken

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
Messages = list[dict[str, Any]]


@dataclass
class Call:
    stage: str
    model: type[BaseModel] | None  # None for a text call
    messages: Messages
    max_tokens: int | None

    @property
    def prompt(self) -> str:
        """The last user message: what a re-ask adds is there."""
        users = [m.get("content") or "" for m in self.messages if m.get("role") == "user"]
        return users[-1] if users else ""


class FakeLLM:
    def __init__(
        self,
        replies: Mapping[type[BaseModel], Any] | None = None,
        texts: Mapping[str, Any] | None = None,
        *,
        model: str = "fake",
    ) -> None:
        self.settings = LLMSettings(base_url="http://fake.invalid/v1", model=model)
        self.usage = UsageMeter()
        self.replies: dict[Any, Any] = dict(replies or {})
        self.texts: dict[str, Any] = dict(texts or {})
        self.calls: list[Call] = []
        self._answered: dict[Any, int] = {}
        self._lock = threading.Lock()

    @property
    def caps(self) -> Capabilities:
        return Capabilities({"tools": False})  # complete() answers text: the JSON actions

    # -- what the stages call --------------------------------------------------------------

    def structured(
        self,
        messages: Messages,
        model_cls: type[T],
        *,
        stage: str,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> T:
        reply = self._reply(
            model_cls, self.replies, Call(stage, model_cls, messages, max_tokens), cancel
        )
        return reply if isinstance(reply, model_cls) else model_cls.model_validate(reply)

    def text(
        self,
        messages: Messages,
        *,
        stage: str,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> str:
        return str(self._reply(stage, self.texts, Call(stage, None, messages, max_tokens), cancel))

    def complete(
        self, messages: Messages, *, stage: str, cancel: CancelToken | None = None, **extra: Any
    ) -> Any:
        """A chat completion shaped as the SDK's, holding the text for `stage`."""
        text = self.text(messages, stage=stage, cancel=cancel, max_tokens=extra.get("max_tokens"))
        message = SimpleNamespace(role="assistant", content=text, tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=None)

    def parallel_map(
        self,
        fn: Callable[[Any], R],
        items: Iterable[Any],
        *,
        cancel: CancelToken | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> list[R]:
        """In order, one at a time (deterministic); the cancel is checked after each."""
        results = []
        for done, item in enumerate(items, start=1):
            results.append(fn(item))
            if on_done:
                on_done(done)
            if cancel is not None:
                cancel.raise_if_cancelled()
        return results

    # -- what the tests read ---------------------------------------------------------------

    def stages(self) -> list[str]:
        return [call.stage for call in self.calls]

    def asked(self, model_cls: type[BaseModel]) -> list[Call]:
        return [call for call in self.calls if call.model is model_cls]

    def _reply(
        self, key: Any, replies: Mapping[Any, Any], call: Call, cancel: CancelToken | None
    ) -> Any:
        if cancel is not None:
            cancel.raise_if_cancelled()
        with self._lock:
            self.calls.append(call)
            if key not in replies:
                raise AssertionError(f"FakeLLM has no reply for {getattr(key, '__name__', key)}")
            reply = replies[key]
            if isinstance(reply, list):
                n = self._answered.get(key, 0)
                self._answered[key] = n + 1
                reply = reply[min(n, len(reply) - 1)]
        self.usage.record(call.stage, 0, 0)
        if callable(reply) and not isinstance(reply, BaseModel | type):
            reply = reply(call.messages)
        if isinstance(reply, BaseException):
            raise reply
        return reply
