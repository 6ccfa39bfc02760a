/**
 * `request_timeout` and `max_in_flight` of model_config and embedding_config: defaults,
 * validation, the template's advice for local servers, the one declaration of the default
 * timeouts, and the in-flight cap as the rate limiter and the build's worker pools apply it.
 * (tests/e2e/local-server.test.ts runs them against a server that answers one at a time.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultConfigData,
  NodeConfig,
  renderConfigTemplate,
  updateConfigFile,
} from '../../ts/config/index.js';
import { ConfigError } from '../../ts/errors.js';
import { poolSize } from '../../ts/indexing/stages/pool.js';
import { configuredTimeouts, DEFAULT_TIMEOUTS } from '../../ts/llm/create-providers.js';
import { inFlightCap, RateLimiter } from '../../ts/llm/rate-limiter.js';
import { ManualClock } from '../helpers/fake-providers/manual-clock.js';

const ENV = { OPENAI_API_KEY: 'sk-test-0123456789abcdefghij' };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-timeouts-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function load(yaml: string): NodeConfig {
  return NodeConfig.fromYaml(yaml, dir, { env: ENV });
}

function problemsOf(yaml: string): string[] {
  try {
    load(yaml);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('request_timeout is 120 s for model_config and 60 s for embedding_config; max_in_flight null', () => {
    const cfg = load('');
    expect(cfg.model_config).toMatchObject({ request_timeout: 120, max_in_flight: null });
    expect(cfg.embedding_config).toMatchObject({ request_timeout: 60, max_in_flight: null });
    expect(configuredTimeouts(cfg)).toEqual({ chatMs: 120_000, embedMs: 60_000 });
  });

  it('DEFAULT_TIMEOUTS is read from the schema defaults', () => {
    const d = defaultConfigData();
    expect(DEFAULT_TIMEOUTS).toEqual({
      chatMs: d.model_config.request_timeout * 1000,
      embedMs: d.embedding_config.request_timeout * 1000,
    });
    expect(DEFAULT_TIMEOUTS).toEqual({ chatMs: 120_000, embedMs: 60_000 });
  });

  it('reads set values; fractional seconds allowed; `max_in_flight:` left empty is null', () => {
    const cfg = load(
      'model_config:\n  request_timeout: 600\n  max_in_flight: 2\nembedding_config:\n  request_timeout: 0.5\n  max_in_flight:\n',
    );
    expect(cfg.model_config).toMatchObject({ request_timeout: 600, max_in_flight: 2 });
    expect(cfg.embedding_config).toMatchObject({ request_timeout: 0.5, max_in_flight: null });
    expect(configuredTimeouts(cfg)).toEqual({ chatMs: 600_000, embedMs: 500 });
  });
});

describe('validation names the key', () => {
  it.each([
    [
      'model_config:\n  request_timeout: 0',
      'model_config.request_timeout: expected a number > 0 and ≤ 1800, got 0',
    ],
    [
      'model_config:\n  request_timeout: -5',
      'model_config.request_timeout: expected a number > 0 and ≤ 1800, got -5',
    ],
    [
      'embedding_config:\n  request_timeout: 3600',
      'embedding_config.request_timeout: expected a number > 0 and ≤ 1800, got 3600',
    ],
    [
      'embedding_config:\n  request_timeout: "slow"',
      'embedding_config.request_timeout: expected a number > 0 and ≤ 1800, got "slow"',
    ],
    [
      'model_config:\n  max_in_flight: 0',
      'model_config.max_in_flight: expected null or an integer from 1 to 9007199254740991, got 0',
    ],
    [
      'model_config:\n  max_in_flight: 1.5',
      'model_config.max_in_flight: expected null or an integer from 1 to 9007199254740991, got 1.5',
    ],
    [
      'embedding_config:\n  max_in_flight: "one"',
      'embedding_config.max_in_flight: expected null or an integer from 1 to 9007199254740991, got "one"',
    ],
  ])('%j', (yaml, problem) => {
    expect(problemsOf(yaml)).toEqual([problem]);
  });

  it('Save Config writes them and refuses a bad one', () => {
    const ok = updateConfigFile(
      dir,
      { model_config: { max_in_flight: 1, request_timeout: 300 }, embedding_config: { max_in_flight: 2 } },
      { env: ENV },
    );
    expect(ok.ok).toBe(true);
    if (!ok.ok) return;
    expect(ok.config.model_config).toMatchObject({ max_in_flight: 1, request_timeout: 300 });
    const text = readFileSync(join(dir, 'Node_config.yaml'), 'utf8');
    expect(text).toContain('  max_in_flight: 1\n');
    const bad = updateConfigFile(dir, { embedding_config: { max_in_flight: 0 } }, { env: ENV });
    expect(bad).toEqual({
      ok: false,
      problems: [
        {
          path: 'embedding_config.max_in_flight',
          message: 'expected null or an integer from 1 to 9007199254740991, got 0',
        },
      ],
    });
  });
});

describe('the template', () => {
  const lines = renderConfigTemplate('/project').split('\n');
  /** The comment line above `key:` inside `section:`. */
  function commentOf(section: string, key: string): string {
    const start = lines.indexOf(`${section}:`);
    const i = lines.findIndex((l, n) => n > start && l.startsWith(`  ${key}:`));
    expect(i, `${section}.${key}`).toBeGreaterThan(start);
    return lines[i - 1] as string;
  }

  it('lists both keys in both sections with their defaults', () => {
    const text = lines.join('\n');
    expect(text).toMatch(
      /^model_config:\n(?: {2}.*\n)*? {2}max_in_flight: null\n(?: {2}.*\n)*? {2}request_timeout: 120\n/m,
    );
    expect(text).toMatch(
      /^embedding_config:\n(?: {2}.*\n)*? {2}max_in_flight: null\n(?: {2}.*\n)*? {2}request_timeout: 60\n/m,
    );
  });

  it('says what to set for Ollama / llama.cpp and for vLLM', () => {
    for (const section of ['model_config', 'embedding_config']) {
      const inFlight = commentOf(section, 'max_in_flight');
      expect(inFlight).toMatch(/Ollama/);
      expect(inFlight).toMatch(/llama\.cpp/);
      expect(inFlight).toMatch(/1–2/);
      expect(inFlight).toMatch(/vLLM.*leave null/);
      expect(inFlight).toMatch(/null = rate_limit/);
      const timeout = commentOf(section, 'request_timeout');
      expect(timeout).toMatch(/waiting for rate_limit \/ max_in_flight does not count/);
    }
    expect(commentOf('model_config', 'request_timeout')).toMatch(/CPU \(Ollama, llama\.cpp\): 300 or more/);
    expect(commentOf('model_config', 'rate_limit')).toMatch(/unless max_in_flight is set/);
  });
});

