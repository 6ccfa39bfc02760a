/**
 * Loading Node_config.yaml: `NodeConfig.fromMainFolder(folder)` (sync, alias
 * `from_main_folder`) returns a validated config or throws ConfigError listing every problem;
 * `ensureConfig(folder)` writes the commented template on first run (docs/method.md §7.6).
 *
 * Resolved API keys live in a private field: they are not enumerable, not in `toJSON()` and
 * not in `util.inspect`, so logging a config never prints a key.
 */
import { linkSync, mkdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { type Document, isAlias, LineCounter, parseDocument, visit } from 'yaml';
import { ConfigError, InvalidArgumentError } from '../errors.js';
import { shellArg } from '../shell-arg.js';
import type { Env } from './api-keys.js';
import { configPresent, readConfigText } from './config-file.js';
import type {
  ConfigSectionData,
  EmbeddingConfigData,
  ModelConfigData,
  NodeConfigData,
  ProviderName,
} from './schema.js';
import { REDACTED } from './secrets.js';
import { CONFIG_FILE_NAME, renderConfigTemplate } from './template.js';
import { formatProblem, validateConfigData } from './validate.js';

/** Name of the command-line tool, used in messages that tell the user what to run. */
export const DEFAULT_CLI_NAME = 'noderag';

export interface LoadConfigOptions {
  /** Environment for API keys (default process.env). */
  env?: Env;
  /** When false a missing API key is no problem (e.g. `vis`, which calls no provider). */
  requireApiKeys?: boolean;
  /** Executable name shown in "run `<cli> build -f <folder>` first" (default `noderag`). */
  cliName?: string;
}

/** A provider section as the rest of the code sees it: the key is held by NodeConfig. */
export type ModelSettings = Readonly<Omit<ModelConfigData, 'api_keys'>>;
export type EmbeddingSettings = Readonly<Omit<EmbeddingConfigData, 'api_keys'>>;
export type ConfigSettings = Readonly<ConfigSectionData>;

export type ProviderSection = 'model_config' | 'embedding_config';

export function missingConfigMessage(folder: string, cliName = DEFAULT_CLI_NAME): string {
  const problem = projectFolderProblem(folder);
  if (problem) return problem;
  // Without input/ either it is no project at all: `build` there would say so, not start one.
  if (!isDirectory(join(folder, 'input'))) {
    return `${folder} has neither ${CONFIG_FILE_NAME} nor an input/ folder, so it is not a project (mistyped -f?): -f takes the project folder, the one holding input/ and, after its first build, ${CONFIG_FILE_NAME}.`;
  }
  return `No ${CONFIG_FILE_NAME} in ${folder}; run \`${cliName} build -f ${shellArg(folder)}\` first.`;
}

/**
 * Why `folder` cannot be a project folder (it does not exist, or it is a file), or null.
 * A mistyped `-f` is reported as such instead of as a missing config.
 */
export function projectFolderProblem(folder: string): string | null {
  let isDir: boolean;
  try {
    isDir = statSync(folder).isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return `No folder ${folder}: check the path given to -f (a project folder holds ${CONFIG_FILE_NAME} and input/).`;
    }
    return `cannot read the folder ${folder}: ${code ?? String(e)}`;
  }
  if (!isDir) {
    return `${folder} is a file, not a project folder: -f takes the folder that holds ${CONFIG_FILE_NAME} and input/.`;
  }
  // -f given the documents' folder itself (`-f proj/input`): a config would be written among
  // the documents (and read as one by the next build), and the hint would say to make input/input.
  if (
    basename(folder) === 'input' &&
    !configPresent(join(folder, CONFIG_FILE_NAME)) &&
    !isDirectory(join(folder, 'input'))
  ) {
    const project = dirname(folder);
    return `${folder} is the input/ folder of a project: -f takes the project folder, the one that holds ${CONFIG_FILE_NAME} and input/ (here -f ${shellArg(project)}).`;
  }
  return null;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Parses the text of Node_config.yaml. Every kind of YAML failure — syntax, duplicate keys,
 * an undefined alias, aliases that expand too much (an "alias bomb"), nesting too deep — is
 * a ConfigError naming the file and, when known, the line; nothing the yaml library throws
 * escapes. Returns the document (for in-place edits) and its plain value.
 */

/**
 * yaml places some errors (a key indented more than its siblings) on the comment line above
 * the culprit: the position and the line quoted are moved to the next line that holds YAML.
 */
function pastComments(message: string, at: { line: number; col: number } | undefined, text: string): string {
  if (!at) return message;
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  const holdsYaml = (l: string | undefined) =>
    l !== undefined && l.trim() !== '' && !l.trim().startsWith('#');
  if (holdsYaml(lines[at.line - 1])) return message;
  let n = at.line;
  while (n < lines.length && !holdsYaml(lines[n])) n++;
  const line = lines[n];
  if (!holdsYaml(line)) return message;
  const col = line!.length - line!.trimStart().length + 1;
  return `${message.replace(`at line ${at.line}, column ${at.col}`, `at line ${n + 1}, column ${col}`)} ("${line!.trim()}")`;
}

export function parseConfigYaml(text: string, path: string): { doc: Document; data: unknown } {
  const lineCounter = new LineCounter();
  const fail = (problems: string[], cause?: unknown): never => {
    // The parser's first error is the one to fix: the others mostly follow from it (one
    // tab-indented line gave three, and a whole file of them dozens; deep nesting hundreds).
    const shown = problems.slice(0, 1);
    if (problems.length > 1) {
      const more = problems.length - 1;
      shown.push(`… and ${more} more that may follow from it: fix the first and run again`);
    }
    throw new ConfigError(`${path} is not valid YAML:\n  ${shown.join('\n  ')}`, shown, { cause });
  };
  // The parser's stack overflow on deep nesting is said as what it is.
  const invalid = (what: string) =>
    `${CONFIG_FILE_NAME}: invalid YAML: ${what.replace(/Maximum call stack size exceeded/, 'nested too deeply (a config is sections of keys, two levels deep)')}`;
  let doc: Document;
  try {
    // logLevel 'error': the library's warnings (an unknown tag, a collection used as a key)
    // would go to stderr with a code frame; what matters is reported as a problem below.
    doc = parseDocument(text.replace(/^\uFEFF/, ''), {
      uniqueKeys: true,
      prettyErrors: true,
      lineCounter,
      logLevel: 'error',
    });
  } catch (e) {
    return fail([invalid(oneLineOf(e))], e);
  }
  if (doc.errors.length > 0) {
    // yaml's first message line already names the line and column.
    return fail(
      doc.errors.map((e) => {
        const first = (e.message.split('\n')[0] ?? '').replace(/:$/, '');
        // "Map keys must be unique at line 3, column 3" does not say which key.
        if (e.code !== 'DUPLICATE_KEY') return invalid(pastComments(first, e.linePos?.[0], text));
        const at = e.linePos?.[0];
        const line = at ? text.replace(/^\uFEFF/, '').split('\n')[at.line - 1] : undefined;
        const key = line
          ?.slice(at!.col - 1)
          .split(':')[0]
          ?.trim();
        return invalid(
          key ? first.replace('Map keys must be unique', `the key "${key}" appears twice`) : first,
        );
      }),
      doc.errors[0],
    );
  }
  try {
    return { doc, data: doc.toJS() };
  } catch (e) {
    // Raised while resolving aliases: an undefined anchor, or more alias expansions than the
    // library allows (a few lines can otherwise expand to billions of nodes).
    const message = oneLineOf(e);
    const where = firstAliasLine(doc, lineCounter);
    const at = where === null ? '' : ` at line ${where}`;
    const what = /excessive alias count/i.test(message)
      ? `aliases expand to too many nodes${at} (an "alias bomb"); write the values out instead of repeating *aliases`
      : `${message}${at}`;
    return fail([invalid(what)], e);
  }
}

function oneLineOf(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return (text.split('\n')[0] ?? '').replace(/:$/, '');
}

/** 1-based line of the first alias (`*name`) in the document, or null. */
function firstAliasLine(doc: Document, lineCounter: LineCounter): number | null {
  let offset: number | null = null;
  try {
    visit(doc, {
      Alias(_key, node) {
        if (isAlias(node) && node.range) {
          offset = node.range[0];
          return visit.BREAK;
        }
        return undefined;
      },
    });
  } catch {
    return null;
  }
  return offset === null ? null : lineCounter.linePos(offset).line;
}

export function firstRunMessage(folder: string): string {
  return (
    `Created ${join(folder, CONFIG_FILE_NAME)}. Set the provider and API key (or OPENAI_API_KEY / ` +
    `GEMINI_API_KEY), put documents in ${join(folder, 'input')}, then run the build again.`
  );
}

function withoutKey<T extends { api_keys: unknown }>(section: T): Readonly<Omit<T, 'api_keys'>> {
  const { api_keys: _omitted, ...rest } = section;
  return Object.freeze(rest);
}

export class NodeConfig {
  /** Absolute folder holding Node_config.yaml (the project root). */
  readonly mainFolder: string;
  /** Absolute path of Node_config.yaml. */
  readonly configPath: string;
  readonly model_config: ModelSettings;
  readonly embedding_config: EmbeddingSettings;
  readonly config: ConfigSettings;
  /** Unknown keys, main_folder mismatch and similar: worth logging, not fatal. */
  readonly warnings: readonly string[];
  readonly #apiKeys: { model: string | undefined; embedding: string | undefined };

  private constructor(
    folder: string,
    data: NodeConfigData,
    apiKeys: { model: string | undefined; embedding: string | undefined },
    warnings: string[],
  ) {
    this.mainFolder = folder;
    this.configPath = join(folder, CONFIG_FILE_NAME);
    this.model_config = withoutKey(data.model_config);
    this.embedding_config = withoutKey(data.embedding_config);
    // The folder actually holding the file wins over what the file says (§7.6).
    this.config = Object.freeze({ ...data.config, main_folder: folder });
    this.warnings = Object.freeze([...warnings]);
    this.#apiKeys = apiKeys;
  }

  /**
   * Loads and validates `<folder>/Node_config.yaml` (synchronous). Throws ConfigError with
   * every problem, or with the "No Node_config.yaml …" message when the file is missing.
   */
  static fromMainFolder(folder: string, options: LoadConfigOptions = {}): NodeConfig {
    if (typeof folder !== 'string' || folder.trim() === '') {
      throw new InvalidArgumentError(
        'invalid_argument',
        `NodeConfig.fromMainFolder(folder): folder must be the path of a project folder (a non-empty string), got ${typeof folder === 'string' ? JSON.stringify(folder) : inspect(folder)}`,
      );
    }
    const abs = resolve(folder);
    const path = join(abs, CONFIG_FILE_NAME);
    if (!configPresent(path)) {
      const msg = missingConfigMessage(abs, options.cliName);
      throw new ConfigError(msg, [msg]);
    }
    return NodeConfig.fromYaml(readConfigText(path), abs, options);
  }

  /** Alias of {@link NodeConfig.fromMainFolder}, named as in the spec. */
  static from_main_folder(folder: string, options: LoadConfigOptions = {}): NodeConfig {
    return NodeConfig.fromMainFolder(folder, options);
  }

  /** Parses YAML text as if it were `<folder>/Node_config.yaml`. */
  static fromYaml(text: string, folder: string, options: LoadConfigOptions = {}): NodeConfig {
    const abs = resolve(folder);
    const { data } = parseConfigYaml(text, join(abs, CONFIG_FILE_NAME));
    return NodeConfig.fromData(data, abs, options);
  }

  /** Validates an already-parsed object (tests, the web UI's form). */
  static fromData(raw: unknown, folder: string, options: LoadConfigOptions = {}): NodeConfig {
    const abs = resolve(folder);
    const result = validateConfigData(raw, {
      folder: abs,
      env: options.env ?? process.env,
      requireApiKeys: options.requireApiKeys ?? true,
    });
    if (!result.ok) {
      const problems = result.problems.map(formatProblem);
      const n = problems.length;
      // Warnings go along: an ignored `Chunk_size` often explains a problem.
      const notes = result.warnings.map((w) => `\n  (warning) ${w}`).join('');
      throw new ConfigError(
        `${join(abs, CONFIG_FILE_NAME)} has ${n} problem${n === 1 ? '' : 's'}:\n  ${problems.join('\n  ')}${notes}`,
        problems,
      );
    }
    return new NodeConfig(abs, result.data, result.apiKeys, result.warnings);
  }

  /** The resolved API key of a section (file, then environment), or undefined. */
  apiKey(section: ProviderSection): string | undefined {
    return section === 'model_config' ? this.#apiKeys.model : this.#apiKeys.embedding;
  }

  /** Every key this config holds, for redacting messages (see redactSecrets). */
  secrets(): string[] {
    return [this.#apiKeys.model, this.#apiKeys.embedding].filter((k): k is string => !!k);
  }

  providerOf(section: ProviderSection): ProviderName {
    return this[section].service_provider;
  }

  get inputFolder(): string {
    return join(this.mainFolder, 'input');
  }
  get cacheFolder(): string {
    return join(this.mainFolder, 'cache');
  }
  get infoFolder(): string {
    return join(this.mainFolder, 'info');
  }
  get responseCacheFolder(): string {
    return join(this.mainFolder, 'cache', 'response_cache');
  }

  /** The file's shape, keys shown only as set/unset. */
  toJSON(): Record<string, unknown> {
    return {
      model_config: { ...this.model_config, api_keys: this.#apiKeys.model ? REDACTED : null },
      embedding_config: { ...this.embedding_config, api_keys: this.#apiKeys.embedding ? REDACTED : null },
      config: { ...this.config },
    };
  }

  [inspect.custom](): string {
    return `NodeConfig ${inspect(this.toJSON(), { depth: 3 })}`;
  }
}

/**
 * Why `build` must not create a project in `folder`, or null. The template (and nothing
 * else) is written only into an existing folder that already has an input/ folder, so a
 * mistyped `-f` never leaves a new folder or a stray Node_config.yaml behind.
 */
export function firstRunProblem(folder: string, cliName = DEFAULT_CLI_NAME): string | null {
  const abs = resolve(folder);
  const problem = projectFolderProblem(abs);
  if (problem) return problem;
  if (configPresent(join(abs, CONFIG_FILE_NAME))) return null;
  const input = join(abs, 'input');
  if (isDirectory(input)) return null;
  return (
    `${abs} has neither ${CONFIG_FILE_NAME} nor an input/ folder, so it is not a project yet (mistyped -f?). ` +
    `To start one there: mkdir ${input}, put your documents in it, then run \`${cliName} build -f ${shellArg(folder)}\` again.`
  );
}

export type EnsureConfigResult =
  | { created: true; folder: string; configPath: string; message: string }
  | { created: false; folder: string; configPath: string };

/**
 * First-run behaviour of `build` (§7.6): when `<folder>/Node_config.yaml` is missing, create
 * the folder and `input/`, write the commented template and return `created: true` with the
 * message to print (the CLI then exits 3). An existing file is left untouched.
 */
export function ensureConfig(folder: string): EnsureConfigResult {
  const abs = resolve(folder);
  const configPath = join(abs, CONFIG_FILE_NAME);
  // Anything there, even a broken link, is the user's: reading it says what is wrong with it.
  if (configPresent(configPath)) return { created: false, folder: abs, configPath };
  mkdirSync(join(abs, 'input'), { recursive: true });
  // Write a temp file and hard-link it into place: the config appears complete or not at
  // all, and a concurrent first run cannot overwrite a file another process just wrote.
  const tmp = join(abs, `.${CONFIG_FILE_NAME}.${process.pid}.tmp`);
  writeFileSync(tmp, renderConfigTemplate(abs), { encoding: 'utf8', mode: 0o600 });
  try {
    linkSync(tmp, configPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return { created: false, folder: abs, configPath };
  } finally {
    unlinkSync(tmp);
  }
  return { created: true, folder: abs, configPath, message: firstRunMessage(abs) };
}
