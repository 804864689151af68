#!/usr/bin/env python3
"""Minimal stub of the Anthropic Messages API, stdlib only.

Usage:
    python3 anthropic_stub.py [--port 0] [--log FILE] [--reply TEXT] [--port-file FILE]

Then run claude with
    ANTHROPIC_BASE_URL=http://127.0.0.1:PORT ANTHROPIC_API_KEY=sk-test claude

Serves:
  POST /v1/messages               (stream true -> SSE, false -> JSON)
  POST /v1/messages/count_tokens  -> {"input_tokens": N}
  POST /v1/chat/completions       OpenAI-compatible (stream or not), for opencode tests
  GET  /v1/models                 one model "stub-model"
  GET/HEAD anything else          -> 200 {} (logged), so connectivity probes pass
Every request is appended to the log as one JSON line (method, path, query,
selected headers, body summary).  Port 0 picks a free port; the chosen port is
printed on stdout and written to --port-file if given.
"""
import argparse
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

LOCK = threading.Lock()
ARGS = None


def log(entry):
    entry["t"] = time.strftime("%Y-%m-%dT%H:%M:%S") + ".%03d" % (int(time.time() * 1000) % 1000)
    line = json.dumps(entry, ensure_ascii=False)
    with LOCK:
        if ARGS.log:
            with open(ARGS.log, "a") as f:
                f.write(line + "\n")
        else:
            print(line, flush=True)


