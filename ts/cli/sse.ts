/**
 * Reading server-sent events (the CLI's streamed answers). Lines end at CR, LF or CRLF only,
 * as the SSE format says: not at U+2028 or U+2029, which JSON allows raw inside strings and
 * which a JavaScript `.` or multiline `$` would take for line ends, cutting an event short.
 */

/** The value of each `field:` line of one event block, in order (one optional space dropped). */
export function eventField(block: string, field: string): string[] {
  const values: string[] = [];
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (!line.startsWith(`${field}:`)) continue;
    const value = line.slice(field.length + 1);
    values.push(value.startsWith(' ') ? value.slice(1) : value);
  }
  return values;
}

/** The JSON values of the `data:` fields of a response's events, as they arrive. */
export async function* sseData(res: Response): AsyncGenerator<unknown, void, undefined> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body ?? []) {
    // Line ends normalised to LF as they arrive (a CR at the end of a chunk waits for the
    // next one, which may start with its LF), so an event ends at a blank line whichever
    // line ends the server writes.
    buffer += decoder.decode(chunk, { stream: true });
    const keepCr = buffer.endsWith('\r');
    let text = (keepCr ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, '\n');
    for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const data = eventField(block, 'data').join('\n');
      if (data !== '' && data !== '[DONE]') yield JSON.parse(data);
    }
    buffer = keepCr ? `${text}\r` : text;
  }
}
