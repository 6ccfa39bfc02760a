/**
 * The web UI end to end in headless Chromium (Debian's package via playwright-core): the
 * real `noderag ui` process on an empty folder, the local (offline) provider, three uploaded
 * documents, a real in-process build, the Indices tab and a question. One document holds
 * markup that must show as text. Screenshots of each step go to tests/artifacts/ui-*.png.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserTests } from '../helpers/chromium.js';
import { CLI, REPO_ROOT } from '../helpers/project.js';
import { scratchDir } from '../helpers/scratch.js';

const ARTIFACTS = join(REPO_ROOT, 'tests', 'artifacts');
const EVIL = '<img src=x onerror=alert(1)>';

const DOCS: Record<string, string> = {
  // A file name with markup: allowed (no folder separator), and must show as text.
  [`harbor ${EVIL}.txt`]:
    'The harbor town of Velmora exports salted fish and amber. Captain Ilse Brandt runs the Velmora harbor authority and inspects every ship.',
  'notes.md': `# Amber trade\n\nAmber from Velmora is polished by the guild of Orrin Vale. The guild sells amber beads to traders. Markup sample: ${EVIL}`,
  'lighthouse.html':
    '<html><body><h1>Lighthouse</h1><p>The Velmora lighthouse was built by Orrin Vale in 1820 and guides fishing boats home.</p></body></html>',
};

let browser: Browser | undefined;
let child: ChildProcess | undefined;

beforeAll(async () => {
  if (!skipBrowserTests) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  child?.kill('SIGTERM');
});

function startUi(folder: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', CLI, 'ui', '-f', folder, '--port', '0'], {
      cwd: REPO_ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.stderr.on('data', (d) => {
      err += d;
    });
    proc.on('exit', (code) => reject(new Error(`ui exited with ${code}: ${out}\n${err}`)));
  });
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `ui-${name}.png`), fullPage: true });
}

describe.skipIf(skipBrowserTests)('web UI in headless Chromium', () => {
  it('configures, uploads, builds, shows indices and answers with its context', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // An empty existing folder: the UI writes the config template into it.
    const folder = join(scratchDir('noderag-ui-e2e-'), 'project');
    mkdirSync(folder);
    const url = await startUi(folder);
    expect(existsSync(join(folder, 'Node_config.yaml'))).toBe(true);

    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const external: string[] = [];
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(url)) return route.continue();
      external.push(route.request().url());
      return route.abort();
    });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // Every file the page asks for exists (the favicon included).
    const notFound: string[] = [];
    page.on('response', (r) => {
      if (r.status() === 404) notFound.push(r.url());
    });

    await page.goto(`${url}/`);
    await expect.poll(() => page.locator('#status').textContent()).toBe('Not built');
    await expect.poll(() => page.inputValue('[name="config.chunk_size"]')).toBe('1048');
    await shot(page, '1-start');

    // A bad value is reported next to its field; then the local provider is saved.
    await page.fill('[name="config.chunk_size"]', 'big');
    await page.click('#save-config');
    await expect
      .poll(() => page.locator('.field-error[data-for="config.chunk_size"]').textContent())
      .toMatch(/integer/);
    await page.selectOption('[name="model_config.service_provider"]', 'local');
    await page.fill('[name="config.chunk_size"]', '128');
    await page.fill('[name="config.dim"]', '64');
    await page.click('#save-config');
    await expect.poll(() => page.locator('#save-result').textContent()).toMatch(/Saved/);
    const yaml = readFileSync(join(folder, 'Node_config.yaml'), 'utf8');
    expect(yaml).toMatch(/service_provider: local/);
    expect(yaml).toMatch(/chunk_size: 128/);
    await shot(page, '2-config-saved');

    // Three documents through the file input (the drop zone uses the same upload).
    const srcDir = scratchDir('noderag-ui-docs-');
    const paths = Object.entries(DOCS).map(([name, text]) => {
      const p = join(srcDir, name);
      writeFileSync(p, text);
      return p;
    });
    // The file input is in the tab order (a hidden one could not be reached without a mouse).
    await page.focus('#file-input');
    expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('file-input');
    // Two through the file input, one dropped on the drop zone (a synthetic drop event).
    await page.setInputFiles('#file-input', paths.slice(0, 2));
    await expect.poll(() => page.locator('#file-list tbody tr').count()).toBe(2);
    const [lastName, lastText] = Object.entries(DOCS)[2]!;
    // A string expression: the test files are type-checked without the DOM library.
    const dataTransfer = await page.evaluateHandle(
      `(() => { const d = new DataTransfer(); d.items.add(new File([${JSON.stringify(lastText)}], ${JSON.stringify(lastName)})); return d; })()`,
    );
    await page.dispatchEvent('#dropzone', 'drop', { dataTransfer });
    await expect.poll(() => page.locator('#file-list tbody tr').count()).toBe(3);
    expect(await page.locator('#file-list tbody').textContent()).toMatch(/new/);
    expect(await page.locator('#file-list tbody').textContent()).toContain(`harbor ${EVIL}.txt`);
    expect(await page.locator('#file-list img').count()).toBe(0);
    await shot(page, '3-files');

    await page.click('#build-button');
    await expect
      .poll(() => page.locator('#status').textContent(), { timeout: 45_000, interval: 250 })
      .toBe('Finished');
    await expect.poll(() => page.locator('#build-message').textContent()).toBe('Build finished.');
    expect(await page.locator('#build-log').textContent()).toMatch(/HNSW pipeline/);
    expect(await page.locator('#file-list tbody').textContent()).toMatch(/indexed/);
    expect(await page.isEnabled('#search-engine')).toBe(true);
    await shot(page, '4-built');

    await page.click('#tab-indices');
    await expect.poll(() => page.locator('#indices tbody tr').count()).toBeGreaterThan(3);
    for (const key of ['documents', 'chunks', 'edges', 'entity', 'semantic_unit', 'relationship']) {
      const n = Number(await page.locator(`#indices tr[data-key="${key}"] td.num`).textContent());
      expect(n, key).toBeGreaterThan(0);
    }
    await shot(page, '5-indices');

    await page.check('#search-engine');
    // Shift+Enter is a new line; Enter asks.
    await page.fill('#question', 'What does the guild of Orrin Vale do');
    await page.press('#question', 'Shift+Enter');
    await page.type('#question', 'with amber?');
    expect(await page.inputValue('#question')).toBe('What does the guild of Orrin Vale do\nwith amber?');
    expect(await page.locator('#chat-log .exchange').count()).toBe(0);
    await page.press('#question', 'Enter');
    const exchange = page.locator('#chat-log .exchange').first();
    await expect.poll(() => exchange.locator('.answer-text').count(), { timeout: 20_000 }).toBe(1);
    // The context comes before the answer, grouped by node type, with token counts.
    const order = await exchange
      .locator('details.context, .answer')
      .evaluateAll((els) => els.map((e) => e.className));
    expect(order).toEqual(['context', 'answer']);
    expect(await exchange.locator('details.context .section').count()).toBeGreaterThan(0);
    expect(await exchange.locator('summary').textContent()).toMatch(/\d+ tokens/);
    expect((await exchange.locator('.answer-text').textContent())?.length).toBeGreaterThan(0);
    await exchange.locator('summary').click();
    // The markup in notes.md is retrieved and shown as text: no <img> element, no alert.
    expect(await exchange.locator('details.context').textContent()).toContain(EVIL);
    expect(await page.locator('#chat-log img').count()).toBe(0);
    // Each item names its source document (the markup file among them, as text).
    expect(await exchange.locator('details.context .source').count()).toBeGreaterThan(0);
    // The answer cites context items [n]; the sources under it list the input files, the
    // cited ones first and marked (issue 16 item 1).
    expect(await exchange.locator('.answer-text').textContent()).toMatch(/\[\d+\]/);
    const sources = exchange.locator('.answer .sources li');
    expect(await sources.count()).toBeGreaterThan(0);
    expect(await sources.first().getAttribute('class')).toBe('cited');
    expect(await sources.first().textContent()).toMatch(/^(\[\d+\])+ \S+\.\w+ \(cited (\[\d+\])+\)$/);
    await shot(page, '6-chat');
    // The Ask button still asks.
    await page.fill('#question', 'Who built the Velmora lighthouse?');
    await page.click('#ask');
    await expect
      .poll(() => page.locator('#chat-log .exchange .answer-text').count(), { timeout: 20_000 })
      .toBe(2);
    expect(await page.inputValue('#question')).toBe('');
    // A file put into input/ by hand whose name holds U+2028 (uploads refuse such names): the
    // build's event for it carried the character raw, the page's line split cut the event
    // there, and the page reconnected forever with "Building…" and the log repeated.
    const separated = 'memo\u2028final.txt';
    writeFileSync(join(folder, 'input', separated), 'Orrin Vale also repairs the Velmora lighthouse lamp.');
    await page.click('#tab-files');
    await page.click('#build-button');
    await expect
      .poll(() => page.locator('#build-message').textContent(), { timeout: 45_000, interval: 250 })
      .toBe('Build finished.');
    expect((await page.locator('#build-log').textContent())!.split(separated).length - 1).toBe(1);
    const icon = await page.request.get(`${url}/favicon.ico`);
    expect(icon.status()).toBe(200);
    expect(notFound).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    expect(external).toEqual([]);
    // The UI server stops: the page says so instead of showing the last state.
    const exited = new Promise((r) => child!.once('exit', r));
    child!.kill('SIGTERM');
    await exited;
    await expect
      .poll(() => page.locator('#status').textContent(), { timeout: 10_000 })
      .toBe('Server unreachable');
    await context.close();
  }, 90_000);
});
