/**
 * The index follows its input folder (docs/method.md §4.5): after adds, edits, deletes and
 * renames, the text, semantic-unit, entity and relationship tables and the base-graph edges
 * equal those of a clean build of the final folder, and nothing of a deleted document or a
 * removed chunk is left to retrieve. Offline (`local` provider), builds run in process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { comparableIndex } from '../../bench/lib/comparable-index.js';
import { NodeConfig } from '../../ts/config/node-config.js';
import { COMMUNITY_INPUTS_FILE, readCommunityInputs } from '../../ts/index-io/community-inputs.js';
import { IndexData } from '../../ts/index-io/index-data.js';
import { type BuildReport, runBuild } from '../../ts/indexing/pipeline.js';
import { createProviders, o200kTokenCounter } from '../../ts/llm/create-providers.js';
import { STAGES } from '../../ts/project/state.js';
import { LoadedIndex } from '../../ts/search/loaded-index.js';
import { NodeSearch, type SearchProviders } from '../../ts/search/node-search.js';
import { attributeId } from '../../ts/text/index.js';
import { startFakeOpenAI } from '../helpers/fake-providers/index.js';
import { CLI, createProject, indexFingerprints, type Project, REPO_ROOT } from '../helpers/project.js';
import { buildStoppedAfter } from '../helpers/stopped-build.js';

const DIM = 64;

function exampleFiles(): Record<string, string> {
  const dir = join(REPO_ROOT, 'examples', 'observatory', 'input');
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) files[f] = readFileSync(join(dir, f), 'utf8');
  return files;
}

// Every graph delta a stage stages is checked against a comparison of the whole graph.
IndexData.verifyGraphChanges = true;

const projects: Project[] = [];
async function project(files: Record<string, string>, chunkSize = 64): Promise<Project> {
  const p = await createProject({ files, config: { chunk_size: chunkSize, dim: DIM } });
  projects.push(p);
  return p;
}
afterAll(async () => {
  for (const p of projects) await p.remove();
});

async function build(root: string): Promise<{ code: number; out: string; report: BuildReport | null }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  stdout.on('data', (d) => {
    out += d;
  });
  stderr.on('data', (d) => {
    out += d;
  });
  let report: BuildReport | null = null;
  const code = await runBuild({
    folder: root,
    yes: true,
    handleSignals: false,
    stdout,
    stderr,
    onReport: (r) => {
      report = r;
    },
  });
  return { code, out, report };
}

const comparable = (root: string) => comparableIndex(root, DIM);

/** Every node id of the committed index (tables and graph) and the active vector labels. */
async function indexIds(root: string) {
  const index = new IndexData(root, DIM);
  const ids = new Set<string>();
  for (const m of [
    await index.texts(),
    await index.units(),
    await index.entities(),
    await index.relationships(),
    await index.attributes(),
    await index.elements(),
    await index.titles(),
  ])
    for (const id of m.keys()) ids.add(id);
  const graph = await index.graph();
  const active = (await index.idMap()).filter((r) => !r.retired).map((r) => r.node);
  return { ids, graphNodes: new Set(graph.nodes.keys()), graph, active };
}

/** Edits one sentence of a text: the first sentence that contains `word`. */
function editSentence(text: string, word: string, replacement: string): string {
  const i = text.indexOf(word);
  expect(i).toBeGreaterThan(0);
  const end = text.indexOf('.', i);
  return `${text.slice(0, i)}${replacement}${text.slice(end)}`;
}

