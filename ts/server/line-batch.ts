/**
 * Lines written together once per turn of the event loop: a server that logs every request
 * made one `write` (one system call to a file or terminal, where Node's stdout is
 * synchronous) per request, a sixth of a /retrieval request's time under load
 * (bench/RESULTS.md). Lines keep their order; `flush` writes what is pending at once (the
 * server calls it when it stops), and nothing waits past the turn its line was added in.
 */
export interface LineBatch {
  /** Queues `line` (a newline is added). */
  add(line: string): void;
  /** Writes every queued line now. */
  flush(): void;
}

/** Writes over BATCH_BYTES go out at once rather than at the end of the turn. */
const BATCH_BYTES = 64 * 1024;

export function lineBatch(out: { write(text: string): unknown }): LineBatch {
  let pending: string[] = [];
  let bytes = 0;
  let scheduled: NodeJS.Immediate | null = null;
  const flush = (): void => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    bytes = 0;
    out.write(text);
  };
  return {
    add(line: string): void {
      pending.push(line);
      bytes += line.length + 1;
      if (bytes >= BATCH_BYTES) flush();
      else scheduled ??= setImmediate(flush);
    },
    flush,
  };
}
