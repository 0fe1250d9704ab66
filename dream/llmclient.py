"""The model clients dream writes with: the official ``openai`` SDK for any OpenAI-compatible
``/v1/chat/completions`` endpoint (OpenAI, Ollama, llama.cpp's server, vLLM, LM Studio, …)
and the official ``anthropic`` SDK for Anthropic's Messages API.

Both SDKs already do what a well-behaved client must: a timeout per request, retries with
exponential backoff and jitter on connection errors, 408, 409, 429 and 5xx, honouring the
server's ``Retry-After``. brainfs sets them (``llm_timeout``, ``llm_max_attempts``) and adds
what a run over hundreds of pages needs on top: a budget of tokens and money per run
(:class:`Budget`), and the count of what was spent for the run's report. The concurrency
limit is the caller's (``LLMSynthesizer.ask_pending`` runs at most ``llm_concurrency``
requests at once).

The SDKs read their users' own variables when a setting is not given: ``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` (``backend/config.py``
also maps them into the typed config, below brainfs's own ``BRAINFS_LLM_*``).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Protocol

# openai and anthropic are the optional `llm` extra: each client imports its SDK when it is
# made, so that dream runs without them.

#: Providers: the protocol the endpoint speaks.
PROVIDERS = ("openai", "anthropic")


class LLMError(RuntimeError):
    """The endpoint cannot be used for this run (down, timing out, refusing the request)."""


class BudgetExhausted(LLMError):
    """The run's token or cost budget is spent: no more requests this run."""


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to call the model (from :class:`brainfs.backend.config.Config`)."""

    base_url: str | None     # e.g. http://127.0.0.1:8000/v1 (the OPENAI_BASE_URL convention)
    model: str
    api_key: str | None = None
    timeout: float = 60.0    # seconds per request
    max_attempts: int = 3    # 1 + the SDK's retries on transient errors
    temperature: float = 0.0  # as repeatable as the endpoint allows
    provider: str = "openai"
    max_output_tokens: int = 600
    concurrency: int = 2
    max_tokens_per_run: int = 0       # prompt + completion tokens; 0 = no limit
    max_cost_per_run: float = 0.0     # in the currency of the prices below; 0 = no limit
    price_input_per_mtok: float = 0.0   # per million prompt tokens
    price_output_per_mtok: float = 0.0  # per million completion tokens


@dataclass
class Answer:
    """One completion: its text and what it cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class ChatClient(Protocol):
    """What the synthesizer needs of a client: one system + user prompt in, text out."""

    calls: int

    def complete(self, system: str, user: str) -> Answer: ...


class Budget:
    """Tokens and money spent this run, against the run's limits (thread-safe: answers come
    back from several requests at once). A request is refused once a limit is reached; the
    requests already in flight finish, so a run overshoots by at most ``concurrency``
    answers."""

    def __init__(self, s: LLMSettings) -> None:
        self.s = s
        self.input_tokens = 0
        self.output_tokens = 0
        self._lock = threading.Lock()

    @property
    def cost(self) -> float:
        return (self.input_tokens * self.s.price_input_per_mtok
                + self.output_tokens * self.s.price_output_per_mtok) / 1e6

    def check(self) -> None:
        """Raise :class:`BudgetExhausted` when a limit is reached."""
        with self._lock:
            used = self.input_tokens + self.output_tokens
            if self.s.max_tokens_per_run and used >= self.s.max_tokens_per_run:
                raise BudgetExhausted(f"token budget of {self.s.max_tokens_per_run} spent ({used})")
            if self.s.max_cost_per_run and self.cost >= self.s.max_cost_per_run:
                raise BudgetExhausted(f"cost budget of {self.s.max_cost_per_run:g} spent ({self.cost:.4f})")

    def spend(self, a: Answer) -> None:
        with self._lock:
            self.input_tokens += a.input_tokens
            self.output_tokens += a.output_tokens

    def report(self) -> dict:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost": round(self.cost, 6)}