describe('build syncs the index to its input folder', () => {
  it('adds, edits, deletes and renames: tables and base edges equal a clean build; nothing removed is retrievable', async () => {
    const all = exampleFiles();
    const names = Object.keys(all);
    const initial = Object.fromEntries(names.slice(0, 7).map((n) => [n, all[n]!]));
    const p = await project(initial);
    const first = await build(p.root);
    expect(first.code, first.out).toBe(0);
    const before = new IndexData(p.root, DIM);
    const textsBefore = new Map([...(await before.texts())].map(([id, t]) => [id, t.context]));
    const unitsBefore = new Map([...(await before.units())].map(([id, u]) => [id, u.context]));

    // Step 1: edit one sentence, delete one file, rename one, add one.
    const [a, b, c, d] = [names[1]!, names[2]!, names[3]!, names[7]!];
    const edited = editSentence(all[a]!, 'Okafor is best known', 'Okafor is remembered for her comet survey');
    await p.writeInput(a, edited);
    await p.removeInput(b);
    await rename(p.path('input', c), p.path('input', `moved-${c}`));
    await p.writeInput(d, all[d]!);
    const sync = await build(p.root);
    expect(sync.code, sync.out).toBe(0);
    expect(sync.out).toContain(`changed: ${a}`);
    expect(sync.out).toContain(`deleted: ${b}`);
    expect(sync.out).toContain(`renamed: ${c} → moved-${c}`);
    expect(sync.out).toMatch(
      /Sync: 1 changed document is indexed again .*; 1 deleted document is removed from the index\./,
    );
    const report = sync.report!;
    expect(report.added).toEqual([d]);
    expect(report.changed).toEqual([a]);
    expect(report.deleted).toEqual([b]);
    expect(report.renamed).toEqual([{ path: `moved-${c}`, from: c }]);
    expect(report.removedChunks.length).toBeGreaterThan(0);
    expect(report.removedUnits.length).toBeGreaterThan(0);
    // A changed document keeps its unchanged chunks: only the edited one is new.
    const after1 = await new IndexData(p.root, DIM).texts();
    const keptOfA = [...after1.values()].filter((t) => edited.includes(t.context) && t.generation === 1);
    expect(keptOfA.length).toBeGreaterThan(0);

    // Step 2: edit the edited file again, delete the added one, a copy of a file whose
    // original is then deleted (a rename), and a new file.
    await p.writeInput(a, editSentence(edited, 'studied mathematics', 'studied physics in Manchester'));
    await p.removeInput(d);
    await p.writeInput('copy.md', all[names[0]!]!);
    await p.removeInput(names[0]!);
    await p.writeInput(names[8]!, all[names[8]!]!);
    const sync2 = await build(p.root);
    expect(sync2.code, sync2.out).toBe(0);
    expect(sync2.report!.deleted).toEqual([d]);
    expect(sync2.report!.renamed).toEqual([{ path: 'copy.md', from: names[0]! }]);

    // Step 3: nothing changed: up to date.
    const idle = await build(p.root);
    expect(idle.code).toBe(0);
    expect(idle.out).toContain('Index is up to date.');

    // A clean build of the final folder.
    const finalFiles: Record<string, string> = {};
    for (const f of readdirSync(p.path('input')).sort())
      finalFiles[f] = readFileSync(p.path('input', f), 'utf8');
    const q = await project(finalFiles);
    const clean = await build(q.root);
    expect(clean.code, clean.out).toBe(0);
    const mine = await comparable(p.root);
    const theirs = await comparable(q.root);
    expect(mine.text).toEqual(theirs.text);
    expect(mine.units).toEqual(theirs.units);
    expect(mine.entities).toEqual(theirs.entities);
    expect(mine.relationships).toEqual(theirs.relationships);
    expect(mine.baseNodes).toEqual(theirs.baseNodes);
    expect(mine.baseEdges).toEqual(theirs.baseEdges);

    // Nothing removed is left: no row, no graph node, no edge, no active vector.
    const finalTexts = new Set(mine.text.map((t) => t.slice(0, t.indexOf(' '))));
    const removedChunks = [...textsBefore.keys()].filter((id) => !finalTexts.has(id));
    expect(removedChunks.length).toBeGreaterThan(0);
    const { ids, graphNodes, graph, active } = await indexIds(p.root);
    const removed = new Set([
      ...removedChunks,
      ...report.removedUnits,
      ...report.removedEntities,
      ...report.removedRelationships,
    ]);
    for (const id of removed) {
      if (ids.has(id)) continue; // re-added by step 2 (e.g. the copied file's chunks)
      expect(graphNodes.has(id), id).toBe(false);
      expect(active.includes(id), id).toBe(false);
    }
    for (const e of graph.edges.values()) {
      expect(graphNodes.has(e.source) && graphNodes.has(e.target), `${e.source}—${e.target}`).toBe(true);
    }
    for (const id of active) expect(ids.has(id), id).toBe(true);
    for (const id of graphNodes) expect(ids.has(id), id).toBe(true);

    // Retrieval: questions made of the removed chunks' sentences and units never bring
    // their text back.
    const removedTexts = removedChunks.filter((id) => !ids.has(id)).map((id) => textsBefore.get(id)!);
    // A removed unit's sentence may still be part of a kept chunk (an edited file keeps its
    // other sentences): only text no remaining chunk holds must be gone.
    const remainingTexts = mine.text.map((t) => t.slice(t.indexOf(' ') + 1));
    const removedUnitTexts = [...unitsBefore]
      .filter(([id]) => !ids.has(id))
      .map(([, text]) => text)
      .filter((t) => !remainingTexts.some((r) => r.includes(t)));
    expect(removedUnitTexts.length).toBeGreaterThan(0);
    // Every text search can return (units, attributes, high-level elements, …).
    const loaded = await LoadedIndex.load(p.root, { dim: DIM, unbalanceAdjust: true });
    try {
      for (const t of loaded.texts) {
        for (const r of [...removedTexts, ...removedUnitTexts]) expect(t.includes(r), r).toBe(false);
      }
    } finally {
      loaded.close();
    }
    expect(removedTexts.length).toBeGreaterThan(0);
    const questions = [
      ...removedTexts.flatMap((t) => t.split(/(?<=\.)\s+/).slice(0, 3)),
      ...removedUnitTexts.slice(0, 20),
      'Who was Edith Pryce?',
      'What is Okafor best known for?',
      'Where was Margaret Okafor born?',
    ];
    const search = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }));
    try {
      for (const question of questions) {
        const r = await search.search(question);
        for (const item of r.items) {
          expect(ids.has(item.id), `${question}: ${item.id}`).toBe(true);
          expect(removedTexts.includes(item.text), question).toBe(false);
        }
        for (const t of [...removedTexts, ...removedUnitTexts]) {
          expect(r.retrievalInfo.includes(t), question).toBe(false);
        }
      }
    } finally {
      search.close();
    }
  }, 120_000);

  it('attributes and communities whose prompt input is unchanged are kept without a model call; a changed input is asked again', async () => {
    // 60 paragraphs of the HotpotQA sample, one file each; then every tenth edited (one
    // sentence): its chunk goes and a new one comes, so every entity of that chunk leaves
    // the index and is added again, most with the same material.
    const corpus = Object.entries(
      JSON.parse(readFileSync(join(REPO_ROOT, 'bench', 'data', 'hotpotqa', 'corpus.json'), 'utf8')) as Record<
        string,
        string[]
      >,
    ).slice(0, 60);
    const render = (title: string, sentences: string[]) => `${title}\n\n${sentences.join('')}\n`;
    const p = await project(
      Object.fromEntries(corpus.map(([title, sentences], i) => [`${i}.txt`, render(title, sentences)])),
      1048,
    );
    expect((await build(p.root)).code).toBe(0);
    const attributesOf = async (root: string) => {
      const index = new IndexData(root, DIM);
      const recorded = await index.attributeInputs();
      return {
        rows: await index.attributes(),
        inputs: recorded.inputs,
        unimportant: recorded.unimportant,
        entities: await index.entities(),
      };
    };
    const first = await attributesOf(p.root);
    expect(first.inputs.size).toBe(first.rows.size);
    // The first build records the input of every entity it judged not important (weight > 1,
    // no attribute), so a sync judges one again only when that input changed.
    const attributed = new Set([...first.rows.values()].map((a) => a.node));
    const unimportant = [...first.entities.values()].filter((e) => e.weight > 1 && !attributed.has(e.hashId));
    expect(unimportant.length).toBeGreaterThan(0);
    expect([...first.unimportant.keys()].sort()).toEqual(unimportant.map((e) => e.hashId).sort());
    const communitiesOf = async (root: string) =>
      readCommunityInputs(join(root, COMMUNITY_INPUTS_FILE), COMMUNITY_INPUTS_FILE);
    const communitiesBefore = await communitiesOf(p.root);
    expect(communitiesBefore.size).toBeGreaterThan(0);
    const elementsBefore = await new IndexData(p.root, DIM).elements();
    const unitsBefore = await new IndexData(p.root, DIM).units();
    const labelsBefore = new Map(
      (await new IndexData(p.root, DIM).idMap()).filter((r) => !r.retired).map((r) => [r.node, r.label]),
    );

    for (const [i, [title, sentences]] of corpus.entries()) {
      if (i % 10 !== 0) continue;
      const edited = [...sentences];
      edited[edited.length - 1] = edited.at(-1)!.replace(/^(\s*)/, '$1Notably, ');
      await p.writeInput(`${i}.txt`, render(title, edited));
    }
    const sync = await build(p.root);
    expect(sync.code, sync.out).toBe(0);
    const second = await attributesOf(p.root);
    expect(second.inputs.size).toBe(second.rows.size);
    expect((await new IndexData(p.root, DIM).attributeInputs()).retired.size).toBe(0);

    let same = 0;
    let changed = 0;
    for (const [id, row] of second.rows) {
      const was = first.rows.get(id);
      if (first.inputs.get(id) === second.inputs.get(id)) {
        // Same input: the very attribute, number and vector of the first build.
        expect(row.context, id).toBe(was!.context);
        expect(row.humanReadableId, id).toBe(was!.humanReadableId);
        expect([...row.embedding!], id).toEqual([...was!.embedding!]);
        same++;
      } else {
        expect(row.updatedGeneration, id).toBe(2);
        changed++;
      }
    }
    expect(same).toBeGreaterThan(0);
    expect(changed).toBeGreaterThan(0);
    // No attribute was written for an entity judged not important before with the same input.
    for (const row of second.rows.values()) {
      if (first.rows.has(row.hashId)) continue;
      expect(second.inputs.get(row.hashId), row.node).not.toBe(first.unimportant.get(row.node));
    }
    for (const [entity, input] of second.unimportant) {
      expect(second.entities.get(entity)!.weight, entity).toBeGreaterThan(1);
      expect(second.rows.has(attributeId(entity)), entity).toBe(false);
      expect(input).toMatch(/^[0-9a-f]{64}$/);
    }
    // A model call for each changed or new input, none for the others.
    const log = await p.readText('info/info.log');
    const calls = /Attribute pipeline \(generation 2\) finished in .*\bcalls=(\d+)/.exec(log);
    expect(Number(calls![1])).toBe(changed);
    expect(sync.out).toMatch(new RegExp(`\\b${changed} regenerated|${changed} attributes? created`));

    // Units: those the edited chunks brought back (same text, same id) have their vector
    // and vector label back; only the new ones were embedded.
    const after = new IndexData(p.root, DIM);
    const unitsAfter = await after.units();
    const labelsAfter = new Map(
      (await after.idMap()).filter((r) => !r.retired).map((r) => [r.node, r.label]),
    );
    const texts = await after.texts();
    let back = 0;
    for (const [id, u] of unitsAfter) {
      const was = unitsBefore.get(id);
      if (!was) {
        expect(u.generation, id).toBe(2);
        continue;
      }
      expect([...u.embedding!], id).toEqual([...was.embedding!]);
      expect(u.generation, id).toBe(1);
      expect(labelsAfter.get(id), id).toBe(labelsBefore.get(id));
      if (u.textHashIds.every((t) => texts.get(t)!.generation === 2)) back++;
    }
    expect(back).toBeGreaterThan(0);
    expect(sync.out).toContain(`${back} units added again with their vector`);

    // Communities: one call per community whose input was not recorded; a recorded one gets
    // the elements it had.
    const summary =
      /(\d+) communit(?:y|ies) summarised \((\d+) with the elements of an earlier community of the same input, (\d+) of them formed again as they were\).*; calls (\d+),/.exec(
        sync.out,
      );
    expect(summary, sync.out).not.toBeNull();
    const [summarised, reused, reformed, summaryCalls] = summary!.slice(1).map(Number) as [
      number,
      number,
      number,
      number,
    ];
    expect(reused).toBeGreaterThan(0);
    expect(summaryCalls).toBe(summarised - reused);
    // Communities the sync dropped with their members all unchanged (a unit's chunk changed,
    // not its text) are formed again as they were: recorded members, recorded elements.
    expect(reformed).toBeGreaterThan(0);
    const communitiesAfter = await communitiesOf(p.root);
    const elementsAfter = await new IndexData(p.root, DIM).elements();
    let carried = 0;
    for (const [hash, { elements }] of communitiesAfter) {
      if (!communitiesBefore.has(hash)) continue;
      expect(elements).toEqual(communitiesBefore.get(hash)!.elements);
      carried++;
    }
    expect(carried).toBeGreaterThanOrEqual(reused);
    // An edit in one community leaves the others alone: their elements stay as they were
    // (same id, text and community), with no call; only the edited ones are summarised again.
    const kept = [...elementsAfter.values()].filter((e) => e.updatedGeneration === 1);
    expect(kept.length).toBeGreaterThan(elementsBefore.size / 2);
    for (const e of kept) {
      const was = elementsBefore.get(e.hashId)!;
      expect([e.context, e.communityId, e.weight]).toEqual([was.context, was.communityId, was.weight]);
    }
    expect(summaryCalls).toBeLessThan(communitiesBefore.size / 2);
    // Every element in the index is recorded with a community that produced it.
    const recordedDescriptions = new Set(
      [...communitiesAfter.values()].flatMap((c) => c.elements.map(([, d]) => d.trim())),
    );
    for (const e of elementsAfter.values()) expect(recordedDescriptions.has(e.context), e.context).toBe(true);

    // A reused attribute is what the model gives for that input: a clean build of the final
    // folder wrote the same text wherever it recorded the same input.
    const finalFiles: Record<string, string> = {};
    for (const f of readdirSync(p.path('input')).sort())
      finalFiles[f] = readFileSync(p.path('input', f), 'utf8');
    const q = await project(finalFiles, 1048);
    expect((await build(q.root)).code).toBe(0);
    const clean = await attributesOf(q.root);
    let compared = 0;
    for (const [id, row] of second.rows) {
      if (clean.inputs.get(id) !== second.inputs.get(id)) continue;
      expect(row.context, id).toBe(clean.rows.get(id)!.context);
      compared++;
    }
    expect(compared).toBeGreaterThan(same / 2);
    // The same for communities: same input, same elements.
    let comparedCommunities = 0;
    for (const [hash, { elements }] of await communitiesOf(q.root)) {
      if (!communitiesAfter.has(hash)) continue;
      expect(communitiesAfter.get(hash)!.elements).toEqual(elements);
      comparedCommunities++;
    }
    expect(comparedCommunities).toBeGreaterThan(0);
  }, 120_000);

  it('a sync stopped after its Document commit and resumed reports the cycle it finished', async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 3);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    expect((await build(p.root)).code).toBe(0);
    await rm(p.path('input', names[0]!));
    await writeFile(p.path('input', 'added.md'), 'The Zeta Dome was built in 2001 by Ana Lopez.\n');
    // Stopped as the Text stage starts: the Document stage (and its report) is committed.
    const stopped = await buildStoppedAfter(p.root, 'Document pipeline', {
      onReport: () => {
        throw new Error('an interrupted run reports nothing');
      },
    });
    expect(stopped).toBe(130);
    const resumed = await build(p.root);
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.report!.added).toEqual(['added.md']);
    expect(resumed.report!.deleted).toEqual([names[0]]);
    expect(resumed.report!.removedChunks.length).toBeGreaterThan(0);
    expect(resumed.report!.removedUnits.length).toBeGreaterThan(0);
    // The next run, with nothing to do, reports nothing (the record is of a finished cycle).
    expect((await build(p.root)).report).toBeNull();
  }, 60_000);

  it('deleting every document but one leaves an index of that one', async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 3);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    expect((await build(p.root)).code).toBe(0);
    await rm(p.path('input', names[0]!));
    await rm(p.path('input', names[1]!));
    const sync = await build(p.root);
    expect(sync.code, sync.out).toBe(0);
    expect(sync.report!.deleted).toEqual([names[0], names[1]]);
    const q = await project({ [names[2]!]: all[names[2]!]! });
    expect((await build(q.root)).code).toBe(0);
    expect(await comparable(p.root)).toEqual(await comparable(q.root));
    const docs = await new IndexData(p.root, DIM).documents();
    expect(docs.map((d) => d.path)).toEqual([names[2]]);
    expect(await p.readJson('info/document_hash.json')).toEqual(await q.readJson('info/document_hash.json'));
  }, 60_000);
});