describe('the in-flight cap', () => {
  it('is max_in_flight when set, else rate_limit rounded down (at least 1)', () => {
    expect(inFlightCap(20)).toBe(20);
    expect(inFlightCap(20, null)).toBe(20);
    expect(inFlightCap(2.5, null)).toBe(2);
    expect(inFlightCap(0.5, null)).toBe(1);
    expect(inFlightCap(20, 1)).toBe(1);
    expect(inFlightCap(1, 4)).toBe(4);
    expect(() => inFlightCap(20, 0)).toThrow(RangeError);
  });

  it('the build pools follow it (the local provider keeps its 8 workers)', () => {
    expect(poolSize(40, false)).toBe(40);
    expect(poolSize(40, false, null)).toBe(40);
    expect(poolSize(40, false, 1)).toBe(1);
    expect(poolSize(1, false, 4)).toBe(4);
    expect(poolSize(1, false, 10_000)).toBe(256);
    expect(poolSize(40, true, 1)).toBe(8);
  });

  it('the limiter holds at most max_in_flight while pacing starts at rate_limit', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(100, clock, undefined, 2);
    expect(limiter.maxInFlight).toBe(2);
    const starts: number[] = [];
    let peak = 0;
    const tasks = Array.from({ length: 6 }, () =>
      limiter.run(async () => {
        starts.push(clock.now());
        peak = Math.max(peak, limiter.inFlight);
        await clock.sleep(1000);
      }),
    );
    await clock.advance(500);
    expect(limiter.inFlight).toBe(2);
    expect(limiter.waiting).toBe(4);
    await clock.advance(5000);
    await Promise.all(tasks);
    expect(peak).toBe(2);
    // Two at a time, each pair once the previous one is done.
    expect(starts).toEqual([0, 10, 1000, 1010, 2000, 2010]);
  });

  it('may exceed rate_limit: long requests started one per second overlap', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(1, clock, undefined, 3);
    expect(limiter.permits).toBe(1);
    const starts: number[] = [];
    const tasks = Array.from({ length: 3 }, () =>
      limiter.run(async () => {
        starts.push(clock.now());
        await clock.sleep(10_000);
      }),
    );
    await clock.advance(2500);
    expect(starts).toEqual([0, 1000, 2000]);
    expect(limiter.inFlight).toBe(3);
    await clock.advance(20_000);
    await Promise.all(tasks);
  });

  it("null keeps today's limiter: the cap is rate_limit rounded down", () => {
    expect(new RateLimiter(4).maxInFlight).toBe(4);
    expect(new RateLimiter(4, undefined, undefined, null).maxInFlight).toBe(4);
    expect(new RateLimiter(2.5).maxInFlight).toBe(2);
  });
});
