"""Drives the original Python NodeRAG (PyPI `NodeRAG`) for bench/peer.ts.

  python original.py build  <folder>                 -> JSON {wall_s, maxrss_kb, error}
  python original.py search <folder> <questions.json> -> JSON {load_s, latencies_ms, maxrss_kb, errors, contexts}

Provider calls go to OPENAI_BASE_URL (the fake OpenAI-compatible server). Exceptions are
reported with a traceback excerpt instead of being swallowed.
"""
import json
import resource
import sys
import time
import traceback

import yaml


def load_config(folder):
    from NodeRAG import NodeConfig
    with open(f"{folder}/Node_config.yaml") as f:
        return NodeConfig(yaml.safe_load(f))


def maxrss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def excerpt(exc_text, lines=12):
    return "\n".join(exc_text.strip().splitlines()[-lines:])


def build(folder):
    out = {"wall_s": None, "maxrss_kb": None, "error": None}
    t0 = time.perf_counter()
    try:
        from NodeRAG.build.Node import NodeRag
        NodeRag(load_config(folder)).run()
    except BaseException:  # noqa: BLE001 - recorded, not hidden
        out["error"] = excerpt(traceback.format_exc())
    out["wall_s"] = time.perf_counter() - t0
    out["maxrss_kb"] = maxrss_kb()
    return out


def search(folder, questions_file):
    from NodeRAG import NodeSearch
    questions = json.load(open(questions_file))
    out = {"load_s": None, "latencies_ms": [], "maxrss_kb": None, "errors": [], "contexts": []}
    t0 = time.perf_counter()
    try:
        engine = NodeSearch(load_config(folder))
    except BaseException:  # noqa: BLE001
        out["errors"].append({"question": None, "traceback": excerpt(traceback.format_exc())})
        out["maxrss_kb"] = maxrss_kb()
        return out
    out["load_s"] = time.perf_counter() - t0
    for q in questions:
        t = time.perf_counter()
        try:
            r = engine.search(q)
            out["latencies_ms"].append((time.perf_counter() - t) * 1000)
            out["contexts"].append(str(r.retrieval_info) if hasattr(r, "retrieval_info") else str(r))
        except BaseException:  # noqa: BLE001
            out["errors"].append({"question": q, "traceback": excerpt(traceback.format_exc())})
    out["maxrss_kb"] = maxrss_kb()
    return out


if __name__ == "__main__":
    mode, folder = sys.argv[1], sys.argv[2]
    result = build(folder) if mode == "build" else search(folder, sys.argv[3])
    print("PEER_JSON " + json.dumps(result))
