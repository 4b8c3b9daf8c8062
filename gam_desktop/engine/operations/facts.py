"""What the user states: learning facts from a turn, listing them, Forget and Restore, and
switching saving chats and learning facts on or off. Every write is one commit and reports
what it changed."""

from __future__ import annotations

from datetime import datetime

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.facts import history as fact_history
from gam_desktop.engine.facts.learn import Learned, learn
from gam_desktop.engine.facts.record import Fact, read_facts
from gam_desktop.engine.history.log import TRAILER_KIND
from gam_desktop.engine.models import META_FILE, utc_now
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.store.changes import FORGET, LEARN, SETTINGS, Changes
from gam_desktop.engine.store.changeset import ChangeSet
from gam_desktop.engine.store.folder import NotAMemoryError


class FactNotFound(GamError, LookupError):
    title = "Fact not found"
    advice = "It may have been forgotten or edited outside the app; list the facts again."


def _fact_state(facts: list[Fact]) -> set[tuple[str, str, str]]:
    return {(fact.id, fact.statement, fact.path) for fact in facts}


class FactOperations:
    def __init__(self, context: OperationContext) -> None:
        self.context = context

    def learn_from_turn(
        self,
        conversation_id: str | None,
        turn: int,
        message: str,
        at: datetime | None = None,
    ) -> Learned:
        """The facts the user's `message` states, reconciled with those known and
        committed as one operation ("Learned 2 facts, updated 1"); nothing when learning
        is off for this memory or the LLM fails (it never forgets on a failure)."""
        ctx = self.context
        meta = ctx.folder.read_meta()
        if meta is None or not meta.learn_facts:
            return Learned()
        existing = read_facts(ctx.folder.root)
        llm = ctx.chat_llm()
        learned = learn(llm, message, existing, conversation_id or "", turn, ctx.cancel, at)
        if not learned:
            return learned
        trailers = {TRAILER_KIND: LEARN, "Gam-Conversation": conversation_id or ""}
        with ctx.versioned.operation(LEARN) as transaction:
            now = read_facts(ctx.folder.root)
            if _fact_state(now) != _fact_state(existing):  # another process learned meanwhile
                learned = learn(llm, message, now, conversation_id or "", turn, ctx.cancel, at)
            if learned:
                transaction.write(learned.changes(), learned.summary(), trailers)
        if learned:
            ctx.changed(transaction.changes(LEARN))
        return learned

    def listed(self, deleted: bool = False) -> list[Fact]:
        """The current facts; with `deleted`, the tombstones of those forgotten or replaced."""
        return read_facts(self.context.folder.root, deleted=deleted)

    def forget(self, fact_id: str) -> Changes:
        """Forget a fact: its tombstone in facts/.deleted, which `restore` (or History)
        undoes (a commit)."""
        root = self.context.folder.root
        fact = next((f for f in read_facts(root) if f.id == fact_id), None)
        if fact is None:
            raise FactNotFound(f"no fact {fact_id!r} in {root}")
        staged = fact_history.forget(fact, utc_now())
        return self._commit(staged, f"Forgot: {fact.statement}", fact.id)

    def restore(self, fact_id: str) -> Changes:
        """Undo a Forget (or a retraction): the fact is current again (a commit)."""
        root = self.context.folder.root
        tomb = next((f for f in read_facts(root, deleted=True) if f.id == fact_id), None)
        if tomb is None or fact_history.replaced(tomb):
            raise FactNotFound(f"no forgotten fact {fact_id!r} in {root}")
        _fact, staged = fact_history.restore(tomb, utc_now())
        return self._commit(staged, f"Restored: {tomb.statement}", tomb.id)

    def _commit(self, staged: ChangeSet, summary: str, fact_id: str) -> Changes:
        with self.context.versioned.operation(FORGET) as transaction:
            transaction.write(staged, summary, {TRAILER_KIND: FORGET, "Gam-Fact": fact_id})
        changes = transaction.changes(FORGET)
        self.context.changed(changes)
        return changes

    def set_personal_memory(
        self, save_conversations: bool | None = None, learn_facts: bool | None = None
    ) -> None:
        """Switch saving chats and learning facts on or off for this memory (a commit)."""
        ctx = self.context
        meta = ctx.folder.read_meta()
        if meta is None:
            raise NotAMemoryError(f"{ctx.folder.root} is not a GAM memory")
        asked = {"save_conversations": save_conversations, "learn_facts": learn_facts}
        update = {key: on for key, on in asked.items() if on is not None}
        meta = meta.model_copy(update=update)
        said = ", ".join(
            f"{k.replace('_', ' ')} {'on' if on else 'off'}" for k, on in update.items()
        )
        with ctx.versioned.operation(SETTINGS) as transaction:
            transaction.write(
                ChangeSet(writes={META_FILE: meta.model_dump_json(indent=2) + "\n"}),
                f"Settings: {said}",
                {TRAILER_KIND: SETTINGS},
            )
        ctx.changed(transaction.changes(SETTINGS))
