"""A model's own chat template (a GGUF's, code from the internet), checked and rendered in
moot's bounded jinja2 sandbox: for the llama.cpp backend, and for the header check that
refuses a hostile template before llama.cpp sees the file."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jinja2 import BaseLoader, Template, TemplateError, nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from moot.errors import ModelIntegrityError, MootError
from moot.prompts import BoundedSandbox, RenderLimitError, render_bounded

# A GGUF's chat template is code from the internet. llama-cpp-python compiles every template
# a file carries when it loads it, and renders the chosen one in a jinja2 sandbox for every
# call; moot checks them first, in an environment built like that one, so that a hostile
# template is refused by name before llama.cpp sees the file.

SAMPLE_CONVERSATIONS = (  # the shapes of conversation moot sends: a user turn, with a persona
    [{"role": "user", "content": "Say hello."}],
    [
        {"role": "system", "content": "You are a debater."},
        {"role": "user", "content": "Say hello."},
    ],
)


@dataclass(frozen=True)
class TemplateProblem:
    """Why a chat template must not be used: `kind` is "broken", "unsafe" or "fails"."""

    kind: str
    detail: str


class _GenerationTag(Extension):
    """Hugging Face's `{% generation %}` marker: its body is kept, the tag ignored."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> list[nodes.Node]:
        parser.stream.skip(1)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _chat_environment() -> ImmutableSandboxedEnvironment:
    """The sandbox llama-cpp-python renders chat templates in, with moot's bounds."""
    return BoundedSandbox(
        loader=BaseLoader(),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationTag, loopcontrols],
        filters={
            "tojson": lambda x, indent=None, **_: json.dumps(x, ensure_ascii=False, indent=indent)
        },
    )


class _TemplateRefusal(Exception):
    """The template called raise_exception(): it refuses a conversation, on purpose."""


def _refuse(message: str) -> None:
    raise _TemplateRefusal(message)


def _strftime_now(fmt: object) -> str:
    if re.search(r"%[-_0^#]*\d{3,}", str(fmt)):
        raise RenderLimitError("it asks strftime_now() for a field 100 or more characters wide")
    return datetime(2025, 1, 1).strftime(str(fmt))


def _compile_chat(template: str) -> tuple[Template | None, TemplateProblem | None]:
    env = _chat_environment()
    try:
        tree = env.parse(template)
    except TemplateError as exc:
        line = getattr(exc, "lineno", None)
        return None, TemplateProblem("broken", f"{exc}" + (f" (line {line})" if line else ""))
    except RecursionError:
        return None, TemplateProblem("broken", "it is nested too deeply to parse")
    private = next(_private_names(tree), None)
    if private is not None:
        return None, TemplateProblem("unsafe", f"it reaches for {private}")
    try:
        return env.from_string(tree), None
    except TemplateError as exc:
        return None, TemplateProblem("broken", str(exc))
    except (RecursionError, SyntaxError, MemoryError) as exc:  # Python's compiler gave up on it
        return None, TemplateProblem("broken", f"it cannot be compiled: {exc}")


def _chat_variables(messages: list[dict[str, str]], **variables: Any) -> dict[str, Any]:
    return {
        "messages": messages,
        "bos_token": "<s>",
        "eos_token": "</s>",
        "add_generation_prompt": True,
        "raise_exception": _refuse,
        "strftime_now": _strftime_now,
        "functions": None,
        "function_call": None,
        "tools": None,
        "tool_choice": None,
        **variables,
    }


def chat_template_problem(template: str, *, rendered: bool = True) -> TemplateProblem | None:
    """Why a model's chat template must not be used, or None when it is safe to hand on.

    "broken": it does not parse. "unsafe": it names a private or dunder attribute anywhere
    (reached or not), the sandbox stopped it, or it ran past the bounds of a render (time,
    work, size). "fails": it cannot format the conversations moot sends (only when `rendered`;
    a template's own raise_exception() is not a failure).
    """
    compiled, problem = _compile_chat(template)
    if compiled is None:
        return problem
    for messages in SAMPLE_CONVERSATIONS:
        try:
            render_bounded(compiled, _chat_variables(messages))
        except SecurityError as exc:
            return TemplateProblem("unsafe", f"the sandbox stopped it: {exc}")
        except RenderLimitError as exc:
            return TemplateProblem("unsafe", f"moot stopped it: {exc}")
        except _TemplateRefusal:
            continue
        except Exception as exc:  # anything a template can raise: TypeError, UndefinedError …
            if rendered:
                return TemplateProblem("fails", f"{type(exc).__name__}: {exc}")
    return None


def render_chat_template(template: str, messages: list[dict[str, str]], **variables: Any) -> str:
    """A model's chat TEMPLATE applied to MESSAGES in moot's bounded sandbox (the variables
    llama-cpp-python passes, overridden by VARIABLES: bos_token, eos_token, …).

    A template that runs past the bounds of a render is a ModelIntegrityError naming the
    bound; one that does not compile or fails on the conversation, a MootError.
    """
    compiled, problem = _compile_chat(template)
    if compiled is None:
        detail = problem.detail if problem else "it does not compile"
        raise ModelIntegrityError(
            key="inference.chat_template.chat_template_cannot_used", detail=detail
        )
    try:
        return render_bounded(compiled, _chat_variables(messages, **variables))
    except (RenderLimitError, SecurityError) as exc:
        raise ModelIntegrityError(
            key="inference.chat_template.chat_template_was_stopped", exc=exc
        ) from None
    except Exception as exc:
        raise MootError(
            key="inference.chat_template.chat_template_could_not_format", exc=exc
        ) from exc


def _private_names(tree: nodes.Node) -> Iterator[str]:
    """What the template reaches for that the sandbox would refuse: attributes whose names
    start with "_" (`x.__class__`, `x['__class__']`, `x|attr('__class__')`), and `attr` with a
    computed name, which hides what it reaches for. A chat needs none of them."""
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter)):
        name: Any = None
        if isinstance(node, nodes.Getattr):
            name = node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            name = node.arg.value
        elif isinstance(node, nodes.Filter) and node.name == "attr" and node.args:
            if not isinstance(node.args[0], nodes.Const):
                yield "an attribute whose name it computes"
                continue
            name = node.args[0].value
        if isinstance(name, str) and name.startswith("_"):
            yield f"the private attribute {name!r}"
