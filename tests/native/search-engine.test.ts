/**
 * NodeSearch (docs/method.md §6.2, §6.6, §7.4) on the hand-built Curie index with scripted
 * providers: the context string and token counts, the answer object and its aliases, the
 * load lifecycle (not built → built without a restart, damaged, pending commit), errors,
 * and many questions in flight at once.
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { ClosedError, IndexNotBuiltError, InvalidQuestionError, ProviderError } from '../../ts/errors.js';
import type { TaskInputs } from '../../ts/llm/types.js';
import { native } from '../../ts/native.js';
import { RESULT_JSON } from '../../ts/search/engine-types.js';
import { NodeSearch, type SearchProviders } from '../../ts/search/node-search.js';
import type { RetrievedItem } from '../../ts/search/retrieve.js';
import { readTable, writeTable } from '../../ts/store/index.js';
import {
  curieSpec,
  writeSearchConfig,
  writeSearchIndex,
  writeSearchProject,
} from '../helpers/search-index.js';

const dirs: string[] = [];
const engines: NodeSearch[] = [];
afterEach(() => {
  for (const e of engines.splice(0)) e.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'noderag-engine-'));
  dirs.push(d);
  return d;
}

interface Script {
  /** Question → query vector (4 dims) and elements. */
  questions: Record<string, { vector: number[]; elements: string[] }>;
  answer?: (input: TaskInputs['answer']) => string;
  latencyMs?: (question: string, call: 'embed' | 'query' | 'answer') => number;
  fail?: Partial<Record<'embed' | 'query' | 'answer', Error>>;
}

interface CallLog {
  question: string;
  call: 'embed' | 'query' | 'answer';
  start: number;
  end: number;
}

/** Providers that answer from a script, after a chosen latency, and log each call. */
function scripted(script: Script, log: CallLog[] = []): SearchProviders {
  const timed = async <T>(
    question: string,
    call: CallLog['call'],
    signal: AbortSignal | undefined,
    value: () => T,
  ) => {
    const start = performance.now();
    const ms = script.latencyMs?.(question, call) ?? 0;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(t);
        reject(signal.reason);
      });
    });
    log.push({ question, call, start, end: performance.now() });
    const failure = script.fail?.[call];
    if (failure) throw failure;
    return value();
  };
  const providers = {
    run: (task: string, input: unknown, options: { signal?: AbortSignal } = {}) => {
      if (task === 'query') {
        const q = (input as TaskInputs['query']).question;
        return timed(q, 'query', options.signal, () => ({ elements: script.questions[q]?.elements ?? [] }));
      }
      if (task === 'answer') {
        const a = input as TaskInputs['answer'];
        return timed(a.question, 'answer', options.signal, () =>
          script.answer ? script.answer(a) : `answer to ${a.question}`,
        );
      }
      throw new Error(`unexpected task ${task}`);
    },
    embedQuery: (question: string, options: { signal?: AbortSignal } = {}) =>
      timed(question, 'embed', options.signal, () =>
        Float32Array.from(script.questions[question]?.vector ?? [0, 0, 0, 0]),
      ),
  };
  return providers as unknown as SearchProviders;
}

async function curieEngine(
  script: Script,
  config: Record<string, unknown> = {},
  log?: CallLog[],
  options: { retrievalCacheSize?: number } = {},
) {
  const root = tempDir();
  await writeSearchProject(root, curieSpec({ config, similarity: [] }));
  const search = new NodeSearch(NodeConfig.fromMainFolder(root), {
    providers: scripted(script, log),
    ...options,
  });
  engines.push(search);
  return { root, search };
}

