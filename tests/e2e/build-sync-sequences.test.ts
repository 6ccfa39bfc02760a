/**
 * Random sequences of folder changes, synced one after another (docs/method.md §4.5): after
 * every sync the text, semantic-unit, entity and relationship tables and the base graph equal
 * those of a clean build of the same folder. The hand-written cases of build-sync.test.ts pin
 * the rules one by one; this drives them together, the way a user's folder drifts: edits that
 * move a sentence from one file to another (chunks shared between files), whitespace-only,
 * compatibility-character and letter-case edits (the same chunk, unit or phrase in another
 * form), renames that change which file comes first, moves into a subfolder, copies, swaps,
 * format changes (.txt, .md, .html) and deletions. The seeds are fixed, so a failure repeats; the failing sequence is printed.
 * Offline (`local` provider), builds run in process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile, rename } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { comparableIndex } from '../../bench/lib/comparable-index.js';
import { mulberry32 as random } from '../../bench/lib/random.js';
import { runBuild } from '../../ts/indexing/pipeline.js';
import { createProject, type Project, REPO_ROOT } from '../helpers/project.js';

const DIM = 32;
const CHUNK_SIZE = 64;
// A wider search, outside CI: NODERAG_SYNC_SEEDS=200 npx vitest run tests/e2e/build-sync-sequences.test.ts
const SEEDS = Array.from({ length: Number(process.env.NODERAG_SYNC_SEEDS) || 12 }, (_, i) => i + 1);
const ROUNDS = 6;

const projects: Project[] = [];
afterAll(async () => {
  for (const p of projects) await p.remove();
});

async function project(files: Record<string, string>): Promise<Project> {
  const p = await createProject({ files, config: { chunk_size: CHUNK_SIZE, dim: DIM } });
  projects.push(p);
  return p;
}

async function build(root: string): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d) => {
    out += d;
  });
  const code = await runBuild({ folder: root, yes: true, handleSignals: false, stdout, stderr: stdout });
  return { code, out };
}

const comparable = (root: string) => comparableIndex(root, DIM);

/** The example's documents, and every sentence of them (material for edits and new files). */
function corpus(): { files: Record<string, string>; sentences: string[] } {
  const dir = join(REPO_ROOT, 'examples', 'observatory', 'input');
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort())
    files[f.replace(/\.md$/, '.txt')] = readFileSync(join(dir, f), 'utf8');
  const sentences = Object.values(files)
    .flatMap((t) => t.split(/(?<=\.)\s+/))
    .map((s) => s.trim())
    .filter((s) => s.length > 20 && !s.startsWith('#'));
  return { files: Object.fromEntries(Object.entries(files).slice(0, 6)), sentences };
}

/** Every file under `input/` (relative paths) with its content. */
async function folderFiles(p: Project): Promise<Record<string, string>> {
  const root = p.path('input');
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else out[relative(root, full).split('\\').join('/')] = await readFile(full, 'utf8');
    }
  };
  await walk(root);
  return out;
}

type Op = (p: Project, files: Record<string, string>) => Promise<string | null>;