/** SHA-256 of every index file and of info/document_hash.json. */
async function fingerprints(p: Project): Promise<Record<string, string>> {
  const out = await indexFingerprints(p);
  out['document_hash.json'] = createHash('sha256')
    .update(await readFile(p.path('info', 'document_hash.json')))
    .digest('hex');
  return out;
}

// A chunk's id is a hash of its normalised text (NFKC, whitespace collapsed): files may hold
// one chunk in several forms. A clean build keeps the form of the first file by path; a sync
// kept the form the row was first made from (found by a fuzz of random sync sequences). The
// same holds for a semantic unit (its id hashes its normalised text too) that two chunks
// produce in two forms: a clean build keeps the form of the first chunk by path (found by
// build-sync-sequences.test.ts).
describe('a chunk or unit held in another form (whitespace, compatibility characters, loader)', () => {
  const cases: { name: string; before: Record<string, string>; after: Record<string, string | null> }[] = [
    {
      name: 'a compatibility character replaced (NFKC: the ligature ﬁ by "fi")',
      before: { 'a.txt': 'Clara Jensen ﬁnanced Harbor Bank in Oslo.\n' },
      after: { 'a.txt': 'Clara Jensen financed Harbor Bank in Oslo.\n' },
    },
    {
      name: 'a line break replaced by a space (the heading line joins the sentence)',
      before: {
        'a.txt':
          '# Felix Adler and Vantage Motors\nThe headquarters of Crescent Films moved from Toronto to Dublin.\n',
      },
      after: {
        'a.txt':
          '# Felix Adler and Vantage Motors The headquarters of Crescent Films moved from Toronto to Dublin.\n',
      },
    },
    {
      name: 'the first file with the chunk deleted: the next one holds it in another form',
      before: { 'b.txt': 'Grace Huang founded Harbor Bank in Nairobi. Jonas Weber advised it.\n' },
      after: {
        'a.txt': 'Grace Huang founded Harbor Bank in Nairobi.\nJonas Weber advised it.\n',
        'b.txt': null,
      },
    },
    {
      name: 'the first file deleted: an unchanged file holds the chunk in another form (read again)',
      before: {
        'a.txt': 'Grace Huang founded Harbor Bank in Nairobi.\nJonas Weber advised it.\n',
        'b.txt': 'Grace Huang founded Harbor Bank in Nairobi. Jonas Weber advised it.\n',
      },
      after: { 'a.txt': null },
    },
    {
      name: 'the same bytes under another loader (.txt content moved to .html collapses its lines)',
      before: {
        'a.html': '<html><body><p>Other text about Orion Press in Lisbon.</p></body></html>',
        'b.txt': 'Jonas Weber met Irene Costa at Crescent Films.\nIrene Costa moved to Toronto.\n',
      },
      after: {
        'a.html': 'Jonas Weber met Irene Costa at Crescent Films.\nIrene Costa moved to Toronto.\n',
        'b.txt': null,
      },
    },
    {
      name: 'a unit shared by two chunks in two forms: the first file by path deleted',
      before: {
        'a.txt':
          'Edith Pryce joined Halden Observatory as one of its ﬁrst observers. She studied in Leeds.\n',
        'b.txt': 'Edith Pryce joined Halden Observatory as one of its first observers. Halden grew.\n',
      },
      after: { 'a.txt': null },
    },
    {
      name: 'a unit shared by two chunks in two forms: a new file sorting first',
      before: {
        'b.txt': 'Edith Pryce joined Halden Observatory as one of its first observers. Halden grew.\n',
      },
      after: {
        'a.txt':
          'Edith Pryce joined Halden Observatory as one of its ﬁrst   observers. She studied in Leeds.\n',
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: tables equal a clean build's`, async () => {
      const p = await project(c.before, 1048);
      expect((await build(p.root)).code).toBe(0);
      for (const [name, text] of Object.entries(c.after)) {
        if (text === null) await p.removeInput(name);
        else await p.writeInput(name, text);
      }
      expect((await build(p.root)).code).toBe(0);
      const final = Object.fromEntries(
        Object.entries({ ...c.before, ...c.after }).filter((e): e is [string, string] => e[1] !== null),
      );
      const clean = await project(final, 1048);
      expect((await build(clean.root)).code).toBe(0);
      expect(await comparable(p.root)).toEqual(await comparable(clean.root));
    });
  }
});

