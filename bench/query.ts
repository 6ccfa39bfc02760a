/**
 * `npm run bench -- query`: the query side on two indexes.
 *
 * 1. HotpotQA-100 built with the offline `local` provider (bench/lib/hotpot.ts, built on
 *    first use with `noderag build`), its 100 questions.
 * 2. A seeded synthetic index with more than 1M search-graph edges (Zipf-popular entities,
 *    clustered vectors, HNSW similarity edges), written once to bench/.data/ with the
 *    index-io writers and a real HNSW.bin, then reused.
 *
 * Measured: index load time (read cache/search_graph.bin, or the tables and map ids when it is
 * stale; native builds), process CPU time of the large load, and the per-question
 * retrieval time excluding provider latency — the embedding and the decomposition are
 * computed first (local provider for HotpotQA, synthetic for the large index), then
 * `retrieve()` is timed stage by stage: vector search, exact matching, propagation +
 * typed top-k, selection, context string.
 *
 * Peer in the same run: the same retrieval with the propagation forced to dense
 * full-graph steps (what a matrix-vector implementation such as the original NodeRAG's
 * does per step); results must be identical, only the time differs.
 *
 * Last line: RESULT query load_ms=<l> retrieval_p50_ms=<a> retrieval_p99_ms=<b> large_load_ms=<L>
 * large_retrieval_p50_ms=<c> — HotpotQA's load (median of 5 LoadedIndex.load) and
 * retrieval (wall clock), and the large index's retrieval p50.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { NodeConfig } from '../ts/config/node-config.js';
import { graphNodeRows, TABLES } from '../ts/index-io/tables.js';
import { StageCommit } from '../ts/indexing/commit.js';
import { featureHashBatch } from '../ts/llm/local/feature-hash.js';
import { localQuery } from '../ts/llm/local/tasks.js';
import type {
  GraphEdge,
  GraphNode,
  HighLevelElementRow,
  NodeType,
  SemanticUnitRow,
  TextRow,
  TitleRow,
} from '../ts/model/types.js';
import { CACHE_FILES, INFO_FILES, resolveInProject } from '../ts/project/layout.js';
import { initialState, writeState } from '../ts/project/state.js';
import { LoadedIndex } from '../ts/search/loaded-index.js';
import { NodeSearch } from '../ts/search/node-search.js';
import {
  type QueryInputs,
  type Retrieval,
  retrieve,
  type SearchParams,
  searchParamsFrom,
} from '../ts/search/retrieve.js';
import { VectorIndex } from '../ts/vector/index.js';
import { BENCH_DATA, ensureHotpotIndex, loadQuestions } from './lib/hotpot.js';
import { mulberry32 } from './lib/random.js';

const REPEATS = 5;
const LARGE_QUERIES = 300;

// ----------------------------------------------------------------------------- helpers

function percentile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
}

const fmt = (x: number, digits = 3) => x.toFixed(digits);

function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  rows.forEach((r, i) => {
    console.log(
      `| ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(' | ')} |`,
    );
    if (i === 0)
      console.log(
        `|${widths.map((w, c) => (c === 0 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
      );
  });
}

// ----------------------------------------------------------------------------- synthetic index

// Shaped like the HotpotQA index scaled up about 8× (per unit: ~1.4 entities in the corpus,
// ~3 mentions; the most mentioned entity in a few % of the units), with HNSW similarity.
const LARGE = {
  version: 2,
  texts: 10_000,
  unitsPerText: 6,
  entities: 85_000,
  zipf: 0.8,
  relationships: 100_000,
  attributes: 3_000,
  elements: 2_000,
  membersPerElement: 30,
  clusters: 400,
  dim: 32,
  m: 10,
  ef: 64,
};

/** Ids of the synthetic index: `H(type, i)` of a row number (no text to normalise, so not ts/text/ids.ts). */
const syntheticId = (type: string, i: number) => createHash('sha256').update(`${type}:${i}`).digest('hex');

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ra',
  'ten',
  'vo',
  'sul',
  'dar',
  'ne',
  'po',
  'qui',
  'zan',
  'bel',
  'tor',
  'fi',
  'gan',
];

/**
 * The synthetic tables are written directly, not by a build: give them what a build's last
 * commit leaves (cache/search_graph.bin and the checksums it is checked against) by one
 * commit of state.json as it is, which derives the snapshot when it is missing or stale
 * (another format version included; ts/indexing/commit.ts).
 */
