"""A small OpenAI-compatible chat server on loopback for the LLM layer's tests.

Not a mock of the client: the ``openai`` library makes real HTTP requests to it. It answers
``POST /v1/chat/completions`` with a deterministic completion (by default the prompt reversed,
as JSON {"text": ...}; or ``respond(prompt)``, None for ``content: null``), counts requests per
prompt and the most in flight at once, records every Authorization header, and can answer the
first ``fail_first`` requests with an HTTP error (with ``fail_headers``, e.g. Retry-After).
``usage(text)``: the ``usage.completion_tokens`` to report; ``raw(prompt)``: a whole reply
(status, body bytes, Content-Type) instead of a chat completion, for broken endpoints.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    def __init__(
        self,
        delay_s: float = 0.0,
        fail_first: int = 0,
        fail_status: int = 429,
        respond: Callable[[str], str | None] | None = None,
        fail_headers: dict[str, str] | None = None,
        usage: Callable[[str], int] | None = None,
        raw: Callable[[str], tuple[int, bytes, str]] | None = None,
    ) -> None:
        self.respond = respond or (lambda prompt: json.dumps({"text": prompt[::-1]}))
        self.fail_headers = fail_headers or {}
        self.usage = usage
        self.raw = raw
        self.fail_times: list[float] = []  # when each failing request arrived (monotonic)
        self.delay_s = delay_s
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.requests: Counter[str] = Counter()
        self.auth: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.total = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                with server._lock:
                    server.total += 1
                    failing = server.total <= server.fail_first
                    server.auth.append(self.headers.get("Authorization", ""))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.delay_s)
                    if failing:
                        server.fail_times.append(time.monotonic())
                        error = {"error": {"message": "try later"}}
                        self._send(server.fail_status, error, server.fail_headers)
                        return
                    with server._lock:
                        server.requests[prompt] += 1
                    if server.raw is not None:
                        status, data, content_type = server.raw(prompt)
                        self._send_bytes(status, data, content_type, {})
                        return
                    text = server.respond(prompt)
                    reply: dict = {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text},
                            }
                        ],
                    }
                    if server.usage is not None:
                        used = server.usage(text or "")
                        reply["usage"] = {
                            "prompt_tokens": 1,
                            "completion_tokens": used,
                            "total_tokens": used + 1,
                        }
                    self._send(200, reply)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self._send_bytes(status, data, "application/json", headers or {})

            def _send_bytes(
                self, status: int, data: bytes, content_type: str, headers: dict[str, str]
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
