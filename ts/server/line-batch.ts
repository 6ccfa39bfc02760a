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

/**
 * `everyMs`: write at most this often instead of at the end of each turn (a worker sends its
 * lines to another process: one message per turn cost a fifth of the log's throughput there).
 */
export function lineBatch(
  out: { write(text: string): unknown },
  options: { everyMs?: number } = {},
): LineBatch {
  let pending: string[] = [];
  let chars = 0;
  // One of the two, by `everyMs` (each must be cleared by its own function: clearImmediate
  // given a timer corrupts the loop's queue of immediates).
  let immediate: NodeJS.Immediate | null = null;
  let timer: NodeJS.Timeout | null = null;
  const schedule = (): void => {
    if (immediate || timer) return;
    if (options.everyMs === undefined) immediate = setImmediate(flush);
    else {
      timer = setTimeout(flush, options.everyMs);
      timer.unref(); // `flush` on stop and on exit writes what is left
    }
  };
  const flush = (): void => {
    if (immediate) clearImmediate(immediate);
    if (timer) clearTimeout(timer);
    immediate = null;
    timer = null;
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
      else schedule();
    },
    flush,
  };
}