async function ensureGraphSnapshot(root: string): Promise<void> {
  const t0 = performance.now();
  const commit = await StageCommit.begin(root);
  await commit.put(INFO_FILES.state, readFileSync(resolveInProject(root, INFO_FILES.state)));
  await commit.commit();
  console.log(
    `  search_graph.bin checked (derived if stale) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

/** Writes the synthetic project (config, tables, HNSW.bin, state.json) unless already there. */
async function ensureLargeIndex(): Promise<string> {
  const root = join(BENCH_DATA, `query-large-v${LARGE.version}`);
  const marker = join(root, 'synthetic.json');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === JSON.stringify(LARGE)) return root;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(root, 'cache'), { recursive: true });
  mkdirSync(join(root, 'info'), { recursive: true });
  mkdirSync(join(root, 'input'), { recursive: true });
  const started = performance.now();
  console.log(`Writing the synthetic index to ${root} (once; reused by later runs) …`);

  const rnd = mulberry32(42);
  const int = (n: number) => Math.floor(rnd() * n);
  const word = () => {
    const n = 2 + int(2);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[int(SYLLABLES.length)]!;
    return w;
  };
  const vocab = Array.from({ length: 4000 }, word);
  const { dim } = LARGE;
  const g = 1;
  const common = { generation: g, updatedGeneration: g };

  // Entities: unique upper-case names of 1–3 words; Zipf popularity.
  const names = new Set<string>();
  while (names.size < LARGE.entities) {
    const n = 1 + int(3);
    names.add(Array.from({ length: n }, () => vocab[int(vocab.length)]!.toUpperCase()).join(' '));
  }
  const entityNames = [...names];
  const entityIds = entityNames.map((_, i) => syntheticId('entity', i));
  const zipf = new Float64Array(LARGE.entities);
  let acc = 0;
  for (let i = 0; i < LARGE.entities; i++) {
    acc += 1 / (i + 1) ** LARGE.zipf;
    zipf[i] = acc;
  }
  const pickEntity = () => {
    const x = rnd() * acc;
    let lo = 0;
    let hi = LARGE.entities - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (zipf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  // Cluster centres for the vectors.
  const centres = Array.from({ length: LARGE.clusters }, () =>
    Float32Array.from({ length: dim }, () => rnd() * 2 - 1),
  );
  const near = (c: number) => Float32Array.from(centres[c]!, (x) => x + (rnd() - 0.5) * 0.6);

  // Texts and units.
  const textIds: string[] = [];
  const textRows: TextRow[] = [];
  const unitRows: SemanticUnitRow[] = [];
  const unitEntities: number[][] = [];
  const unitCluster: number[] = [];
  const entityWeight = new Int32Array(LARGE.entities);
  const entityFirstChunk = new Array<string>(LARGE.entities);
  for (let t = 0; t < LARGE.texts; t++) {
    const cluster = int(LARGE.clusters);
    const id = syntheticId('text', t);
    textIds.push(id);
    const sentences: string[] = [];
    for (let u = 0; u < LARGE.unitsPerText; u++) {
      const ents = [...new Set(Array.from({ length: 2 + int(3) }, pickEntity))];
      const words = Array.from({ length: 6 + int(8) }, () => vocab[int(vocab.length)]!);
      const text = `${ents.map((e) => entityNames[e]).join(' and ')} ${words.join(' ')}.`;
      sentences.push(text);
      const unitIndex = unitRows.length;
      for (const e of ents) {
        entityWeight[e]!++;
        entityFirstChunk[e] ??= id;
      }
      unitEntities.push(ents);
      unitCluster.push(cluster);
      unitRows.push({
        ...common,
        hashId: syntheticId('semantic_unit', unitIndex),
        humanReadableId: unitIndex + 1,
        context: text,
        textHashId: id,
        textHashIds: [id],
        weight: 1,
        embedding: near(cluster),
      });
    }
    const context = sentences.join(' ');
    textRows.push({
      textId: t + 1,
      hashId: id,
      context,
      docId: t + 1,
      docHashId: syntheticId('document', t),
      chunkIndex: 0,
      tokenCount: Math.round(context.length / 4),
      embedding: near(cluster),
      generation: g,
    });
  }
  const documents = textRows.map((t) => ({
    docId: t.docId,
    docHashId: t.docHashId,
    path: `doc-${String(t.docId).padStart(5, '0')}.txt`,
    format: 'txt',
    textIds: [t.textId],
    textHashIds: [t.hashId],
    charCount: t.context.length,
    generation: g,
  }));
  const usedEntities = entityIds.map((_, i) => i).filter((i) => entityWeight[i]! > 0);
  const entityRows = usedEntities.map((e, k) => ({
    ...common,
    hashId: entityIds[e]!,
    humanReadableId: k + 1,
    context: entityNames[e]!,
    textHashId: entityFirstChunk[e]!,
    weight: entityWeight[e]!,
  }));

  // Relationships: distinct pairs of entities that share a unit.
  const relPairs = new Map<string, { a: number; b: number; unit: number }>();
  for (let tries = 0; relPairs.size < LARGE.relationships && tries < LARGE.relationships * 5; tries++) {
    const u = int(unitEntities.length);
    const ents = unitEntities[u]!;
    if (ents.length < 2) continue;
    const a = ents[int(ents.length)]!;
    const b = ents[int(ents.length)]!;
    if (a === b) continue;
    const [lo, hi] = entityIds[a]! < entityIds[b]! ? [a, b] : [b, a];
    relPairs.set(`${lo}:${hi}`, { a: lo, b: hi, unit: u });
  }
  const relList = [...relPairs.values()];
  const relRows = relList.map((r, i) => ({
    ...common,
    hashId: syntheticId('relationship', i),
    humanReadableId: i + 1,
    uniqueRelationship: [entityIds[r.a]!, entityIds[r.b]!] as [string, string],
    relations: [`${entityNames[r.a]} ${vocab[int(vocab.length)]} ${entityNames[r.b]}`],
    textHashId: unitRows[r.unit]!.textHashId,
    weight: 1,
  }));

  // Attributes of the most mentioned entities.
  const popular = [...usedEntities]
    .sort((a, b) => entityWeight[b]! - entityWeight[a]! || a - b)
    .slice(0, LARGE.attributes);
  const attrRows = popular.map((e, i) => ({
    ...common,
    hashId: syntheticId('attribute', i),
    humanReadableId: i + 1,
    node: entityIds[e]!,
    context: `${entityNames[e]} is ${Array.from({ length: 30 }, () => vocab[int(vocab.length)]).join(' ')}.`,
    weight: entityWeight[e]!,
    embedding: near(int(LARGE.clusters)),
  }));

  // High-level elements over units of one cluster, with titles.
  const unitsByCluster = Array.from({ length: LARGE.clusters }, () => [] as number[]);
  unitCluster.forEach((c, u) => {
    unitsByCluster[c]!.push(u);
  });
  const elementRows: HighLevelElementRow[] = [];
  const titleRows: TitleRow[] = [];
  const elementMembers: number[][] = [];
  for (let h = 0; h < LARGE.elements; h++) {
    const cluster = h % LARGE.clusters;
    const pool = unitsByCluster[cluster]!;
    const members = [
      ...new Set(Array.from({ length: LARGE.membersPerElement }, () => pool[int(pool.length)]!)),
    ];
    elementMembers.push(members);
    const id = syntheticId('high_level_element', h);
    const titleId = syntheticId('high_level_element_title', h);
    elementRows.push({
      ...common,
      hashId: id,
      humanReadableId: h + 1,
      context: `Theme ${Array.from({ length: 20 }, () => vocab[int(vocab.length)]).join(' ')}.`,
      titleHashId: titleId,
      communityId: cluster,
      relatedNodes: members.map((u) => unitRows[u]!.hashId),
      weight: 1,
      embedding: near(cluster),
    });
    titleRows.push({
      hashId: titleId,
      humanReadableId: h + 1,
      context: `${vocab[int(vocab.length)]} ${vocab[int(vocab.length)]}`.toUpperCase(),
      relatedNode: id,
      weight: 1,
      generation: g,
    });
  }

  // Graph.
  const nodes: [string, GraphNode][] = [];
  const node = (id: string, type: NodeType) =>
    nodes.push([id, { type, weight: 1, generation: g, updatedGeneration: g }]);
  for (const r of textRows) node(r.hashId, 'text');
  for (const r of unitRows) node(r.hashId, 'semantic_unit');
  for (const r of entityRows) node(r.hashId, 'entity');
  for (const r of relRows) node(r.hashId, 'relationship');
  for (const r of attrRows) node(r.hashId, 'attribute');
  for (const r of elementRows) node(r.hashId, 'high_level_element');
  for (const r of titleRows) node(r.hashId, 'high_level_element_title');
  const edges = new Map<string, GraphEdge>();
  const edge = (a: string, b: string, w = 1) => {
    const [source, target] = a < b ? [a, b] : [b, a];
    const key = `${source}|${target}`;
    const e = edges.get(key);
    if (e) e.weight += w;
    else edges.set(key, { source, target, weight: w, generation: g });
  };
  unitRows.forEach((u, i) => {
    edge(u.hashId, u.textHashId);
    for (const e of unitEntities[i]!) edge(u.hashId, entityIds[e]!);
  });
  for (const r of relRows) {
    edge(r.hashId, r.uniqueRelationship[0]);
    edge(r.hashId, r.uniqueRelationship[1]);
  }
  for (const a of attrRows) edge(a.hashId, a.node);
  elementRows.forEach((h, i) => {
    edge(h.hashId, h.titleHashId);
    for (const u of elementMembers[i]!) edge(h.hashId, unitRows[u]!.hashId);
  });

  // Vector index: labels in type order (text, semantic_unit, attribute, element).
  const vectorRows = [
    ...textRows.map((r) => ({ id: r.hashId, type: 'text' as const, v: r.embedding })),
    ...unitRows.map((r) => ({ id: r.hashId, type: 'semantic_unit' as const, v: r.embedding })),
    ...attrRows.map((r) => ({ id: r.hashId, type: 'attribute' as const, v: r.embedding })),
    ...elementRows.map((r) => ({ id: r.hashId, type: 'high_level_element' as const, v: r.embedding })),
  ];
  const flat = new Float32Array(vectorRows.length * dim);
  vectorRows.forEach((r, i) => {
    flat.set(r.v!, i * dim);
  });
  const t0 = performance.now();
  const index = await VectorIndex.build({ space: 'l2', dim, m: LARGE.m, efConstruction: LARGE.ef }, flat);
  console.log(
    `  HNSW over ${vectorRows.length} vectors built in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const l0 = index.layer0Edges();
  const sim = new Map<string, { source: string; target: string }>();
  for (let i = 0; i < l0.src.length; i++) {
    const a = vectorRows[l0.src[i]!]!.id;
    const b = vectorRows[l0.dst[i]!]!.id;
    if (a === b) continue;
    const [source, target] = a < b ? [a, b] : [b, a];
    sim.set(`${source}|${target}`, { source, target });
  }
  await index.save(resolveInProject(root, CACHE_FILES.hnswBin));
  index.close();

  await TABLES.documents.save(root, documents);
  await TABLES.text.save(root, textRows, dim);
  await TABLES.units.save(root, unitRows, dim);
  await TABLES.entities.save(root, entityRows);
  await TABLES.relationships.save(root, relRows);
  await TABLES.attributes.save(root, attrRows, dim);
  await TABLES.elements.save(root, elementRows, dim);
  await TABLES.titles.save(root, titleRows);
  await TABLES.graphNodes.save(root, graphNodeRows(nodes));
  await TABLES.graphEdges.save(root, edges.values());
  await TABLES.hnswGraph.save(root, sim.values());
  await TABLES.idMap.save(
    root,
    vectorRows.map((r, label) => ({ label, node: r.id, type: r.type, retired: false, generation: g })),
  );
  await writeState(root, {
    ...initialState(),
    current_state: 'FINISHED',
    generation: 1,
    last_finished_generation: 1,
    embedding: { provider: 'local', model: 'synthetic', dim },
  });
  writeFileSync(
    join(root, 'Node_config.yaml'),
    [
      'model_config:',
      '  service_provider: local',
      'embedding_config:',
      '  service_provider: local',
      'config:',
      `  main_folder: ${JSON.stringify(root)}`,
      `  dim: ${dim}`,
      '',
    ].join('\n'),
  );
  // Questions: near a unit's cluster, naming two of its entities and one unknown word.
  const questions = Array.from({ length: LARGE_QUERIES }, () => {
    const u = int(unitRows.length);
    const ents = unitEntities[u]!;
    return {
      vector: Array.from(near(unitCluster[u]!)),
      elements: [entityNames[ents[0]!]!.toLowerCase(), entityNames[ents[ents.length - 1]!]!, 'unknownword'],
    };
  });
  writeFileSync(join(root, 'questions.json'), JSON.stringify(questions));
  writeFileSync(marker, JSON.stringify(LARGE));
  console.log(
    `  ${nodes.length} nodes, ${edges.size} base edges, ${sim.size} similarity pairs; written in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return root;
}

/** The questions written with the large index (vectors near a unit's cluster, names of its entities). */
function largeQuestions(root: string): QueryInputs[] {
  const raw = JSON.parse(readFileSync(join(root, 'questions.json'), 'utf8')) as {
    vector: number[];
    elements: string[];
  }[];
  return raw.map((q) => ({ vector: Float32Array.from(q.vector), elements: q.elements }));
}

// ----------------------------------------------------------------------------- measuring

interface Timed {
  total: number[];
  /** CPU time of the process during the retrieval (user + system): immune to preemption. */
  cpu: number[];
  vector: number[];
  match: number[];
  propagate: number[];
  select: number[];
  context: number[];
}

function emptyTimed(): Timed {
  return { total: [], cpu: [], vector: [], match: [], propagate: [], select: [], context: [] };
}

function measure(index: LoadedIndex, queries: readonly QueryInputs[], params: SearchParams, repeats: number) {
  const t = emptyTimed();
  const results: Retrieval[] = [];
  // Warm-up pass (JIT, caches), not recorded.
  for (const q of queries) retrieve(index, q, params);
  for (let r = 0; r < repeats; r++) {
    // A full collection between passes, so one pass's garbage is not charged to the next.
    (globalThis as { gc?: () => void }).gc?.();
    for (const q of queries) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      const res = retrieve(index, q, params);
      t.total.push(performance.now() - start);
      const used = process.cpuUsage(cpu);
      t.cpu.push((used.user + used.system) / 1000);
      t.vector.push(res.timings.vectorMs);
      t.match.push(res.timings.matchMs);
      t.propagate.push(res.timings.propagateMs);
      t.select.push(res.timings.selectMs);
      t.context.push(res.timings.contextMs);
      if (r === 0) results.push(res);
    }
  }
  return { t, results };
}

function stageRows(label: string, t: Timed): string[][] {
  const stage = (name: string, xs: number[]) => [
    `${label}: ${name}`,
    fmt(percentile(xs, 0.5)),
    fmt(percentile(xs, 0.99)),
  ];
  return [
    stage('vector search', t.vector),
    stage('exact matching', t.match),
    stage('propagation + top-k', t.propagate),
    stage('selection', t.select),
    stage('context string', t.context),
    stage('retrieval total (wall clock)', t.total),
    stage('retrieval total, CPU time', t.cpu),
  ];
}

function sameResults(a: Retrieval[], b: Retrieval[]): boolean {
  return a.every((r, i) => r.context === b[i]!.context);
}

// ----------------------------------------------------------------------------- main

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0]!;
  console.log(`# query benchmark (Node ${process.version}, ${process.platform}/${process.arch})\n`);

  // HotpotQA-100 -----------------------------------------------------------------------
  const hotpotRoot = ensureHotpotIndex();
  // An index built before search_graph.bin existed: its next commit would write it.
  await ensureGraphSnapshot(hotpotRoot);
  const config = NodeConfig.fromMainFolder(hotpotRoot);
  const coldStart = performance.now();
  const search = new NodeSearch(config);
  await search.ready();
  const coldLoadMs = performance.now() - coldStart;
  const status = await search.status();
  search.close();
  const loads: LoadedIndex[] = [];
  const loadMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    loads.push(
      await LoadedIndex.load(hotpotRoot, {
        dim: config.config.dim,
        unbalanceAdjust: config.config.unbalance_adjust,
      }),
    );
    loadMs.push(performance.now() - t0);
  }
  const hotpot = loads.pop()!;
  for (const l of loads) l.close();

  const questions = loadQuestions();
  const providerStart = performance.now();
  const hotpotQueries: QueryInputs[] = questions.map((q) => ({
    vector: featureHashBatch([q.question], config.config.dim),
    elements: localQuery(q.question, 'English').elements,
  }));
  const providerMs = (performance.now() - providerStart) / questions.length;
  const params = searchParamsFrom(config.config);
  const sparse = measure(hotpot, hotpotQueries, params, REPEATS);
  const dense = measure(
    hotpot,
    hotpotQueries,
    { ...params, propagation: { ...params.propagation, dense: true } },
    REPEATS,
  );
  const contains = questions.filter((q, i) =>
    sparse.results[i]!.context.toLowerCase().includes(q.answer.toLowerCase()),
  ).length;

  // Large synthetic index --------------------------------------------------------------
  const largeRoot = await ensureLargeIndex();
  await ensureGraphSnapshot(largeRoot);
  const largeConfig = NodeConfig.fromMainFolder(largeRoot);
  const largeLoadCpu = process.cpuUsage();
  const largeLoadStart = performance.now();
  const large = await LoadedIndex.load(largeRoot, { dim: LARGE.dim, unbalanceAdjust: true });
  const largeLoadMs = performance.now() - largeLoadStart;
  const { user, system } = process.cpuUsage(largeLoadCpu);
  // All threads of the process: main, libuv pool (native builds, file reads).
  const largeLoadCpuMs = (user + system) / 1000;
  const largeParams = searchParamsFrom(largeConfig.config);
  const largeQueries = largeQuestions(largeRoot);
  const lSparse = measure(large, largeQueries, largeParams, 3);
  const lDense = measure(
    large,
    largeQueries,
    { ...largeParams, propagation: { ...largeParams.propagation, dense: true } },
    1,
  );

  // Report -----------------------------------------------------------------------------
  console.log('\n## Indexes\n');
  table([
    ['index', 'nodes', 'search-graph edges', 'active vectors', 'dim'],
    [
      'HotpotQA-100 (local provider)',
      String(status.nodes),
      String(hotpot.graph.edgeCount),
      String(status.vectors),
      String(config.config.dim),
    ],
    [
      'synthetic',
      String(large.nodeCount),
      String(large.graph.edgeCount),
      String(large.activeVectors),
      String(LARGE.dim),
    ],
  ]);

  console.log('\n## Load (ms)\n');
  table([
    ['index', 'from', 'read', 'map ids', 'native builds', 'total'],
    ...[hotpot, large].map((l, i) => [
      i === 0 ? 'HotpotQA-100 (5th load in process)' : 'synthetic (first load)',
      l.timings.snapshot ? 'search_graph.bin' : 'tables',
      fmt(l.timings.readMs, 1),
      fmt(l.timings.mapMs, 1),
      fmt(l.timings.nativeMs, 1),
      fmt(l.timings.totalMs, 1),
    ]),
  ]);
  console.log(
    `\nHotpotQA: first NodeSearch load in this process ${fmt(coldLoadMs, 1)} ms (providers included); LoadedIndex.load median of 5 ${fmt(percentile(loadMs, 0.5), 1)} ms; synthetic ${fmt(largeLoadMs, 1)} ms (process CPU ${fmt(largeLoadCpuMs, 1)} ms).`,
  );

  console.log(
    `\n## Retrieval per question, provider calls excluded (ms; HotpotQA ${questions.length} questions × ${REPEATS}, synthetic ${LARGE_QUERIES} × 3)\n`,
  );
  table([
    ['stage', 'p50', 'p99'],
    ...stageRows('HotpotQA', sparse.t),
    ...stageRows('synthetic', lSparse.t),
    [
      `peer: HotpotQA, dense propagation`,
      fmt(percentile(dense.t.total, 0.5)),
      fmt(percentile(dense.t.total, 0.99)),
    ],
    [
      `peer: synthetic, dense propagation`,
      fmt(percentile(lDense.t.total, 0.5)),
      fmt(percentile(lDense.t.total, 0.99)),
    ],
  ]);
  console.log(
    `\nSame contexts with dense propagation: HotpotQA ${sameResults(sparse.results, dense.results)}, synthetic ${sameResults(lSparse.results, lDense.results)}.`,
  );
  console.log(
    `Sparse vs dense retrieval p50: HotpotQA ×${fmt(percentile(dense.t.total, 0.5) / percentile(sparse.t.total, 0.5), 1)}, synthetic ×${fmt(percentile(lDense.t.total, 0.5) / percentile(lSparse.t.total, 0.5), 1)} faster.`,
  );
  console.log(
    `Local provider (embedding + decomposition) per HotpotQA question: ${fmt(providerMs)} ms (not in the retrieval times).`,
  );
  console.log(`HotpotQA contexts containing the gold answer string: ${contains}/${questions.length}.`);
  console.log(`Load average (1 min) at start ${fmt(loadAtStart, 1)}, at end ${fmt(loadavg()[0]!, 1)}.`);

  hotpot.close();
  large.close();
  // The median of five full loads: the first load of a process also pays for warming up
  // the JIT and the libuv pool, and on a shared machine it swings the most.
  const loadResult = percentile(loadMs, 0.5);
  console.log(
    `RESULT query load_ms=${fmt(loadResult, 1)} retrieval_p50_ms=${fmt(percentile(sparse.t.total, 0.5))} retrieval_p99_ms=${fmt(percentile(sparse.t.total, 0.99))} large_load_ms=${fmt(largeLoadMs, 1)} large_retrieval_p50_ms=${fmt(percentile(lSparse.t.total, 0.5))}`,
  );
}

await main();
