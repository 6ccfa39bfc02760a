"""Drives the original Python NodeRAG (PyPI `NodeRAG`) for bench/peer.ts.

  python original.py templates                        -> JSON {the English prompt templates}
  python original.py build  <folder>                  -> JSON {wall_s, maxrss_kb, error, stages_s}
  python original.py counts <noderag folder> <original folder> -> JSON {rows per table, graph size}
  python original.py search <folder> <questions.json> [repeats] -> JSON {load_s, e2e_ms, provider_ms,
                                                          engine_ms, engine_stages_ms, maxrss_kb,
                                                          errors, contexts}

Provider calls go to OPENAI_BASE_URL (the fake OpenAI-compatible server). Exceptions are
reported with a traceback excerpt instead of being swallowed.

Search runs every question twice on one loaded engine:
  1. end-to-end: NodeSearch.search(q) plus its context string (`retrieval_info`), with the
     question's embedding and decomposition requests going to the fake server; the replies
     are recorded, and the time spent inside those two client calls is `provider_ms`;
  2. engine-only (`repeats` rounds over the questions): the same, with the two client calls answered from the replies recorded in
     pass 1 (in-process, no HTTP), so the time is the original's own retrieval: HNSW search,
     exact matching, personalised PageRank, top-k post-processing and the context string.
     Each of those steps is also timed (`engine_stages_ms`).
"""
import json
import re
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


def excerpt(exc_text, lines=14):
    return "\n".join(exc_text.strip().splitlines()[-lines:])


def templates():
    from NodeRAG.utils.prompt.prompt_manager import prompt_manager
    pm = prompt_manager("English")
    return {name: getattr(pm, name) for name in (
        "text_decomposition", "relationship_reconstraction", "attribute_generation",
        "community_summary", "decompose_query", "answer")}


STAGE_LINE = re.compile(r"INFO - (.+?) Finished, Time spent: ([0-9.eE+-]+) seconds")


def fix_seeds():
    """Fixed seeds for the original's randomised steps, without touching its files: the global
    `random` (networkx betweenness_centrality(k=10) samples with it when no seed is given),
    numpy's global generator, and leidenalg.find_partition (called without a seed, so it would
    draw one at random) defaulted to seed 0. hnswlib (random_seed=100) and faiss k-means
    (seed 1234) already use fixed defaults."""
    import functools
    import random

    import leidenalg
    import numpy as np
    random.seed(0)
    np.random.seed(0)
    leidenalg.find_partition = functools.partial(leidenalg.find_partition, seed=0)


def build(folder):
    out = {"wall_s": None, "maxrss_kb": None, "error": None, "stages_s": {}}
    fix_seeds()
    t0 = time.perf_counter()
    try:
        from NodeRAG.build.Node import NodeRag
        NodeRag(load_config(folder)).run()
    except BaseException:  # noqa: BLE001 - recorded, not hidden
        out["error"] = excerpt(traceback.format_exc())
    out["wall_s"] = time.perf_counter() - t0
    out["maxrss_kb"] = maxrss_kb()
    try:  # the original's own per-pipeline timer lines
        with open(f"{folder}/info/info.log") as f:
            for m in STAGE_LINE.finditer(f.read()):
                out["stages_s"][m.group(1)] = float(m.group(2))
    except OSError:
        pass
    return out


TABLES = ["text", "semantic_units", "entities", "relationship", "attributes",
          "high_level_elements"]


def counts(ours, theirs):
    """Rows of each node table and the size of the stored graph, for both indexes."""
    import pickle
    import pandas as pd

    def rows(folder):
        out = {}
        for t in TABLES:
            try:
                out[t] = len(pd.read_parquet(f"{folder}/cache/{t}.parquet"))
            except Exception:  # noqa: BLE001 - a missing table is reported as null
                out[t] = None
        return out

    o, t = rows(ours), rows(theirs)
    try:
        o["graph nodes"] = len(pd.read_parquet(f"{ours}/cache/graph_nodes.parquet"))
        o["graph edges"] = len(pd.read_parquet(f"{ours}/cache/graph_edges.parquet"))
    except Exception:  # noqa: BLE001
        pass
    try:
        with open(f"{theirs}/cache/graph.pkl", "rb") as f:
            g = pickle.load(f)
        t["graph nodes"], t["graph edges"] = g.number_of_nodes(), g.number_of_edges()
    except Exception:  # noqa: BLE001
        pass
    return {"noderag": o, "original": t}


