/**
 * The web UI's chat follows builds run outside it (a `noderag build` in a terminal), as the
 * search server does: its engine watches for new generations.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUiApp } from '../../ts/ui/app.js';
import { realUiDeps } from '../../ts/ui/deps.js';
import { createProject, REPO_ROOT } from '../helpers/project.js';

const EXAMPLE = join(REPO_ROOT, 'examples', 'observatory', 'input');
const HOST = '127.0.0.1:8501';
const SAME = { host: HOST, origin: `http://${HOST}`, 'sec-fetch-site': 'same-origin' };

describe('web UI chat', () => {
  it('answers from a generation built outside the UI, without a save or a restart', async () => {
    const [first] = readdirSync(EXAMPLE).sort();
    const p = await createProject({
      files: { [first!]: readFileSync(join(EXAMPLE, first!), 'utf8') },
      config: { dim: 256 },
    });
    try {
      expect((await p.build()).code).toBe(0);
      const app = createUiApp({ ...realUiDeps(p.root), logError: () => {} });
      const ask = async () => {
        const r = await app.request('/api/chat', {
          method: 'POST',
          headers: { ...SAME, 'content-type': 'application/json' },
          body: JSON.stringify({ question: 'Who was Balthazar Nimblewick?' }),
        });
        expect(r.status).toBe(200);
        return JSON.stringify(await r.json());
      };
      expect(await ask()).not.toContain('lens grinder');
      await p.writeInput(
        '99-nimblewick.md',
        'Balthazar Nimblewick was the lens grinder of Halden Observatory.',
      );
      expect((await p.build()).code).toBe(0);
      // The watch checks at most once a second, then loads the new generation in the background.
      let seen = '';
      for (let i = 0; i < 40 && !seen.includes('lens grinder'); i++) {
        await new Promise((r) => setTimeout(r, 250));
        seen = await ask();
      }
      expect(seen).toContain('lens grinder');
    } finally {
      await p.remove();
    }
  }, 60_000);
});