/** The changes a sequence draws from; each returns what it did, or null when it does not apply. */
function operations(next: () => number, sentences: readonly string[]): Op[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const names = (files: Record<string, string>) => Object.keys(files).sort();
  let fresh = 0;
  const newName = (ext: string) => `${pick(['a', 'm', 'z'])}${fresh++}-${Math.floor(next() * 1000)}.${ext}`;
  const split = (text: string) => text.split(/(?<=\.)\s+/);
  return [
    async (p, files) => {
      // A sentence replaced by one of another file: the chunk may now exist in two files.
      const name = pick(names(files));
      const parts = split(files[name]!);
      const at = Math.floor(next() * parts.length);
      parts[at] = pick(sentences);
      await p.writeInput(name, `${parts.join(' ')}\n`);
      return `edit ${name}`;
    },
    async (p, files) => {
      // Whitespace only: a space after a full stop becomes a line break, or the reverse.
      const name = pick(names(files));
      const text = files[name]!;
      const changed =
        text.includes('.\n') && next() < 0.5 ? text.replace('.\n', '. ') : text.replace('. ', '.\n');
      if (changed === text) return null;
      await p.writeInput(name, changed);
      return `whitespace ${name}`;
    },
    async (p, files) => {
      // A compatibility character: "fi" written as the ligature (NFKC folds it back), or back.
      const name = pick(names(files));
      const text = files[name]!;
      const changed = text.includes('ﬁ') ? text.replace('ﬁ', 'fi') : text.replace('fi', 'ﬁ');
      if (changed === text) return null;
      await p.writeInput(name, changed);
      return `ligature ${name}`;
    },
    async (p, files) => {
      // Letter case: relation phrases are kept once per fold, in the form met first.
      const name = pick(names(files));
      const text = files[name]!;
      const changed = / THE /.test(text) ? text.replace(' THE ', ' the ') : text.replace(' the ', ' THE ');
      if (changed === text) return null;
      await p.writeInput(name, changed);
      return `case ${name}`;
    },
    async (p, files) => {
      if (names(files).length < 2) return null;
      const name = pick(names(files));
      await p.removeInput(name);
      return `delete ${name}`;
    },
    async (p, files) => {
      // A rename changes which file holds a shared chunk first (paths are ordered).
      const name = pick(names(files));
      const to = newName(name.split('.').pop()!);
      await rename(p.path('input', name), p.path('input', to));
      return `rename ${name} → ${to}`;
    },
    async (p, files) => {
      const name = pick(names(files).filter((n) => !n.includes('/')));
      if (name === undefined) return null;
      await p.writeInput(`sub/${name}`, files[name]!);
      await p.removeInput(name);
      return `move ${name} → sub/`;
    },
    async (p, files) => {
      const name = pick(names(files));
      const to = newName(name.split('.').pop()!);
      await p.writeInput(to, files[name]!);
      return `copy ${name} → ${to}`;
    },
    async (p, files) => {
      const [a, b] = [pick(names(files)), pick(names(files))];
      if (a === b) return null;
      await p.writeInput(a, files[b]!);
      await p.writeInput(b, files[a]!);
      return `swap ${a} ${b}`;
    },
    async (p, files) => {
      // The same text under another loader: .txt ↔ .md, or wrapped in HTML paragraphs.
      const name = pick(names(files));
      const stem = name.replace(/\.[^.]+$/, '');
      const text = files[name]!;
      const [to, content] = name.endsWith('.html')
        ? [`${stem}.txt`, text.replace(/<[^>]+>/g, ' ').trim()]
        : name.endsWith('.md')
          ? [
              `${stem}.html`,
              `<html><body>${split(text)
                .map((s) => `<p>${s}</p>`)
                .join('')}</body></html>`,
            ]
          : [`${stem}.md`, text];
      if (files[to] !== undefined) return null;
      await p.writeInput(to, content);
      await p.removeInput(name);
      return `format ${name} → ${to}`;
    },
    async (p) => {
      const to = newName('txt');
      const count = 1 + Math.floor(next() * 3);
      await p.writeInput(to, `${Array.from({ length: count }, () => pick(sentences)).join(' ')}\n`);
      return `add ${to}`;
    },
  ];
}

describe('random sequences of folder changes', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: after every sync the tables and base graph equal a clean build's`, async () => {
      const next = random(seed);
      const { files, sentences } = corpus();
      const ops = operations(next, sentences);
      const p = await project(files);
      expect((await build(p.root)).code).toBe(0);
      const done: string[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const count = 1 + Math.floor(next() * 3);
        for (let i = 0; i < count; i++) {
          const did = await ops[Math.floor(next() * ops.length)]!(p, await folderFiles(p));
          if (did) done.push(`round ${round}: ${did}`);
        }
        const sync = await build(p.root);
        expect(sync.code, `${done.join('\n')}\n${sync.out}`).toBe(0);
        const clean = await project(await folderFiles(p));
        expect((await build(clean.root)).code).toBe(0);
        expect(await comparable(p.root), done.join('\n')).toEqual(await comparable(clean.root));
        await clean.remove();
      }
    });
  }
});
