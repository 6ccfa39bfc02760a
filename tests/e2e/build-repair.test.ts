/**
 * `noderag build` on a damaged index (issue 18 item 1), with the offline `local` provider:
 * one flipped byte in HNSW.bin is found by the checksums at the start of the build and the
 * vector index is rebuilt from the stored vectors, byte-identical to the original; one
 * flipped byte in a table that cannot be re-derived stops the build naming the file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { keepFinishedGeneration } from '../../ts/index-io/finished-generation.js';
import { runBuild } from '../../ts/indexing/pipeline.js';
import { NodeSearch } from '../../ts/search/node-search.js';
import { createProject, type Project, REPO_ROOT, runCli } from '../helpers/project.js';
import { buildStoppedAfter } from '../helpers/stopped-build.js';

function exampleFiles(count: number): Record<string, string> {
  const dir = join(REPO_ROOT, 'examples', 'observatory', 'input');
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort().slice(0, count)) files[f] = readFileSync(join(dir, f), 'utf8');
  return files;
}

const projects: Project[] = [];
afterAll(async () => {
  for (const p of projects) await p.remove();
});

async function flipByte(p: Project, relative: string, fraction: number): Promise<void> {
  const bytes = await readFile(p.path(relative));
  const at = Math.floor(bytes.length * fraction);
  bytes[at] = bytes[at]! ^ 0x01;
  await writeFile(p.path(relative), bytes);
}

describe('build: a damaged index', () => {
  it('repairs a flipped byte in HNSW.bin instead of calling the index up to date', async () => {
    const p = await createProject({ files: exampleFiles(3) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    const original = await readFile(p.path('cache/HNSW.bin'));
    await flipByte(p, 'cache/HNSW.bin', 0.7);

    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('cache/HNSW.bin is damaged');
    expect(r.stdout).toMatch(/Build finished/);
    // Rebuilt from the stored vectors: the same bytes as before the damage.
    expect((await readFile(p.path('cache/HNSW.bin'))).equals(original)).toBe(true);
    expect(p.exists('cache/HNSW.bin.damaged')).toBe(true);
    // And the next build finds nothing to do.
    const again = await p.build();
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
  });

  it('a kept finished generation linking the damaged file is dropped when INIT repairs it', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    // A build killed between keeping the finished generation and starting its cycle.
    expect(await keepFinishedGeneration(p.root, 1)).toBeNull();
    await flipByte(p, 'cache/HNSW.bin', 0.7);
    // The repair, killed in its HNSW stage: search must not read the damaged file through
    // the set (a hard link to it) while the state says a cycle runs.
    const killed = await p.buildWithHooks({ crashAt: 'HNSW pipeline' });
    expect(killed.signal).toBe('SIGKILL');
    expect(p.exists('cache/HNSW.bin.damaged')).toBe(true);
    expect(p.exists('cache/finished')).toBe(false);
    expect((await p.build()).code).toBe(0);
  });

  it('declining after HNSW.bin was found damaged says it was moved aside, not that nothing changed', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    await flipByte(p, 'cache/HNSW.bin', 0.7);
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const stdout = Object.assign(new PassThrough(), { isTTY: true });
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d) => {
      err += d;
    });
    stdout.on('data', (d) => {
      if (String(d).includes('Start the build?')) input.end('n\n');
    });
    const code = await runBuild({ folder: p.root, handleSignals: false, stdin: input, stdout, stderr });
    expect(code).toBe(4);
    expect(err).toContain('Build cancelled; nothing changed.');
    expect(err).toContain(
      '(cache/HNSW.bin was found damaged and moved aside as *.damaged: the next build rebuilds it from the stored vectors.)',
    );
    expect(p.exists('cache/HNSW.bin.damaged')).toBe(true);
  });

  it('without info/state.json, search says the index is damaged as build does, not "not built yet"', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    await rm(p.path('info/state.json'));
    const search = new NodeSearch(NodeConfig.fromMainFolder(p.root));
    try {
      await expect(search.ready()).rejects.toThrow(
        'index damaged: info/state.json is missing, but cache/ holds an index (cache/checksums.json); restore it, or rebuild from scratch',
      );
    } finally {
      search.close();
    }
    const build = await p.build();
    expect(build.code).toBe(1);
    expect(build.stderr).toContain('index damaged: info/state.json is missing, but cache/ holds an index');
  });

  it('an up-to-date build writes a missing or damaged search graph snapshot again', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    const original = await readFile(p.path('cache/search_graph.bin'));
    for (const damage of ['remove', 'truncate'] as const) {
      if (damage === 'remove') await rm(p.path('cache/search_graph.bin'));
      else await writeFile(p.path('cache/search_graph.bin'), original.subarray(0, 1000));
      const r = await p.build();
      expect(r.code, damage).toBe(0);
      expect(r.stdout).toContain('Index is up to date.');
      expect((await readFile(p.path('cache/search_graph.bin'))).equals(original), damage).toBe(true);
      expect(await readFile(p.path('info/info.log'), 'utf8')).toContain(
        'cache/search_graph.bin was missing or stale: derived again from the graph tables',
      );
    }
    // Intact: nothing is committed.
    const state = await readFile(p.path('info/state.json'));
    expect((await p.build()).code).toBe(0);
    expect((await readFile(p.path('info/state.json'))).equals(state)).toBe(true);
  });

  it('stops on a flipped byte in a table that cannot be re-derived, naming it and the way out', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    await flipByte(p, 'cache/entities.parquet', 0.3);
    const r = await p.build();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('index damaged: cache/entities.parquet is damaged');
    expect(r.stderr).toContain('noderag build --rebuild');
  });

  it('stops when an index file a build reads back is missing or older, instead of taking it as empty', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    const firstIndices = await readFile(p.path('info/indices.json'));
    await p.writeInput('added.md', 'The Varga Institute opened its archive in 1987 to visiting scholars.');
    expect((await p.build()).code).toBe(0);
    const second = await readFile(p.path('info/indices.json'));
    await p.writeInput('later.md', 'The archive of the Varga Institute holds 1,200 letters.');
    // An older counter file would issue numbers already in the tables again.
    await writeFile(p.path('info/indices.json'), firstIndices);
    let r = await p.build();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('index damaged: info/indices.json is damaged');
    await writeFile(p.path('info/indices.json'), second);
    // A missing document_hash.json would index every document again.
    await rm(p.path('info/document_hash.json'));
    r = await p.build();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('index damaged: info/document_hash.json is missing');
  });

  it('refuses to start a first build over an index whose state.json is missing, naming the way out', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    await rm(p.path('info/state.json'));
    const r = await p.build();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('index damaged: info/state.json is missing, but cache/ holds an index');
    expect(r.stderr).toContain('--rebuild');
    const rebuilt = await p.build(['--rebuild']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
  });

  it('a damaged COMMIT.json stops a build with the way out, and build --rebuild takes it', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    await mkdir(p.path('cache/.staging'), { recursive: true });
    await writeFile(p.path('cache/.staging/COMMIT.json'), '{garbage');
    const r = await p.build();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('index damaged: cache/.staging/COMMIT.json is unreadable');
    expect(r.stderr).toContain(`noderag build -f ${p.root} --rebuild`);
    const rebuilt = await p.build(['--rebuild']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect((await p.build()).stdout).toContain('Index is up to date.');
  });

  it('vis over an unfinished build cycle draws it, and says it is unfinished and how to finish it', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    const finished = await runCli(['vis', '-f', p.root]);
    expect(finished.code).toBe(0);
    expect(finished.stderr).not.toContain('unfinished');
    await writeFile(p.path('input', 'added.md'), 'The Zeta Dome was built in 2001 by Ana Lopez.\n');
    expect(await buildStoppedAfter(p.root, 'Graph pipeline')).toBe(130);
    const r = await runCli(['vis', '-f', p.root]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Note: build generation 2 is unfinished (at the Attribute pipeline)');
    expect(r.stderr).toContain(`\`noderag build -f ${p.root}\` finishes it`);
    // The page of a vis stopped before its rename (a dead process) is swept; a live writer's is not.
    await writeFile(p.path('.index.html.4194300.0badf00d.tmp'), 'half a page');
    await writeFile(p.path(`.index.html.${process.pid}.0badf00d.tmp`), 'being written');
    expect((await runCli(['vis', '-f', p.root])).code).toBe(0);
    expect(p.exists('.index.html.4194300.0badf00d.tmp')).toBe(false);
    expect(p.exists(`.index.html.${process.pid}.0badf00d.tmp`)).toBe(true);
  });

  it('vis refuses a damaged or swapped table instead of drawing a wrong graph', async () => {
    const p = await createProject({ files: exampleFiles(2) });
    projects.push(p);
    expect((await p.build()).code).toBe(0);
    expect((await runCli(['vis', '-f', p.root])).code).toBe(0);
    // A folder where the page goes: said as such (it was a bare EISDIR from the rename).
    await rm(p.path('index.html'));
    await mkdir(p.path('index.html'));
    const folder = await runCli(['vis', '-f', p.root]);
    expect(folder.code).toBe(1);
    expect(folder.stderr.trim()).toBe(
      `error: ${p.path('index.html')} is a folder; vis writes its page there: rename or remove it`,
    );
    await rm(p.path('index.html'), { recursive: true });
    // graph_delta.json is written only by some builds (and by none before it existed): an
    // index without it, and without its checksum, is drawn.
    const checksums = JSON.parse(await readFile(p.path('cache/checksums.json'), 'utf8'));
    delete checksums.files['cache/graph_delta.json'];
    await writeFile(p.path('cache/checksums.json'), JSON.stringify(checksums));
    await rm(p.path('cache/graph_delta.json'), { force: true });
    const noDelta = await runCli(['vis', '-f', p.root]);
    expect(noDelta.code, noDelta.stderr).toBe(0);
    await flipByte(p, 'cache/graph_edges.parquet', 0.6);
    const r = await runCli(['vis', '-f', p.root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: index damaged: cache/graph_edges.parquet is damaged');
    expect(r.stderr).toContain('--rebuild');
  });
});
