/**
 * Editing bench/RESULTS.md one section at a time: a benchmark replaces its own `## <name>`
 * section (up to the next `## ` heading) and leaves every other section as it was.
 */
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

/** Replaces (or appends) section `## <name>` with `content` (without its heading). */
export function writeResultsSection(name: string, content: string): void {
  const text = existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, 'utf8') : `${TITLE}\n`;
  const { preamble, sections } = splitSections(text);
  const body = `## ${name}\n\n${content.trim()}\n`;
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
