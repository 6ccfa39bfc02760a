import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  CONFIG_FILE_NAME,
  defaultConfigData,
  ensureConfig,
  NodeConfig,
  nodeConfigSchema,
  parseConfigYaml,
  REDACTED,
  redactSecrets,
  renderConfigTemplate,
  updateConfigFile,
} from '../../ts/config/index.js';
import { ConfigError } from '../../ts/errors.js';

const KEY = 'sk-test-0123456789abcdefghij';
const ENV = { OPENAI_API_KEY: KEY };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function load(yaml: string, env: Record<string, string> = ENV): NodeConfig {
  return NodeConfig.fromYaml(yaml, dir, { env });
}

function problemsOf(yaml: string, env: Record<string, string> = ENV): string[] {
  try {
    load(yaml, env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('first run: template', () => {
  it('creates folder, input/ and a commented template, and returns the §7.6 message', () => {
    const folder = join(dir, 'new', 'project');
    const r = ensureConfig(folder);
    expect(r.created).toBe(true);
    if (!r.created) throw new Error('unreachable');
    expect(r.message).toBe(
      `Created ${folder}/Node_config.yaml. Set the provider and API key (or OPENAI_API_KEY / GEMINI_API_KEY), ` +
        `put documents in ${folder}/input, then run the build again.`,
    );
    expect(statSync(join(folder, 'input')).isDirectory()).toBe(true);
    const text = readFileSync(join(folder, CONFIG_FILE_NAME), 'utf8');
    // Every key of every section appears, each right after a one-line comment.
    const lines = text.split('\n');
    for (const [section, schema] of Object.entries(nodeConfigSchema.shape)) {
      expect(lines).toContain(`${section}:`);
      for (const key of Object.keys(schema.shape)) {
        const i = lines.findIndex((l) => l.startsWith(`  ${key}:`));
        expect(i, key).toBeGreaterThan(0);
        expect(lines[i - 1], key).toMatch(/^ {2}# \S/);
      }
    }
    const parsed = parse(text);
    expect(parsed.config.main_folder).toBe(folder);
    expect(parsed.model_config).toMatchObject({
      service_provider: 'openai',
      model_name: 'gpt-4o-mini',
      temperature: 0,
      max_tokens: 10000,
      rate_limit: 40,
    });
    expect(parsed.embedding_config).toMatchObject({
      service_provider: 'openai',
      embedding_model_name: 'text-embedding-3-small',
      rate_limit: 20,
    });
    expect(parsed.config).toMatchObject({ dim: 1536, chunk_size: 1048, ef_search: 64, ppr_mode: 'walk' });
    // No temp file left behind.
    expect(readFileSync(join(folder, CONFIG_FILE_NAME), 'utf8')).toBe(renderConfigTemplate(folder));
  });

  it('drops spaces around a base_url and model names (the SDKs sent "/v1%20/chat/completions")', () => {
    const cfg = load(
      'model_config:\n  service_provider: openai\n  model_name: " llama3 "\n  base_url: "http://127.0.0.1:11434/v1 "\nembedding_config:\n  service_provider: openai\n  embedding_model_name: "text-embedding-3-small "\n',
    );
    expect(cfg.model_config.model_name).toBe('llama3');
    expect(cfg.model_config.base_url).toBe('http://127.0.0.1:11434/v1');
    expect(cfg.embedding_config.embedding_model_name).toBe('text-embedding-3-small');
    expect(() => load('model_config:\n  model_name: "   "\n')).toThrow(/model_config\.model_name/);
  });

  it('leaves an existing file alone', () => {
    writeFileSync(join(dir, CONFIG_FILE_NAME), 'config:\n  chunk_size: 512\n');
    expect(ensureConfig(dir).created).toBe(false);
    expect(readFileSync(join(dir, CONFIG_FILE_NAME), 'utf8')).toBe('config:\n  chunk_size: 512\n');
  });

  it('the fresh template loads (with a key in the environment) and equals the defaults', () => {
    ensureConfig(dir);
    const cfg = NodeConfig.fromMainFolder(dir, { env: ENV });
    const defaults = defaultConfigData();
    expect(cfg.config).toEqual({ ...defaults.config, main_folder: dir });
    expect(cfg.model_config.model_name).toBe('gpt-4o-mini');
    expect(cfg.warnings).toEqual([]);
  });

  it('without a key the fresh template says exactly what to fill in', () => {
    ensureConfig(dir);
    expect(() => NodeConfig.fromMainFolder(dir, { env: {} })).toThrow(
      /model_config\.api_keys: an API key is required for provider openai: set api_keys or OPENAI_API_KEY/,
    );
  });
});

describe('loading', () => {
  it('a missing file is a ConfigError naming the command to run', () => {
    mkdirSync(join(dir, 'input'));
    try {
      NodeConfig.fromMainFolder(dir, { env: ENV, cliName: 'npx noderag' });
      throw new Error('expected a throw');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).message).toBe(
        `No Node_config.yaml in ${dir}; run \`npx noderag build -f ${dir}\` first.`,
      );
      expect((e as ConfigError).code).toBe('invalid_config');
    }
    // Without input/ either, the folder is no project: `build` there would not start one.
    const elsewhere = join(dir, 'cache');
    mkdirSync(elsewhere);
    expect(() => NodeConfig.fromMainFolder(elsewhere, { env: ENV })).toThrow(
      `${elsewhere} has neither Node_config.yaml nor an input/ folder, so it is not a project (mistyped -f?)`,
    );
  });

  it('from_main_folder is an alias', () => {
    writeFileSync(join(dir, CONFIG_FILE_NAME), 'config:\n  chunk_size: 512\n');
    const a = NodeConfig.from_main_folder(dir, { env: ENV });
    expect(a).toBeInstanceOf(NodeConfig);
    expect(a.config.chunk_size).toBe(512);
  });

  it('missing keys and empty values take their defaults', () => {
    const cfg = load('config:\n  chunk_size:\n  language: Chinese\nmodel_config:\n');
    expect(cfg.config.chunk_size).toBe(1048);
    expect(cfg.config.language).toBe('Chinese');
    expect(cfg.model_config.rate_limit).toBe(40);
    expect(cfg.config.main_folder).toBe(dir);
  });

  it('an empty file is all defaults', () => {
    expect(load('').config.port).toBe(5000);
  });

  it('unknown keys are ignored with a warning (and a suggestion for near misses)', () => {
    const cfg = load('config:\n  Chunk_size: 100\n  colour: blue\nextras:\n  a: 1\n');
    expect(cfg.config.chunk_size).toBe(1048);
    expect(cfg.warnings).toEqual([
      'extras: unknown section, ignored',
      'config.Chunk_size: unknown key, ignored (did you mean chunk_size?)',
      'config.colour: unknown key, ignored',
    ]);
  });

  it('a misspelled key gets the nearest schema key by edit distance, or the section it belongs to', () => {
    const cfg = load(
      'config:\n  chunck_size: 512\n  embeding_batch_size: 10\n  hnsw_result: 5\n  model_name: x\n  zzzzzz: 1\nmodel_config:\n  temprature: 0.5\n',
    );
    expect(cfg.warnings).toEqual([
      'model_config.temprature: unknown key, ignored (did you mean temperature?)',
      'config.chunck_size: unknown key, ignored (did you mean chunk_size?)',
      'config.embeding_batch_size: unknown key, ignored (did you mean embedding_batch_size?)',
      'config.hnsw_result: unknown key, ignored (did you mean HNSW_results?)',
      'config.model_name: unknown key, ignored (did you mean model_config.model_name?)',
      'config.zzzzzz: unknown key, ignored',
    ]);
  });

  it('local with the OpenAI default dim 1536 is valid, with a hint naming what the examples use', () => {
    const cfg = load('embedding_config:\n  service_provider: local\n');
    expect(cfg.config.dim).toBe(1536);
    expect(cfg.warnings).toEqual([
      "config.dim: 1536 is the length of OpenAI's text-embedding-3-small; the local provider accepts any dim (the examples use 256, a smaller index and faster search)",
    ]);
    expect(load('embedding_config:\n  service_provider: local\nconfig:\n  dim: 256\n').warnings).toEqual([]);
  });

  it('embedding provider aliases map to the provider', () => {
    const cfg = load('embedding_config:\n  service_provider: openai_embedding\n');
    expect(cfg.embedding_config.service_provider).toBe('openai');
  });

  it('warns when main_folder differs from the actual folder and uses the actual one', () => {
    const cfg = load('config:\n  main_folder: /somewhere/else\n');
    expect(cfg.config.main_folder).toBe(dir);
    expect(cfg.warnings[0]).toMatch(/config\.main_folder is \/somewhere\/else but the file is in/);
  });

  it('reports invalid YAML with its position', () => {
    expect(() => load('config:\n  chunk_size: [\n')).toThrow(/invalid YAML.*line 3/);
  });

  it('an over-indented key is placed on its own line, not on the comment above it', () => {
    expect(() =>
      load('model_config:\n  # the provider\n  service_provider: local\n  # model\n    model_name: local\n'),
    ).toThrow(
      /invalid YAML: All mapping items must start at the same column at line 5, column 5 \("model_name: local"\)/,
    );
  });
  it('a duplicate key is invalid YAML', () => {
    expect(() => load('config:\n  port: 1\n  port: 2\n')).toThrow(/invalid YAML/);
  });
});

describe('every kind of YAML failure is a ConfigError naming the file', () => {
  /** The ConfigError thrown by loading `text` from `dir`, through the file as the CLI does. */
  function yamlError(text: string): ConfigError {
    writeFileSync(join(dir, CONFIG_FILE_NAME), text);
    try {
      NodeConfig.fromMainFolder(dir, { env: ENV });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const err = e as ConfigError;
      expect(err.code).toBe('invalid_config');
      expect(err.message).toContain(join(dir, CONFIG_FILE_NAME));
      return err;
    }
    throw new Error('expected a ConfigError');
  }

  it('an alias bomb (aliases expanding to millions of nodes) is refused with the line of the first alias', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'config:',
      '  dim: 64',
    ].join('\n');
    const err = yamlError(bomb);
    expect(err.message).toMatch(/invalid YAML: aliases expand to too many nodes at line 2/);
    expect(err.problems).toHaveLength(1);
  });

  it('an alias to an undefined anchor is refused with its line', () => {
    expect(yamlError('config:\n  dim: 64\n  port: *nope\n').message).toMatch(
      /Unresolved alias.*nope at line 3/,
    );
  });

  it('nesting too deep for the parser gives a bounded list of problems, not a stack overflow', () => {
    const err = yamlError(`config: ${'['.repeat(20000)}\n`);
    expect(err.problems.length).toBeLessThanOrEqual(6);
    expect(err.message).toMatch(/invalid YAML: .*line 1/);
  });

  it("the YAML library's warnings stay out of stderr (an unknown tag, a collection as a key)", () => {
    const warnings: unknown[] = [];
    const onWarning = (w: unknown) => warnings.push(w);
    const emit = process.emitWarning;
    process.emitWarning = ((w: unknown) => onWarning(w)) as typeof process.emitWarning;
    try {
      parseConfigYaml('config:\n  ppr_mode: !!js/function x\n', 'Node_config.yaml');
      parseConfigYaml('? [a, b]\n: 1\n', 'Node_config.yaml');
    } finally {
      process.emitWarning = emit;
    }
    expect(warnings).toEqual([]);
  });

  it('nesting too deep for the parser is said as such, not as a stack overflow', () => {
    const err = yamlError(`a: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`);
    expect(err.problems[0]).toMatch(
      /^Node_config\.yaml: invalid YAML: nested too deeply \(a config is sections of keys, two levels deep\) at line 1/,
    );
  });

  it('a tab-indented line gives its one error, the ones that follow from it only counted', () => {
    const err = yamlError('config:\n\tchunk_size: 512\n  port: 5000\n');
    expect(err.problems).toEqual([
      'Node_config.yaml: invalid YAML: Tabs are not allowed as indentation at line 2, column 1',
      expect.stringMatching(/^… and \d+ more that may follow from it: fix the first and run again$/),
    ]);
  });

  it('a duplicate key names the key and its line', () => {
    expect(yamlError('config:\n  port: 1\n  port: 2\n').message).toContain(
      'invalid YAML: the key "port" appears twice at line 3, column 3',
    );
  });

  it('a config that is not a UTF-8 regular file is named for what it is (no hang on a FIFO)', () => {
    const path = join(dir, CONFIG_FILE_NAME);
    const load = () => {
      try {
        NodeConfig.fromMainFolder(dir, { env: ENV });
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error('expected a ConfigError');
    };
    writeFileSync(path, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('config:\n', 'utf16le')]));
    expect(load()).toBe(`${path} is UTF-16 text; save it as UTF-8`);
    writeFileSync(path, Buffer.from('config:\n  port: 1\n', 'utf16le'));
    expect(load()).toBe(
      `${path} contains NUL bytes (UTF-16 text without a byte-order mark?); save it as UTF-8`,
    );
    writeFileSync(path, Buffer.from('model_config:\n  model_name: caf\xe9\n', 'latin1'));
    expect(load()).toContain(`${path} is not UTF-8 text`);
    rmSync(path);
    mkdirSync(path);
    expect(load()).toBe(`${path} is a folder, not a file; it should be the YAML config`);
    rmSync(path, { recursive: true });
    execFileSync('mkfifo', [path]);
    expect(load()).toBe(`${path} is a named pipe (FIFO), not a file; it should be the YAML config`);
    rmSync(path);
    symlinkSync(join(dir, 'nowhere.yaml'), path);
    expect(load()).toBe(`${path} is a symbolic link to a file that does not exist`);
    // ensureConfig (the first run) leaves a broken link alone: it is the user's file.
    expect(ensureConfig(dir).created).toBe(false);
    rmSync(path);
    symlinkSync(path, path);
    expect(load()).toBe(`${path} is a symbolic link that leads back to itself`);
  });

  it('Save Config (updateConfigFile) refuses an alias bomb already in the file without touching it', () => {
    const bomb =
      'a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n';
    writeFileSync(join(dir, CONFIG_FILE_NAME), bomb);
    expect(() => updateConfigFile(dir, { config: { port: 6000 } })).toThrow(ConfigError);
    expect(readFileSync(join(dir, CONFIG_FILE_NAME), 'utf8')).toBe(bomb);
  });
});

