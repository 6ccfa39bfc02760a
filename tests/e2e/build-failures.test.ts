/**
 * `runBuild` in process (the real pipeline, `local` provider) with a stage replaced where a
 * failure must be provoked:
 *
 * - a stage that fails with a full disk while saving the failure state fails too: the first
 *   error is still printed, without a stack, and the build exits 1 (root ignores file modes,
 *   so the failing write is provoked by putting a folder where info/state.json goes);
 * - `--rebuild`: the index is rebuilt from scratch with the response cache kept; a failed
 *   rebuild puts the previous index back; the disk as a kill -9 in the middle of a rebuild
 *   would leave it (a copy taken from inside a stage) comes back to the previous index on
 *   the next build.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { comparableIndex } from '../../bench/lib/comparable-index.js';
import { runBuild } from '../../ts/indexing/pipeline.js';
import { rebuildLeftovers } from '../../ts/indexing/rebuild.js';
import type { StageContext, StageTable } from '../../ts/indexing/stages/context.js';
import { STAGE_RUNNERS } from '../../ts/indexing/stages/index.js';
import { CLI, createProject, type Project, REPO_ROOT, runTs } from '../helpers/project.js';

const FILES: Record<string, string> = {
  'a.txt': 'Halden Observatory was founded in 1887 by Margaret Okafor on Brannock Hill.',
  'b.txt': 'The Pryce Reflector discovered Comet Pryce in March 1925. Edith Pryce led the survey.',
  'c.md': '# Adeyemi Telescope\n\nCompleted in 1968 and named after Samuel Adeyemi in 1970.',
};

const projects: Project[] = [];
const scratch: string[] = [];
afterAll(async () => {
  for (const p of projects) await p.remove();
  for (const d of scratch) await rm(d, { recursive: true, force: true });
});

async function project(): Promise<Project> {
  const p = await createProject({ files: FILES });
  projects.push(p);
  return p;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function build(
  folder: string,
  options: { rebuild?: boolean; stages?: Partial<StageTable> } = {},
): Promise<Run> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => {
    out += d;
  });
  stderr.on('data', (d) => {
    err += d;
  });
  const code = await runBuild({
    folder,
    yes: true,
    handleSignals: false,
    stdout,
    stderr,
    rebuild: options.rebuild,
    stages: options.stages,
  });
  return { code, stdout: out, stderr: err };
}

/** Every file of cache/ and info/ except info.log, as relative path → bytes. */
function snapshot(root: string, withResponseCache = false): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const rel = relative(root, abs);
      if (rel === join('info', 'info.log')) continue;
      if (!withResponseCache && rel.startsWith(join('cache', 'response_cache'))) continue;
      if (statSync(abs).isDirectory()) walk(abs);
      else out.set(rel, readFileSync(abs));
    }
  };
  for (const top of ['cache', 'info']) if (existsSync(join(root, top))) walk(join(root, top));
  return out;
}

