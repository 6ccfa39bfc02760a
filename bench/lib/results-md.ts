/**
 * Editing bench/RESULTS.md one section at a time: a benchmark replaces its own `## <name>`
 * section (up to the next `## ` heading) and leaves every other section as it was. Each
 * section written here starts with the date of the run and the commit it measured.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './hotpot.js';

export const RESULTS_FILE = join(REPO_ROOT, 'bench', 'RESULTS.md');
const TITLE = '# Benchmark results';

/** Splits the file into its preamble (title and anything before the first `## `) and sections. */
export function splitSections(text: string): {
  preamble: string;
  sections: { name: string; body: string }[];
} {
  const lines = text.split('\n');
  const sections: { name: string; body: string }[] = [];
  const preamble: string[] = [];
  let current: { name: string; lines: string[] } | null = null;
  for (const line of lines) {
    const m = /^## (\S.*)$/.exec(line);
    if (m) {
      if (current) sections.push({ name: current.name, body: current.lines.join('\n') });
      current = { name: m[1]!.trim(), lines: [line] };
    } else if (current) current.lines.push(line);
    else preamble.push(line);
  }
  if (current) sections.push({ name: current.name, body: current.lines.join('\n') });
  return { preamble: preamble.join('\n'), sections };
}

function join2(preamble: string, sections: { body: string }[]): string {
  const parts = [preamble.trimEnd(), ...sections.map((s) => s.body.trimEnd())];
  return `${parts.join('\n\n')}\n`;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/**
 * When and on what a run was made: `<UTC date> at commit <short hash>`, with a note when
 * tracked files differ from that commit (bench/RESULTS.md itself, which the runs write, is not
 * counted), or the date alone outside a git checkout.
 */
export function runStamp(date: Date = new Date()): string {
  const day = date.toISOString().slice(0, 10);
  const commit = git(['rev-parse', '--short', 'HEAD']);
  if (!commit) return `${day} (not a git checkout: commit unknown)`;
  const dirty = git([
    '--no-optional-locks',
    'status',
    '--porcelain',
    '--untracked-files=no',
    '--',
    '.',
    ':(exclude)bench/RESULTS.md',
  ]);
  return dirty
    ? `${day} at commit ${commit}, with uncommitted changes to tracked files`
    : `${day} at commit ${commit}`;
}

/** The first line of a section: `Measured 2026-11-24 at commit 6b40ad7.` */
export function measuredLine(date: Date = new Date()): string {
  return `Measured ${runStamp(date)}.`;
}

/**
 * Replaces (or appends) section `## <name>` with `content` (without its heading), led by
 * the {@link measuredLine} of this run unless `content` already starts with `Measured `.
 */
export function writeResultsSection(name: string, content: string): void {
  const text = existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, 'utf8') : `${TITLE}\n`;
  const { preamble, sections } = splitSections(text);
  const trimmed = content.trim();
  const dated = trimmed.startsWith('Measured ') ? trimmed : `${measuredLine()}\n\n${trimmed}`;
  const body = `## ${name}\n\n${dated}\n`;
  const i = sections.findIndex((s) => s.name === name);
  if (i >= 0) sections[i] = { name, body };
  else sections.push({ name, body });
  writeFileSync(RESULTS_FILE, join2(preamble.trim() ? preamble : TITLE, sections));
}

/** Replaces the preamble (title + machine info), keeping every section. */
export function writeResultsPreamble(content: string): void {
  const text = existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, 'utf8') : `${TITLE}\n`;
  const { sections } = splitSections(text);
  writeFileSync(RESULTS_FILE, join2(`${TITLE}\n\n${content.trim()}`, sections));
}
