/**
 * embedding_config.query_prefix / document_prefix end to end: what the real `openai` SDK sends
 * to a fake OpenAI-compatible server on 127.0.0.1, the response cache keyed on the prefixed
 * text, the keys as the config reads them, and the document prefix as part of the embedding
 * identity a build records in info/state.json (a build refuses to mix two).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { ConfigError } from '../../ts/errors.js';
import { type CreateProvidersOptions, createProviders } from '../../ts/llm/create-providers.js';
import { featureHashBatch } from '../../ts/llm/local/feature-hash.js';
import { NodeSearch } from '../../ts/search/node-search.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../helpers/fake-providers/index.js';
import { createProject, type Project } from '../helpers/project.js';

const KEY = 'sk-test-prefix-0123456789';
/** Inputs here are far below the 8,000-token cap: a cheap counter keeps the Rust core out. */
const tokenCounter = { countTokens: (s: string) => Buffer.byteLength(s) };

let server: FakeOpenAIServer;
let dir: string;
const projects: Project[] = [];

beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server.close();
  for (const p of projects) await p.remove();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-prefix-'));
  server.reset();
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function configWith(embedding: Record<string, unknown>): NodeConfig {
  return NodeConfig.fromData(
    {
      model_config: { service_provider: 'openai', base_url: server.baseUrl, api_keys: KEY },
      embedding_config: { service_provider: 'openai', base_url: server.baseUrl, api_keys: KEY, ...embedding },
      config: { dim: 64 },
    },
    dir,
    { env: {} },
  );
}

function providersFor(embedding: Record<string, unknown>, options: Partial<CreateProvidersOptions> = {}) {
  return createProviders(configWith(embedding), {
    mode: 'build',
    tokenCounter,
    cacheDir: join(dir, 'cache', 'response_cache'),
    ...options,
  });
}

/** The `input` of every embeddings request the server received, in order. */
function sentInputs(): string[][] {
  return server.requests
    .filter((r) => r.route === 'embeddings')
    .map((r) => {
      const input = (r.body as { input: string | string[] }).input;
      return typeof input === 'string' ? [input] : input;
    });
}

const E5 = { query_prefix: 'query: ', document_prefix: 'passage: ' };

describe('what reaches the embedding server', () => {
  it('embedDocuments sends "passage: " + text, embedQuery sends "query: " + question', async () => {
    const p = providersFor(E5, { cacheDir: null });
    const docs = await p.embedDocuments(['Marie Curie was born in Warsaw.', 'Radium']);
    const q = await p.embedQuery('Where was Marie Curie born?');
    expect(sentInputs()).toEqual([
      ['passage: Marie Curie was born in Warsaw.', 'passage: Radium'],
      ['query: Where was Marie Curie born?'],
    ]);
    // The vectors are those of the prefixed texts (the fake server feature-hashes its input).
    expect(Array.from(docs.vectors)).toEqual(
      Array.from(featureHashBatch(['passage: Marie Curie was born in Warsaw.', 'passage: Radium'], 64)),
    );
    expect(Array.from(q)).toEqual(Array.from(featureHashBatch(['query: Where was Marie Curie born?'], 64)));
    p.close();
  });

  it('with empty prefixes (the default) texts and questions are sent unchanged', async () => {
    const p = providersFor({}, { cacheDir: null });
    await p.embedDocuments(['alpha', 'beta']);
    await p.embedQuery('Who discovered radium?');
    expect(sentInputs()).toEqual([['alpha', 'beta'], ['Who discovered radium?']]);
    p.close();
  });

  it('each prefix applies to its own side only', async () => {
    const p = providersFor({ query_prefix: 'search_query: ' }, { cacheDir: null });
    await p.embedDocuments(['alpha']);
    await p.embedQuery('alpha');
    expect(sentInputs()).toEqual([['alpha'], ['search_query: alpha']]);
    p.close();
  });
});

describe('response cache', () => {
  it('is keyed on the prefixed text: another document_prefix misses, the same one hits', async () => {
    const a = providersFor({ document_prefix: 'passage: ' });
    await a.embedDocuments(['alpha', 'beta']);
    a.close();
    expect(server.count('embeddings')).toBe(1);

    const b = providersFor({ document_prefix: 'search_document: ' });
    await b.embedDocuments(['alpha', 'beta']);
    expect(b.stats().embedding).toMatchObject({ embeddingCacheHits: 0, embeddedTexts: 2 });
    b.close();
    expect(sentInputs()).toEqual([
      ['passage: alpha', 'passage: beta'],
      ['search_document: alpha', 'search_document: beta'],
    ]);

    const c = providersFor({ document_prefix: 'passage: ' });
    const again = await c.embedDocuments(['beta', 'alpha']);
    expect(c.stats().embedding).toMatchObject({ embeddingCacheHits: 2, embeddedTexts: 0 });
    expect(Array.from(again.vectors)).toEqual(
      Array.from(featureHashBatch(['passage: beta', 'passage: alpha'], 64)),
    );
    c.close();
    expect(server.count('embeddings')).toBe(2);
  });

  it('an unprefixed text and the same text with a prefix are different entries', async () => {
    const a = providersFor({});
    await a.embedDocuments(['alpha']);
    a.close();
    const b = providersFor({ document_prefix: 'passage: ' });
    await b.embedDocuments(['alpha']);
    b.close();
    expect(sentInputs()).toEqual([['alpha'], ['passage: alpha']]);
  });
});

