/**
 * Search-time settings tried without editing Node_config.yaml (`noderag eval --set key=value`):
 * the keys of the `config:` section that the search engine reads when it loads, so changing
 * them needs no rebuild. Values are read as YAML scalars (`10`, `0.5`, `true`, `walk`) and
 * validated by the config schema, so a bad value reads as it would in the file.
 */

import { parse as parseYaml } from 'yaml';
import { readConfigText } from '../config/config-file.js';
import { NodeConfig } from '../config/node-config.js';
import { configSectionSchema } from '../config/schema.js';
import { ConfigError, NodeRagError } from '../errors.js';

/** Keys of `config:` read at search time (docs/method.md §6, §7.6). */
export const SEARCH_TIME_KEYS = [
  'HNSW_results',
  'bridge_passages',
  'bridge_max_degree',
  'ef_search',
  'cross_node',
  'Enode',
  'Rnode',
  'Hnode',
  'similarity_weight',
  'accuracy_weight',
  'ppr_alpha',
  'ppr_max_iter',
  'ppr_mode',
  'unbalance_adjust',
] as const;

export type SearchTimeKey = (typeof SEARCH_TIME_KEYS)[number];
export type SearchOverrides = Partial<Record<SearchTimeKey, unknown>>;

/** A `key=value` that names no search-time key, or whose value the schema rejects. */
export class SettingError extends NodeRagError {
  /** The key as given. */
  readonly key: string;
  constructor(key: string, message: string) {
    super('invalid_setting', message);
    this.key = key;
  }
}

const KEY_LIST = SEARCH_TIME_KEYS.join(', ');

function searchKey(raw: string): SearchTimeKey {
  const key = raw.trim().replace(/^config\./, '');
  if ((SEARCH_TIME_KEYS as readonly string[]).includes(key)) return key as SearchTimeKey;
  const known = Object.keys(configSectionSchema.shape);
  const hint = known.find((k) => k.toLowerCase() === key.toLowerCase());
  if (hint && (SEARCH_TIME_KEYS as readonly string[]).includes(hint))
    throw new SettingError(raw, `${raw}: unknown key (did you mean ${hint}?); search-time keys: ${KEY_LIST}`);
  if (known.includes(key) || hint)
    throw new SettingError(
      raw,
      `${raw}: not a search-time key (changing it needs a rebuild: edit Node_config.yaml); search-time keys: ${KEY_LIST}`,
    );
  throw new SettingError(raw, `${raw}: unknown key; search-time keys: ${KEY_LIST}`);
}

/** Parses `key=value` (the value a YAML scalar); checks the key, not yet the value. */
export function parseSetting(text: string): { key: SearchTimeKey; value: unknown } {
  const eq = text.indexOf('=');
  if (eq <= 0)
    throw new SettingError(text, `${JSON.stringify(text)}: expected key=value, e.g. HNSW_results=20`);
  const rawKey = text.slice(0, eq);
  const rawValue = text.slice(eq + 1).trim();
  const key = searchKey(rawKey);
  if (rawValue === '')
    throw new SettingError(rawKey, `${rawKey}: expected key=value with a value, got nothing after "="`);
  let value: unknown;
  try {
    value = parseYaml(rawValue, { logLevel: 'error' });
  } catch {
    value = rawValue;
  }
  // YAML null (null, ~) would be validated as "unset", i.e. the default, under the label key=null.
  if (value === null)
    throw new SettingError(rawKey, `${rawKey}: expected a value, got ${JSON.stringify(rawValue)} (null)`);
  return { key, value };
}

/** Parses several `key=value`; a later value of the same key wins. */
export function parseSettings(texts: readonly string[]): SearchOverrides {
  const out: SearchOverrides = {};
  for (const t of texts) {
    const { key, value } = parseSetting(t);
    out[key] = value;
  }
  return out;
}

/** `HNSW_results=20, Rnode=0` */
export function describeOverrides(o: SearchOverrides): string {
  return Object.entries(o)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/**
 * The project's config with search-time keys replaced (the file is not touched). Throws a
 * SettingError naming the key when the schema rejects a value.
 */
export function withSearchSettings(config: NodeConfig, overrides: SearchOverrides): NodeConfig {
  for (const k of Object.keys(overrides)) searchKey(k);
  const raw = (parseYaml(readConfigText(config.configPath), { logLevel: 'error' }) ?? {}) as Record<
    string,
    unknown
  >;
  const section = (raw.config ?? {}) as Record<string, unknown>;
  try {
    return NodeConfig.fromData({ ...raw, config: { ...section, ...overrides } }, config.mainFolder);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const keys = Object.keys(overrides);
    const mine = e.problems.filter((p) => keys.some((k) => p.includes(`config.${k}`)));
    const first = keys.find((k) => mine.some((p) => p.includes(`config.${k}`))) ?? keys[0] ?? '';
    const problems = (mine.length ? mine : e.problems).map((p) => p.replace(/^config\./, ''));
    throw new SettingError(first, problems.join('; '));
  }
}