def last_user_text(body):
    msgs = body.get("messages") or []
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            texts = [b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text"]
            # skip <system-reminder> blocks claude prepends
            texts = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
            if texts:
                return texts[-1]
    return ""


def summarize(body):
    if not isinstance(body, dict):
        return body
    s = {k: body.get(k) for k in ("model", "max_tokens", "stream", "temperature", "metadata", "thinking",
                                  "tool_choice", "output_format", "output_config", "context_management") if k in body}
    sysp = body.get("system")
    if isinstance(sysp, list):
        s["system"] = [ (b.get("text", "")[:160]) for b in sysp if isinstance(b, dict)]
    elif isinstance(sysp, str):
        s["system"] = sysp[:160]
    s["n_messages"] = len(body.get("messages") or [])
    s["last_user_text"] = last_user_text(body)[:300]
    s["tools"] = [t.get("name") for t in (body.get("tools") or []) if isinstance(t, dict)]
    s["keys"] = sorted(body.keys())
    return s


def _fill_schema(schema):
    t = (schema or {}).get("type")
    if t == "object":
        return {k: _fill_schema(v) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return []
    if t == "boolean":
        return True
    if t in ("number", "integer"):
        return 0
    if "enum" in (schema or {}):
        return schema["enum"][0]
    return "Stub conversation"


def reply_text_for(body):
    # Structured-output side requests (claude's session-title request sends
    # output_config.format = {"type": "json_schema", "schema": {title: string}}):
    # answer with JSON that matches the schema.
    for key in ("output_config", "output_format"):
        fmt = body.get(key) or {}
        if key == "output_config":
            fmt = fmt.get("format") or {}
        if fmt.get("type") == "json_schema":
            return json.dumps(_fill_schema(fmt.get("schema")))
    if ARGS.reply:
        return ARGS.reply
    return "STUB-REPLY: you said %r" % last_user_text(body)[:60]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "anthropic-stub/1"

    def log_message(self, fmt, *a):  # silence default stderr log
        pass

    def _headers_of_interest(self):
        keep = {}
        for k, v in self.headers.items():
            kl = k.lower()
            if kl in ("x-api-key", "authorization"):
                v = v[:12] + "..."
            if kl.startswith("x-") or kl.startswith("anthropic") or kl in (
                    "user-agent", "content-type", "accept", "authorization"):
                keep[k] = v
        return keep

    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw) if raw else None
        except Exception:
            return raw.decode("utf-8", "replace")[:500]

    def _send_json(self, code, obj, extra=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_stub_" + uuid.uuid4().hex[:12])
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self):
        log({"method": "HEAD", "path": self.path, "headers": self._headers_of_interest()})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        log({"method": "GET", "path": self.path, "headers": self._headers_of_interest()})
        path = urlsplit(self.path).path
        if path.rstrip("/") == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": "stub-model", "object": "model", "type": "model",
                                   "display_name": "Stub Model", "created_at": "2025-01-01T00:00:00Z"}],
                                  "has_more": False, "first_id": "stub-model", "last_id": "stub-model"})
            return
        self._send_json(200, {})

    def do_POST(self):
        body = self._read_body()
        split = urlsplit(self.path)
        path = split.path
        log({"method": "POST", "path": path, "query": split.query, "headers": self._headers_of_interest(),
             "body": summarize(body)})
        if not isinstance(body, dict):
            body = {}
        if path.endswith("/v1/messages/count_tokens"):
            n = max(1, len(json.dumps(body)) // 4)
            self._send_json(200, {"input_tokens": n})
            return
        if path.endswith("/v1/messages"):
            self._messages(body)
            return
        if path.endswith("/chat/completions"):
            self._chat_completions(body)
            return
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "stub: " + path}})

    def _messages(self, body):
        model = body.get("model", "claude-stub")
        text = reply_text_for(body)
        msg_id = "msg_stub_" + uuid.uuid4().hex[:20]
        usage_in = {"input_tokens": 12, "output_tokens": 1, "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0}
        if not body.get("stream"):
            self._send_json(200, {
                "id": msg_id, "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": max(1, len(text) // 4),
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            })
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_stub_" + uuid.uuid4().hex[:12])
        self.end_headers()
        self.close_connection = True

        def ev(name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
            self.wfile.flush()

        ev("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage_in}})
        ev("content_block_start", {"type": "content_block_start", "index": 0,
                                   "content_block": {"type": "text", "text": ""}})
        ev("ping", {"type": "ping"})
        # send the text in a few chunks
        words = text.split(" ")
        chunks = [" ".join(words[i:i + 3]) for i in range(0, len(words), 3)]
        for i, c in enumerate(chunks):
            ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": (c if i == 0 else " " + c)}})
            time.sleep(ARGS.delay)
        ev("content_block_stop", {"type": "content_block_stop", "index": 0})
        ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                             "usage": {"output_tokens": max(1, len(text) // 4)}})
        ev("message_stop", {"type": "message_stop"})


def _openai_last_user(body):
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, list):
                c = " ".join(b.get("text", "") for b in c if isinstance(b, dict))
            return c or ""
    return ""


def _chat_completions(self, body):
    """OpenAI-compatible /v1/chat/completions (for opencode's openai-compatible provider)."""
    model = body.get("model", "stub-model")
    text = ARGS.reply or ("STUB-REPLY: you said %r" % _openai_last_user(body)[:60])
    cid = "chatcmpl-stub" + uuid.uuid4().hex[:12]
    now = int(time.time())
    if not body.get("stream"):
        self._send_json(200, {"id": cid, "object": "chat.completion", "created": now, "model": model,
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                           "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        return
    self.send_response(200)
    self.send_header("Content-Type", "text/event-stream; charset=utf-8")
    self.send_header("Cache-Control", "no-cache")
    self.send_header("Connection", "close")
    self.end_headers()
    self.close_connection = True

    def chunk(delta, finish=None, usage=None):
        d = {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage:
            d["usage"] = usage
        self.wfile.write(("data: %s\n\n" % json.dumps(d)).encode())
        self.wfile.flush()

    chunk({"role": "assistant", "content": ""})
    words = text.split(" ")
    for i in range(0, len(words), 3):
        chunk({"content": (" " if i else "") + " ".join(words[i:i + 3])})
        time.sleep(ARGS.delay)
    chunk({}, "stop", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    self.wfile.write(b"data: [DONE]\n\n")
    self.wfile.flush()


Handler._chat_completions = _chat_completions


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--log", default=None)
    ap.add_argument("--reply", default=None)
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--port-file", default=None)
    ARGS = ap.parse_args()
    srv = ThreadingHTTPServer((ARGS.host, ARGS.port), Handler)
    port = srv.server_address[1]
    print(port, flush=True)
    if ARGS.port_file:
        with open(ARGS.port_file, "w") as f:
            f.write(str(port))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
