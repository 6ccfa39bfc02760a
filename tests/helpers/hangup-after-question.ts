/**
 * Test-only entry point: `noderag build -f <folder> --rebuild` with the CLI's signal handling,
 * on a terminal that closes at the question the way a real one may: its end of input first
 * (which ends the question), the SIGHUP right after, while the cancelled rebuild puts the
 * index back. Without a hang-up guard for the whole command the signal's default action ends
 * the process in the middle of that cleanup, leaving the lock and the index aside.
 *
 *   node --import tsx tests/helpers/hangup-after-question.ts <folder>
 *
 * Exits with the build's exit code.
 */
import { PassThrough } from 'node:stream';
import { runBuild } from '../../ts/indexing/pipeline.js';

const folder = process.argv[2];
if (folder === undefined) {
  console.error('usage: hangup-after-question.ts <folder>');
  process.exit(2);
}
const stdin = Object.assign(new PassThrough(), { isTTY: true });
const stdout = Object.assign(new PassThrough(), { isTTY: true });
stdout.on('data', (d) => {
  process.stdout.write(d);
  if (!String(d).includes('Start the build?')) return;
  // Registered after readline's own 'end' listener: the question has closed when this runs.
  stdin.once('end', () => process.kill(process.pid, 'SIGHUP'));
  stdin.end();
});
process.exitCode = await runBuild({
  folder,
  rebuild: true,
  handleSignals: true,
  stdin,
  stdout,
  stderr: process.stderr,
});