describe('the config keys', () => {
  it('default to empty; null and an empty value read as empty', () => {
    expect(configWith({}).embedding_config).toMatchObject({ query_prefix: '', document_prefix: '' });
    expect(configWith({ query_prefix: null, document_prefix: null }).embedding_config).toMatchObject({
      query_prefix: '',
      document_prefix: '',
    });
    const fromYaml = NodeConfig.fromYaml(
      'model_config:\n  service_provider: local\nembedding_config:\n  service_provider: local\n  query_prefix:\n  document_prefix: "passage: "\nconfig:\n  dim: 64\n',
      dir,
      { env: {} },
    );
    expect(fromYaml.embedding_config.query_prefix).toBe('');
    expect(fromYaml.embedding_config.document_prefix).toBe('passage: ');
  });

  it('keeps the prefix exactly, trailing space included', () => {
    expect(configWith({ query_prefix: 'query: ' }).embedding_config.query_prefix).toBe('query: ');
  });

  it('a non-string prefix is a problem naming the key', () => {
    try {
      configWith({ query_prefix: 5, document_prefix: ['passage: '] });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).problems).toEqual([
        'embedding_config.query_prefix: expected a string (may be empty), got 5',
        'embedding_config.document_prefix: expected a string (may be empty), got a list',
      ]);
    }
  });
});

describe('builds and searches', () => {
  async function project(options: Parameters<typeof createProject>[0]): Promise<Project> {
    const p = await createProject(options);
    projects.push(p);
    return p;
  }

  it('a build embeds every text with the document prefix and records it; search embeds with the query prefix', async () => {
    const p = await project({
      files: { 'a.md': 'Marie Curie was born in Warsaw. She discovered radium in Paris with Pierre Curie.' },
      provider: { openaiBaseUrl: server.baseUrl },
      embedding: E5,
    });
    const r = await p.build();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const inputs = server.requests
      .filter((q) => q.route === 'embeddings')
      .flatMap((q) => (q.body as { input: string[] }).input);
    expect(inputs.length).toBeGreaterThan(0);
    for (const text of inputs) expect(text.startsWith('passage: ')).toBe(true);
    expect((await p.readJson<{ embedding: unknown }>('info/state.json')).embedding).toEqual({
      provider: 'openai',
      model: 'text-embedding-3-small',
      dim: 64,
      document_prefix: 'passage: ',
    });

    server.reset();
    const search = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }));
    try {
      await search.search('Where was Marie Curie born?');
    } finally {
      search.close();
    }
    expect(
      server.requests
        .filter((q) => q.route === 'embeddings')
        .map((q) => (q.body as { input: unknown }).input),
    ).toEqual([['query: Where was Marie Curie born?']]);
  });

  it('a project without prefixes records none in state.json', async () => {
    const p = await project({ files: { 'a.md': 'Marie Curie worked in Paris.' } });
    expect((await p.build()).code).toBe(0);
    expect((await p.readJson<{ embedding: unknown }>('info/state.json')).embedding).toEqual({
      provider: 'local',
      model: 'feature-hash',
      dim: 64,
    });
  });

  it('refuses (exit 2) to add texts with another document_prefix, naming the recorded one', async () => {
    const p = await project({
      files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' },
      embedding: { document_prefix: 'passage: ' },
    });
    expect((await p.build()).code).toBe(0);
    await p.writeConfig({ embedding: { document_prefix: 'search_document: ' } });
    await p.writeInput('b.md', 'Lise Meitner worked in Berlin.');
    const r = await p.build();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'embeddings were made with local/feature-hash (64, document_prefix "passage: "), the config asks for embedding_config.document_prefix "search_document: "; changing the embedding model needs a rebuild from scratch',
    );
    // Nothing was indexed with the new prefix.
    expect(
      (await p.readJson<{ embedding: { document_prefix?: string } }>('info/state.json')).embedding
        .document_prefix,
    ).toBe('passage: ');
  });

  it('adds texts with the same document_prefix (the recorded prefix survives reading state.json)', async () => {
    const p = await project({
      files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' },
      embedding: { document_prefix: 'passage: ' },
    });
    expect((await p.build()).code).toBe(0);
    await p.writeInput('b.md', 'Lise Meitner worked in Berlin.');
    const r = await p.build();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await p.readJson('info/state.json')).toMatchObject({
      generation: 2,
      embedding: { document_prefix: 'passage: ' },
    });
  });

  it('a document_prefix set on a project built without one is refused (exit 2)', async () => {
    const p = await project({ files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' } });
    expect((await p.build()).code).toBe(0);
    await p.writeConfig({ embedding: { document_prefix: 'passage: ' } });
    await p.writeInput('b.md', 'Lise Meitner worked in Berlin.');
    const r = await p.build();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'embeddings were made with local/feature-hash (64), the config asks for embedding_config.document_prefix "passage: ";',
    );
  });

  it('a changed query_prefix needs no rebuild', async () => {
    const p = await project({
      files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' },
      embedding: { query_prefix: 'query: ' },
    });
    expect((await p.build()).code).toBe(0);
    await p.writeConfig({ embedding: { query_prefix: 'search_query: ' } });
    await p.writeInput('b.md', 'Lise Meitner worked in Berlin.');
    const r = await p.build();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
