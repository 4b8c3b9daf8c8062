"""The values the front ends are handed and show, and the errors they catch.

Each is defined where the engine makes it; this module only names the ones a front end may
hold, so that the window, the commands and gam-serve never depend on where they live.
"""

from gam_desktop.engine.answering.pipeline import Step
from gam_desktop.engine.chats.conversation import Conversation
from gam_desktop.engine.chats.library import ConversationInfo
from gam_desktop.engine.chats.record import ConversationRecord, Turn
from gam_desktop.engine.errors import GamError
from gam_desktop.engine.facts.history import Event
from gam_desktop.engine.facts.learn import Learned
from gam_desktop.engine.facts.record import Fact
from gam_desktop.engine.history.gitrepo import GitUnavailable
from gam_desktop.engine.history.log import (
    TRAILER_KIND,
    UNDID_ROLLBACK,
    FileChange,
    History,
    Operation,
    RollbackConflict,
)
from gam_desktop.engine.history.versioned import InterruptedOperationError
from gam_desktop.engine.ingest.builder import BuildOptions, BuildReport
from gam_desktop.engine.ingest.estimate import Estimate
from gam_desktop.engine.ingest.resume import PendingAdd
from gam_desktop.engine.llm import LLMAuthError, LLMError, NoModels
from gam_desktop.engine.models import ChatResult, ChunkConfig, Citation, ReorganizeOperation
from gam_desktop.engine.progress import CancelToken, OperationCancelled, ProgressEvent
from gam_desktop.engine.research.agent import ResearchStep
from gam_desktop.engine.research.budget import Limits
from gam_desktop.engine.research.models import ResearchReport
from gam_desktop.engine.retrieval.find import Found
from gam_desktop.engine.store.changes import ADD, BUILD, CHAT, LEARN, Changes
from gam_desktop.engine.store.folder import NotAMemoryError
from gam_desktop.engine.workflow import (
    ALREADY_HELD,
    STATEMENT,
    ChatTurn,
    FactNotFound,
    OutsideEdit,
)

__all__ = [
    "ADD",
    "ALREADY_HELD",
    "BUILD",
    "CHAT",
    "LEARN",
    "STATEMENT",
    "TRAILER_KIND",
    "UNDID_ROLLBACK",
    "BuildOptions",
    "BuildReport",
    "CancelToken",
    "Changes",
    "ChatResult",
    "ChatTurn",
    "ChunkConfig",
    "Citation",
    "Conversation",
    "ConversationInfo",
    "ConversationRecord",
    "Estimate",
    "Event",
    "Fact",
    "FactNotFound",
    "FileChange",
    "Found",
    "GamError",
    "GitUnavailable",
    "History",
    "InterruptedOperationError",
    "LLMAuthError",
    "LLMError",
    "Learned",
    "Limits",
    "NoModels",
    "NotAMemoryError",
    "Operation",
    "OperationCancelled",
    "OutsideEdit",
    "PendingAdd",
    "ProgressEvent",
    "ReorganizeOperation",
    "ResearchReport",
    "ResearchStep",
    "RollbackConflict",
    "Step",
    "Turn",
]