describe('context string, answer and token counts', () => {
  const script: Script = {
    questions: { 'Who married Pierre Curie?': { vector: [0.2, 0.8, 0, 0], elements: ['Pierre Curie'] } },
    answer: () => 'Hello world',
  };
  // Bridge passages off here: these tests pin the §6.6 sections; the next one turns it on.
  const config = {
    HNSW_results: 1,
    cross_node: 1,
    Enode: 1,
    Rnode: 1,
    Hnode: 1,
    ppr_max_iter: 1,
    bridge_passages: 0,
  };

  it('formats the sections of §6.6 and counts o200k_base tokens', async () => {
    const { search } = await curieEngine(script, config);
    const a = await search.answer('Who married Pierre Curie?');
    // Hit u-married (distance 0); PIERRE CURIE matched. One step from them, the best
    // relationship is r-married and the best cross node the element h-paris.
    expect(a.retrievalInfo).toBe(
      [
        '------------high_level_element-------------',
        '1. Scientific life in Paris: the Curies married and worked there.',
        '',
        '------------semantic_unit-------------',
        '1. Pierre Curie married Marie Curie in Paris in 1895.',
        '',
        '------------relationship-------------',
        '1. PIERRE CURIE married MARIE CURIE',
        '',
        '',
      ].join('\n'),
    );
    expect(a.response).toBe('Hello world');
    expect(a.responseTokens).toBe(2); // "Hello" " world" in o200k_base
    expect(a.retrievalTokens).toBe(native.countTokens(a.retrievalInfo));
    expect(a.retrievalTokens).toBeGreaterThan(20);
  });

  it('answer(): camelCase fields, read-only non-enumerable snake_case aliases', async () => {
    const { search } = await curieEngine(script, config);
    const a = await search.answer('Who married Pierre Curie?');
    expect(Object.keys(a)).toEqual([
      'response',
      'responseTokens',
      'retrievalInfo',
      'retrievalTokens',
      'items',
      'sources',
      'citations',
    ]);
    expect(JSON.parse(JSON.stringify(a))).toEqual({
      response: a.response,
      responseTokens: a.responseTokens,
      retrievalInfo: a.retrievalInfo,
      retrievalTokens: a.retrievalTokens,
      items: JSON.parse(JSON.stringify(a.items)),
      sources: a.sources,
      citations: a.citations,
    });
    // The structured items of the context: the same as search() gives, in context order.
    expect(a.items).toEqual((await search.search('Who married Pierre Curie?')).items);
    expect(a.items.map((i) => i.type)).toEqual(['high_level_element', 'semantic_unit', 'relationship']);
    expect(a.response_tokens).toBe(a.responseTokens);
    expect(a.retrieval_info).toBe(a.retrievalInfo);
    expect(a.retrieval_tokens).toBe(a.retrievalTokens);
    expect(() => {
      (a as { retrieval_info: string }).retrieval_info = 'x';
    }).toThrow(TypeError);
  });

  it('search(): the retrieval alone, items in context order with id, type, score, text, document', async () => {
    const { search } = await curieEngine(script, config);
    const r = await search.search('Who married Pierre Curie?');
    expect(r.items.map((i) => [i.id, i.type, i.origin, i.document])).toEqual([
      ['h-paris', 'high_level_element', 'propagation', null],
      ['u-married', 'semantic_unit', 'vector', 'b.txt'],
      ['r-married', 'relationship', 'propagation', 'b.txt'],
    ]);
    expect(r.items[1]).toMatchObject({
      text: 'Pierre Curie married Marie Curie in Paris in 1895.',
      score: null,
    });
    expect(r.items[0]!.score).toBeGreaterThan(0);
    expect(r.retrieval_info).toBe(r.retrievalInfo);
    expect(r.retrievalTokens).toBe(native.countTokens(r.retrievalInfo));
    expect(Object.keys(r)).toEqual(['retrievalInfo', 'retrievalTokens', 'items', 'sources']);
    // Input files of the items (the element has none), with their chunks and item numbers.
    expect(r.sources).toEqual([{ document: 'b.txt', chunks: ['t-b'], items: [2, 3], cited: [] }]);
  });

  it('answer(): the prompt numbers the items [n]; the numbers cited map back to sources', async () => {
    let prompt: TaskInputs['answer'] | undefined;
    const citing: Script = {
      ...script,
      answer: (input) => {
        prompt = input;
        return 'They married in Paris in 1895 [2], as the record says [3][9].';
      },
    };
    const { search } = await curieEngine(citing, config);
    const a = await search.answer('Who married Pierre Curie?', {
      history: [
        { role: 'user', content: 'Who is Marie Curie?' },
        { role: 'assistant', content: 'A physicist.' },
      ],
    });
    expect(prompt?.context).toBe(
      [
        '------------high_level_element-------------',
        '[1] Scientific life in Paris: the Curies married and worked there.',
        '',
        '------------semantic_unit-------------',
        '[2] Pierre Curie married Marie Curie in Paris in 1895.',
        '',
        '------------relationship-------------',
        '[3] PIERRE CURIE married MARIE CURIE',
        '',
        '',
      ].join('\n'),
    );
    expect(prompt?.history).toEqual([
      { role: 'user', content: 'Who is Marie Curie?' },
      { role: 'assistant', content: 'A physicist.' },
    ]);
    // [9] is not a context item: ignored.
    expect(a.sources).toEqual([{ document: 'b.txt', chunks: ['t-b'], items: [2, 3], cited: [2, 3] }]);
    expect(a.citations).toEqual([
      { n: 2, id: 'u-married', type: 'semantic_unit', document: 'b.txt', chunk: 't-b' },
      { n: 3, id: 'r-married', type: 'relationship', document: 'b.txt', chunk: null },
    ]);
  });

  it('bridge_passages: the passage of an entity the context names joins the text section', async () => {
    const { search } = await curieEngine(script, { ...config, bridge_passages: 1 });
    const r = await search.search('Who married Pierre Curie?');
    // u-married (b.txt) names MARIE CURIE, whose birth passage t-a (a.txt) is the bridge.
    expect(r.items.filter((i) => i.origin === 'bridge').map((i) => [i.id, i.type, i.document])).toEqual([
      ['t-a', 'text', 'a.txt'],
    ]);
    expect(r.retrievalInfo).toContain('------------text-------------\n1. Marie Curie was born in Warsaw');
  });

  it('token counts are computed on first read only (the HTTP routes never read them)', async () => {
    const root = tempDir();
    await writeSearchProject(root, curieSpec({ config, similarity: [] }));
    const counted: string[] = [];
    const search = new NodeSearch(NodeConfig.fromMainFolder(root), {
      providers: scripted(script),
      tokenCounter: {
        countTokens: (t) => {
          counted.push(t);
          return native.countTokens(t);
        },
      },
    });
    engines.push(search);
    const a = await search.answer('Who married Pierre Curie?');
    const r = await search.search('Who married Pierre Curie?');
    expect(counted).toEqual([]);
    expect(r.retrievalTokens).toBe(a.retrievalTokens);
    expect(a.responseTokens).toBe(2);
    expect(a.retrieval_tokens).toBe(a.retrievalTokens);
    expect(counted).toEqual([a.retrievalInfo, a.retrievalInfo, 'Hello world']);
    a.responseTokens = 7; // still a plain, assignable field
    expect(a.response_tokens).toBe(7);
  });

  it('an empty retrieval is the empty string with 0 tokens', async () => {
    const { search } = await curieEngine(
      { questions: { 'Nothing?': { vector: [0, 0, 0, 0], elements: ['Zzz'] } } },
      {
        HNSW_results: 0,
      },
    );
    const r = await search.search('Nothing?');
    expect(r).toMatchObject({ retrievalInfo: '', retrievalTokens: 0, items: [] });
  });

  it('embedding and decomposition of one question run concurrently; the answer comes after', async () => {
    const log: CallLog[] = [];
    const { search } = await curieEngine({ ...script, latencyMs: () => 40 }, config, log);
    await search.answer('Who married Pierre Curie?');
    const at = (c: string) => log.find((l) => l.call === c)!;
    expect(at('embed').start).toBeLessThan(at('query').end);
    expect(at('query').start).toBeLessThan(at('embed').end);
    expect(at('answer').start).toBeGreaterThanOrEqual(Math.max(at('embed').end, at('query').end));
  });

  it('skips the embedding when no vector search is asked for (HNSW_results = 0)', async () => {
    const log: CallLog[] = [];
    const { search } = await curieEngine(script, { HNSW_results: 0 }, log);
    await search.search('Who married Pierre Curie?');
    expect(log.map((l) => l.call)).toEqual(['query']);
  });
});