describe('a failure while the disk is full', () => {
  it('prints the first error without a stack, even when the failure state cannot be saved', async () => {
    const p = await project();
    const full = Object.assign(new Error("ENOSPC: no space left on device, write '/cache/.staging/x'"), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
    });
    const r = await build(p.root, {
      stages: {
        'Text pipeline': async (ctx: StageContext) => {
          // What a full disk does to the failure path: info/state.json cannot be replaced,
          // and info.log cannot be appended to.
          rmSync(join(ctx.root, 'info', 'state.json'));
          mkdirSync(join(ctx.root, 'info', 'state.json', 'blocked'), { recursive: true });
          rmSync(join(ctx.root, 'info', 'info.log'));
          mkdirSync(join(ctx.root, 'info', 'info.log', 'blocked'), { recursive: true });
          throw full;
        },
      },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "error: Text pipeline failed: ENOSPC: no space left on device, write '/cache/.staging/x'",
    );
    expect(r.stderr).toContain('The disk is full: free some space, then run the build again.');
    expect(r.stderr).toContain('The failure could not be recorded in info/state.json either');
    expect(r.stderr).not.toContain('    at ');
    // The first line of stderr is the stage's own error, not the one of the failed save.
    expect(r.stderr.split('\n')[0]).toMatch(/^error: Text pipeline failed: ENOSPC/);
  });

  it('when the state can be saved, says so after the error', async () => {
    const p = await project();
    const r = await build(p.root, {
      stages: {
        'Graph pipeline': async () => {
          throw Object.assign(new Error('EROFS: read-only file system, open'), {
            code: 'EROFS',
            syscall: 'open',
          });
        },
      },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('The project folder is not writable');
    expect(r.stderr).toContain('State saved; run the build again to resume.');
    expect(r.stderr).not.toContain('    at ');
    expect(JSON.parse(readFileSync(p.path('info', 'state.json'), 'utf8'))).toMatchObject({
      current_state: 'Graph pipeline',
      error_type: 'ERROR',
    });
  });
});

describe('a commit whose renames fail part way', () => {
  it('keeps its staged files: the next run rolls it forward and the index is whole', async () => {
    const p = await project();
    expect((await build(p.root)).code).toBe(0);
    writeFileSync(p.path('input', 'd.txt'), 'The Kestrel Telescope was built by Ada Moss in 1931.');
    // The Document stage's commit stops after moving its first file into place, as a rename
    // refused by the filesystem (a permission, another filesystem, a folder in the way) would.
    let renamed = 0;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d) => {
      err += d;
    });
    const failed = await runBuild({
      folder: p.root,
      yes: true,
      handleSignals: false,
      stdout,
      stderr,
      hooks: {
        afterCommitStep: (stage, step) => {
          if (stage === 'Document pipeline' && step === 'file-renamed' && ++renamed === 1) {
            throw Object.assign(new Error('EPERM: operation not permitted, rename'), {
              code: 'EPERM',
              syscall: 'rename',
            });
          }
        },
      },
    });
    expect(failed).toBe(1);
    expect(err).toContain('The project folder is not writable');
    // Past the commit point the staged files wait for the roll forward.
    expect(readdirSync(p.path('cache', '.staging')).length).toBeGreaterThan(1);
    const resumed = await build(p.root);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(await readFile(p.path('info', 'info.log'), 'utf8')).toContain('completed an interrupted commit');
    // The same index as a build of the final folder in one go.
    const clean = await project();
    writeFileSync(clean.path('input', 'd.txt'), 'The Kestrel Telescope was built by Ada Moss in 1931.');
    expect((await build(clean.root)).code).toBe(0);
    expect(await comparableIndex(p.root, 64)).toEqual(await comparableIndex(clean.root, 64));
  }, 60_000);
});