// An indexed path that is still in input/ but no document any more leaves the index as a
// deleted one does (found by review: its old text stayed searchable). A file that cannot be
// read right now (permission denied) keeps its rows: tests/unit/build-discover.test.ts.
describe('an indexed file that is no document any more', () => {
  const A = 'Margaret Okafor founded Halden Observatory on Brannock Hill in 1887.\n';
  const B = 'Edith Pryce discovered Comet Pryce with the Pryce Reflector in 1925.\n';
  const cases: { name: string; change: (p: Project) => Promise<void> }[] = [
    {
      name: 'a link whose target file was deleted',
      change: async (p) => {
        await symlink('a.txt', p.path('input', 'link.txt'));
        expect((await build(p.root)).code).toBe(0);
        await p.removeInput('a.txt');
      },
    },
    {
      name: 'a file replaced by a link leaving input/ (refused)',
      change: async (p) => {
        await writeFile(p.path('elsewhere.txt'), A);
        await p.removeInput('a.txt');
        await symlink(p.path('elsewhere.txt'), p.path('input', 'a.txt'));
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: its text goes, and the tables equal a clean build's`, async () => {
      const p = await project({ 'a.txt': A, 'b.txt': B }, 1048);
      expect((await build(p.root)).code).toBe(0);
      await c.change(p);
      const sync = await build(p.root);
      expect(sync.code, sync.out).toBe(0);
      expect(sync.out).toContain('Sync: ');
      const clean = await project({ 'b.txt': B }, 1048);
      expect((await build(clean.root)).code).toBe(0);
      expect(await comparable(p.root)).toEqual(await comparable(clean.root));
      const search = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }));
      try {
        const r = await search.search('Who founded Halden Observatory on Brannock Hill?');
        expect(r.retrievalInfo).not.toContain('Brannock Hill');
      } finally {
        search.close();
      }
      // And it stays out: the next build has nothing to do.
      expect((await build(p.root)).out).toContain('Index is up to date.');
    });
  }
});