describe('retrieval cache', () => {
  const script: Script = {
    questions: {
      'Who married Pierre Curie?': { vector: [0.2, 0.8, 0, 0], elements: ['Pierre Curie'] },
      'Where?': { vector: [1, 0, 0, 0], elements: ['Warsaw'] },
    },
  };
  const calls = (log: CallLog[], call: CallLog['call']) => log.filter((l) => l.call === call).length;

  it('a repeated question makes no provider call and gets the same retrieval', async () => {
    const log: CallLog[] = [];
    const { search } = await curieEngine(script, {}, log);
    const first = await search.search('Who married Pierre Curie?');
    const again = await search.search('Who married Pierre Curie?');
    expect(again.retrievalInfo).toBe(first.retrievalInfo);
    expect(again.items).toEqual(first.items);
    expect(calls(log, 'embed')).toBe(1);
    expect(calls(log, 'query')).toBe(1);
    // answer() reuses the retrieval but always asks the model.
    await search.answer('Who married Pierre Curie?');
    await search.answer('Who married Pierre Curie?');
    expect(calls(log, 'query')).toBe(1);
    expect(calls(log, 'answer')).toBe(2);
    expect(search.cacheStats()).toMatchObject({ hits: 3, misses: 1, size: 1 });
  });

  it('cached items cannot be changed by a caller', async () => {
    const { search } = await curieEngine(script);
    const first = await search.search('Where?');
    expect(first.items.length).toBeGreaterThan(0);
    expect(() => {
      (first.items[0] as { text: string }).text = 'tampered';
    }).toThrow(TypeError);
    expect(() => (first.items as RetrievedItem[]).pop()).toThrow(TypeError);
    expect((await search.search('Where?')).items).toEqual(first.items);
  });

  it('a cached retrieval keeps its sources: the same frozen list, the same reply bytes', async () => {
    const { search } = await curieEngine(script);
    const first = await search.search('Where?');
    const again = await search.search('Where?');
    expect(first.sources.length).toBeGreaterThan(0);
    expect(again.sources).toBe(first.sources);
    expect(again[RESULT_JSON]!.sources).toBe(first[RESULT_JSON]!.sources);
    expect(JSON.parse(Buffer.from(first[RESULT_JSON]!.sources).toString('utf8'))).toEqual(first.sources);
    expect(() => (first.sources[0]!.chunks as string[]).push('tampered')).toThrow(TypeError);
    expect(() => {
      (first.sources[0] as { document: string }).document = 'tampered';
    }).toThrow(TypeError);
    // Without the cache every retrieval is new, and so are its sources.
    const { search: uncached } = await curieEngine(script, {}, [], { retrievalCacheSize: 0 });
    const a = await uncached.search('Where?');
    const b = await uncached.search('Where?');
    expect(b.sources).not.toBe(a.sources);
    expect(b.sources).toEqual(a.sources);
    expect(Object.isFrozen(a.sources)).toBe(false);
  });

  it('a failed question is not cached; size 0 disables the cache; least recently used goes first', async () => {
    const failing = await curieEngine({ ...script, fail: { query: new Error('boom') } });
    await expect(failing.search.search('Where?')).rejects.toThrow('boom');
    expect(failing.search.cacheStats().size).toBe(0);

    const log: CallLog[] = [];
    const { search } = await curieEngine(script, {}, log, { retrievalCacheSize: 0 });
    await search.search('Where?');
    await search.search('Where?');
    expect(calls(log, 'query')).toBe(2);

    const lruLog: CallLog[] = [];
    const { search: small } = await curieEngine(script, {}, lruLog, { retrievalCacheSize: 1 });
    await small.search('Where?');
    await small.search('Who married Pierre Curie?'); // evicts 'Where?'
    await small.search('Who married Pierre Curie?');
    await small.search('Where?');
    expect(lruLog.filter((l) => l.call === 'query').map((l) => l.question)).toEqual([
      'Where?',
      'Who married Pierre Curie?',
      'Where?',
    ]);
    expect(() => new NodeSearch(small.config, { retrievalCacheSize: -1 })).toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        message: expect.stringContaining('retrievalCacheSize'),
      }),
    );
  });
});