describe('build --rebuild', () => {
  let p: Project;
  let original: Map<string, Buffer>;
  let replies: Buffer;

  it('a first build to rebuild', async () => {
    p = await project();
    const r = await build(p.root);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // The local provider keeps no response cache: a file of its own stands for the paid replies.
    replies = Buffer.from('{"paid": "reply"}\n');
    mkdirSync(p.path('cache', 'response_cache'), { recursive: true });
    writeFileSync(p.path('cache', 'response_cache', 'replies.bin'), replies);
    original = snapshot(p.root);
    expect(original.has(join('info', 'state.json'))).toBe(true);
  });

  it('a rebuild that fails puts the previous index back, byte for byte', async () => {
    const r = await build(p.root, {
      rebuild: true,
      stages: {
        'Summary pipeline': async () => {
          throw new Error('provider down');
        },
      },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Rebuild from scratch: the previous index waits in cache/.previous-index');
    expect(r.stdout).toContain('(generation 1, first build)');
    expect(r.stderr).toContain('The previous index is back in place');
    expect(snapshot(p.root)).toEqual(original);
    expect(await rebuildLeftovers(p.root)).toEqual([]);
  });

  it('a rebuild declined, or ended by SIGTERM/SIGHUP, at its question leaves the index as it was', async () => {
    for (const how of ['n', 'SIGTERM', 'SIGHUP'] as const) {
      const input = Object.assign(new PassThrough(), { isTTY: true });
      const stdout = Object.assign(new PassThrough(), { isTTY: true });
      const stderr = new PassThrough();
      let out = '';
      let err = '';
      stdout.on('data', (d) => {
        out += d;
        // The index is aside while the question waits; the answer comes then.
        if (!String(d).includes('Start the build?')) return;
        if (how === 'n') input.end('n\n');
        else for (const l of process.listeners(how).filter((x) => !before.includes(x))) (l as () => void)();
      });
      stderr.on('data', (d) => {
        err += d;
      });
      const before = how === 'n' ? [] : process.listeners(how);
      const code = await runBuild({
        folder: p.root,
        rebuild: true,
        handleSignals: false,
        stdin: input,
        stdout,
        stderr,
      });
      expect(code, how).toBe(how === 'n' ? 4 : 130);
      expect(out, how).toContain('Rebuild from scratch: the previous index waits');
      expect(err, how).toContain('Build cancelled; nothing changed.');
      expect(err, how).not.toContain('did not finish');
      const log = readFileSync(p.path('info', 'info.log'), 'utf8');
      expect(log).toContain('rebuild from scratch not started: the previous index is back in place');
      expect(snapshot(p.root), how).toEqual(original);
      expect(await rebuildLeftovers(p.root), how).toEqual([]);
    }
  });

  // A closed terminal: SIGHUP, and every later write fails with EIO (a real pseudo-terminal,
  // through util-linux `script`; skipped where there is none).
  it.skipIf(spawnSync('script', ['--version']).status !== 0)(
    "a terminal closed at the rebuild's question puts the index back and leaves no lock",
    async () => {
      const shell = `${process.execPath} --import tsx ${CLI} build -f ${p.root} --rebuild`;
      const script = spawn('script', ['-qfc', shell, '/dev/null'], { cwd: REPO_ROOT });
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no question within 30 s: ${out}`)), 30_000);
        script.stdout.on('data', (d) => {
          out += d;
          if (out.includes('Start the build?')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      expect(existsSync(p.path('cache', '.previous-index'))).toBe(true);
      script.kill('SIGKILL');
      // The build, hung up, cancels and cleans up on its own.
      for (let i = 0; i < 100 && existsSync(p.path('info', 'build.lock')); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(existsSync(p.path('info', 'build.lock'))).toBe(false);
      expect(await rebuildLeftovers(p.root)).toEqual([]);
      expect(snapshot(p.root)).toEqual(original);
    },
    60_000,
  );

  it("a hang-up that lands after the question's end of input still puts the index back and releases the lock", async () => {
    const r = await runTs(join(REPO_ROOT, 'tests', 'helpers', 'hangup-after-question.ts'), [p.root]);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toContain('Start the build?');
    expect(existsSync(p.path('info', 'build.lock'))).toBe(false);
    expect(await rebuildLeftovers(p.root)).toEqual([]);
    expect(snapshot(p.root)).toEqual(original);
    expect(readFileSync(p.path('info', 'info.log'), 'utf8')).toContain('SIGHUP received (terminal closed)');
  });

  it('a kill in the middle of a rebuild leaves a disk from which the next build restores the previous index', async () => {
    const killedCopy = await mkdtemp(join(tmpdir(), 'noderag-rebuild-killed-'));
    scratch.push(killedCopy);
    const r = await build(p.root, {
      rebuild: true,
      stages: {
        'Attribute pipeline': async (ctx) => {
          // The disk as kill -9 would leave it right now: previous index aside, new one partial.
          cpSync(ctx.root, killedCopy, { recursive: true });
          return STAGE_RUNNERS['Attribute pipeline'](ctx);
        },
      },
    });
    expect(r.code).toBe(0);
    expect(await rebuildLeftovers(killedCopy)).toEqual(['cache/.previous-index']);
    // The copy holds this process's lock file: a crashed build's lock is stale.
    rmSync(join(killedCopy, 'info', 'build.lock'), { force: true });
    const resumed = await build(killedCopy);
    expect(resumed.stderr).toContain('An unfinished rebuild (build --rebuild) was undone');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Index is up to date.');
    expect(snapshot(killedCopy)).toEqual(original);
    expect(await rebuildLeftovers(killedCopy)).toEqual([]);
  });

  it('a finished rebuild gives the same index, keeps every model reply, and leaves nothing aside', async () => {
    const r = await build(p.root, { rebuild: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Build finished in [\d.]+ s \(generation 1\)/);
    expect(await rebuildLeftovers(p.root)).toEqual([]);
    // The local provider is deterministic: from scratch, the same tables come out.
    const rebuilt = snapshot(p.root);
    for (const [rel, bytes] of original) {
      if (rel === join('info', 'state.json')) continue; // timestamps
      expect(rebuilt.get(rel), rel).toEqual(bytes);
    }
    // The response cache stayed where it was, untouched.
    expect(readFileSync(p.path('cache', 'response_cache', 'replies.bin'))).toEqual(replies);
  });
});

describe('a reader that leaves early (`build | head`)', () => {
  it('the build drops its output and finishes its cycle instead of dying on EPIPE', async () => {
    const p = await createProject({ files: FILES });
    projects.push(p);
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'build', '-f', p.root, '--yes'], {
      cwd: REPO_ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    // The first line read, the pipe is closed: every later write fails with EPIPE.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
    expect(JSON.parse(await readFile(p.path('info/state.json'), 'utf8')).current_state).toBe('FINISHED');
    expect(p.exists('info/build.lock')).toBe(false);
  });
});
