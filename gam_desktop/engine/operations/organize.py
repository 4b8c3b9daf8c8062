"""Reorganizing a folder of the memory: the LLM's plan, shown to the person, then applied as
it was (no second LLM call). The reorganization reports what it changed; the plan reads
only."""

from __future__ import annotations

from gam_desktop.engine.models import ReorganizeOperation
from gam_desktop.engine.operations.context import OperationContext
from gam_desktop.engine.store.changes import REORGANIZE
from gam_desktop.engine.store.folder import NotAMemoryError


class OrganizeOperations:
    def __init__(self, context: OperationContext) -> None:
        self.context = context

    def plan(self, path: str = "") -> ReorganizeOperation:
        """What reorganizing `path` would move, planned by the LLM; changes nothing."""
        ctx = self.context
        if not ctx.folder.is_memory():
            raise NotAMemoryError(f"{ctx.folder.root} is not a GAM memory")
        with ctx.writer_lock():
            builder = ctx.builder()
            plan = builder.reorganize(path.strip("/"), dry_run=True)
        builder.stages.finish()
        return plan

    def reorganize(
        self, path: str = "", dry_run: bool = False, plan: ReorganizeOperation | None = None
    ) -> ReorganizeOperation:
        """Reorganize `path` as the LLM plans it now, or as `plan` (from `plan`, shown to the
        person) says, without asking the LLM again; a ReorganizeError when the folder
        changed since that plan was made."""
        if dry_run:  # changes nothing, commits nothing
            return self.plan(path)
        ctx = self.context
        if not ctx.folder.is_memory():
            raise NotAMemoryError(f"{ctx.folder.root} is not a GAM memory")
        with ctx.versioned.operation(REORGANIZE) as transaction:
            builder = ctx.builder()
            builder.write_changes = transaction.write
            where = plan.directory if plan is not None else path.strip("/")
            operation = builder.reorganize(where, plan=plan)
        ctx.changed(transaction.changes(REORGANIZE))
        builder.stages.finish()
        return operation