describe('errors', () => {
  const questions = { 'Where?': { vector: [1, 0, 0, 0], elements: ['Warsaw'] } };

  it('rejects invalid questions with the codes of §7.2', async () => {
    const { search } = await curieEngine({ questions });
    await expect(search.answer('   ')).rejects.toMatchObject({ code: 'empty_question' });
    await expect(search.search('x'.repeat(8001))).rejects.toBeInstanceOf(InvalidQuestionError);
    await expect(search.search(42 as unknown as string)).rejects.toMatchObject({ code: 'invalid_question' });
    // Library wording, not the HTTP body's.
    await expect(search.search(undefined as unknown as string)).rejects.toThrow(
      '"question" is missing: a question (a string) is required',
    );
    // A history that is not a list of user/assistant turns is refused before anything runs.
    const bad = async (history: unknown, message: string) =>
      expect(search.answer('Where?', { history } as never)).rejects.toMatchObject({
        code: 'invalid_history',
        message,
      });
    await bad('x', 'history must be an array of turns, got a string');
    await bad(
      [{ role: 'system', content: 'x' }],
      'history[0].role must be "user" or "assistant", got "system"',
    );
    await bad(
      [{ role: 'user', content: 'a' }, { role: 'user' }],
      'history[1].content must be a string, got nothing',
    );
    const events = search.answerStream('Where?', { history: [null] } as never);
    await expect(events.next()).rejects.toMatchObject({ code: 'invalid_history' });
  });

  it('a provider failure fails the question with the ProviderError', async () => {
    const failure = new ProviderError('openai returned 401', {
      provider: 'openai',
      status: 401,
      retryable: false,
    });
    for (const call of ['embed', 'query', 'answer'] as const) {
      const { search } = await curieEngine({ questions, fail: { [call]: failure } });
      await expect(search.answer('Where?')).rejects.toBe(failure);
    }
  });

  it('an aborted signal aborts the question', async () => {
    const { search } = await curieEngine({ questions, latencyMs: () => 5_000 });
    const controller = new AbortController();
    const pending = search.answer('Where?', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 20);
    await expect(pending).rejects.toThrow('client went away');
  });

  it('close() frees the index; later calls throw ClosedError', async () => {
    const { search } = await curieEngine({ questions });
    await search.ready();
    search.close();
    search.close();
    await expect(search.search('Where?')).rejects.toBeInstanceOf(ClosedError);
    expect(search.closed).toBe(true);
  });

  it('close() cancels the model calls of the questions in flight: they fail with ClosedError at once', async () => {
    for (const phase of ['retrieval', 'answer', 'stream'] as const) {
      // The calls of that phase take 5 s unless their signal aborts them.
      const slow = phase === 'retrieval' ? ['embed', 'query'] : ['answer'];
      const { search } = await curieEngine({
        questions,
        latencyMs: (_q, call) => (slow.includes(call) ? 5000 : 0),
      });
      await search.ready();
      const started = performance.now();
      const pending =
        phase === 'stream'
          ? (async () => {
              for await (const _ of search.answerStream('Where?')) void _;
            })()
          : phase === 'retrieval'
            ? search.search('Where?')
            : search.answer('Where?');
      const outcome = pending.then(
        () => 'resolved',
        (e: unknown) => e,
      );
      await new Promise((r) => setTimeout(r, 100));
      search.close();
      expect(await outcome, phase).toBeInstanceOf(ClosedError);
      expect(performance.now() - started, phase).toBeLessThan(2000);
    }
  });
});

