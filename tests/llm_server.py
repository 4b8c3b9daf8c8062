"""The scripted OpenAI-compatible test server (it lives in gam_desktop.selfcheck.scripted_llm
so that the demo and the packaged app's --self-test can use it too).

    python -m tests.llm_server --port 8089 --latency-ms 500
"""

from gam_desktop.selfcheck.scripted_llm import (
    Fault,
    LLMHTTPServer,
    RunningServer,
    ServerState,
    main,
)

__all__ = ["Fault", "LLMHTTPServer", "RunningServer", "ServerState", "main"]

if __name__ == "__main__":
    main()
