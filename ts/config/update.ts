/**
 * Changing keys of Node_config.yaml in place (the web UI's Save Config): the YAML document is
 * edited, not regenerated, so comments, key order and unknown keys survive. The result is
 * validated before anything is written; an invalid change leaves the file untouched and
 * returns every problem with its key path.
 */
import { chmodSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMap, isScalar } from 'yaml';
import { ConfigError } from '../errors.js';
import type { Env } from './api-keys.js';
import { configPresent, readConfigText } from './config-file.js';
import type { ConfigProblem } from './cross-checks.js';
import { NodeConfig, parseConfigYaml } from './node-config.js';
import type { NodeConfigData } from './schema.js';
import { CONFIG_FILE_NAME, renderConfigTemplate } from './template.js';
import { validateConfigData } from './validate.js';

/** New values by section and key; `null` writes null (e.g. clears `base_url`). */
export type ConfigPatch = {
  [S in keyof NodeConfigData]?: { [K in keyof NodeConfigData[S]]?: NodeConfigData[S][K] | null };
};

export type ConfigUpdateResult = { ok: true; config: NodeConfig } | { ok: false; problems: ConfigProblem[] };

export interface UpdateConfigOptions {
  env?: Env;
  /** Default false: a config may be saved before its key is known. */
  requireApiKeys?: boolean;
}

export function updateConfigFile(
  folder: string,
  patch: ConfigPatch,
  options: UpdateConfigOptions = {},
): ConfigUpdateResult {
  const abs = resolve(folder);
  const path = join(abs, CONFIG_FILE_NAME);
  const text = configPresent(path) ? readConfigText(path) : renderConfigTemplate(abs);
  let doc: ReturnType<typeof parseConfigYaml>['doc'];
  try {
    doc = parseConfigYaml(text, path).doc;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    throw new ConfigError(`${e.message}\nFix it by hand first.`, e.problems, { cause: e });
  }
  const env = options.env ?? process.env;
  const requireApiKeys = options.requireApiKeys ?? false;
  // Changes go into mappings: a file or a section that is something else (`config: 5`) is
  // reported as the validator words it (the YAML library would throw on setIn).
  const blocked =
    !canHoldKeys(doc.contents) || Object.keys(patch).some((section) => !canHoldKeys(doc.get(section, true)));
  if (blocked) {
    const check = validateConfigData(doc.toJS(), { folder: abs, env, requireApiKeys });
    if (!check.ok) return check;
    return { ok: false, problems: [{ path: '(file)', message: 'expected a mapping of sections' }] };
  }
  for (const [section, values] of Object.entries(patch)) {
    for (const [key, value] of Object.entries(values ?? {})) {
      if (value === undefined) continue;
      // A section written bare (`config:` or `config: ~`) is null in the document: it becomes
      // a mapping before a key goes into it (setIn cannot descend into a scalar).
      if (!isMap(doc.get(section, true))) doc.set(section, doc.createNode({}));
      doc.setIn([section, key], value);
    }
  }
  const check = validateConfigData(doc.toJS(), { folder: abs, env, requireApiKeys });
  if (!check.ok) return { ok: false, problems: check.problems };
  const out = doc.toString({ lineWidth: 0 });
  const tmp = join(abs, `.${CONFIG_FILE_NAME}.${process.pid}.tmp`);
  writeFileSync(tmp, out, { encoding: 'utf8', mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return { ok: true, config: NodeConfig.fromYaml(out, abs, { env, requireApiKeys }) };
}

/**
 * The file's values as written and what is wrong with them, for a form that must show a
 * config that does not load (a value out of range) rather than nothing. Throws ConfigError
 * only when the file is not YAML at all.
 */
export function readConfigForForm(
  folder: string,
  options: { env?: Env } = {},
): { raw: Record<string, unknown>; problems: ConfigProblem[] } {
  const abs = resolve(folder);
  const path = join(abs, CONFIG_FILE_NAME);
  const text = configPresent(path) ? readConfigText(path) : renderConfigTemplate(abs);
  const data = parseConfigYaml(text, path).doc.toJS() as unknown;
  const raw =
    typeof data === 'object' && data !== null && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : {};
  const check = validateConfigData(data, {
    folder: abs,
    env: options.env ?? process.env,
    requireApiKeys: false,
  });
  return { raw, problems: check.ok ? [] : check.problems };
}

/** A mapping, or nothing yet (absent, or written bare: `config:`), which becomes one. */
function canHoldKeys(node: unknown): boolean {
  return node === null || node === undefined || isMap(node) || (isScalar(node) && node.value === null);
}