describe("runBuild's report", () => {
  it('lists as removed only what left the index, not what the edited file gives again', async () => {
    const p = await project(
      {
        'a.txt': 'Margaret Okafor founded Halden Observatory in 1887.\n',
        'b.txt': 'Bram Okonkwo kept the Harbor Lighthouse at Port Sel from 1902.\n',
      },
      1048,
    );
    expect((await build(p.root)).code).toBe(0);
    await p.writeInput(
      'b.txt',
      'Bram Okonkwo kept the Harbor Lighthouse at Port Sel from 1902.\nHe retired in 1931.\n',
    );
    const sync = await build(p.root);
    expect(sync.code, sync.out).toBe(0);
    const r = sync.report!;
    expect(r.changed).toEqual(['b.txt']);
    const index = new IndexData(p.root, DIM);
    const [texts, units, entities, relationships] = await Promise.all([
      index.texts(),
      index.units(),
      index.entities(),
      index.relationships(),
    ]);
    expect(r.removedChunks.length).toBe(1); // b.txt's old chunk
    expect(r.removedChunks.filter((id) => texts.has(id))).toEqual([]);
    expect(r.removedUnits.filter((id) => units.has(id))).toEqual([]);
    expect(r.removedEntities.filter((id) => entities.has(id))).toEqual([]);
    expect(r.removedRelationships.filter((id) => relationships.has(id))).toEqual([]);
    // The unchanged sentence's entities are still there.
    expect([...entities.values()].map((e) => e.context)).toContain('BRAM OKONKWO');
  });
});

describe('a relation phrase held in two forms (letter case)', () => {
  it('goes with the last chunks that support its fold, whichever form the index kept', async () => {
    const met = 'The banker Alice met Bob today.\n';
    const p = await project({
      'm.txt': met,
      'z.txt': 'Snow fell. The banker Alice financed THE Bob today.\n',
    });
    expect((await build(p.root)).code).toBe(0);
    // A file sorting first brings the phrase in another case: the index keeps that form.
    await p.writeInput('a.txt', 'Rain fell. The banker Alice financed the Bob today.\n');
    expect((await build(p.root)).code).toBe(0);
    // Both files with the phrase go: so must the phrase, in any form.
    await p.removeInput('a.txt');
    await p.removeInput('z.txt');
    expect((await build(p.root)).code).toBe(0);
    const clean = await project({ 'm.txt': met });
    expect((await build(clean.root)).code).toBe(0);
    expect(await comparable(p.root)).toEqual(await comparable(clean.root));
    const relations = [...(await new IndexData(p.root, DIM).relationships()).values()].flatMap(
      (r) => r.relations,
    );
    expect(relations.join(' | ')).not.toMatch(/financed/);
  });
});

