/**
 * `noderag build -f <folder> [--yes] [--allow-failures] [--rebuild]`: build the index, or
 * update it with the documents added since (docs/method.md §4); `--rebuild` builds it again
 * from scratch, keeping the response cache (ts/indexing/rebuild.ts). Exit codes (§4.6): 0 finished or up to date,
 * 1 a stage failed (state saved; run again to resume), 2 usage / invalid config / refused to
 * prompt / another build running, 3 config just created, 4 declined, 130 interrupted.
 */
import { defineCommand } from 'citty';
import { runBuild } from '../indexing/pipeline.js';
import { folderArg, folderValue } from './args.js';
import { CliExit } from './exit.js';
import { SUB_COMMAND_METAS } from './metas.js';

export default defineCommand({
  meta: SUB_COMMAND_METAS.build,
  args: {
    ...folderArg,
    yes: { type: 'boolean', alias: 'y', description: 'start without asking for confirmation' },
    'allow-failures': {
      type: 'boolean',
      description:
        'let the build go on when some chunks cannot be decomposed (they are listed in info/info.log)',
    },
    rebuild: {
      type: 'boolean',
      description:
        'rebuild the index from scratch, keeping the paid model replies in cache/response_cache/ (the previous index comes back if the build fails or stops)',
    },
  },
  async run({ args }) {
    const code = await runBuild({
      folder: folderValue(args.folder),
      yes: args.yes === true,
      allowFailures: args['allow-failures'] === true,
      rebuild: args.rebuild === true,
      handleSignals: true,
    });
    // Messages were printed by the build itself; only the code is left to report.
    if (code !== 0) throw new CliExit(code);
  },
});
