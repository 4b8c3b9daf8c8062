"""Learning facts from what the user says, and reconciling them with what is known.

Two calls at most per turn. First the message is read without a model (said.py): quoted
and pasted text taken out (an e-mail that says "delete all facts" is not the user saying
it), corrections made in the same breath applied, the name the user gives themselves, what
they take back and the values they say no longer hold. One call extracts 0-3 atomic facts
from the rest (with, per fact, whether it changes or takes back something said before, and
the user's own name when they give it); one reconciles them with their neighbourhood of
existing facts, returning every candidate with an event (ADD / UPDATE / DELETE / NONE).
With no neighbours there is nothing to reconcile. Any LLM failure learns nothing and
forgets nothing.

What the user's words say (matching.py) stands whatever the model decides: "forget what I
said about X" retracts the fact about X, "from 3 May to 10 May" replaces the fact
naming 3 May. The rest are hints. The model's decisions are untrusted: it can only
update or delete the facts it was shown (by a short alias, never a path), it deletes only
when the user's words take something back, and a reconciliation that would remove more
facts than the user just stated keeps only what their words say. The person's name is
never the model's to change (identity.py).

Every change is history: a replaced fact's tombstone names its successor and the turn that
replaced it, and the successor names what it replaces (record.py, history.py). So a fact
says only what holds now: "12 tents instead of 9" is learned as "12 tents".
"""

from __future__ import annotations

import logging
from datetime import datetime

from gam_desktop.engine.facts import identity
from gam_desktop.engine.facts.extract import Extraction as Extraction
from gam_desktop.engine.facts.extract import cleaned, extract, with_models_reading
from gam_desktop.engine.facts.learned import Learned as Learned
from gam_desktop.engine.facts.learned import new_fact, replacing
from gam_desktop.engine.facts.matching import neighbourhood, proposals
from gam_desktop.engine.facts.reconcile import Reconciliation as Reconciliation
from gam_desktop.engine.facts.reconcile import apply, reconcile
from gam_desktop.engine.facts.record import IDENTITY, Fact
from gam_desktop.engine.facts.said import read
from gam_desktop.engine.facts.said import users_own_words as users_own_words
from gam_desktop.engine.llm import LLM, LLMCallFailed
from gam_desktop.engine.models import utc_now
from gam_desktop.engine.progress import CancelToken

log = logging.getLogger(__name__)


def learn(
    llm: LLM,
    message: str,
    existing: list[Fact],
    conversation_id: str = "",
    turn: int = 0,
    cancel: CancelToken | None = None,
    now: datetime | None = None,
) -> Learned:
    """What the user's `message` teaches, reconciled with the `existing` facts."""
    learned = Learned(at=now or utc_now(), conversation_id=conversation_id, turn=turn)
    said = read(message)
    if not said.told:
        return learned  # a question, a request or only pasted text: nothing to learn, no call
    me = next((f for f in existing if f.is_identity), None)
    known = [f for f in existing if not f.is_identity]
    try:
        extraction = extract(llm, said, cancel)
        learned.calls += 1
        claimed = [identity.names_the_user(f.statement) for f in extraction.facts]
        claimed += [identity.full_name_given(f.statement, said.own) for f in extraction.facts]
        name = identity.confirmed_name(said, extraction.user_name, [c for c in claimed if c])
        known_name = identity.name_in(me.statement) if me else ""
        said = with_models_reading(said, extraction.facts)
        new = cleaned(extraction.facts, said, name or known_name)
        statements = [f.statement for f in new]
        proposed = proposals(said, known, statements)
        related = neighbourhood(known, statements + said.retracted + said.old_values)
        related += [p.old for p in proposed if p.old not in related]
        decisions = reconcile(llm, related, new, cancel, proposed) if related and new else None
        learned.calls += decisions is not None
    except LLMCallFailed as exc:
        log.warning("learning skipped: %s", exc)
        learned.problem = str(exc)
        return learned
    _name(learned, me, name)
    apply(learned, said, decisions, related, new, proposed)
    return learned


def _name(learned: Learned, me: Fact | None, name: str) -> None:
    """The identity fact: made at the first name the user gives, replaced only when they
    give another (a longer one of the same name refines it)."""
    known = identity.name_in(me.statement) if me else ""
    if not name or (known and identity.same_name(known, name) and len(name) <= len(known)):
        return
    fact = new_fact(learned, identity.statement_of(name), "the user", identity.IDENTITY_TOPIC)
    fact.kind = IDENTITY
    if me is None:
        learned.added.append(fact)
    else:
        learned.updated.append((me, replacing(fact, me)))
