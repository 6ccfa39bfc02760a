/**
 * What one provider call of a build costs our side, in CPU time of this process, with the
 * fake OpenAI server in a child process (its work is not counted here):
 *
 *   node --import tsx bench/peer/call-overhead.ts [--calls N] [--concurrency C] [--rounds R]
 *
 * Variants, alternated round by round so the machine's load hits them alike:
 * - `sdk+fetch`: the openai SDK over Node's fetch (undici), the adapter's transport before
 *   ts/llm/http-fetch.ts;
 * - `sdk+httpFetch`: the openai SDK over ts/llm/http-fetch.ts;
 * - `adapter`: ts/llm/openai.ts alone (its own POST with the SDK's headers, over httpFetch), the
 *   same requests without the build's layers;
 * - `providers`: the whole build path, `ModelProviders.run('decompose', …)` (prompt, response
 *   cache key and append, limiter, retry, timeout, adapter, validation) under the build's pool.
 * Each sends the decomposition prompts of HotpotQA paragraphs (distinct texts, so the response
 * cache never hits) and embeds them in batches of 50 (dim 1536).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { NodeConfig } from '../../ts/config/node-config.js';
import { createProviders } from '../../ts/llm/create-providers.js';
import { httpFetch } from '../../ts/llm/http-fetch.js';
import { OpenAIProvider } from '../../ts/llm/openai.js';
import { buildRequest } from '../../ts/llm/prompts/index.js';
import { loadCorpus } from '../lib/hotpot.js';

if (process.argv[2] === '--serve') {
  const { startFakeOpenAI } = await import('../../tests/helpers/fake-providers/fake-openai.js');
  const server = await startFakeOpenAI({ dim: 1536 });
  process.send?.(server.baseUrl);
} else {
  await main();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '600' },
      concurrency: { type: 'string', default: '256' },
      rounds: { type: 'string', default: '3' },
      // One variant alone (for a CPU profile of it).
      only: { type: 'string' },
    },
  });
  const calls = Number(values.calls);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);
  const child = fork(new URL(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  const baseUrl = await new Promise<string>((resolve) => child.once('message', (m) => resolve(String(m))));
  const corpus = loadCorpus();
  const texts = Object.entries(corpus).map(([title, sentences]) => `${title}\n\n${sentences.join('')}`);
  let salt = 0;
  /** Distinct texts each round, so nothing is ever a cache hit. */
  const nextTexts = () => {
    salt++;
    return Array.from({ length: calls }, (_, i) => `${texts[i % texts.length]} (${salt}.${i})`);
  };
  const pool = async (n: number, fn: (i: number) => Promise<unknown>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, n) }, async () => {
        while (next < n) await fn(next++);
      }),
    );
  };
  const sdkVariant = (fetchImpl: typeof fetch) => {
    const client = new OpenAI({ apiKey: 'x', baseURL: baseUrl, maxRetries: 0, fetch: fetchImpl });
    return async (round: string[]) => {
      await pool(round.length, async (i) => {
        const { messages } = buildRequest({
          task: 'decompose',
          language: 'English',
          input: { text: round[i]! },
        });
        await client.chat.completions.create({ model: 'gpt-4o-mini', messages, temperature: 0 });
      });
      await pool(Math.ceil(round.length / 50), async (b) => {
        await client.embeddings.create({
          model: 'text-embedding-3-small',
          input: round.slice(b * 50, b * 50 + 50),
          dimensions: 1536,
          encoding_format: 'base64',
        });
      });
    };
  };
  const dir = mkdtempSync(join(tmpdir(), 'noderag-call-overhead-'));
  const config = NodeConfig.fromData(
    {
      model_config: { service_provider: 'openai', base_url: baseUrl, api_keys: 'x', rate_limit: 1000 },
      embedding_config: { service_provider: 'openai', base_url: baseUrl, api_keys: 'x', rate_limit: 1000 },
      config: { dim: 1536 },
    },
    dir,
    { env: {} },
  );
  const providers = createProviders(config, { mode: 'build', cacheDir: join(dir, 'response_cache') });
  const chatAdapter = new OpenAIProvider({
    section: 'model_config',
    model: 'gpt-4o-mini',
    apiKey: 'x',
    baseUrl,
  });
  const embedAdapter = new OpenAIProvider({
    section: 'embedding_config',
    model: 'text-embedding-3-small',
    apiKey: 'x',
    baseUrl,
    dim: 1536,
  });
  const all: Record<string, (round: string[]) => Promise<void>> = {
    'sdk+fetch': sdkVariant(fetch),
    'sdk+httpFetch': sdkVariant(httpFetch as typeof fetch),
    adapter: async (round) => {
      await pool(round.length, async (i) => {
        const request = buildRequest({ task: 'decompose', language: 'English', input: { text: round[i]! } });
        await chatAdapter.chat(request);
      });
      await pool(Math.ceil(round.length / 50), async (b) => {
        await embedAdapter.embed(round.slice(b * 50, b * 50 + 50));
      });
    },
    providers: async (round) => {
      await pool(round.length, (i) => providers.run('decompose', { text: round[i]! }));
      await pool(Math.ceil(round.length / 50), (b) =>
        providers.embedDocuments(round.slice(b * 50, b * 50 + 50)),
      );
    },
  };
  const variants = values.only ? { [values.only]: all[values.only]! } : all;
  const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const wall: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const loadBefore = loadavg().map((x) => x.toFixed(2));
  for (let r = 0; r < rounds + 1; r++) {
    for (const [name, run] of Object.entries(variants)) {
      const round = nextTexts();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await run(round);
      const c = process.cpuUsage(c0);
      // Round 0 warms up (JIT, connections) and is not counted.
      if (r === 0) continue;
      cpu[name]!.push((c.user + c.system) / 1000 / calls);
      wall[name]!.push((performance.now() - t0) / calls);
    }
  }
  providers.close();
  rmSync(dir, { recursive: true, force: true });
  child.kill();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `${calls} decomposition calls + ${Math.ceil(calls / 50)} embedding batches per round, concurrency ${concurrency}, ${rounds} rounds; load ${loadBefore.join(' ')} -> ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log('| variant | CPU ms per call (median) | wall ms per call (median) |\n|---|---:|---:|');
  for (const name of Object.keys(variants)) {
    console.log(`| ${name} | ${median(cpu[name]!).toFixed(3)} | ${median(wall[name]!).toFixed(3)} |`);
  }
}