class OpenAIChat:
    """``chat.completions.create`` through the ``openai`` SDK."""

    def __init__(self, s: LLMSettings) -> None:
        try:
            import openai  # the optional `llm` extra
        except ImportError:
            raise LLMError("the openai package is not installed (pip install 'brainfs[llm]')") from None
        self.s = s
        self._openai = openai
        # A local server needs no key, but the SDK refuses to start without one: any value
        # does, and a real key from OPENAI_API_KEY wins.
        key = s.api_key or os.environ.get("OPENAI_API_KEY") or "none"
        self.client = openai.OpenAI(base_url=s.base_url, api_key=key, timeout=s.timeout,
                                    max_retries=max(0, s.max_attempts - 1))
        self.calls = 0

    def complete(self, system: str, user: str) -> Answer:
        """The assistant message's content; :class:`LLMError` once the SDK's retries are spent
        or the request is refused (4xx)."""
        o = self._openai
        self.calls += 1
        try:
            r = self.client.chat.completions.create(
                model=self.s.model, temperature=self.s.temperature,
                max_tokens=self.s.max_output_tokens,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
        except o.APITimeoutError as e:
            raise LLMError(f"{self.s.base_url}: request timed out after {self.s.max_attempts} "
                           f"attempt(s) of {self.s.timeout:g} s") from e
        except o.APIConnectionError as e:
            raise LLMError(f"{self.s.base_url}: cannot connect ({e.__cause__ or e})") from e
        except o.APIStatusError as e:
            hint = "" if e.status_code == 429 or e.status_code >= 500 else \
                " (not retried: check the model name and API key)"
            raise LLMError(f"HTTP {e.status_code} from {self.s.base_url}{hint}") from e
        except (o.OpenAIError, ValueError, TypeError) as e:  # an answer that is no completion
            raise LLMError(f"{self.s.base_url}: answer is not a chat completion ({e})") from e
        try:
            content = r.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise LLMError(f"{self.s.base_url}: answer has no text content")
        u = getattr(r, "usage", None)
        return Answer(content, int(getattr(u, "prompt_tokens", 0) or 0),
                      int(getattr(u, "completion_tokens", 0) or 0))


class AnthropicChat:
    """``messages.create`` through the ``anthropic`` SDK."""

    def __init__(self, s: LLMSettings) -> None:
        try:
            import anthropic  # the optional `llm` extra
        except ImportError:
            raise LLMError("the anthropic package is not installed (pip install 'brainfs[llm]')") from None
        self.s = s
        self._anthropic = anthropic
        self.client = anthropic.Anthropic(base_url=s.base_url, api_key=s.api_key, timeout=s.timeout,
                                          max_retries=max(0, s.max_attempts - 1))
        self.calls = 0

    def complete(self, system: str, user: str) -> Answer:
        a = self._anthropic
        where = self.s.base_url or "the Anthropic API"
        self.calls += 1
        try:
            r = self.client.messages.create(
                model=self.s.model, max_tokens=self.s.max_output_tokens, system=system,
                messages=[{"role": "user", "content": user}])
        except a.APITimeoutError as e:
            raise LLMError(f"{where}: request timed out after {self.s.max_attempts} attempt(s) "
                           f"of {self.s.timeout:g} s") from e
        except a.APIConnectionError as e:
            raise LLMError(f"{where}: cannot connect ({e.__cause__ or e})") from e
        except a.APIStatusError as e:
            hint = "" if e.status_code == 429 or e.status_code >= 500 else \
                " (not retried: check the model name and API key)"
            raise LLMError(f"HTTP {e.status_code} from {where}{hint}") from e
        except (a.AnthropicError, ValueError, TypeError) as e:
            raise LLMError(f"{where}: answer is not a message ({e})") from e
        text = "".join(getattr(b, "text", "") for b in (getattr(r, "content", None) or [])
                       if getattr(b, "type", "") == "text")
        if not text:
            raise LLMError(f"{where}: answer has no text content")
        u = getattr(r, "usage", None)
        return Answer(text, int(getattr(u, "input_tokens", 0) or 0),
                      int(getattr(u, "output_tokens", 0) or 0))


def client_for(s: LLMSettings) -> ChatClient:
    """The SDK client for ``s.provider``."""
    if s.provider == "anthropic":
        return AnthropicChat(s)
    if s.provider != "openai":
        raise LLMError(f"unknown LLM provider {s.provider!r} (use {' or '.join(PROVIDERS)})")
    return OpenAIChat(s)
