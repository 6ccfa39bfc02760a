/**
 * Build progress on the terminal (docs/method.md §4.3, config `use_rich` / `use_tqdm`):
 *
 * - `rich` (use_rich on a terminal): one live, coloured line per stage with items done /
 *   total, calls and cache hits, replaced in place.
 * - `tqdm` (use_tqdm on a terminal, use_rich off): the same live line as a plain text bar.
 * - NO_COLOR set: `rich` becomes `tqdm` (no escapes but the line redraw).
 * - `plain` (not a terminal, or both off): ordinary lines — the stage start, a progress line
 *   at most every few seconds, the stage end. Safe for logs and pipes.
 */

export type ProgressStyle = 'plain' | 'rich' | 'tqdm';

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export function progressStyle(
  output: ProgressOutput,
  options: { useRich: boolean; useTqdm: boolean },
  env: NodeJS.ProcessEnv = process.env,
): ProgressStyle {
  if (output.isTTY !== true) return 'plain';
  // NO_COLOR (no-color.org): the live line stays, without colours.
  if (options.useRich && !env.NO_COLOR) return 'rich';
  if (options.useRich || options.useTqdm) return 'tqdm';
  return 'plain';
}

const PLAIN_INTERVAL_MS = 5000;
const LIVE_INTERVAL_MS = 100;

const ansi = {
  bold: (s: string) => `\x1b[1m${s}\x1b[22m`,
  cyan: (s: string) => `\x1b[36m${s}\x1b[39m`,
  green: (s: string) => `\x1b[32m${s}\x1b[39m`,
  dim: (s: string) => `\x1b[2m${s}\x1b[22m`,
};

/** The unit of a count of one: "documents" → "document", "entities" → "entity", "batches" → "batch". */
export function unitFor(n: number, plural: string): string {
  if (n !== 1) return plural;
  if (plural.endsWith('ies')) return `${plural.slice(0, -3)}y`;
  if (/(ch|sh|x|ss)es$/.test(plural)) return plural.slice(0, -2);
  return plural.endsWith('s') ? plural.slice(0, -1) : plural;
}

/** Numbers with thousands separators, as in the state tree. */
const fmt = (n: number) => n.toLocaleString('en-US');

export class StageProgress {
  #total = 0;
  #unit = 'items';
  #done = 0;
  #extra = '';
  #lastDraw = 0;
  #live = false;

  constructor(
    private readonly out: ProgressOutput,
    private readonly style: ProgressStyle,
    readonly name: string,
    label: string,
  ) {
    const title = style === 'rich' ? `${ansi.dim(label)} ${ansi.bold(ansi.cyan(name))}` : `${label} ${name}`;
    out.write(`${title}\n`);
  }

  /** Announce the amount of work of a step ("994 chunks"). */
  begin(total: number, unit: string): void {
    this.#total = total;
    this.#unit = unit;
    this.#done = 0;
    this.#extra = '';
    // Plain lines start after one interval (short stages print none); live lines at once.
    this.#lastDraw = this.style === 'plain' ? performance.now() : Number.NEGATIVE_INFINITY;
    if (this.style === 'plain' && total > 0)
      this.out.write(`  ${fmt(total)} ${unitFor(total, unit)} to process\n`);
  }

  /** Items done so far and a short note (calls, cache hits). */
  update(done: number, extra = ''): void {
    this.#done = done;
    this.#extra = extra;
    const now = performance.now();
    const interval = this.style === 'plain' ? PLAIN_INTERVAL_MS : LIVE_INTERVAL_MS;
    if (done < this.#total && now - this.#lastDraw < interval) return;
    this.#lastDraw = now;
    if (this.style === 'plain') {
      if (done < this.#total) this.out.write(`  ${this.#line()}\n`);
      return;
    }
    this.#live = true;
    this.out.write(`\r\x1b[K  ${this.#line()}`);
  }

  #line(): string {
    const count = `${fmt(this.#done)}/${fmt(this.#total)} ${unitFor(this.#total, this.#unit)}`;
    const extra = this.#extra ? ` (${this.#extra})` : '';
    if (this.style === 'tqdm') {
      const width = 30;
      const filled = this.#total > 0 ? Math.round((this.#done / this.#total) * width) : width;
      const pct = this.#total > 0 ? Math.floor((this.#done / this.#total) * 100) : 100;
      return `${String(pct).padStart(3)}%|${'#'.repeat(filled)}${' '.repeat(width - filled)}| ${count}${extra}`;
    }
    return `${count}${extra}`;
  }

  /** A one-off note (e.g. "312 communities"). */
  note(text: string): void {
    this.#clearLive();
    this.out.write(`  ${text}\n`);
  }

  #clearLive(): void {
    if (this.#live) {
      this.out.write('\r\x1b[K');
      this.#live = false;
    }
  }

  /** The stage's last line: "finished in 1.2 s (...)". */
  finish(seconds: string, summary: string): void {
    this.#clearLive();
    const text = `finished in ${seconds}${summary ? ` (${summary})` : ''}`;
    this.out.write(`  ${this.style === 'rich' ? ansi.green(text) : text}\n`);
  }

  abandon(): void {
    this.#clearLive();
  }
}

export class Progress {
  constructor(
    private readonly out: ProgressOutput,
    readonly style: ProgressStyle,
  ) {}

  stage(name: string, index: number, count: number): StageProgress {
    return new StageProgress(this.out, this.style, name, `[${index}/${count}]`);
  }

  line(text: string): void {
    this.out.write(`${text}\n`);
  }
}