describe('loading', () => {
  const questions = { 'Where?': { vector: [1, 0, 0, 0], elements: ['Warsaw'] } };

  it('not built: not ready and IndexNotBuiltError; loads once a build has finished, without a restart', async () => {
    const root = tempDir();
    await writeSearchConfig(root, { dim: 4 });
    const search = new NodeSearch(NodeConfig.fromMainFolder(root), { providers: scripted({ questions }) });
    engines.push(search);
    await expect(search.ready()).rejects.toBeInstanceOf(IndexNotBuiltError);
    await expect(search.answer('Where?')).rejects.toThrow(/no index in .* yet/);
    expect(await search.status()).toEqual({ ready: false, generation: 0, nodes: 0, vectors: 0 });

    // A first build running: state.json exists, nothing finished yet.
    await writeSearchIndex(
      root,
      curieSpec({ state: { last_finished_generation: 0, current_state: 'HNSW pipeline' } }),
    );
    await expect(search.search('Where?')).rejects.toThrow(/not built yet \(build state: HNSW pipeline\)/);

    await writeSearchIndex(root, curieSpec());
    expect(await search.status()).toEqual({ ready: true, generation: 1, nodes: 23, vectors: 11 });
    expect((await search.search('Where?')).items.length).toBeGreaterThan(0);
  });

  it('a missing or damaged table is index_not_built naming the file', async () => {
    const { root } = await curieEngine({ questions });
    const second = tempDir();
    await writeSearchProject(second, curieSpec());
    unlinkSync(join(second, 'cache', 'relationship.parquet'));
    const s1 = new NodeSearch(NodeConfig.fromMainFolder(second), { providers: scripted({ questions }) });
    engines.push(s1);
    await expect(s1.ready()).rejects.toThrow('index damaged: cache/relationship.parquet is missing');
    expect((await s1.status()).ready).toBe(false);
    // Restoring the index is noticed by the next call (state.json unchanged).
    await writeSearchIndex(second, curieSpec());
    expect((await s1.status()).ready).toBe(true);

    writeFileSync(join(root, 'cache', 'HNSW.bin'), 'not an index');
    const s2 = new NodeSearch(NodeConfig.fromMainFolder(root), { providers: scripted({ questions }) });
    engines.push(s2);
    const e = await s2.ready().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(IndexNotBuiltError);
    expect((e as Error).message).toMatch(/index damaged: .*HNSW\.bin/);
    // With the way out: a build re-derives the vector index from the stored vectors.
    expect((e as Error).message).toContain(
      `run \`noderag build -f ${root}\`: it rebuilds the vector index from the stored vectors`,
    );

    // An edge to a node the graph does not hold (endpoints are read dictionary-encoded).
    const third = tempDir();
    await writeSearchProject(third, curieSpec());
    const edges = (await readTable(join(third, 'cache', 'graph_edges.parquet'))).columns;
    const target = edges.find((c) => c.name === 'target');
    if (target?.kind !== 'utf8') throw new Error('graph_edges.parquet has no utf8 target column');
    target.strings[1] = 'not-a-node';
    await writeTable(join(third, 'cache', 'graph_edges.parquet'), {
      numRows: target.strings.length,
      columns: edges,
    });
    const s3 = new NodeSearch(NodeConfig.fromMainFolder(third), { providers: scripted({ questions }) });
    engines.push(s3);
    await expect(s3.ready()).rejects.toThrow(
      /index damaged: .*graph_edges\.parquet: row 1 has target not-a-node, which is not in the graph/,
    );
  });

  it('does not wait for a pending build commit; an unreadable COMMIT.json is named', async () => {
    // A pending commit is read where its files are (tests/native/search-pending-commit.test.ts).
    const root = tempDir();
    await writeSearchProject(root, curieSpec());
    mkdirSync(join(root, 'cache', '.staging'), { recursive: true });
    const commit = join(root, 'cache', '.staging', 'COMMIT.json');
    writeFileSync(commit, JSON.stringify({ version: 1, created_at: 'now', files: [] }));
    const search = new NodeSearch(NodeConfig.fromMainFolder(root), { providers: scripted({ questions }) });
    engines.push(search);
    await search.ready();
    expect((await search.search('Where?')).items.length).toBeGreaterThan(0);

    writeFileSync(commit, '{"files": 3}');
    const other = new NodeSearch(NodeConfig.fromMainFolder(root), { providers: scripted({ questions }) });
    engines.push(other);
    await expect(other.ready()).rejects.toThrow(/COMMIT\.json is unreadable/);
    unlinkSync(commit);
  });

  it('instances are independent', async () => {
    const { root, search } = await curieEngine({ questions });
    const other = new NodeSearch(NodeConfig.fromMainFolder(root), { providers: scripted({ questions }) });
    engines.push(other);
    await Promise.all([search.ready(), other.ready()]);
    search.close();
    expect((await other.search('Where?')).items.length).toBeGreaterThan(0);
  });
});

