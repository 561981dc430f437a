"""An in-process stand-in for pando-mgr's HTTP API: canned answers per
(method, path), the requests it got recorded, for the CLI's unit tests
(error paths a real mgr is hard to drive into)."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pando_testing.threads import RaisingThread

Answer = tuple[int, Any, dict[str, str]]     # status, body (bytes or JSON-able), headers


class StubMgr:
    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], Answer] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.tokens: list[str | None] = []        # each request's Authorization
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                stub.requests.append((self.command, self.path,
                                      json.loads(raw) if raw else None))
                stub.tokens.append(self.headers.get("Authorization"))
                status, body, headers = stub.answers.get(
                    (self.command, self.path), (404, {"error": "no such path"}, {}))
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = RaisingThread(target=self.server.serve_forever, args=(0.05,),
                                    daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, method: str, path: str, status: int, body: Any,
               headers: dict[str, str] | None = None) -> None:
        self.answers[(method, path)] = (status, body, headers or {})

    def __enter__(self) -> "StubMgr":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
