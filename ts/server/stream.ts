/**
 * Server-sent events for `"stream": true` (issue 16 item 2): `POST /answer` and
 * `POST /v1/chat/completions`.
 *
 * The providers do not stream tokens yet, so the server asks for the whole answer first
 * (errors up to then keep their JSON reply and status) and then sends it as a stream of
 * word pieces followed by the final event, in one go. Clients written against this format
 * get tokens as they arrive once the providers stream; nothing in the format changes.
 */
import { HttpError } from './http.js';

/** The answer in pieces of one word and the whitespace after it (concatenated: the text). */
export function pieces(text: string): string[] {
  return text.match(/\s*\S+\s*/gu) ?? (text === '' ? [] : [text]);
}

/** A `text/event-stream` reply of `data:` events, each a JSON value or a raw string. */
export function sseResponse(events: readonly unknown[]): Response {
  const body = events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
  return new Response(body, {
    status: 200,
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
    },
  });
}

/** The `stream` field: absent or a boolean. */
export function streamFlag(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') {
    throw new HttpError(
      400,
      'invalid_stream',
      `"stream" must be true or false, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