describe('validation names every key', () => {
  const cases: Array<[string, string, string]> = [
    ['config:\n  chunk_size: big', 'config.chunk_size', 'expected an integer from 64 to 16384, got "big"'],
    ['config:\n  chunk_size: 10', 'config.chunk_size', 'expected an integer from 64 to 16384, got 10'],
    ['config:\n  chunk_size: 100.5', 'config.chunk_size', 'got 100.5'],
    ['config:\n  language: French', 'config.language', 'expected one of "English", "Chinese", got "French"'],
    ['config:\n  docu_type: epub', 'config.docu_type', 'got "epub"'],
    ['config:\n  embedding_batch_size: 0', 'config.embedding_batch_size', 'from 1 to 2048'],
    ['config:\n  use_tqdm: yes', 'config.use_tqdm', 'expected true or false, got "yes"'],
    ['config:\n  use_rich: 1', 'config.use_rich', 'expected true or false, got 1'],
    ['config:\n  space: ip', 'config.space', 'expected one of "l2", "cosine"'],
    ['config:\n  dim: 0', 'config.dim', 'expected an integer from 1 to 16384'],
    ['config:\n  m: 1', 'config.m', 'from 2 to 256'],
    ['config:\n  ef: 5000', 'config.ef', 'from 1 to 4096'],
    ['config:\n  m0: 64', 'config.m0', 'expected null or exactly 2·m (100), got 64'],
    ['config:\n  m0: x', 'config.m0', 'expected null or exactly 2·m, got "x"'],
    ['config:\n  m0: 1e20', 'config.m0', 'expected null or exactly 2·m, got 100000000000000000000'],
    [
      'config:\n  Hcluster_size: 0',
      'config.Hcluster_size',
      'expected an integer from 1 to 9007199254740991, got 0',
    ],
    [
      'config:\n  Hcluster_size: 1e20',
      'config.Hcluster_size',
      'expected an integer from 1 to 9007199254740991, got 100000000000000000000',
    ],
    ['config:\n  url: "not a host"', 'config.url', 'expected a host name or IP address'],
    ['config:\n  port: 70000', 'config.port', 'from 1 to 65535'],
    ['config:\n  unbalance_adjust: maybe', 'config.unbalance_adjust', 'expected true or false'],
    ['config:\n  cross_node: -1', 'config.cross_node', 'from 0 to 1000'],
    ['config:\n  Enode: 1001', 'config.Enode', 'from 0 to 1000'],
    ['config:\n  Rnode: a', 'config.Rnode', 'from 0 to 1000'],
    ['config:\n  Hnode: 2.5', 'config.Hnode', 'from 0 to 1000'],
    ['config:\n  HNSW_results: -3', 'config.HNSW_results', 'from 0 to 1000'],
    ['config:\n  similarity_weight: -1', 'config.similarity_weight', 'expected a number ≥ 0, got -1'],
    ['config:\n  accuracy_weight: "1"', 'config.accuracy_weight', 'expected a number ≥ 0, got "1"'],
    ['config:\n  similarity_weight: 0\n  accuracy_weight: 0', 'config.similarity_weight', 'cannot both be 0'],
    ['config:\n  ppr_alpha: 1.5', 'config.ppr_alpha', 'expected a number from 0 to 1, got 1.5'],
    ['config:\n  ppr_max_iter: 1001', 'config.ppr_max_iter', 'from 0 to 1000'],
    ['config:\n  ppr_mode: pagerank', 'config.ppr_mode', 'expected one of "walk", "restart"'],
    ['config:\n  ef_search: 0', 'config.ef_search', 'from 1 to 4096'],
    ['config:\n  material_token_budget: 10', 'config.material_token_budget', 'from 1000 to 1000000'],
    ['config:\n  main_folder: 5', 'config.main_folder', 'expected a string or null, got 5'],
    ['config: 5', 'config', 'expected a mapping, got 5'],
    ['model_config:\n  service_provider: anthropic', 'model_config.service_provider', 'got "anthropic"'],
    ['model_config:\n  model_name: ""', 'model_config.model_name', 'expected a non-empty string, got ""'],
    [
      'model_config:\n  base_url: localhost:11434',
      'model_config.base_url',
      'expected an http(s) URL or null',
    ],
    [
      'model_config:\n  temperature: 2.5',
      'model_config.temperature',
      'expected a number from 0 to 2, got 2.5',
    ],
    [
      'model_config:\n  max_tokens: 0',
      'model_config.max_tokens',
      'expected an integer from 1 to 9007199254740991, got 0',
    ],
    ['model_config:\n  rate_limit: 0', 'model_config.rate_limit', 'expected a number > 0, got 0'],
    [
      'model_config:\n  service_provider: gemini',
      'model_config.model_name',
      '"gpt-4o-mini" is an OpenAI model',
    ],
    ['embedding_config:\n  service_provider: cohere', 'embedding_config.service_provider', 'got "cohere"'],
    ['embedding_config:\n  embedding_model_name: " "', 'embedding_config.embedding_model_name', 'non-empty'],
    ['embedding_config:\n  base_url: ftp://x', 'embedding_config.base_url', 'http(s) URL'],
    ['embedding_config:\n  rate_limit: -2', 'embedding_config.rate_limit', 'expected a number > 0'],
    [
      'config:\n  dim: 4000',
      'config.dim',
      'expected from 1 to 1536 for embedding model text-embedding-3-small, got 4000',
    ],
    [
      'embedding_config:\n  embedding_model_name: text-embedding-ada-002\nconfig:\n  dim: 1024',
      'config.dim',
      'expected 1536 for embedding model text-embedding-ada-002, got 1024',
    ],
    [
      'embedding_config:\n  service_provider: gemini\n  api_keys: g-key\nconfig:\n  dim: 768',
      'embedding_config.embedding_model_name',
      'is an OpenAI embedding model',
    ],
    [
      'embedding_config:\n  service_provider: gemini\n  embedding_model_name: text-embedding-004\n  api_keys: g\nconfig:\n  embedding_batch_size: 200\n  dim: 768',
      'config.embedding_batch_size',
      'expected an integer from 1 to 100 for the gemini embedding provider, got 200',
    ],
  ];
  for (const [yaml, path, expected] of cases) {
    it(`${path} ← ${yaml.replace(/\n\s*/g, ' ')}`, () => {
      const problems = problemsOf(yaml);
      const mine = problems.filter((p) => p.startsWith(`${path}: `));
      expect(mine, problems.join('\n')).toHaveLength(1);
      expect(mine[0]).toContain(expected);
    });
  }

  it('a model that can shorten accepts a shorter dim, never a longer one', () => {
    expect(load('config:\n  dim: 512').config.dim).toBe(512);
    expect(problemsOf('config:\n  dim: 2000')).toEqual([
      'config.dim: expected from 1 to 1536 for embedding model text-embedding-3-small, got 2000',
    ]);
  });

  it('reports every problem in one pass', () => {
    const problems = problemsOf(
      'model_config:\n  temperature: 9\n  max_tokens: -1\nconfig:\n  chunk_size: big\n  port: 0\n  space: x\n',
      {},
    );
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'config.chunk_size',
      'config.port',
      'config.space',
      'embedding_config.api_keys',
      'model_config.api_keys',
      'model_config.max_tokens',
      'model_config.temperature',
    ]);
  });

  it('the error message lists every problem, one per line', () => {
    try {
      load('config:\n  chunk_size: big\n  port: 0\n');
    } catch (e) {
      expect((e as Error).message.split('\n')).toEqual([
        `${join(dir, CONFIG_FILE_NAME)} has 2 problems:`,
        '  config.chunk_size: expected an integer from 64 to 16384, got "big"',
        '  config.port: expected an integer from 1 to 65535, got 0',
      ]);
      return;
    }
    throw new Error('expected a throw');
  });
});

