import { describe, expect, it } from 'vitest';
import { SUBCOMMAND_VALUE_FLAGS } from '../../ts/cli/command-flags.js';

const ROOT_VALUE_FLAGS = new Set(['--folder', '-f', '--port']);

describe('SUBCOMMAND_VALUE_FLAGS', () => {
  it("equals the sub-commands' own flags that take a value (besides the root's)", async () => {
    const found = new Set<string>();
    const modules = await Promise.all([
      import('../../ts/cli/build.js'),
      import('../../ts/cli/vis.js'),
      import('../../ts/cli/search.js'),
      import('../../ts/cli/ui.js'),
      import('../../ts/cli/eval.js'),
    ]);
    for (const m of modules) {
      const command = m.default as unknown as { args: Record<string, { type: string; alias?: string }> };
      for (const [flag, def] of Object.entries(command.args)) {
        if (def.type !== 'string') continue;
        for (const spelt of [`--${flag}`, ...(def.alias ? [`-${def.alias}`] : [])]) {
          if (!ROOT_VALUE_FLAGS.has(spelt)) found.add(spelt);
        }
      }
    }
    expect([...SUBCOMMAND_VALUE_FLAGS].sort()).toEqual([...found].sort());
  });
});
