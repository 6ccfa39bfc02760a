/**
 * The folders of ts/ form layers, and imports only go down (ARCHITECTURE.md "Layers"). This
 * test reads every import of every source file, so a new import that points up a layer, or
 * a cycle between folders, fails here rather than in review.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const TS = resolve(__dirname, '..', '..', 'ts');

/** Lowest first. A folder may import only from folders of a strictly lower layer (or itself). */
const LAYERS: readonly (readonly string[])[] = [
  ['errors.ts', 'native.ts', 'version.ts', 'shell-arg.ts', 'utf8-text.ts'],
  ['text', 'store', 'vector', 'graph', 'config', 'project'],
  ['model', 'llm'],
  ['index-io'],
  ['indexing', 'search', 'vis'],
  ['server', 'eval'],
  ['ui'],
  ['cli'],
  ['index.ts'],
];

function layerOf(unit: string): number {
  const i = LAYERS.findIndex((l) => l.includes(unit));
  if (i < 0) throw new Error(`ts/${unit} is in no layer: add it to LAYERS in tests/unit/layers.test.ts`);
  return i;
}

/** `text` for ts/text/chunk.ts, `errors.ts` for ts/errors.ts. */
function unitOf(file: string): string {
  return relative(TS, file).split(sep)[0]!;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

interface Edge {
  from: string;
  to: string;
  file: string;
}

function folderImports(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(TS)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
      const target = resolve(dirname(file), m[1]!);
      if (!target.startsWith(TS + sep)) continue; // the addon's generated bindings
      const from = unitOf(file);
      const to = unitOf(target.replace(/\.js$/, '.ts'));
      if (from !== to) edges.push({ from, to, file: relative(TS, file) });
    }
  }
  return edges;
}

describe('ts/ layers', () => {
  const edges = folderImports();

  it('finds the imports it checks', () => {
    // Guards the regex: the pipeline alone imports from a dozen folders.
    expect(edges.filter((e) => e.from === 'indexing').length).toBeGreaterThan(20);
  });

  it('imports only from lower layers', () => {
    const upward = edges
      .filter((e) => layerOf(e.to) >= layerOf(e.from) && !(layerOf(e.from) === 0 && layerOf(e.to) === 0))
      .map((e) => `ts/${e.file} imports ts/${e.to} (layer ${layerOf(e.to)} ≥ ${layerOf(e.from)})`);
    expect(upward).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    const next = new Map<string, Set<string>>();
    for (const e of edges) {
      if (!next.has(e.from)) next.set(e.from, new Set());
      next.get(e.from)!.add(e.to);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (u: string, path: string[]) => {
      state.set(u, 'open');
      for (const v of next.get(u) ?? []) {
        if (state.get(v) === 'open') cycles.push([...path, u, v].join(' → '));
        else if (!state.has(v)) visit(v, [...path, u]);
      }
      state.set(u, 'done');
    };
    for (const u of next.keys()) if (!state.has(u)) visit(u, []);
    expect(cycles).toEqual([]);
  });
});
