/**
 * Small hand-built indexes for search tests: the §5 tables written with the index-io
 * writers, a real HNSW.bin, id_map and similarity edges, info/state.json and a
 * Node_config.yaml on the local provider. No build pipeline involved, so a test states
 * exactly which nodes, edges and vectors exist.
 *
 *   const root = await writeSearchProject(dir, { dim: 4, nodes: [...], edges: [...] });
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { TABLES } from '../../ts/index-io/tables.js';
import { featureHashBatch } from '../../ts/llm/local/feature-hash.js';
import type { GraphEdge, NodeType } from '../../ts/model/types.js';
import { CACHE_FILES, resolveInProject } from '../../ts/project/layout.js';
import { type BuildState, initialState, writeState } from '../../ts/project/state.js';
import { VectorIndex, type VectorSpace } from '../../ts/vector/index.js';

export interface SpecNode {
  id: string;
  type: NodeType;
  text: string;
  /** Vector of a text, semantic_unit, attribute or high_level_element node (default: none). */
  vector?: readonly number[];
  /** text: its document's path. */
  doc?: string;
  /** semantic_unit, entity, relationship: id of its first chunk (a text node). */
  chunk?: string;
  /** attribute: its entity's id. */
  entity?: string;
  /** high_level_element_title: its element's id. */
  element?: string;
  /** relationship: its two entity ids. */
  ends?: readonly [string, string];
  /** attribute: an older vector of it, stored under a retired label (docs/method.md §3.9). */
  retiredVector?: readonly number[];
}

export interface IndexSpec {
  dim: number;
  space?: VectorSpace;
  nodes: readonly SpecNode[];
  /** Base-graph edges [a, b, weight = 1]. */
  edges: readonly (readonly [string, string, number?])[];
  /** Similarity pairs; default: the layer-0 links of the HNSW index built from the vectors. */
  similarity?: readonly (readonly [string, string])[];
  /** `vectors: 'local'` embeds every vector node's text with the local provider instead. */
  vectors?: 'given' | 'local';
  /** Keys of the `config:` section of Node_config.yaml (Enode, HNSW_results, …). */
  config?: Record<string, unknown>;
  /** Changes to the finished state written to info/state.json. */
  state?: Partial<BuildState>;
}

const VECTOR_TYPES: readonly NodeType[] = ['text', 'semantic_unit', 'attribute', 'high_level_element'];

function ordered(a: string, b: string): [string, string] {
  return a < b ? [a, b] : [b, a];
}

/** Writes Node_config.yaml (local providers) for a project at `root`. */
export async function writeSearchConfig(root: string, spec: Pick<IndexSpec, 'dim' | 'space' | 'config'>) {
  await mkdir(join(root, 'input'), { recursive: true });
  const yaml = stringify({
    model_config: { service_provider: 'local', model_name: 'local' },
    embedding_config: { service_provider: 'local', embedding_model_name: 'local' },
    config: { main_folder: root, dim: spec.dim, space: spec.space ?? 'l2', ...spec.config },
  });
  await writeFile(join(root, 'Node_config.yaml'), yaml);
}

/** The finished state of a first build. */
export function finishedState(dim: number, changes: Partial<BuildState> = {}): BuildState {
  return {
    ...initialState(),
    current_state: 'FINISHED',
    generation: 1,
    last_finished_generation: 1,
    embedding: { provider: 'local', model: 'local', dim },
    ...changes,
  };
}

