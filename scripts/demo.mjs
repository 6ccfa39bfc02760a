#!/usr/bin/env node
// The README quick start's main job: index the bundled example corpus with the offline
// `local` provider (no key, no network) and answer a question in-process.
// Usage: npm run demo [-- "your question"] [-- --folder examples/chinese]
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const folderFlag = args.indexOf('--folder');
const folder = resolve(root, folderFlag >= 0 ? args[folderFlag + 1] : 'examples/observatory');
const rest = args.filter((_, i) => i !== folderFlag && i !== folderFlag + 1);
const question =
  rest[0] ??
  (folder.endsWith('chinese') ? '陈明远是谁？' : 'Who discovered Comet Pryce, and with which telescope?');

const build = spawnSync(process.execPath, [join(root, 'bin', 'noderag.js'), 'build', '-f', folder, '--yes'], {
  stdio: 'inherit',
});
if (build.status !== 0) process.exit(build.status ?? 1);

const { NodeConfig, NodeSearch } = await import(join(root, 'dist', 'index.js'));
const search = new NodeSearch(NodeConfig.fromMainFolder(folder));
try {
  const result = await search.answer(question);
  console.log(`\nQuestion: ${question}\n`);
  console.log(`Retrieval context (${result.retrievalTokens} tokens):\n${result.retrievalInfo}`);
  console.log(`Answer (${result.responseTokens} tokens):\n${result.response}`);
} finally {
  search.close();
}
