"""Turning a model's text into a validated pydantic object.

Models wrap JSON in code fences, add prose, drop quotes or commas; json-repair
fixes most of that. What still does not validate is reported with pydantic's
message so that the caller can re-ask with the specific error.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class ParseProblem(ValueError):
    """The reply could not be turned into the requested shape; str() says why."""


def extract_json(text: str) -> Any:
    text = (text or "").strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    candidate = text[start:] if start >= 0 else text
    repaired = json_repair.loads(candidate)
    if repaired in ("", None, [], {}) and candidate.strip() not in ("[]", "{}"):
        raise ParseProblem("the reply contained no JSON")
    return repaired


def parse_model(text: str, model_cls: type[T]) -> T:
    obj = extract_json(text)
    if isinstance(obj, list) and len(obj) == 1 and isinstance(obj[0], dict):
        obj = obj[0]  # some models wrap the object in a list
    try:
        return model_cls.model_validate(obj)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'root'}: {err['msg']}"
            for err in exc.errors()[:8]
        )
        raise ParseProblem(f"the JSON did not match the schema: {problems}") from exc


def schema_instruction(schema: dict[str, Any]) -> str:
    return (
        "Reply with one JSON object only, no prose and no code fences. "
        "It must match this JSON schema:\n" + json.dumps(schema, separators=(",", ":"))
    )