/** Writes the index tables, HNSW.bin and state.json of `spec` under `root`. */
export async function writeSearchIndex(root: string, spec: IndexSpec): Promise<void> {
  const { dim } = spec;
  const nodes = spec.nodes;
  const byType = (t: NodeType) => nodes.filter((n) => n.type === t);
  const g = 1;
  const common = { generation: g, updatedGeneration: g, weight: 1 };

  let vectorOf = (n: SpecNode): Float32Array | null => (n.vector ? Float32Array.from(n.vector) : null);
  if (spec.vectors === 'local') {
    const embedded = nodes.filter((n) => VECTOR_TYPES.includes(n.type));
    const flat = featureHashBatch(
      embedded.map((n) => n.text),
      dim,
    );
    const map = new Map(embedded.map((n, i) => [n.id, flat.slice(i * dim, (i + 1) * dim)]));
    vectorOf = (n) => map.get(n.id) ?? null;
  }

  // Documents from the text nodes' paths, in path order.
  const paths = [...new Set(byType('text').map((t) => t.doc ?? 'doc.txt'))].sort();
  const docId = new Map(paths.map((p, i) => [p, i + 1]));
  const texts = byType('text');
  const documents = paths.map((path) => {
    const chunks = texts.filter((t) => (t.doc ?? 'doc.txt') === path);
    return {
      docId: docId.get(path)!,
      docHashId: `doc-${path}`,
      path,
      format: 'txt',
      textIds: chunks.map((c) => texts.indexOf(c) + 1),
      textHashIds: chunks.map((c) => c.id),
      charCount: chunks.reduce((s, c) => s + c.text.length, 0),
      generation: g,
    };
  });
  const firstChunk = (n: SpecNode) => n.chunk ?? texts[0]?.id ?? '';

  await mkdir(join(root, 'cache'), { recursive: true });
  await mkdir(join(root, 'info'), { recursive: true });
  await TABLES.documents.save(root, documents);
  await TABLES.text.save(
    root,
    texts.map((t, i) => ({
      textId: i + 1,
      hashId: t.id,
      context: t.text,
      docId: docId.get(t.doc ?? 'doc.txt')!,
      docHashId: `doc-${t.doc ?? 'doc.txt'}`,
      chunkIndex: 0,
      tokenCount: t.text.length,
      embedding: vectorOf(t),
      generation: g,
    })),
    dim,
  );
  await TABLES.units.save(
    root,
    byType('semantic_unit').map((u, i) => ({
      ...common,
      hashId: u.id,
      humanReadableId: i + 1,
      context: u.text,
      textHashId: firstChunk(u),
      textHashIds: [firstChunk(u)],
      embedding: vectorOf(u),
    })),
    dim,
  );
  await TABLES.entities.save(
    root,
    byType('entity').map((e, i) => ({
      ...common,
      hashId: e.id,
      humanReadableId: i + 1,
      context: e.text,
      textHashId: firstChunk(e),
    })),
  );
  await TABLES.relationships.save(
    root,
    byType('relationship').map((r, i) => ({
      ...common,
      hashId: r.id,
      humanReadableId: i + 1,
      uniqueRelationship: ordered(...(r.ends ?? ['', ''])),
      relations: [r.text],
      textHashId: firstChunk(r),
    })),
  );
  await TABLES.attributes.save(
    root,
    byType('attribute').map((a, i) => ({
      ...common,
      hashId: a.id,
      humanReadableId: i + 1,
      node: a.entity ?? '',
      context: a.text,
      embedding: vectorOf(a),
    })),
    dim,
  );
  await TABLES.elements.save(
    root,
    byType('high_level_element').map((h, i) => ({
      ...common,
      hashId: h.id,
      humanReadableId: i + 1,
      context: h.text,
      titleHashId: byType('high_level_element_title').find((t) => t.element === h.id)?.id ?? '',
      communityId: 1,
      relatedNodes: [],
      embedding: vectorOf(h),
    })),
    dim,
  );
  await TABLES.titles.save(
    root,
    byType('high_level_element_title').map((t, i) => ({
      hashId: t.id,
      humanReadableId: i + 1,
      context: t.text,
      relatedNode: t.element ?? '',
      weight: 1,
      generation: g,
    })),
  );
  await TABLES.graphNodes.save(
    root,
    nodes.map((n) => ({ id: n.id, type: n.type, weight: 1, generation: g, updatedGeneration: g })),
  );
  await TABLES.graphEdges.save(
    root,
    spec.edges.map(([a, b, w]): GraphEdge => {
      const [source, target] = ordered(a, b);
      return { source, target, weight: w ?? 1, generation: g };
    }),
  );

  // Vector index: labels in type order, then spec order; a retired older vector first.
  const labelled: { node: SpecNode; vector: Float32Array; retired: boolean }[] = [];
  for (const t of VECTOR_TYPES) {
    for (const n of byType(t)) {
      if (n.retiredVector) {
        // With local vectors, the older version is the local embedding of a changed text.
        const old =
          spec.vectors === 'local'
            ? featureHashBatch([`${n.text} (older version)`], dim)
            : Float32Array.from(n.retiredVector);
        labelled.push({ node: n, vector: old, retired: true });
      }
      const v = vectorOf(n);
      if (v) labelled.push({ node: n, vector: v, retired: false });
    }
  }
  const flat = new Float32Array(labelled.length * dim);
  labelled.forEach((l, i) => {
    flat.set(l.vector, i * dim);
  });
  const index = await VectorIndex.build({ space: spec.space ?? 'l2', dim, m: 8, efConstruction: 64 }, flat);
  let similarity = spec.similarity;
  if (!similarity) {
    const e = index.layer0Edges();
    const pairs = new Map<string, [string, string]>();
    for (let i = 0; i < e.src.length; i++) {
      const a = labelled[e.src[i]!]!;
      const b = labelled[e.dst[i]!]!;
      if (a.retired || b.retired || a.node.id === b.node.id) continue;
      const p = ordered(a.node.id, b.node.id);
      pairs.set(p.join('|'), p);
    }
    similarity = [...pairs.values()];
  }
  await index.save(resolveInProject(root, CACHE_FILES.hnswBin));
  index.close();
  await TABLES.idMap.save(
    root,
    labelled.map((l, label) => ({
      label,
      node: l.node.id,
      type: l.node.type,
      retired: l.retired,
      generation: g,
    })),
  );
  await TABLES.hnswGraph.save(
    root,
    similarity.map(([a, b]) => ({ source: ordered(a, b)[0], target: ordered(a, b)[1] })),
  );
  await writeState(root, finishedState(dim, spec.state));
}

