/**
 * Lines written together once per turn of the event loop. A server that logs every request
 * made one `write` per request: a system call each where Node's stdout is synchronous (a file,
 * a terminal), 16 µs of a /retrieval request's ~600 µs in a profile under load (bench/RESULTS.md
 * "server with --access-log"). Lines keep their order; a batch goes out at the end of the turn
 * its first line was added in, or at once past BATCH_CHARS; `flush` writes what is pending now
 * (the server calls it when it stops, and on exit).
 */
export interface LineBatch {
  /** Queues `line` (a newline is added). */
  add(line: string): void;
  /** Writes every queued line now. */
  flush(): void;
}

/** A batch past this many characters is written without waiting for the end of the turn. */
const BATCH_CHARS = 64 * 1024;

export function lineBatch(out: { write(text: string): unknown }): LineBatch {
  let pending: string[] = [];
  let chars = 0;
  let scheduled: NodeJS.Immediate | null = null;
  const flush = (): void => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    chars = 0;
    out.write(text);
  };
  return {
    add(line: string): void {
      pending.push(line);
      chars += line.length + 1;
      if (chars >= BATCH_CHARS) flush();
      else scheduled ??= setImmediate(flush);
    },
    flush,
  };
}
