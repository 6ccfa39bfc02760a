import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaseGraph } from '../../ts/model/graph-store.js';
import { NODE_TYPES } from '../../ts/model/types.js';
import { chooseNodes } from '../../ts/vis/choose.js';
import { renderGraphHtml } from '../../ts/vis/html.js';
import { launchChromium, skipBrowserTests } from '../helpers/chromium.js';
import { scratchDir } from '../helpers/scratch.js';

const ARTIFACTS = join(process.cwd(), 'tests', 'artifacts');
const EVIL = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b>bold</b>';

let browser: Browser;
beforeAll(async () => {
  if (!skipBrowserTests) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe.skipIf(skipBrowserTests)('visualisation page in headless Chromium', () => {
  it('renders the graph offline, exposes the node count, runs no injected code', async () => {
    const g = new BaseGraph();
    for (let i = 0; i < 60; i++) g.bumpNode(`n${String(i).padStart(3, '0')}`, NODE_TYPES[i % 7]!, 1);
    for (let i = 1; i < 60; i++)
      g.bumpEdge(`n${String(i).padStart(3, '0')}`, `n${String(Math.floor(i / 3)).padStart(3, '0')}`, 1);
    const chosen = await chooseNodes(g, 30);
    const html = renderGraphHtml({
      title: 'browser test',
      nodes: chosen.nodes.map((c) => ({ id: c.id, type: c.type, score: c.score, text: `${c.id} ${EVIL}` })),
      edges: chosen.edges,
    });
    const dir = scratchDir('noderag-vis-');
    const file = join(dir, 'index.html');
    writeFileSync(file, html);

    const context = await browser.newContext({ offline: true, viewport: { width: 1000, height: 700 } });
    const page = await context.newPage();
    const external: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      external.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-stabilized="true"]', { timeout: 30_000 });

    expect(await page.getAttribute('body', 'data-node-count')).toBe(String(chosen.nodes.length));
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('b').count()).toBe(0);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);

    // The canvas is not blank: count pixels that differ from the background.
    // (A string, not a function: the test's tsconfig has no DOM types.)
    const painted = (await page.evaluate(`(() => {
      const canvas = document.querySelector('canvas');
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 0) n++;
      return n;
    })()`)) as number;
    expect(painted).toBeGreaterThan(500);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'vis.png') });
    await context.close();
  });
});
