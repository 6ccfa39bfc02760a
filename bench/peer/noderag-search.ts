/**
 * noderag's side of bench/peer.ts, in its own process: load the engine, retrieve every
 * question once, print `PEER_JSON {load_s, latencies_ms, maxrss_kb, errors}`.
 */
import { readFileSync } from 'node:fs';
import { NodeConfig } from '../../ts/config/node-config.js';
import { NodeSearch } from '../../ts/search/index.js';

const [folder, questionsFile] = process.argv.slice(2) as [string, string];
const questions = JSON.parse(readFileSync(questionsFile, 'utf8')) as string[];
const errors: { question: string | null; traceback: string }[] = [];
const latencies: number[] = [];
const t0 = performance.now();
const search = new NodeSearch(NodeConfig.fromMainFolder(folder));
let loadS = Number.NaN;
try {
  await search.ready();
  loadS = (performance.now() - t0) / 1000;
  for (const q of questions) {
    const t = performance.now();
    try {
      await search.search(q);
      latencies.push(performance.now() - t);
    } catch (e) {
      errors.push({ question: q, traceback: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    }
  }
} catch (e) {
  errors.push({ question: null, traceback: e instanceof Error ? (e.stack ?? e.message) : String(e) });
}
search.close();
console.log(
  `PEER_JSON ${JSON.stringify({ load_s: loadS, latencies_ms: latencies, maxrss_kb: process.resourceUsage().maxRSS, errors })}`,
);
