/**
 * Validates a parsed Node_config.yaml in one pass: every key through its schema field, then
 * the cross-key rules. Missing keys (and `key:` left empty, which YAML reads as null) take
 * their default; unknown keys are ignored with a warning. Problems name the dotted key path
 * and what was expected; secrets are never echoed.
 */
import type { z } from 'zod';
import type { Env } from './api-keys.js';
import { type ConfigProblem, runCrossChecks } from './cross-checks.js';
import { EXPECTED_PREFIX } from './fields.js';
import { type NodeConfigData, nodeConfigSchema, SECRET_KEYS, type SectionName } from './schema.js';

export type { ConfigProblem } from './cross-checks.js';

export interface ValidateOptions {
  /** Absolute folder holding the file (for the `main_folder` check). */
  folder: string;
  /** Environment for API keys; defaults to process.env. */
  env?: Env;
  /** When false, a missing API key is not a problem (commands that never call a provider). */
  requireApiKeys?: boolean;
}

export type ValidateResult =
  | {
      ok: true;
      data: NodeConfigData;
      warnings: string[];
      apiKeys: { model: string | undefined; embedding: string | undefined };
    }
  | { ok: false; problems: ConfigProblem[]; warnings: string[] };

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** How a wrong value is shown after "got": JSON for scalars, a kind for collections. */
export function describeValue(v: unknown, secret = false): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (secret) return `a ${typeof v}`;
  if (typeof v === 'string') {
    const s = v.length > 60 ? `${v.slice(0, 57)}...` : v;
    return JSON.stringify(s);
  }
  return String(v);
}

export function formatProblem(p: ConfigProblem): string {
  return `${p.path}: ${p.message}`;
}

/** Levenshtein distance with adjacent transpositions (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  let prev2: number[] = [];
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, prev2[j - 2]! + 1);
      cur.push(d);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[n]!;
}

/**
 * The closest known key to an unknown one, to suggest in the warning: case and `-`/`_`
 * slips first, then the nearest by edit distance (at most 1 for keys of up to 4
 * characters, 2 up to 8, 3 beyond), ties going to the first in schema order.
 */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  const exact = known.find((k) => norm(k) === norm(key));
  if (exact) return exact;
  const target = key.toLowerCase();
  const limit = target.length <= 4 ? 1 : target.length <= 8 ? 2 : 3;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const k of known) {
    const d = editDistance(target, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** "did you mean …?" for an unknown key of `section`: a near key there, or the same key in another section. */
function keyHint(section: SectionName, key: string, shapes: Record<SectionName, readonly string[]>): string {
  const near = suggestKey(key, shapes[section]);
  if (near) return ` (did you mean ${near}?)`;
  for (const other of Object.keys(shapes) as SectionName[]) {
    if (other === section) continue;
    const there = suggestKey(key, shapes[other]);
    if (there && there.toLowerCase() === key.toLowerCase()) return ` (did you mean ${other}.${there}?)`;
  }
  return '';
}

export function validateConfigData(raw: unknown, options: ValidateOptions): ValidateResult {
  const problems: ConfigProblem[] = [];
  const warnings: string[] = [];
  const root: Record<string, unknown> =
    raw === null || raw === undefined ? {} : (raw as Record<string, unknown>);
  if (!isMapping(root)) {
    return {
      ok: false,
      problems: [
        {
          path: '(file)',
          message: `expected a mapping with the sections model_config, embedding_config and config, got ${describeValue(raw)}`,
        },
      ],
      warnings,
    };
  }

  const sectionNames = Object.keys(nodeConfigSchema.shape) as SectionName[];
  for (const key of Object.keys(root)) {
    if (!(sectionNames as string[]).includes(key)) {
      const hint = suggestKey(key, sectionNames);
      warnings.push(`${key}: unknown section, ignored${hint ? ` (did you mean ${hint}?)` : ''}`);
    }
  }

  const keysOf = Object.fromEntries(
    sectionNames.map((name) => [name, Object.keys(nodeConfigSchema.shape[name].shape)]),
  ) as Record<SectionName, string[]>;
  const values: Record<string, Record<string, unknown>> = {};
  for (const section of sectionNames) {
    const shape = nodeConfigSchema.shape[section].shape as Record<string, z.ZodType>;
    const rawSection = root[section] ?? {};
    const out: Record<string, unknown> = {};
    values[section] = out;
    if (!isMapping(rawSection)) {
      problems.push({ path: section, message: `expected a mapping, got ${describeValue(rawSection)}` });
      continue;
    }
    const knownKeys = Object.keys(shape);
    for (const key of Object.keys(rawSection)) {
      if (!knownKeys.includes(key)) {
        warnings.push(`${section}.${key}: unknown key, ignored${keyHint(section, key, keysOf)}`);
      }
    }
    for (const key of knownKeys) {
      const field = shape[key] as z.ZodType;
      const path = `${section}.${key}`;
      let value = rawSection[key];
      // `key:` with nothing after it is null in YAML: treat it as missing unless null is a value.
      if (value === null && !field.safeParse(null).success) value = undefined;
      const r = field.safeParse(value);
      if (r.success) {
        out[key] = r.data;
        continue;
      }
      const message = r.error.issues[0]?.message ?? 'invalid value';
      problems.push({
        path,
        message: message.startsWith(EXPECTED_PREFIX)
          ? `${message}, got ${describeValue(value, SECRET_KEYS.has(path))}`
          : message,
      });
    }
  }

  const cross = runCrossChecks({
    model: values.model_config ?? {},
    embedding: values.embedding_config ?? {},
    config: values.config ?? {},
    folder: options.folder,
    env: options.env ?? process.env,
    requireApiKeys: options.requireApiKeys ?? true,
    failed: new Set(problems.map((p) => p.path)),
  });
  problems.push(...cross.problems);
  warnings.push(...cross.warnings);
  if (problems.length > 0) return { ok: false, problems, warnings };

  // Every key passed its field schema; parsing the assembled object once more gives the
  // typed result without a cast (and would catch a field missing from the loop above).
  const data = nodeConfigSchema.parse(values);
  return { ok: true, data, warnings, apiKeys: cross.apiKeys };
}
