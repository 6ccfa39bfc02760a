/**
 * CPU time per question of the server's own work, without HTTP: `NodeSearch.search` with the
 * retrieval cache off (the `local` provider's embedding and decomposition included) plus the
 * JSON of the /retrieval reply, the questions rotated. CPU time of this process, so it moves
 * much less with the machine's other load than req/s does (bench/server.ts --in-process).
 */
import { NodeConfig } from '../../ts/config/node-config.js';
import { NodeSearch } from '../../ts/search/node-search.js';
import { percentile } from './stats.js';

export interface InProcessCpu {
  /** CPU µs per question of each round. */
  roundsUs: number[];
  medianUs: number;
  questionsPerRound: number;
}

export async function inProcessCpu(
  folder: string,
  questions: readonly string[],
  options: { warmup?: number; rounds?: number; perRound?: number } = {},
): Promise<InProcessCpu> {
  const { warmup = 500, rounds = 3, perRound = 2000 } = options;
  const search = new NodeSearch(NodeConfig.fromMainFolder(folder), { retrievalCacheSize: 0 });
  try {
    await search.ready();
    let i = 0;
    const one = async () => {
      const r = await search.search(questions[i++ % questions.length]!);
      return JSON.stringify({ retrieval: r.retrievalInfo, sources: r.sources }).length;
    };
    for (let k = 0; k < warmup; k++) await one();
    const roundsUs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = process.cpuUsage();
      for (let k = 0; k < perRound; k++) await one();
      const used = process.cpuUsage(before);
      roundsUs.push((used.user + used.system) / perRound);
    }
    return { roundsUs, medianUs: percentile(roundsUs, 50), questionsPerRound: perRound };
  } finally {
    search.close();
  }
}
