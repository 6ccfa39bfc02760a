/** `noderag vis -f DIR [-n N]`: writes DIR/index.html, an interactive view of the graph. */
import { resolve } from 'node:path';
import { defineCommand } from 'citty';
import { IndexNotBuiltError } from '../errors.js';
import { shellArg } from '../shell-arg.js';
import { RECOMMENDED_MAX_NODES, writeVisualisation } from '../vis/write.js';
import { folderArg, folderValue, projectConfig } from './args.js';
import { CliExit, EXIT, unusableIndexExit } from './exit.js';
import { SUB_COMMAND_METAS } from './metas.js';

export function parseNodeCount(raw: string | undefined): number {
  if (raw === undefined) return 500;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
    throw new CliExit(EXIT.USAGE, `-n: expected a positive integer, got "${raw}"`);
  }
  return n;
}

export default defineCommand({
  meta: SUB_COMMAND_METAS.vis,
  args: {
    ...folderArg,
    nodes: {
      type: 'string',
      alias: 'n',
      description: 'target number of nodes, ranked by PageRank (default 500)',
    },
  },
  async run({ args }) {
    const folder = resolve(folderValue(args.folder));
    const n = parseNodeCount(args.nodes);
    const config = projectConfig(folder, { requireApiKeys: false, warn: true });
    try {
      const r = await writeVisualisation(folder, n, config.config.dim);
      // Said of what was drawn: a small graph draws fewer nodes than asked, linking nodes more.
      if (r.nodes > RECOMMENDED_MAX_NODES) {
        console.error(
          `Warning: ${r.nodes} nodes drawn; browsers may struggle above ${RECOMMENDED_MAX_NODES}.`,
        );
      }
      if (r.unfinishedCycle) {
        const { generation, stage } = r.unfinishedCycle;
        console.error(
          `Note: build generation ${generation} is unfinished (at the ${stage}): the drawing shows the tables its stages committed so far, part of the changes it indexes; \`noderag build -f ${shellArg(folder)}\` finishes it.`,
        );
      }
      if (r.unreachableComponents > 0) {
        console.error(
          `Note: ${r.unreachableComponents} group(s) of top nodes are not connected to the rest in the corpus graph itself; they are drawn apart.`,
        );
      }
      console.log(
        `Wrote ${r.path} (${r.nodes} nodes: ${r.nodes - r.linking} top-ranked + ${r.linking} linking; ${r.edges} edges)`,
      );
    } catch (e) {
      if (e instanceof IndexNotBuiltError) throw new CliExit(unusableIndexExit(e), e.message);
      throw e;
    }
  },
});
