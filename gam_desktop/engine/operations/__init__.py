"""The Workflow's operations, one module per domain (as Anki's aqt/operations): ingest,
organize, history, ask, conversations, facts, search and watch. Each operation object
holds the Workflow's one `context.OperationContext` (the folder, the settings, the LLM
factory, the change listener, the lock helpers); each write reports its `Changes` there.
`engine.workflow.Workflow` builds them and is the one name the front ends use."""