describe('a unit removed and brought back by a sync', () => {
  it('takes its vector back only when its text is the one the vector was made from', async () => {
    const server = await startFakeOpenAI();
    try {
      const p = await createProject({
        files: {
          'a.txt': 'Clara Jensen ﬁnanced Harbor Bank in Oslo. Jonas Weber advised the bank. Halden grew.\n',
        },
        provider: { openaiBaseUrl: server.baseUrl },
        config: { chunk_size: 1048, dim: DIM },
      });
      projects.push(p);
      expect((await build(p.root)).code).toBe(0);
      // An edit (a new chunk) that also writes the ligature out: the first unit comes back with
      // its id (NFKC) in another form, the third as it was.
      await p.writeInput(
        'a.txt',
        'Clara Jensen financed Harbor Bank in Oslo. Jonas Weber advised the bank twice. Halden grew.\n',
      );
      server.reset();
      expect((await build(p.root)).code).toBe(0);
      // The Embedding stage's request of the cycle's new units (the Summary stage embeds its
      // elements in requests of their own).
      const batches = server.requests
        .filter((r) => r.route === 'embeddings')
        .map((r) => [(r.body as { input: string | string[] }).input].flat());
      const units = batches.find((b) => b.includes('Jonas Weber advised the bank twice.'));
      expect(units).toContain('Clara Jensen financed Harbor Bank in Oslo.');
      expect(batches.flat()).not.toContain('Halden grew.');
      const contexts = [...(await new IndexData(p.root, DIM).units()).values()].map((u) => u.context);
      expect(contexts).toContain('Clara Jensen financed Harbor Bank in Oslo.');
    } finally {
      await server.close();
    }
  });
});

describe('deleting every document', () => {
  it('is refused before anything changes (an index needs one document); putting one back syncs', async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 2);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    expect((await build(p.root)).code).toBe(0);
    const before = await fingerprints(p);
    const state = await p.readText('info/state.json');
    for (const n of names) await p.removeInput(n);
    const r = await build(p.root);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `every indexed document was deleted from input/ (${names.join(', ')}); an index needs at least one document`,
    );
    expect(await fingerprints(p)).toEqual(before);
    expect(await p.readText('info/state.json')).toBe(state);
    await p.writeInput(names[1]!, all[names[1]!]!);
    const again = await build(p.root);
    expect(again.code, again.out).toBe(0);
    expect(again.report!.deleted).toEqual([names[0]]);
  }, 60_000);

  it('emptying every document is refused naming the files, and the index stays as it was', async () => {
    const p = await project({ 'a.txt': 'Grace Huang founded Harbor Bank in Nairobi.\n' });
    expect((await build(p.root)).code).toBe(0);
    const before = await fingerprints(p);
    await p.writeInput('a.txt', '');
    const r = await build(p.root);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'no document would be left in the index: every indexed document was deleted or changed, and these could not be read: a.txt (no text (empty document))',
    );
    expect(await fingerprints(p)).toEqual(before);
  });
});

describe('a sync killed with SIGKILL', () => {
  const all = exampleFiles();
  const names = Object.keys(all);
  const initial = Object.fromEntries(names.slice(0, 5).map((n) => [n, all[n]!]));

  /** Sorted node texts of the index search loads from `root`. */
  async function searchTexts(root: string): Promise<string[]> {
    const loaded = await LoadedIndex.load(root, { dim: DIM, unbalanceAdjust: true });
    try {
      return [...loaded.texts].sort();
    } finally {
      loaded.close();
    }
  }

  /** A built project, then an edit, a deletion, a rename and an addition in input/. */
  async function prepared(): Promise<{ p: Project; before: Record<string, string>; served: string[] }> {
    const p = await project(initial);
    expect((await build(p.root)).code).toBe(0);
    const before = await fingerprints(p);
    const served = await searchTexts(p.root);
    await p.writeInput(
      names[1]!,
      editSentence(all[names[1]!]!, 'Okafor is best known', 'Okafor is remembered for comets'),
    );
    await p.removeInput(names[2]!);
    await rename(p.path('input', names[3]!), p.path('input', 'moved.md'));
    await p.writeInput(names[6]!, all[names[6]!]!);
    return { p, before, served };
  }

  let reference: Promise<Record<string, string>> | undefined;
  function uninterrupted(): Promise<Record<string, string>> {
    reference ??= (async () => {
      const { p } = await prepared();
      const r = await build(p.root);
      expect(r.code, r.out).toBe(0);
      return fingerprints(p);
    })();
    return reference;
  }

  it('before its first commit point leaves the previous index as it was; the re-run finishes it', async () => {
    const { p, before } = await prepared();
    const killed = await p.buildWithHooks({ crashAt: 'Document pipeline:files-synced' });
    expect(killed.signal).toBe('SIGKILL');
    expect(await fingerprints(p)).toEqual(before);
    const resumed = await p.build();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await fingerprints(p)).toEqual(await uninterrupted());
  }, 60_000);

  for (const point of [...STAGES, 'Document pipeline:manifest-written', 'HNSW pipeline:files-synced']) {
    it(`at ${point}: the re-run ends with the index of an uninterrupted sync`, async () => {
      const { p, served } = await prepared();
      const killed = await p.buildWithHooks({ crashAt: point });
      expect(killed.signal).toBe('SIGKILL');
      // Search started meanwhile serves generation 1 as it was (the build kept it when the
      // cycle started), not the cycle's commits so far; once the last commit is through, the
      // new generation, which holds nothing only the deleted file had.
      const finished =
        (await p.readJson<{ current_state: string }>('info/state.json')).current_state === 'FINISHED';
      const texts = await searchTexts(p.root);
      if (!finished) expect(texts).toEqual(served);
      else {
        const deletedText = all[names[2]!]!;
        const kept = [...readdirSync(p.path('input'))].map((f) => readFileSync(p.path('input', f), 'utf8'));
        for (const t of texts) {
          if (t.length < 40 || !deletedText.includes(t)) continue;
          expect(
            kept.some((k) => k.includes(t)),
            t,
          ).toBe(true);
        }
      }
      const resumed = await p.build();
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toBe('');
      expect(await fingerprints(p)).toEqual(await uninterrupted());
    }, 60_000);
  }
});

