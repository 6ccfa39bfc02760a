/**
 * CPU time per question of the server's own work, without HTTP: `NodeSearch.search` with the
 * retrieval cache off (the `local` provider's embedding and decomposition included) plus the
 * body of the /retrieval reply as the server makes it (ts/server/app.ts `retrievalReply`), the
 * questions rotated. CPU time of this process, so it moves much less with the machine's other
 * load than req/s does (bench/server.ts --in-process).
 *
 * A/B of two code trees (checkouts of this repository with their own addon built, e.g. `git
 * worktree add /tmp/before <commit>` then `npm run build:native` there): each tree's engine is
 * loaded in this one process and the rounds alternate between them, so both see the same
 * machine load and caches. From a checkout:
 *
 *   node --import tsx bench/lib/in-process-cpu.ts [--rounds 7] [--per-round 2000] TREE_A TREE_B
 *
 * prints the CPU µs per question of every round of each tree and their medians, and checks
 * that both wrote the same number of reply bytes.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { percentile } from './stats.js';

export interface InProcessCpu {
  /** CPU µs per question of each round. */
  roundsUs: number[];
  medianUs: number;
  questionsPerRound: number;
  /** Bytes of all the replies made (the same for two trees that answer the same). */
  replyBytes: number;
}

export interface InProcessOptions {
  warmup?: number;
  rounds?: number;
  perRound?: number;
}

/** One tree's engine: answers the next question and returns its reply's byte count. */
interface Engine {
  one(): Promise<number>;
  close(): void;
}

/** The repository root this module belongs to. */
const HERE = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

async function openEngine(root: string, folder: string, questions: readonly string[]): Promise<Engine> {
  const { NodeConfig } = await import(`${root}/ts/config/node-config.ts`);
  const { NodeSearch } = await import(`${root}/ts/search/node-search.ts`);
  const app = await import(`${root}/ts/server/app.ts`);
  // Trees from before the server made its reply from the engine's bytes: JSON.stringify.
  const reply: (r: { retrievalInfo: string; sources?: unknown[] }) => string | Uint8Array =
    app.retrievalReply ?? ((r) => JSON.stringify({ retrieval: r.retrievalInfo, sources: r.sources ?? [] }));
  const search = new NodeSearch(NodeConfig.fromMainFolder(folder), { retrievalCacheSize: 0 });
  await search.ready();
  let i = 0;
  return {
    // Bytes, as the server sends them (a string body is measured and encoded by Node).
    one: async () => {
      const body = reply(await search.search(questions[i++ % questions.length]!));
      return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    },
    close: () => search.close(),
  };
}

/** CPU µs per question of this tree's engine, `rounds` rounds of `perRound` questions. */
export async function inProcessCpu(
  folder: string,
  questions: readonly string[],
  options: InProcessOptions = {},
): Promise<InProcessCpu> {
  return (await inProcessCpuAB(folder, questions, [HERE], options))[0]!;
}

/**
 * The same for the engines of several trees (`roots`: repository roots), loaded in this
 * process, rounds alternating between them (the order reversed every other round).
 */
export async function inProcessCpuAB(
  folder: string,
  questions: readonly string[],
  roots: readonly string[],
  options: InProcessOptions = {},
): Promise<InProcessCpu[]> {
  const { warmup = 500, rounds = 3, perRound = 2000 } = options;
  const engines: Engine[] = [];
  try {
    for (const root of roots) engines.push(await openEngine(root, folder, questions));
    for (let k = 0; k < warmup; k++) for (const e of engines) await e.one();
    const results = engines.map(() => ({ roundsUs: [] as number[], replyBytes: 0 }));
    for (let round = 0; round < rounds; round++) {
      const order = engines.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const before = process.cpuUsage();
        let bytes = 0;
        for (let k = 0; k < perRound; k++) bytes += await engines[i]!.one();
        const used = process.cpuUsage(before);
        results[i]!.roundsUs.push((used.user + used.system) / perRound);
        results[i]!.replyBytes += bytes;
      }
    }
    return results.map((r) => ({
      ...r,
      medianUs: percentile(r.roundsUs, 50),
      questionsPerRound: perRound,
    }));
  } finally {
    for (const e of engines) e.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { rounds: { type: 'string', default: '7' }, 'per-round': { type: 'string', default: '2000' } },
  });
  if (positionals.length < 1) {
    console.error(
      'usage: node --import tsx bench/lib/in-process-cpu.ts [--rounds N] [--per-round N] TREE...',
    );
    process.exit(2);
  }
  const { ensureHotpotIndex, loadQuestions } = await import('./hotpot.js');
  const roots = positionals.map((p) => p.replace(/\/$/, ''));
  const results = await inProcessCpuAB(
    ensureHotpotIndex(),
    loadQuestions().map((q) => q.question),
    roots,
    { rounds: Number(values.rounds), perRound: Number(values['per-round']) },
  );
  results.forEach((r, i) => {
    console.log(
      `${roots[i]}: ${r.roundsUs.map((u) => u.toFixed(0)).join(' ')} µs per question, median ${r.medianUs.toFixed(0)}; reply bytes ${r.replyBytes}`,
    );
  });
  if (new Set(results.map((r) => r.replyBytes)).size > 1)
    console.log('The trees wrote different reply bytes.');
}