describe('embedding dim rule', () => {
  const ok = (yaml: string, env: Record<string, string> = { ...ENV, GEMINI_API_KEY: 'g' }) =>
    load(yaml, env).config.dim;
  it('known models: native length, or shorter when the model can shorten', () => {
    expect(
      ok('embedding_config:\n  embedding_model_name: text-embedding-3-large\nconfig:\n  dim: 3072'),
    ).toBe(3072);
    expect(
      ok(
        'embedding_config:\n  service_provider: gemini\n  embedding_model_name: text-embedding-004\nconfig:\n  dim: 768',
      ),
    ).toBe(768);
    expect(
      ok(
        'embedding_config:\n  service_provider: gemini\n  embedding_model_name: gemini-embedding-001\nconfig:\n  dim: 768',
      ),
    ).toBe(768);
  });
  it('local accepts any dim; an unknown model behind base_url accepts any dim', () => {
    expect(ok('embedding_config:\n  service_provider: local\nconfig:\n  dim: 7')).toBe(7);
    const cfg = load(
      'embedding_config:\n  embedding_model_name: nomic-embed-text\n  base_url: http://127.0.0.1:11434/v1\nconfig:\n  dim: 768',
    );
    expect(cfg.config.dim).toBe(768);
    expect(cfg.warnings).toEqual([]);
  });
  it('an unknown model on the official API is accepted with a warning', () => {
    const cfg = load('embedding_config:\n  embedding_model_name: text-embedding-9\nconfig:\n  dim: 4096');
    expect(cfg.warnings[0]).toMatch(
      /not a known openai embedding model; config.dim \(4096\) will be checked/,
    );
  });
});