describe('NodeSearch with watch follows new generations', () => {
  it('keeps the loaded generation during a sync, swaps in the new one when it finishes, drops the old cache', async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 4);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    expect((await build(p.root)).code).toBe(0);
    const reloads: { generation: number; previous: number }[] = [];
    const search = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }), {
      watch: true,
      watchIntervalMs: 0,
      onReload: (r) => reloads.push(r),
    });
    const fixed = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }));
    try {
      const deleted = all[names[1]!]!;
      const question = deleted
        .split('\n')
        .find((l) => l.length > 60)!
        .trim();
      const holdsDeleted = (items: readonly { text: string }[]) =>
        items.some((i) => i.text.length >= 40 && deleted.includes(i.text));
      expect(holdsDeleted((await search.search(question)).items)).toBe(true);
      expect((await search.status()).generation).toBe(1);

      // A sync killed after its Graph pipeline: the running engine keeps generation 1 whole.
      await p.removeInput(names[1]!);
      const killed = await p.buildWithHooks({ crashAt: 'Graph pipeline' });
      expect(killed.signal).toBe('SIGKILL');
      await search.status();
      await search.reloaded();
      expect(reloads).toEqual([]);
      const running = await search.search(question);
      expect(holdsDeleted(running.items)).toBe(true);
      // So does an engine started now, on the files the killed sync left: generation 1 as the
      // build kept it when the cycle started, not the cycle's partial commits.
      expect(p.exists('cache/finished/generation.json')).toBe(true);
      const late = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }));
      try {
        expect((await late.status()).generation).toBe(1);
        const r = await late.search(question);
        expect(r.items.map((i) => i.id)).toEqual(running.items.map((i) => i.id));
        expect(r.retrievalInfo).toBe(running.retrievalInfo);
      } finally {
        late.close();
      }

      // The re-run finishes the cycle: the next request swaps in generation 2.
      expect((await build(p.root)).code).toBe(0);
      expect(p.exists('cache/finished')).toBe(false);
      await search.status();
      await search.reloaded();
      expect(reloads.map((r) => [r.previous, r.generation])).toEqual([[1, 2]]);
      expect((await search.status()).generation).toBe(2);
      // The cached retrieval of generation 1 is gone with it.
      expect(holdsDeleted((await search.search(question)).items)).toBe(false);
      // Without watch an engine keeps what it loaded (today's behaviour).
      expect((await fixed.status()).generation).toBe(1);
    } finally {
      search.close();
      fixed.close();
    }
  }, 60_000);

  /**
   * An engine that follows new generations with a short timer, started on `p`; `reloaded()`
   * waits for its next report (10 s at most) and returns every [previous, generation] so far.
   */
  function timedWatcher(p: Project) {
    const reloads: [previous: number, generation: number][] = [];
    let reported: () => void = () => {};
    const search = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }), {
      watch: true,
      watchIntervalMs: 25,
      onReload: (r) => {
        reloads.push([r.previous, r.generation]);
        reported();
      },
    });
    /** Every reload so far, once one more than `seen` came (or 10 s passed). */
    let seen = 0;
    const reloaded = async () => {
      if (reloads.length <= seen) {
        const next = new Promise<void>((resolve) => {
          reported = resolve;
        });
        await Promise.race([next, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
      }
      seen = reloads.length;
      return [...reloads];
    };
    return { search, reloaded };
  }

  it('checks in the background too: the first build and the next generation load with no question asked', async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 3);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    const { search, reloaded } = timedWatcher(p);
    try {
      // Started before any build: it waits, then loads the first one and says so (previous 0).
      await expect(search.ready()).rejects.toThrow(/no index in/);
      expect((await build(p.root)).code).toBe(0);
      expect(await reloaded()).toEqual([[0, 1]]);
      // No question and no status() from here: only the engine's own check can load it.
      await p.removeInput(names[1]!);
      expect((await build(p.root)).code).toBe(0);
      expect(await reloaded()).toEqual([
        [0, 1],
        [1, 2],
      ]);
      expect((await search.status()).generation).toBe(2);
    } finally {
      search.close();
    }
  }, 60_000);

  it("an onReload that throws is the application's bug: a warning, not a failed load", async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 3);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    expect((await build(p.root)).code).toBe(0);
    const failures: unknown[] = [];
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const search = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }), {
      watch: true,
      watchIntervalMs: 0,
      onReload: () => {
        throw new Error('bug in onReload');
      },
      onReloadError: (e) => failures.push(e),
    });
    try {
      await search.status();
      await p.removeInput(names[1]!);
      expect((await build(p.root)).code).toBe(0);
      await search.status();
      await search.reloaded();
      expect((await search.status()).generation).toBe(2);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      expect(failures).toEqual([]);
      expect(warnings).toContain('NodeSearch onReload callback threw: bug in onReload');
    } finally {
      process.off('warning', onWarning);
      search.close();
    }
  }, 60_000);
});