class Timed:
    """Wraps a callable and adds its wall time to a bucket."""

    def __init__(self, fn, bucket, key):
        self.fn, self.bucket, self.key = fn, bucket, key

    def __call__(self, *a, **kw):
        t = time.perf_counter()
        try:
            return self.fn(*a, **kw)
        finally:
            self.bucket[self.key] = self.bucket.get(self.key, 0.0) + (time.perf_counter() - t) * 1000


def search(folder, questions_file, repeats):
    from NodeRAG import NodeSearch
    questions = json.load(open(questions_file))
    out = {"load_s": None, "e2e_ms": [], "provider_ms": [], "engine_ms": [], "engine_stages_ms": {},
           "maxrss_kb": None, "errors": [], "contexts": []}
    t0 = time.perf_counter()
    try:
        engine = NodeSearch(load_config(folder))
    except BaseException:  # noqa: BLE001
        out["errors"].append({"question": None, "traceback": excerpt(traceback.format_exc())})
        out["maxrss_kb"] = maxrss_kb()
        return out
    out["load_s"] = time.perf_counter() - t0

    emb, api = engine.config.embedding_client, engine.config.API_client
    real_embed, real_chat = emb.request, api.request
    recorded = {}
    provider = {}
    calls = out["call_ms"] = {"embed": [], "query": []}

    def recording_embed(query, *a, **kw):
        t = time.perf_counter()
        recorded[("embed", query)] = r = real_embed(query, *a, **kw)
        calls["embed"].append((time.perf_counter() - t) * 1000)
        return r

    def recording_chat(input, *a, **kw):
        t = time.perf_counter()
        recorded[("chat", input["query"])] = r = real_chat(input, *a, **kw)
        calls["query"].append((time.perf_counter() - t) * 1000)
        return r

    # Pass 1: end-to-end.
    emb.request = Timed(recording_embed, provider, "ms")
    api.request = Timed(recording_chat, provider, "ms")
    ok = []
    for q in questions:
        provider["ms"] = 0.0
        t = time.perf_counter()
        try:
            context = engine.search(q).retrieval_info
            out["e2e_ms"].append((time.perf_counter() - t) * 1000)
            out["provider_ms"].append(provider["ms"])
            out["contexts"].append(context)
            ok.append(q)
        except BaseException:  # noqa: BLE001
            out["errors"].append({"question": q, "traceback": excerpt(traceback.format_exc())})

    # Pass 2: engine-only, provider replies from pass 1, each retrieval step timed.
    emb.request = lambda query, *a, **kw: recorded[("embed", query)]
    api.request = lambda input, *a, **kw: recorded[("chat", input["query"])]
    stages = out["engine_stages_ms"]
    engine.hnsw.search = Timed(engine.hnsw.search, stages, "hnsw")
    engine.accurate_search = Timed(engine.accurate_search, stages, "exact match")
    engine.graph_search = Timed(engine.graph_search, stages, "personalised PageRank")
    engine.post_process_top_k = Timed(engine.post_process_top_k, stages, "top-k post-processing")
    ctx_ms = 0.0
    for q in [q for _ in range(repeats) for q in ok]:
        t = time.perf_counter()
        r = engine.search(q)
        c = time.perf_counter()
        _ = r.retrieval_info
        end = time.perf_counter()
        ctx_ms += (end - c) * 1000
        out["engine_ms"].append((end - t) * 1000)
    stages["context string"] = ctx_ms
    n = max(len(ok) * repeats, 1)
    for k in stages:
        stages[k] /= n  # mean ms per question
    out["maxrss_kb"] = maxrss_kb()
    return out


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "templates":
        result = templates()
    elif mode == "counts":
        result = counts(sys.argv[2], sys.argv[3])
    elif mode == "build":
        result = build(sys.argv[2])
    else:
        result = search(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    print("PEER_JSON " + json.dumps(result))
