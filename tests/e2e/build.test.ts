/**
 * `noderag build` end to end with the offline `local` provider: the real CLI spawned on
 * temporary projects. Covers the first run, the layout of docs/method.md §5 (read back through
 * DuckDB), "up to date", the no-terminal refusal, unreadable inputs, a changed file, a
 * Chinese corpus and byte-identical rebuilds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Counters } from '../../ts/model/types.js';
import {
  createProject,
  duckdbQuery,
  INDEX_FILES,
  LAYOUT_FILES,
  type Project,
  REPO_ROOT,
  runCli,
} from '../helpers/project.js';

function exampleFiles(name: string, count?: number): Record<string, string> {
  const dir = join(REPO_ROOT, 'examples', name, 'input');
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort().slice(0, count)) files[f] = readFileSync(join(dir, f), 'utf8');
  return files;
}

const projects: Project[] = [];
async function project(options: Parameters<typeof createProject>[0]): Promise<Project> {
  const p = await createProject(options);
  projects.push(p);
  return p;
}

afterAll(async () => {
  for (const p of projects) await p.remove();
});

describe('build: first run, layout, up to date', () => {
  it('writes Node_config.yaml on the first run and exits 3', async () => {
    const p = await project({ noConfig: true });
    const r = await runCli(['build', '-f', p.root]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`Created ${p.path('Node_config.yaml')}`);
    expect(p.exists('Node_config.yaml')).toBe(true);
  });

  let built: Project;
  it('builds the observatory corpus and leaves every file of the layout', async () => {
    built = await project({ files: exampleFiles('observatory') });
    const r = await built.build();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('State tree:');
    expect(r.stdout).toMatch(/Build finished in [\d.]+ s \(generation 1\)/);
    for (const f of LAYOUT_FILES) expect(built.exists(f), f).toBe(true);
    expect(built.exists('cache/.staging/COMMIT.json')).toBe(false);
    expect(built.exists('info/build.lock')).toBe(false);

    const state = await built.readJson<Record<string, unknown>>('info/state.json');
    expect(state).toMatchObject({
      format_version: 1,
      current_state: 'FINISHED',
      error_type: 'NO_ERROR',
      generation: 1,
      last_finished_generation: 1,
      is_incremental: false,
      embedding: { provider: 'local', model: 'feature-hash', dim: 64 },
    });
    const hashes = await built.readJson<Record<string, string>>('info/document_hash.json');
    expect(Object.keys(hashes)).toEqual(Object.keys(exampleFiles('observatory')).sort());
    const log = await built.readText('info/info.log');
    expect(log).toMatch(/INFO Text pipeline \(generation 1\) finished in [\d.]+ s/);
    expect(log).toMatch(/INFO Build finished in [\d.]+ s \(generation 1\)/);
  });

  it('writes tables DuckDB reads, with counts that match indices.json', async () => {
    const c = await built.readJson<Counters>('info/indices.json');
    const q = async (file: string, sql = 'count(*) AS n') =>
      duckdbQuery(`SELECT ${sql} FROM read_parquet('${built.path('cache', file)}')`);
    expect((await q('documents.parquet'))[0]!.n).toBe(String(c.document_index));
    expect((await q('text.parquet'))[0]!.n).toBe(String(c.text_unit_index));
    expect((await q('semantic_units.parquet'))[0]!.n).toBe(String(c.semantic_unit_index));
    expect((await q('entities.parquet'))[0]!.n).toBe(String(c.entity_index));
    expect((await q('relationship.parquet'))[0]!.n).toBe(String(c.relation_index));
    expect((await q('attributes.parquet'))[0]!.n).toBe(String(c.attribute_index));
    expect((await q('high_level_elements.parquet'))[0]!.n).toBe(String(c.high_level_element_index));
    expect(c.document_index).toBe(12);
    expect(c.semantic_unit_index).toBeGreaterThan(12);
    expect(c.attribute_index).toBeGreaterThan(0);
    expect(c.high_level_element_index).toBeGreaterThan(0);

    // Every per-type table has its constant type column; vectors have length dim.
    const units = await q('semantic_units.parquet', 'DISTINCT type, len(embedding) AS d');
    expect(units).toEqual([{ type: 'semantic_unit', d: '64' }]);
    // graph_nodes holds every node of every per-type table, and edges point at nodes.
    const nodes = await duckdbQuery(
      `SELECT type, count(*) AS n FROM read_parquet('${built.path('cache/graph_nodes.parquet')}') GROUP BY type ORDER BY type`,
    );
    const byType = Object.fromEntries(nodes.map((r) => [r.type, Number(r.n)]));
    expect(byType).toEqual({
      attribute: c.attribute_index,
      entity: c.entity_index,
      high_level_element: c.high_level_element_index,
      high_level_element_title: c.high_level_element_index,
      relationship: c.relation_index,
      semantic_unit: c.semantic_unit_index,
      text: c.text_unit_index,
    });
    const dangling = await duckdbQuery(
      `SELECT count(*) AS n FROM read_parquet('${built.path('cache/graph_edges.parquet')}') e
       WHERE e.source >= e.target OR e.source NOT IN (SELECT id FROM read_parquet('${built.path('cache/graph_nodes.parquet')}'))
          OR e.target NOT IN (SELECT id FROM read_parquet('${built.path('cache/graph_nodes.parquet')}'))`,
    );
    expect(dangling[0]!.n).toBe('0');
    const idMap = await duckdbQuery(
      `SELECT count(*) AS n, sum(CASE WHEN retired THEN 1 ELSE 0 END) AS r FROM read_parquet('${built.path('cache/id_map.parquet')}')`,
    );
    expect(Number(idMap[0]!.n)).toBe(
      c.text_unit_index + c.semantic_unit_index + c.attribute_index + c.high_level_element_index,
    );
    const sim = await q('hnsw_graph.parquet');
    expect(Number(sim[0]!.n)).toBeGreaterThan(0);

    const lines = (await built.readText('cache/text_decomposition.jsonl')).trim().split('\n');
    expect(lines).toHaveLength(c.text_unit_index);
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual([
      'text_hash_id',
      'text_id',
      'generation',
      'status',
      'response',
      'units',
      'dropped',
      'error',
    ]);
  });

  it('says "Index is up to date." on a second run and changes nothing', async () => {
    const before = await readFile(built.path('cache/graph_nodes.parquet'));
    const r = await built.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Index is up to date.');
    expect(await readFile(built.path('cache/graph_nodes.parquet'))).toEqual(before);
  });

  it('refuses to prompt without a terminal and without --yes (exit 2)', async () => {
    const p = await project({ files: { 'a.txt': 'Ada Lovelace met Charles Babbage in London in 1833.' } });
    const r = await runCli(['build', '-f', p.root]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('State tree:');
    expect(r.stderr).toContain(
      'Refusing to prompt: not a terminal. Re-run with --yes to build non-interactively.',
    );
    expect(p.exists('info/state.json')).toBe(false);
  });

  it('indexes a changed file again: the old version leaves the index (docs/method.md §4.5)', async () => {
    const p = await project({ files: exampleFiles('observatory', 3) });
    expect((await p.build()).code).toBe(0);
    const first = Object.keys(exampleFiles('observatory', 1))[0]!;
    const oldText = exampleFiles('observatory', 1)[first]!;
    await p.writeInput(first, 'Completely different text about Jupiter and Saturn.');
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`changed: ${first}`);
    expect(r.stdout).toContain(
      'Sync: 1 changed document is indexed again (the old version is removed; unchanged chunks are kept).',
    );
    expect(r.stdout).toContain('1 changed, 0 deleted');
    const texts = await duckdbQuery(`SELECT context FROM read_parquet('${p.path('cache', 'text.parquet')}')`);
    const contexts = texts.map((t) => String(t.context));
    expect(contexts).toContain('Completely different text about Jupiter and Saturn.');
    expect(contexts.some((c) => oldText.includes(c))).toBe(false);
    expect(await p.readJson('info/document_hash.json')).toHaveProperty(first);
    expect(await p.readText('info/info.log')).toContain('sync: 1 changed document is indexed again');
  });
});

describe('build: unreadable inputs are reported by name and skipped', () => {
  it('skips corrupt, binary, empty and invalid UTF-8 files and indexes the rest', async () => {
    const p = await project({
      files: {
        'good.txt': 'Grace Hopper worked on the Harvard Mark I in 1944.',
        'empty.txt': '',
        'latin1.txt': Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x6f, 0x69, 0x72, 0xff, 0xfe, 0x0a]),
        'broken.docx': Buffer.from('PK\u0003\u0004 this is not really a zip archive'),
        'binary.pdf': Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) % 256)),
      },
    });
    const r = await p.build();
    expect(r.code).toBe(0);
    const out = r.stdout + r.stderr;
    for (const name of ['empty.txt', 'latin1.txt', 'broken.docx', 'binary.pdf']) expect(out).toContain(name);
    expect(out).toContain('not valid UTF-8');
    const hashes = await p.readJson<Record<string, string>>('info/document_hash.json');
    expect(Object.keys(hashes)).toEqual(['good.txt']);
    const log = await p.readText('info/info.log');
    for (const name of ['empty.txt', 'latin1.txt', 'broken.docx', 'binary.pdf']) {
      expect(log).toMatch(new RegExp(`WARN skipped ${name.replace('.', '\\.')}: `));
    }
    // Their contents would fail again: the next run leaves them out until they change.
    const again = await p.build();
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 new, 0 duplicate, 0 renamed, 0 changed, 0 deleted, 4 not indexable');
    expect(again.stdout).toContain('Index is up to date.');
  });

  it('fails a first build when no document can be read, naming them', async () => {
    const p = await project({ files: { 'empty.md': '   \n', 'bad.txt': Buffer.from([0xc3, 0x28]) } });
    const r = await p.build();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('bad.txt');
    expect(r.stderr).toContain('empty.md');
    const state = await p.readJson<Record<string, unknown>>('info/state.json');
    expect(state).toMatchObject({ current_state: 'Document pipeline', error_type: 'ERROR' });
  });
});

describe('build: Chinese corpus and determinism', () => {
  it('builds the Chinese example corpus', async () => {
    const p = await project({
      files: exampleFiles('chinese'),
      language: 'Chinese',
      config: { chunk_size: 128 },
    });
    const r = await p.build();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const entities = await duckdbQuery(
      `SELECT context FROM read_parquet('${p.path('cache/entities.parquet')}')`,
    );
    const names = entities.map((e) => e.context as string);
    expect(names).toContain('林若兰');
    const decomposition = await p.readText('cache/text_decomposition.jsonl');
    expect(decomposition).toContain('青山天文台'); // non-ASCII written as is
  });

  it('gives byte-identical tables and vector index for the same corpus and config', async () => {
    const files = exampleFiles('observatory', 6);
    const a = await project({ files });
    const b = await project({ files });
    expect((await a.build()).code).toBe(0);
    expect((await b.build()).code).toBe(0);
    for (const f of INDEX_FILES) {
      const x = await readFile(a.path('cache', f));
      const y = await readFile(b.path('cache', f));
      expect(x.equals(y), f).toBe(true);
    }
    expect(await a.readText('info/indices.json')).toBe(await b.readText('info/indices.json'));
  });

  it('indexes a file added later without touching the earlier ones', async () => {
    const files = exampleFiles('observatory', 4);
    const p = await project({ files });
    expect((await p.build()).code).toBe(0);
    const before = await p.readJson<Record<string, number>>('info/indices.json');
    const extra = exampleFiles('observatory')['05-comet-pryce.md']!;
    await p.writeInput('05-comet-pryce.md', extra);
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 new');
    const state = await p.readJson<Record<string, unknown>>('info/state.json');
    expect(state).toMatchObject({ generation: 2, last_finished_generation: 2, is_incremental: true });
    const after = await p.readJson<Record<string, number>>('info/indices.json');
    expect(after.document_index).toBe(before.document_index! + 1);
    const docs = await duckdbQuery(
      `SELECT path, generation FROM read_parquet('${p.path('cache/documents.parquet')}') ORDER BY doc_id`,
    );
    expect(docs.at(-1)).toEqual({ path: '05-comet-pryce.md', generation: 2 });
    expect(docs.slice(0, 4).every((d) => d.generation === 1)).toBe(true);
  });

  it('the crash hook kills the build only after the named stage (sanity of the hook)', async () => {
    const p = await project({ files: { 'a.md': 'Nikola Tesla moved to New York in 1884.' } });
    const r = await p.buildWithHooks({ crashAt: 'Graph pipeline' });
    expect(r.signal).toBe('SIGKILL');
    const state = await p.readJson<Record<string, unknown>>('info/state.json');
    expect(state.current_state).toBe('Attribute pipeline');
    const resumed = await p.build();
    expect(resumed.code).toBe(0);
  });
});

describe('build: renames, copies, queued documents, embedding changes', () => {
  it('moves a renamed document and shares the chunks of a copy, without new chunks', async () => {
    const files = exampleFiles('observatory', 3);
    const [a, b] = Object.keys(files);
    const p = await project({ files });
    expect((await p.build()).code).toBe(0);
    const before = await p.readJson<Counters>('info/indices.json');
    await p.removeInput(a!);
    await p.writeInput(`moved/${a}`, files[a!]!);
    await p.writeInput('copy-of-b.md', files[b!]!);
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 duplicate, 1 renamed, 0 changed, 0 deleted');
    // The Document stage's summary counts the copy as the tree does.
    expect(r.stdout).toContain('0 documents added (and 1 duplicate), 1 renamed');
    const after = await p.readJson<Counters>('info/indices.json');
    expect(after).toEqual({ ...before, document_index: before.document_index + 1 });
    const hashes = await p.readJson<Record<string, string>>('info/document_hash.json');
    expect(Object.keys(hashes)).toEqual([b!, '03-edith-pryce.md', 'copy-of-b.md', `moved/${a}`].sort());
    const docs = await duckdbQuery(
      `SELECT doc_id, path, text_id FROM read_parquet('${p.path('cache/documents.parquet')}') ORDER BY doc_id`,
    );
    expect(docs.map((d) => d.path)).toEqual([`moved/${a}`, b, '03-edith-pryce.md', 'copy-of-b.md']);
    expect(docs[3]!.text_id).toEqual(docs[1]!.text_id);
  });

  it('indexes documents queued while a cycle was unfinished in a follow-up cycle of the same run', async () => {
    const files = exampleFiles('observatory', 2);
    const p = await project({ files });
    const killed = await p.buildWithHooks({ crashAt: 'Document pipeline' });
    expect(killed.signal).toBe('SIGKILL');
    await p.writeInput('late.md', "Rosalind Franklin photographed DNA at King's College London in 1952.");
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('queued (indexed by a follow-up cycle after generation 1): late.md');
    expect(r.stdout).toMatch(/Build finished in [\d.]+ s \(generation 2\)/);
    const docs = await duckdbQuery(
      `SELECT path, generation FROM read_parquet('${p.path('cache/documents.parquet')}') ORDER BY doc_id`,
    );
    expect(docs.at(-1)).toEqual({ path: 'late.md', generation: 2 });
    expect(await p.readJson('info/state.json')).toMatchObject({ current_state: 'FINISHED', generation: 2 });
  });

  it('says when space, m or ef changed but nothing is to be indexed (the vector index keeps the old ones)', async () => {
    const p = await project({ files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' } });
    expect((await p.build()).code).toBe(0);
    await p.writeConfig({ config: { ...p.options.config, m: 16 } });
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Index is up to date.');
    expect(r.stderr).toContain(
      "warning: config.space, m or ef differ from the vector index's (space l2→l2, m 50→16, ef 200→200): they apply when the vector index is next built",
    );
    expect(r.stderr).toContain('--rebuild` (cached model replies are reused)');
  });

  it('says when chunk_size, language or the chat model changed since the documents were indexed', async () => {
    const p = await project({ files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' } });
    expect((await p.build()).code).toBe(0);
    const recorded = (await p.readJson('info/build_settings.json')) as { chunk_size: number };
    expect(recorded).toMatchObject({ language: 'English' });
    expect((recorded as unknown as { chat_model: string }).chat_model).toMatch(/^local\//);
    const size = recorded.chunk_size;
    await p.writeConfig({ config: { ...p.options.config, chunk_size: 64 } });
    const idle = await p.build();
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain('Index is up to date.');
    expect(idle.stderr).toContain(
      `warning: config.chunk_size ${size} → 64 since the indexed documents were indexed: it applies to documents indexed from now on; \``,
    );
    expect(idle.stderr).toContain(
      '--rebuild` applies it to every document (cached model replies are reused)',
    );
    await p.writeInput('b.md', 'Lise Meitner worked in Berlin.');
    const sync = await p.build();
    expect(sync.code).toBe(0);
    expect(sync.stderr).toContain(
      'this build applies it to the documents it indexes, the others keep theirs',
    );
    // The index now holds both chunk sizes: the next build says so again, until a rebuild.
    expect((await p.build()).stderr).toContain(`config.chunk_size ${size} → 64`);
    expect((await p.build(['--rebuild'])).code).toBe(0);
    expect((await p.build()).stderr).not.toContain('chunk_size');
  });

  it('a changed config.dim is named as such when it refuses', async () => {
    const p = await project({ files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' } });
    expect((await p.build()).code).toBe(0);
    await p.writeConfig({ config: { ...p.options.config, dim: 32 } });
    await p.writeInput('b.md', 'Lise Meitner worked in Berlin.');
    const r = await p.build();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'embeddings were made with local/feature-hash (64), the config asks for config.dim 32;',
    );
  });

  it('refuses to mix embedding models (exit 2) and names the recorded one', async () => {
    const p = await project({ files: { 'a.md': 'Marie Curie worked in Paris with Pierre Curie.' } });
    expect((await p.build()).code).toBe(0);
    await p.writeConfig({ embedding: { embedding_model_name: 'another-model' } });
    await p.writeInput('b.md', 'Lise Meitner worked in Berlin.');
    const r = await p.build();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'embeddings were made with local/feature-hash (64), the config asks for embedding_config local/another-model; changing the embedding model needs a rebuild from scratch',
    );
  });
});

describe('build: refusals and a damaged index', () => {
  it('says there is nothing to index on a first build without documents (exit 1)', async () => {
    const p = await project({ files: { 'notes.csv': 'a,b' } });
    const r = await p.build();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no supported documents in input/');
  });

  it('refuses to run while another build holds the lock (exit 2)', async () => {
    const p = await project({ files: { 'a.md': 'Alan Turing worked at Bletchley Park.' } });
    await mkdir(p.path('info'), { recursive: true });
    await writeFile(
      p.path('info', 'build.lock'),
      `${JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() })}\n`,
    );
    const r = await p.build();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`another build (pid ${process.pid}) is running`);
  });

  it('rebuilds an unusable vector index from the stored vectors, and stops on a missing table', async () => {
    const p = await project({ files: exampleFiles('observatory', 3) });
    expect((await p.build()).code).toBe(0);
    const edgesBefore = await readFile(p.path('cache/hnsw_graph.parquet'));
    await writeFile(p.path('cache/HNSW.bin'), 'not an index');
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('resumes here');
    expect(await readFile(p.path('cache/hnsw_graph.parquet'))).toEqual(edgesBefore);
    expect(await p.readText('info/info.log')).toContain('rebuilding the vector index');

    await rm(p.path('cache/entities.parquet'));
    const damaged = await p.build();
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toContain(
      'index damaged: cache/entities.parquet is missing; restore it or rebuild from scratch',
    );
  });

  it('stores vectors the vector index finds again (every vector finds itself with a wide beam)', async () => {
    const p = await project({ files: exampleFiles('observatory', 4) });
    expect((await p.build()).code).toBe(0);
    const { VectorIndex } = await import('../../ts/vector/index.js');
    const rows = await duckdbQuery(
      `SELECT id FROM read_parquet('${p.path('cache/id_map.parquet')}') ORDER BY id`,
    );
    const index = await VectorIndex.load(p.path('cache/HNSW.bin'), {
      expectedDim: 64,
      expectedCount: rows.length,
    });
    try {
      const vectors: Float32Array[] = [];
      for (const f of ['text', 'semantic_units', 'attributes', 'high_level_elements']) {
        const order = f === 'text' ? 'text_id' : 'human_readable_id';
        const r = await duckdbQuery(
          `SELECT embedding FROM read_parquet('${p.path('cache', `${f}.parquet`)}') ORDER BY ${order}`,
        );
        for (const x of r) vectors.push(Float32Array.from(x.embedding as number[]));
      }
      expect(vectors).toHaveLength(rows.length);
      vectors.forEach((v, label) => {
        const hit = index.search(v, 1, 200);
        // Identical texts give identical vectors: the hit may be a twin, but at distance 0.
        expect(hit.distances[0], `label ${label}`).toBeLessThan(1e-5);
      });
    } finally {
      index.close();
    }
  });
});