describe('NodeSearch with watch: an index that cannot be loaded', () => {
  it('keeps serving, reports the failure once, and does not re-read the same files every interval', async () => {
    const all = exampleFiles();
    const p = await project(
      Object.fromEntries(
        Object.keys(all)
          .slice(0, 3)
          .map((n) => [n, all[n]!]),
      ),
    );
    expect((await build(p.root)).code).toBe(0);
    const errors: unknown[] = [];
    const reloads: number[] = [];
    const search = new NodeSearch(NodeConfig.fromMainFolder(p.root, { env: {} }), {
      watch: true,
      watchIntervalMs: 0,
      onReload: (r) => reloads.push(r.generation),
      onReloadError: (e) => errors.push(e),
    });
    try {
      const question = 'Who founded the observatory?';
      expect((await search.search(question)).items.length).toBeGreaterThan(0);
      // The finished index's vector file is damaged (truncated): its files changed, so the
      // watch tries it once.
      const hnsw = p.path('cache', 'HNSW.bin');
      const bytes = await readFile(hnsw);
      await writeFile(hnsw, bytes.subarray(0, bytes.length >> 1));
      for (let i = 0; i < 5; i++) {
        expect((await search.search(question)).items.length).toBeGreaterThan(0);
        await search.reloaded();
      }
      expect(errors).toHaveLength(1);
      expect(reloads).toEqual([]);
      expect((await search.status()).generation).toBe(1);
      // A build that changes the files again is tried again (here: repaired, loaded).
      await p.writeInput('extra.md', 'The Velmora lighthouse guides the boats of Halden Observatory home.');
      expect((await build(p.root)).code).toBe(0);
      await search.status();
      await search.reloaded();
      expect(reloads).toEqual([2]);
      expect(errors).toHaveLength(1);
    } finally {
      search.close();
    }
  }, 60_000);
});

describe('NodeSearch with watch: questions in flight across a reload', () => {
  it('a question that started before the swap is not cached for the new index; one build is one reload', async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 4);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    expect((await build(p.root)).code).toBe(0);
    const config = NodeConfig.fromMainFolder(p.root, { env: {} });
    // The providers of a remote model: each call waits, as on the network.
    const real = createProviders(config, { mode: 'search', tokenCounter: o200kTokenCounter });
    let delayMs = 0;
    const wait = () => new Promise((r) => setTimeout(r, delayMs));
    const providers: SearchProviders = {
      run: (async (task: never, input: never, call: never) => {
        await wait();
        return real.run(task, input, call);
      }) as SearchProviders['run'],
      embedQuery: async (q, call) => {
        await wait();
        return real.embedQuery(q, call);
      },
    };
    const reloads: { generation: number; previous: number }[] = [];
    const search = new NodeSearch(config, {
      providers,
      watch: true,
      watchIntervalMs: 0,
      onReload: (r) => reloads.push(r),
    });
    try {
      await search.ready();
      const edited = names[0]!;
      const sentence = all[edited]!.split('\n')
        .find((l) => l.length > 60)!
        .trim();
      const question = sentence.slice(0, 80);
      // (Not asked before the build: the question in flight below must miss the cache.)
      expect((await search.search(`${question}?`)).retrievalInfo).not.toContain('Zanzibar quartz');

      // A new generation whose passage names something new.
      await p.writeInput(
        edited,
        all[edited]!.replace(sentence, `${sentence} It was paid for in Zanzibar quartz.`),
      );
      expect((await build(p.root)).code).toBe(0);

      // This question starts on generation 1 (the reload begins with it and ends while the
      // question waits on its providers); it finishes there, as a question in flight does.
      delayMs = 300;
      const inFlight = search.search(question);
      await search.reloaded();
      expect(reloads.map((r) => [r.previous, r.generation])).toEqual([[1, 2]]);
      expect((await inFlight).retrievalInfo).not.toContain('Zanzibar quartz');
      delayMs = 0;

      // Asked again, it is retrieved from generation 2, not from a cached generation-1 retrieval.
      const again = await search.search(question);
      expect(again.retrievalInfo).toContain('Zanzibar quartz');
      const fresh = new NodeSearch(config);
      try {
        expect(again.retrievalInfo).toBe((await fresh.search(question)).retrievalInfo);
      } finally {
        fresh.close();
      }
      // And no second reload of the same build.
      await search.status();
      await search.reloaded();
      expect(reloads).toHaveLength(1);
    } finally {
      search.close();
      real.close();
    }
  }, 60_000);
});

interface Served {
  child: ChildProcess;
  url: string;
  stdout: () => string;
}

const servers: ChildProcess[] = [];
afterAll(() => {
  for (const c of servers) c.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}

/** Spawns `search -f root --port P ...args` and waits for its "listening on" line. */
async function serve(root: string, args: string[] = []): Promise<Served> {
  const port = await freePort();
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CLI, 'search', '-f', root, '--host', '127.0.0.1', '--port', String(port), ...args],
      { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: '1' } },
    );
    servers.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on (http:\/\/\S+) /.exec(stdout);
      if (m) done({ child, url: m[1]!, stdout: () => stdout });
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => fail(new Error(`search exited with ${code} before listening:\n${stderr}`)));
  });
}

async function generationOf(url: string): Promise<number> {
  const health = (await (await fetch(`${url}/health`)).json()) as { generation: number };
  return health.generation;
}

describe('noderag search follows new generations', () => {
  it('reloads when a build finishes (one line, /health shows it); --no-reload keeps the first', async () => {
    const all = exampleFiles();
    const names = Object.keys(all).slice(0, 3);
    const p = await project(Object.fromEntries(names.map((n) => [n, all[n]!])));
    expect((await build(p.root)).code).toBe(0);
    const following = await serve(p.root);
    const fixed = await serve(p.root, ['--no-reload']);
    expect(await generationOf(following.url)).toBe(1);
    await p.removeInput(names[0]!);
    expect((await build(p.root)).code).toBe(0);
    let generation = 1;
    for (let i = 0; i < 100 && generation !== 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      generation = await generationOf(following.url);
    }
    expect(generation).toBe(2);
    const lines = following
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('Index generation'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Index generation 2 loaded \(\d+ nodes, \d+ vectors\), replacing generation 1\.$/,
    );
    await new Promise((r) => setTimeout(r, 1200));
    expect(await generationOf(fixed.url)).toBe(1);
    expect(fixed.stdout()).not.toContain('Index generation');
  }, 60_000);
});