describe('API keys', () => {
  it('file value wins over the environment; placeholder and empty mean unset', () => {
    expect(load('model_config:\n  api_keys: sk-from-file-123456789', ENV).apiKey('model_config')).toBe(
      'sk-from-file-123456789',
    );
    expect(load('model_config:\n  api_keys: <API_KEY>', ENV).apiKey('model_config')).toBe(KEY);
    expect(load('model_config:\n  api_keys: ""', ENV).apiKey('model_config')).toBe(KEY);
  });
  it('gemini reads GEMINI_API_KEY, then GOOGLE_API_KEY', () => {
    const yaml =
      'model_config:\n  service_provider: gemini\n  model_name: gemini-2.5-flash\nembedding_config:\n  service_provider: local\n';
    expect(load(yaml, { GEMINI_API_KEY: 'gk', GOOGLE_API_KEY: 'ggk' }).apiKey('model_config')).toBe('gk');
    expect(load(yaml, { GOOGLE_API_KEY: 'ggk' }).apiKey('model_config')).toBe('ggk');
    expect(problemsOf(yaml, {})).toEqual([
      'model_config.api_keys: an API key is required for provider gemini: set api_keys or GEMINI_API_KEY / GOOGLE_API_KEY',
    ]);
  });
  it('no key needed for local, nor for openai with base_url', () => {
    const cfg = load(
      'model_config:\n  service_provider: local\nembedding_config:\n  base_url: http://127.0.0.1:8080/v1\n',
      {},
    );
    expect(cfg.apiKey('model_config')).toBeUndefined();
    expect(cfg.apiKey('embedding_config')).toBeUndefined();
  });
  it(`api_keys: \${NAME} reads the key from that variable; an unset one is named`, () => {
    const yaml = `model_config:\n  api_keys: \${MY_OPENAI_KEY}\n`;
    expect(load(yaml, { ...ENV, MY_OPENAI_KEY: 'sk-from-env-ref' }).apiKey('model_config')).toBe(
      'sk-from-env-ref',
    );
    // Not the literal text, and not OPENAI_API_KEY either: the variable named.
    expect(problemsOf(yaml, ENV)).toEqual([
      'model_config.api_keys: refers to the environment variable MY_OPENAI_KEY, which is not set',
    ]);
    // $NAME, as a shell writes it, too.
    expect(
      load('model_config:\n  api_keys: $MY_OPENAI_KEY\n', {
        ...ENV,
        MY_OPENAI_KEY: 'sk-from-env-ref',
      }).apiKey('model_config'),
    ).toBe('sk-from-env-ref');
    // A $ reference that names no variable is refused, not sent to the provider as the key.
    for (const bad of ['$\u007Bmy-key}', '$\u007B}', '$1KEY']) {
      expect(problemsOf(`model_config:\n  api_keys: "${bad}"\n`, ENV)).toEqual([
        `model_config.api_keys: starts with $ but is no environment variable reference: expected $\{NAME} or $NAME with NAME of letters, digits and _ (not starting with a digit), e.g. $\{OPENAI_API_KEY}`,
      ]);
    }
  });
  it('a refused base_url is the one problem: no second one asking for a key', () => {
    expect(problemsOf('embedding_config:\n  base_url: localhost:11434/v1\n', {})).toEqual([
      expect.stringMatching(/^embedding_config\.base_url: /),
      'model_config.api_keys: an API key is required for provider openai: set api_keys or OPENAI_API_KEY',
    ]);
  });
  it('a key with a character an HTTP header cannot carry is refused at load, without echoing it', () => {
    const problems = problemsOf('model_config:\n  api_keys: “sk-abcdefghijklmnop”\n', {
      OPENAI_API_KEY: KEY,
    });
    expect(problems).toEqual([
      'model_config.api_keys: the key has a character that is not printable ASCII (a space, a typographic quote, …); expected the key as the provider shows it',
    ]);
    // Both sections read OPENAI_API_KEY here: each names it.
    expect(problemsOf('model_config:\n  api_keys: <API_KEY>\n', { OPENAI_API_KEY: 'sk-abc def' })).toEqual(
      ['model_config', 'embedding_config'].map(
        (section) =>
          `${section}.api_keys: the key in OPENAI_API_KEY has a character that is not printable ASCII (a space, a typographic quote, …); expected the key as the provider shows it`,
      ),
    );
  });
  it('requireApiKeys: false loads without keys', () => {
    const cfg = NodeConfig.fromYaml('', dir, { env: {}, requireApiKeys: false });
    expect(cfg.apiKey('model_config')).toBeUndefined();
  });
});

