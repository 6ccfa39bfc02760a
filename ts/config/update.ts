/**
 * Changing keys of Node_config.yaml in place (the web UI's Save Config): the YAML document is
 * edited, not regenerated, so comments, key order and unknown keys survive. The result is
 * validated before anything is written; an invalid change leaves the file untouched and
 * returns every problem with its key path.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isScalar } from 'yaml';
import { ConfigError } from '../errors.js';
import type { Env } from './api-keys.js';
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
  const text = existsSync(path)
    ? readFileSync(path, 'utf8').replace(/^\uFEFF/, '')
    : renderConfigTemplate(abs);
  let doc: ReturnType<typeof parseConfigYaml>['doc'];
  try {
    doc = parseConfigYaml(text, path).doc;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    throw new ConfigError(`${e.message}\nFix it by hand first.`, e.problems, { cause: e });
  }
  for (const [section, values] of Object.entries(patch)) {
    for (const [key, value] of Object.entries(values ?? {})) {
      if (value === undefined) continue;
      // A section written bare (`config:` or `config: ~`) is null in the document: it becomes
      // a mapping before a key goes into it (setIn cannot descend into a scalar).
      const current = doc.get(section, true);
      if (current === null || (isScalar(current) && current.value === null))
        doc.set(section, doc.createNode({}));
      doc.setIn([section, key], value);
    }
  }
  const env = options.env ?? process.env;
  const requireApiKeys = options.requireApiKeys ?? false;
  const check = validateConfigData(doc.toJS(), { folder: abs, env, requireApiKeys });
  if (!check.ok) return { ok: false, problems: check.problems };
  const out = doc.toString({ lineWidth: 0 });
  const tmp = join(abs, `.${CONFIG_FILE_NAME}.${process.pid}.tmp`);
  writeFileSync(tmp, out, { encoding: 'utf8', mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return { ok: true, config: NodeConfig.fromYaml(out, abs, { env, requireApiKeys }) };
}
