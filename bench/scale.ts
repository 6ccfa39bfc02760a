/**
 * A sync at scale (issue 15, S on a large index): a corpus of `--mb` megabytes (default 10)
 * made from the HotpotQA-100 paragraphs repeated, each copy's capitalised words given a
 * suffix of its own (so every copy adds its own entities, units and relationships rather than
 * merging into the first), one file per 1,000 paragraphs, indexed with the offline `local`
 * provider. Then one short file is added and the index synced; then the final folder is
 * built from scratch (the peer: what a sync replaces). Each build runs in a process of its
 * own (bench/lib/timed-build.ts), one after the other.
 *
 *   npm run bench -- scale [--mb 10]
 *
 * Ends with `RESULT scale corpus_mb=M clean_s=C sync_s=S seconds_ratio=S/C sync_peak_rss_mb=R
 * clean_peak_rss_mb=R2`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCorpus, localConfigYaml } from './lib/hotpot.js';
import { type TimedBuild, timedBuild } from './lib/timed-build.js';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '10' } } });
const mb = Number(values.mb);
if (!(mb > 0)) throw new Error(`--mb: expected a positive number, got ${values.mb}`);

/** The corpus as files of 1,000 paragraphs: copy k of every paragraph names its capitalised words `<word>q<k>`. */
function corpusFiles(megabytes: number): [string, string][] {
  const paragraphs = Object.entries(loadCorpus());
  const parts: string[] = [];
  let size = 0;
  for (let copy = 0; size < megabytes * 1e6; copy++) {
    const suffix = copy === 0 ? '' : `q${copy.toString(36)}`;
    for (const [title, sentences] of paragraphs) {
      const text = `${title}${suffix}\n\n${sentences.join('').replace(/\b([A-Z][a-z]+)/g, `$1${suffix}`)}\n\n`;
      parts.push(text);
      size += Buffer.byteLength(text);
    }
  }
  const files: [string, string][] = [];
  for (let i = 0; i < parts.length; i += 1000) {
    files.push([`part-${String(i / 1000).padStart(3, '0')}.txt`, parts.slice(i, i + 1000).join('')]);
  }
  return files;
}

const ADDED: [string, string] = [
  'added-note.txt',
  'Zanzibar Quokka met the Brillig Society in 1923. The Brillig Society was founded in Oslo.\n',
];

function project(root: string, files: [string, string][]): void {
  mkdirSync(join(root, 'input'), { recursive: true });
  for (const [name, text] of files) writeFileSync(join(root, 'input', name), text);
  writeFileSync(join(root, 'Node_config.yaml'), localConfigYaml(root));
}

const files = corpusFiles(mb);
const bytes = files.reduce((n, [, t]) => n + Buffer.byteLength(t), 0);
const work = mkdtempSync(join(tmpdir(), 'noderag-bench-scale-'));
try {
  const synced = join(work, 'synced');
  project(synced, files);
  console.log(
    `# scale: ${(bytes / 1e6).toFixed(1)} MB in ${files.length} files; load average ${loadavg()[0]!.toFixed(1)}\n`,
  );
  const full = timedBuild(synced);
  writeFileSync(join(synced, 'input', ADDED[0]), ADDED[1]);
  const sync = timedBuild(synced);
  const clean = join(work, 'clean');
  project(clean, [...files, ADDED]);
  const cleanRun = timedBuild(clean);

  const row = (label: string, t: TimedBuild) =>
    `| ${label} | ${t.seconds.toFixed(1)} | ${t.cpuSeconds.toFixed(1)} | ${t.peakRssMb.toFixed(0)} |`;
  console.log('| run | wall s | CPU s | peak RSS MiB |');
  console.log('|---|---:|---:|---:|');
  console.log(row('full build', full));
  console.log(row('sync (one short file added)', sync));
  console.log(row('clean build of the final folder', cleanRun));
  console.log('\n| stage | seconds of the sync | of the clean build |');
  console.log('|---|---:|---:|');
  for (const [stage, s] of Object.entries(cleanRun.stages)) {
    console.log(`| ${stage} | ${(sync.stages[stage] ?? 0).toFixed(1)} | ${s.toFixed(1)} |`);
  }
  console.log(
    `\nload average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}`,
  );
  console.log(
    `\nRESULT scale corpus_mb=${(bytes / 1e6).toFixed(1)} clean_s=${cleanRun.seconds.toFixed(1)} sync_s=${sync.seconds.toFixed(1)} seconds_ratio=${(sync.seconds / cleanRun.seconds).toFixed(3)} sync_peak_rss_mb=${sync.peakRssMb.toFixed(0)} clean_peak_rss_mb=${cleanRun.peakRssMb.toFixed(0)}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
