/**
 * Reading a V8 `.cpuprofile` (written by `node --cpu-prof`): self time per function, summed
 * over the profile's nodes that share a function name and location.
 */
import { basename, isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './hotpot.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface SelfTime {
  name: string;
  location: string;
  selfMs: number;
  percent: number;
}

/**
 * A function's script as a repository-relative path (`dist/graph/search-graph.js`), so the
 * tables in bench/RESULTS.md name no directory of the machine that ran them.
 */
function shortUrl(url: string): string {
  if (!url) return '(native)';
  const clean = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = clean.lastIndexOf('node_modules/');
  if (nm >= 0) return clean.slice(nm);
  if (!isAbsolute(clean)) return clean; // node:internal/..., evaluated code
  const rel = relative(REPO_ROOT, clean);
  if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/');
  const inTree = clean.search(/\/(dist|ts|bench|bindings)\//);
  return inTree >= 0 ? clean.slice(inTree + 1) : basename(clean);
}

export function topSelfTime(profile: CpuProfile, count: number): SelfTime[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time before sample i; attribute the next delta to sample i.
    const dt = deltas[i + 1] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const total = profile.endTime - profile.startTime;
  const merged = new Map<string, SelfTime>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)?.callFrame;
    if (!f) continue;
    const name = f.functionName || '(anonymous)';
    const location = f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}` : '(native / VM)';
    const key = `${name}@${location}`;
    const e = merged.get(key) ?? { name, location, selfMs: 0, percent: 0 };
    e.selfMs += us / 1000;
    merged.set(key, e);
  }
  return [...merged.values()]
    .map((e) => ({ ...e, percent: (100 * e.selfMs * 1000) / total }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, count);
}