/** A whole project: config, then index. */
export async function writeSearchProject(root: string, spec: IndexSpec): Promise<string> {
  await writeSearchConfig(root, spec);
  await writeSearchIndex(root, spec);
  return root;
}

/**
 * A small hand-built index about the Curies (two documents plus an orphan chunk): every
 * node type, an entity with and one without attribute, an element with its title, an
 * attribute with a retired older vector, and an entity (PARISIAN CAFE) that a phrase
 * match on "Paris" must not hit. Vectors are hand-set in 4 dimensions.
 */
export function curieSpec(overrides: Partial<IndexSpec> = {}): IndexSpec {
  const n = (id: string, type: NodeType, text: string, extra: Partial<SpecNode> = {}): SpecNode => ({
    id,
    type,
    text,
    ...extra,
  });
  const nodes: SpecNode[] = [
    n('t-a', 'text', 'Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891.', {
      doc: 'a.txt',
      vector: [1, 0, 0, 0],
    }),
    n('t-b', 'text', 'Pierre Curie married Marie Curie in Paris in 1895. Warsaw is the capital of Poland.', {
      doc: 'b.txt',
      vector: [0, 1, 0, 0],
    }),
    n('t-c', 'text', 'Parisian cafe culture flourished.', { doc: 'c.txt', vector: [0, 0, 1, 0] }),
    n('u-born', 'semantic_unit', 'Marie Curie was born in Warsaw in 1867.', {
      chunk: 't-a',
      vector: [0.9, 0.1, 0, 0],
    }),
    n('u-moved', 'semantic_unit', 'Marie Curie moved to Paris in 1891.', {
      chunk: 't-a',
      vector: [0.7, 0.3, 0, 0],
    }),
    n('u-married', 'semantic_unit', 'Pierre Curie married Marie Curie in Paris in 1895.', {
      chunk: 't-b',
      vector: [0.2, 0.8, 0, 0],
    }),
    n('u-capital', 'semantic_unit', 'Warsaw is the capital of Poland.', {
      chunk: 't-b',
      vector: [0, 0.9, 0.1, 0],
    }),
    n('u-cafe', 'semantic_unit', 'Parisian cafe culture flourished.', {
      chunk: 't-c',
      vector: [0, 0, 0.9, 0.1],
    }),
    n('e-marie', 'entity', 'MARIE CURIE', { chunk: 't-a' }),
    n('e-pierre', 'entity', 'PIERRE CURIE', { chunk: 't-b' }),
    n('e-paris', 'entity', 'PARIS', { chunk: 't-a' }),
    n('e-warsaw', 'entity', 'WARSAW', { chunk: 't-a' }),
    n('e-poland', 'entity', 'POLAND', { chunk: 't-b' }),
    n('e-1867', 'entity', '1867', { chunk: 't-a' }),
    n('e-parisian', 'entity', 'PARISIAN CAFE', { chunk: 't-c' }),
    n('r-born', 'relationship', 'MARIE CURIE born in WARSAW', {
      chunk: 't-a',
      ends: ['e-marie', 'e-warsaw'],
    }),
    n('r-moved', 'relationship', 'MARIE CURIE moved to PARIS', {
      chunk: 't-a',
      ends: ['e-marie', 'e-paris'],
    }),
    n('r-married', 'relationship', 'PIERRE CURIE married MARIE CURIE', {
      chunk: 't-b',
      ends: ['e-marie', 'e-pierre'],
    }),
    n('r-capital', 'relationship', 'WARSAW capital of POLAND', {
      chunk: 't-b',
      ends: ['e-poland', 'e-warsaw'],
    }),
    n('a-marie', 'attribute', 'Marie Curie: physicist, born in Warsaw in 1867, worked in Paris.', {
      entity: 'e-marie',
      vector: [0.8, 0.2, 0.1, 0],
    }),
    n('a-warsaw', 'attribute', 'Warsaw: capital of Poland, birthplace of Marie Curie.', {
      entity: 'e-warsaw',
      vector: [0.1, 0.5, 0.5, 0],
      retiredVector: [0, 0, 0, 1],
    }),
    n('h-paris', 'high_level_element', 'Scientific life in Paris: the Curies married and worked there.', {
      vector: [0.3, 0.7, 0, 0.1],
    }),
    n('ht-paris', 'high_level_element_title', 'The Curies in Paris', { element: 'h-paris' }),
  ];
  const edges: [string, string, number?][] = [
    ['u-born', 'e-marie'],
    ['u-born', 'e-warsaw'],
    ['u-born', 'e-1867'],
    ['u-moved', 'e-marie'],
    ['u-moved', 'e-paris'],
    ['u-married', 'e-pierre'],
    ['u-married', 'e-marie', 2],
    ['u-married', 'e-paris'],
    ['u-capital', 'e-warsaw'],
    ['u-capital', 'e-poland'],
    ['u-cafe', 'e-parisian'],
    ['r-born', 'e-marie'],
    ['r-born', 'e-warsaw'],
    ['r-moved', 'e-marie'],
    ['r-moved', 'e-paris'],
    ['r-married', 'e-pierre'],
    ['r-married', 'e-marie'],
    ['r-capital', 'e-warsaw'],
    ['r-capital', 'e-poland'],
    ['e-marie', 'a-marie'],
    ['e-warsaw', 'a-warsaw'],
    ['u-moved', 'h-paris'],
    ['u-married', 'h-paris'],
    ['h-paris', 'ht-paris'],
    ['u-born', 't-a'],
    ['u-moved', 't-a'],
    ['u-married', 't-b'],
    ['u-capital', 't-b'],
    ['u-cafe', 't-c'],
  ];
  return { dim: 4, nodes, edges, ...overrides };
}