describe('secrets never leak', () => {
  it('not in JSON, inspect, enumerable fields or the sections', () => {
    const secret = 'sk-very-secret-abcdefghijklmnop';
    const cfg = load(`model_config:\n  api_keys: ${secret}\nembedding_config:\n  api_keys: ${secret}\n`);
    expect(cfg.apiKey('embedding_config')).toBe(secret);
    expect(JSON.stringify(cfg)).not.toContain(secret);
    expect(JSON.stringify(cfg)).toContain(REDACTED);
    expect(inspect(cfg, { depth: 10, showHidden: true })).not.toContain(secret);
    expect(String(Object.values(cfg))).not.toContain(secret);
    expect('api_keys' in cfg.model_config).toBe(false);
  });
  it('a wrong-typed key is not echoed in problems', () => {
    const problems = problemsOf('model_config:\n  api_keys: 123456789012345\n');
    expect(problems[0]).toBe('model_config.api_keys: expected a string or null, got a number');
  });
  it('redactSecrets masks known keys and key-shaped tokens', () => {
    const text = `failed with key sk-live-abcdefghijklmnop and AIzaSyA1234567890abcdefghijkl, Bearer abcdefghijklmnopqrst, and mine: hunter2hunter2`;
    const out = redactSecrets(text, ['hunter2hunter2']);
    expect(out).not.toMatch(/sk-live|AIzaSy|abcdefghijklmnopqrst|hunter2/);
    expect(out).toContain(`Bearer ${REDACTED}`);
    expect(out.split(REDACTED)).toHaveLength(5);
  });
});

