/**
 * `npm run bench -- vis`: time to produce the visualisation page for n = 100, 500, 1000 on
 * the HotpotQA-100 index (local provider). Each size runs in-process three times (first
 * run includes loading the tables; the median is reported).
 */

import { loadavg } from 'node:os';
import { writeVisualisation } from '../ts/vis/write.js';
import { ensureHotpotIndex } from './lib/hotpot.js';
import { writeResultsSection } from './lib/results-md.js';

const folder = ensureHotpotIndex();
const sizes = [100, 500, 1000];
const rows: { n: number; nodes: number; edges: number; linking: number; ms: number[] }[] = [];
for (const n of sizes) {
  const ms: number[] = [];
  let last = { nodes: 0, edges: 0, linking: 0 };
  for (let rep = 0; rep < 3; rep++) {
    const r = await writeVisualisation(folder, n, 256);
    ms.push(r.ms);
    last = r;
  }
  rows.push({ n, nodes: last.nodes, edges: last.edges, linking: last.linking, ms });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const table = [
  '| n | drawn nodes | linking nodes | edges | median ms | runs ms |',
  '|---:|---:|---:|---:|---:|---|',
  ...rows.map(
    (r) =>
      `| ${r.n} | ${r.nodes} | ${r.linking} | ${r.edges} | ${median(r.ms).toFixed(0)} | ${r.ms.map((x) => x.toFixed(0)).join(', ')} |`,
  ),
].join('\n');
const result = `RESULT vis n1000_ms=${median(rows[2]!.ms).toFixed(0)}`;
console.log('\nvisualisation page, HotpotQA-100 index (local provider)\n');
console.log(table);
writeResultsSection(
  'vis',
  [
    'Time for `writeVisualisation` (load the tables, PageRank, connect the top n by shortest paths,',
    'render and write index.html) on the HotpotQA-100 index built with the local provider; three',
    `in-process runs per n, median reported. Load average at the end: ${loadavg()[0]!.toFixed(1)} (2 cores).`,
    '',
    'Command: `npm run bench -- vis`',
    '',
    table,
    '',
    result,
  ].join('\n'),
);
console.log(result);
