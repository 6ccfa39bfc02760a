/**
 * The counted search providers (ts/server/provider-metrics.ts): each call of run, stream and
 * embedQuery adds to the calls and tokens counters by task and provider, failed calls count
 * with no output tokens, and every other member still works on the original (private
 * fields included).
 */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../ts/server/observe.js';
import { countedProviders } from '../../ts/server/provider-metrics.js';

/** One token per word: enough to check what is counted. */
const words = {
  countTokens: (t: string) => t.split(/\s+/).filter(Boolean).length,
  truncateToTokens: (t: string) => t,
};

class FakeProviders {
  readonly #fail: Set<string>;
  constructor(fail: string[] = []) {
    this.#fail = new Set(fail);
  }
  async run(task: string, _input: unknown): Promise<unknown> {
    if (this.#fail.has(task)) throw new Error(`${task} failed`);
    return task === 'answer' ? 'three word answer' : { elements: ['a b'] };
  }
  async *stream(_task: string, _input: unknown): AsyncGenerator<string> {
    yield 'streamed ';
    yield 'two';
  }
  async embedQuery(_q: string): Promise<Float32Array> {
    return new Float32Array(4);
  }
  stats(): string {
    return `private fields reached: ${this.#fail.size}`;
  }
}

async function value(m: ReturnType<typeof createMetrics>, name: string, labels: Record<string, string>) {
  const metric = await m.registry.getSingleMetric(name)!.get();
  const hit = metric.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
  return hit?.value ?? 0;
}

describe('countedProviders', () => {
  it('counts calls and tokens by task and provider, failures included', async () => {
    const metrics = createMetrics({
      status: async () => ({ ready: true, generation: 1, nodes: 0, vectors: 0 }),
    });
    const names = { chat: 'openai', embedding: 'gemini' };
    // biome-ignore lint/suspicious/noExplicitAny: a stand-in for ModelProviders
    const p = countedProviders(new FakeProviders(['query']) as any, { names, tokens: words, metrics });
    const input = { context: 'one two three four', question: 'five six' };
    expect(await p.run('answer', input)).toBe('three word answer');
    await expect(p.run('query', { question: 'q w e' })).rejects.toThrow('query failed');
    await p.embedQuery('seven eight nine');
    let text = '';
    for await (const d of p.stream!('answer', input)) text += d;
    expect(text).toBe('streamed two');
    expect((p as unknown as FakeProviders).stats()).toBe('private fields reached: 1');

    expect(await value(metrics, 'noderag_provider_calls_total', { task: 'answer', provider: 'openai' })).toBe(
      2,
    );
    expect(await value(metrics, 'noderag_provider_calls_total', { task: 'query', provider: 'openai' })).toBe(
      1,
    );
    expect(
      await value(metrics, 'noderag_provider_calls_total', { task: 'embed_query', provider: 'gemini' }),
    ).toBe(1);
    const tokens = (task: string, provider: string, direction: string) =>
      value(metrics, 'noderag_provider_tokens_total', { task, provider, direction });
    expect(await tokens('answer', 'openai', 'input')).toBe(12); // 6 words, twice
    expect(await tokens('answer', 'openai', 'output')).toBe(5); // "three word answer" + "streamed two"
    expect(await tokens('query', 'openai', 'input')).toBe(3);
    expect(await tokens('query', 'openai', 'output')).toBe(0);
    expect(await tokens('embed_query', 'gemini', 'input')).toBe(3);
  });
});