describe('folder paths', () => {
  it('derives input/cache/info folders from the real folder', () => {
    mkdirSync(join(dir, 'p'));
    writeFileSync(join(dir, 'p', CONFIG_FILE_NAME), '');
    const cfg = NodeConfig.fromMainFolder(join(dir, 'p'), { env: ENV });
    expect(cfg.inputFolder).toBe(join(dir, 'p', 'input'));
    expect(cfg.responseCacheFolder).toBe(join(dir, 'p', 'cache', 'response_cache'));
    expect(existsSync(cfg.configPath)).toBe(true);
  });
});

describe('updateConfigFile (Save Config)', () => {
  it('changes keys in place, keeping comments and unknown keys', () => {
    ensureConfig(dir);
    const path = join(dir, CONFIG_FILE_NAME);
    writeFileSync(path, `${readFileSync(path, 'utf8')}  my_note: keep me\n`);
    const r = updateConfigFile(dir, {
      model_config: { service_provider: 'local', base_url: null },
      config: { chunk_size: 512, language: 'Chinese' },
    });
    expect(r.ok).toBe(true);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain('  # Chunk size in tokens (o200k_base), 64 to 16384\n  chunk_size: 512\n');
    expect(text).toContain('  service_provider: local\n');
    expect(text).toContain('my_note: keep me');
    if (r.ok) expect(r.config.config.language).toBe('Chinese');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('a section or a file that is not a mapping is a problem, not a crash; the file is untouched', () => {
    const path = join(dir, CONFIG_FILE_NAME);
    for (const [text, path0, message] of [
      ['config: 5\n', 'config', 'expected a mapping, got 5'],
      ['config: [1, 2]\n', 'config', 'expected a mapping'],
      ['just a string\n', '(file)', 'expected a mapping'],
    ] as const) {
      writeFileSync(path, text);
      const r = updateConfigFile(dir, { config: { chunk_size: 512 } });
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.problems.find((p) => p.path === path0)?.message, text).toContain(message);
      expect(readFileSync(path, 'utf8')).toBe(text);
    }
    rmSync(path);
    mkdirSync(path);
    expect(() => updateConfigFile(dir, { config: { chunk_size: 512 } })).toThrow(
      `${path} is a folder, not a file`,
    );
  });

  it('an invalid change writes nothing and names every problem', () => {
    ensureConfig(dir);
    const before = readFileSync(join(dir, CONFIG_FILE_NAME), 'utf8');
    const r = updateConfigFile(dir, { config: { chunk_size: 1, port: 0 } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.map((p) => p.path)).toEqual(['config.chunk_size', 'config.port']);
      expect(r.problems[0]?.message).toBe('expected an integer from 64 to 16384, got 1');
    }
    expect(readFileSync(join(dir, CONFIG_FILE_NAME), 'utf8')).toBe(before);
  });
});
