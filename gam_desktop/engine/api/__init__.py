"""The engine's API: everything the front ends (gui/, cli/, serve/) use, and nothing else.

`Workflow` is the facade: every operation on a memory (add, ask, chat, research, roll
back, watch, ...). Beside it, by domain:

- values.py: the values the front ends are handed and show, and the errors they catch;
- settings.py: the LLM's and the embeddings' settings, probing a server, what is learned
  about servers, prices, redaction, the git the history runs, the app's resources;
- folder.py: a memory folder as the window and the commands see it (its parts, whether a
  folder may become one, its history, a crash's recovery, the watcher);
- text.py: functions on text and names (plural, durations, documents the app reads, a
  note's front matter, a report as Markdown);
- serving.py: what gam-serve and gam-mcp read a memory with.

The import contract in pyproject.toml ([tool.importlinter]) keeps the front ends to this
package: they import `gam_desktop.engine.api` and no other engine module. What a front end
needs and the API lacks is added here, as a function that does the job when it is memory
logic (the window holds none), else as a name re-exported.
"""

from gam_desktop.engine.api import folder, serving, settings, text, values
from gam_desktop.engine.api.folder import *  # noqa: F403 (each module's __all__, below)
from gam_desktop.engine.api.serving import *  # noqa: F403
from gam_desktop.engine.api.settings import *  # noqa: F403
from gam_desktop.engine.api.text import *  # noqa: F403
from gam_desktop.engine.api.values import *  # noqa: F403
from gam_desktop.engine.workflow import Workflow

__all__ = ["Workflow"]
__all__ += folder.__all__
__all__ += serving.__all__
__all__ += settings.__all__
__all__ += text.__all__
__all__ += values.__all__