describe('many questions in flight', () => {
  it('60 concurrent questions, finishing in scrambled order, each get their own answer', async () => {
    const vectors = [
      [1, 0, 0, 0],
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0.5, 0.5, 0, 0],
      [0.2, 0.1, 0.7, 0],
    ];
    const names = ['Marie Curie', 'Warsaw', 'Paris', 'Pierre Curie', 'Poland', 'The Curies'];
    const questions: Script['questions'] = {};
    for (let i = 0; i < 60; i++) {
      questions[`question ${i}`] = {
        vector: vectors[i % vectors.length]!,
        elements: [names[i % names.length]!],
      };
    }
    const script: Script = {
      questions,
      answer: (a) => `${a.question} :: ${a.context.length}`,
      // Deterministic scramble: later questions often finish first.
      latencyMs: (q, call) => ((Number(q.split(' ')[1]) * 37 + (call === 'embed' ? 11 : 3)) % 20) + 1,
    };
    const { search } = await curieEngine(script, { HNSW_results: 3, cross_node: 4 });
    const sequential = new Map<string, Awaited<ReturnType<NodeSearch['answer']>>>();
    for (const q of Object.keys(questions)) sequential.set(q, await search.answer(q));

    const log: CallLog[] = [];
    const { search: concurrent } = await curieEngine(script, { HNSW_results: 3, cross_node: 4 }, log);
    const results = await Promise.all(Object.keys(questions).map((q) => concurrent.answer(q)));
    results.forEach((r, i) => {
      const q = `question ${i}`;
      expect(r).toEqual(sequential.get(q));
      expect(r.response.startsWith(`${q} ::`)).toBe(true);
    });
    // All 60 were in flight together: every query call started before the first answer call ended.
    const firstAnswerEnd = Math.min(...log.filter((l) => l.call === 'answer').map((l) => l.end));
    expect(log.filter((l) => l.call === 'query' && l.start < firstAnswerEnd)).toHaveLength(60);
    // Not all alike: the questions really retrieve different contexts.
    expect(new Set(results.map((r) => r.retrievalInfo)).size).toBeGreaterThan(3);
  });
});

