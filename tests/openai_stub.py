"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests only.

Every request is recorded and answered by `stub.script(request_json) -> Reply`, so a test says
exactly what the "model" returns, with which HTTP status and after how long. The server binds
port 0 on the loopback interface, runs in a daemon thread and stops in the fixture teardown;
a reply still waiting out its delay is released at once when the stub stops.

A completion's `usage` is counted by the server from what it saw, as a real API's would be:
prompt tokens are the words of the request's messages, completion tokens the words of the
choices it returns (`AUTO_USAGE`; a script may set its own `usage`, or drop it).

Its fixture `openai_stub` is offered to every test module by tests/conftest.py: take it as a
parameter, then set `openai_stub.script`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a dict body is sent as JSON, str/bytes are sent as they are."""

    status: int = 200
    body: Any = None
    delay: float = 0.0


Script = Callable[[dict[str, Any]], Reply]
AUTO_USAGE = "counted by the stub"  # a body's usage placeholder: filled in per request


def words(text: object) -> int:
    return len(str(text).split()) if text else 0


def counted_usage(request: dict[str, Any], body: dict[str, Any]) -> dict[str, int]:
    """Tokens as the stub counts them: words in the request's messages and in the choices."""
    prompt = sum(words(m.get("content")) for m in request.get("messages", []))
    completion = sum(words((c.get("message") or {}).get("content"))
                     for c in body.get("choices") or [])
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def completion(content: str | None, *, model: str = "stub-model",
               finish_reason: str = "stop", delay: float = 0.0) -> Reply:
    """A well-formed chat.completion whose single choice says `content`."""
    return Reply(200, {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": AUTO_USAGE,
    }, delay)


def completions(contents: Sequence[str], *, model: str = "stub-model",
                delay: float = 0.0) -> Reply:
    """A chat.completion with one choice per content (what a server honouring `n` sends)."""
    reply = completion(None, model=model, delay=delay)
    reply.body["choices"] = [{"index": i, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}
                             for i, content in enumerate(contents)]
    return reply


def error(status: int, message: str = "scripted failure", delay: float = 0.0) -> Reply:
    """An OpenAI-style error body with this status."""
    return Reply(status, {"error": {"message": message, "type": "stub_error", "code": status}},
                 delay)


def _unscripted(request: dict[str, Any]) -> Reply:
    return error(500, "the test set no script")


class OpenAIStub:
    """`url` is the base URL to give an OpenAI client (it ends in /v1)."""

    def __init__(self, script: Script = _unscripted) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="openai-stub")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def prompts(self) -> list[str]:
        """The last message of every recorded request (the RAGAS prompt), in arrival order."""
        return [str(r["messages"][-1]["content"]) for r in self.requests]

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, path: str, raw: bytes) -> Reply:
        if not path.rstrip("/").endswith("/chat/completions"):
            return error(404, f"no route {path}")
        try:
            request = json.loads(raw)
        except ValueError:
            return error(400, "request body is not JSON")
        with self._lock:
            self.requests.append(request)
            self.paths.append(path)
        reply = self.script(request)
        if isinstance(reply.body, dict) and reply.body.get("usage") == AUTO_USAGE:
            body = {**reply.body, "usage": counted_usage(request, reply.body)}
            reply = Reply(reply.status, body, reply.delay)
        return reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                reply = stub._answer(self.path, self.rfile.read(length))
                if reply.delay and stub._stopping.wait(reply.delay):
                    return  # the stub is stopping: drop the reply
                body = reply.body
                if isinstance(body, str):
                    data, kind = body.encode(), "application/json"
                elif isinstance(body, bytes):
                    data, kind = body, "application/json"
                else:
                    data, kind = json.dumps(body).encode(), "application/json"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test): nothing to tell it
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A running stub for this test; set `.script` before the code under test calls it."""
    with OpenAIStub() as stub:
        yield stub


# --- answering RAGAS's prompts ----------------------------------------------------------


@dataclass
class RowVerdicts:
    """What the scripted model says about one answer, in the JSON shapes RAGAS asks for.

    `relevant` holds the texts of the contexts judged useful; `questions` are returned one per
    AnswerRelevancy call, in turn; `noncommittal` is the flag sent with each of them.
    """

    statements: Sequence[str] = ()
    supported: Sequence[bool] = ()
    relevant: Sequence[str] = ()
    questions: Sequence[str] = ()
    noncommittal: int = 0
    reference: str | None = None  # when set, ContextPrecisionWithReference compares with it
    _asked: int = field(default=0, repr=False)


def prompt_input(prompt: str) -> dict[str, Any]:
    """The input JSON RAGAS's BasePrompt.to_string puts after the last `input:`."""
    start = prompt.rindex("\ninput: ") + len("\ninput: ")
    end = prompt.rindex("\nOutput:")
    data: dict[str, Any] = json.loads(prompt[start:end])
    return data


def ragas_script(rows: Mapping[str, RowVerdicts], honor_n: bool = False) -> Script:
    """A script answering RAGAS 0.4.3's collections prompts from verdicts keyed by answer text.

    The prompt kind is read from the output schema's title that every RAGAS prompt embeds.
    A request's `n` is ignored (one choice, as many servers do) unless `honor_n`: then an
    AnswerRelevancy request gets `n` choices, the row's next `n` questions.
    """
    lock = threading.Lock()
    by_statement = {s: ok for row in rows.values()
                    for s, ok in zip(row.statements, row.supported, strict=True)}

    def script(request: dict[str, Any]) -> Reply:
        prompt = str(request["messages"][-1]["content"])
        data = prompt_input(prompt)
        if '"title": "StatementGeneratorOutput"' in prompt:
            return completion(json.dumps({"statements": list(rows[data["answer"]].statements)}))
        if '"title": "NLIStatementOutput"' in prompt:
            return completion(json.dumps({"statements": [
                {"statement": s, "reason": "scripted", "verdict": int(by_statement[s])}
                for s in data["statements"]]}))
        if '"title": "ContextPrecisionOutput"' in prompt:
            row = rows.get(data["answer"]) or next(
                r for r in rows.values() if r.reference == data["answer"])
            useful = data["context"] in row.relevant
            return completion(json.dumps({"reason": "scripted", "verdict": int(useful)}))
        if '"title": "AnswerRelevanceOutput"' in prompt:
            row = rows[data["response"]]
            asked = int(request.get("n") or 1) if honor_n else 1
            with lock:
                questions = [row.questions[(row._asked + k) % len(row.questions)]
                             if row.questions else "" for k in range(asked)]
                row._asked += asked
            return completions([json.dumps({"question": question,
                                            "noncommittal": row.noncommittal})
                                for question in questions])
        return error(400, "the script does not know this prompt")

    return script
