"""What the chat's "Learned" line shows under an answer: the facts one turn added, updated
or removed, each with how it is undone, and whether it still stands.

An added fact is undone by forgetting it (a commit of its own); an update or a removal by
rolling back the whole learning operation (its commit, through the History's rollback,
which asks first). Whether an item still stands follows the memory's changes: its fact
file going or coming back, whoever did it (this Undo, the History tab, another editor).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gam_desktop.engine.api import Changes, Learned

FORGET, ROLL_BACK = "forget", "roll back"


@dataclass
class LearnedItem:
    sign: str  # "+" added, "~" updated, "−" removed
    text: str
    path: str  # the file that says whether it stands
    stands_while_present: bool  # an added or updated fact stands while its file is there
    undo: str  # FORGET or ROLL_BACK
    fact_id: str = ""  # the fact FORGET forgets
    statement: str = ""
    undone: bool = False

    def follow(self, changes: Changes) -> bool:
        """Whether the item's standing changed with `changes`."""
        gone = self.path in changes.removed or changes.moved_to(self.path) is not None
        came = self.path in changes.added | changes.modified or any(
            new == self.path for _old, new in changes.moved
        )
        if not (gone or came) or (gone and came):
            return False
        undone = gone if self.stands_while_present else came
        changed, self.undone = undone != self.undone, undone
        return changed


@dataclass
class LearnedNote:
    """One turn's learning: `commit` is its operation (None without history)."""

    conversation_id: str | None
    turn: int
    summary: str
    commit: str | None
    items: list[LearnedItem] = field(default_factory=list)
    problem: str | None = None  # why nothing was learned (the LLM failed)

    @classmethod
    def of(
        cls, conversation_id: str | None, turn: int, learned: Learned, commit: str | None
    ) -> LearnedNote:
        items = [
            LearnedItem("+", f.statement, f.path or f.home, True, FORGET, f.id, f.statement)
            for f in learned.added
        ]
        items += [
            LearnedItem(
                "~",
                f"{old.statement} → {new.statement}",
                new.path or new.home,
                True,
                ROLL_BACK,
                statement=new.statement,
            )
            for old, new in learned.updated
        ]
        items += [
            LearnedItem("−", f.statement, f.path or f.home, False, ROLL_BACK, statement=f.statement)
            for f in learned.deleted
        ]
        return cls(conversation_id, turn, learned.summary(), commit, items, learned.problem)

    def follow(self, changes: Changes) -> bool:
        """Follow the memory's changes; whether anything shown changed."""
        changed = False
        for item in self.items:
            changed = item.follow(changes) or changed
        return changed

    def touched(self, changes: Changes) -> bool:
        """Whether `changes` name one of its facts' files (its standing may have changed:
        the note may already have followed them, through another view)."""
        return any(changes.touches(item.path) for item in self.items)

    def can_undo(self, item: LearnedItem) -> bool:
        return not item.undone and (item.undo == FORGET or self.commit is not None)

    def undo_label(self, item: LearnedItem) -> str:
        """What Undo does, said in the link."""
        if item.undo == FORGET:
            return "Undo (forget this fact)"
        standing = [i for i in self.items if not i.undone]
        if len(standing) > 1:
            return f"Undo (roll back this learning: all {len(standing)} changes)"
        return "Undo (roll back this learning)"