describe('library arguments', () => {
  it('a wrong argument to NodeConfig.fromMainFolder, new NodeSearch or runBuild is an InvalidArgumentError naming it', async () => {
    const { InvalidArgumentError } = await import('../../ts/errors.js');
    const { runBuild } = await import('../../ts/indexing/pipeline.js');
    expect(() => NodeConfig.fromMainFolder(undefined as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => NodeConfig.fromMainFolder('  ')).toThrow(
      'NodeConfig.fromMainFolder(folder): folder must be the path of a project folder (a non-empty string), got "  "',
    );
    expect(() => new NodeSearch(undefined as unknown as NodeConfig)).toThrow(
      'new NodeSearch(config): config must be a NodeConfig (NodeConfig.fromMainFolder(dir)), got undefined',
    );
    expect(() => new NodeSearch({} as NodeConfig)).toThrow(InvalidArgumentError);
    const dir = tempDir();
    await writeSearchConfig(dir, curieSpec());
    expect(() => new NodeSearch(NodeConfig.fromMainFolder(dir), { watchIntervalMs: -1 })).toThrow(
      'watchIntervalMs must be a non-negative number of milliseconds, got -1',
    );
    await expect(runBuild({} as Parameters<typeof runBuild>[0])).rejects.toThrow(
      'runBuild(options): options.folder must be the path of a project folder (a non-empty string), got undefined',
    );
  });
});
