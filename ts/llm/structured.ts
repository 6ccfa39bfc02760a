/**
 * Structured replies of real providers: parse the reply as JSON, validate it, and on an
 * invalid reply ask once more with the error shown (one repair attempt); still invalid →
 * a retryable ProviderError (docs/method.md §3.3: an invalid response is a failed attempt).
 */
import { promptSet } from './prompts/index.js';
import { type ErrorContext, invalidReplyError } from './provider-errors.js';
import type { ChatMessage, ChatRequest, Validation, Validator } from './types.js';

/** Parses a reply that should be one JSON value; tolerates a ```json fence around it. */
export function parseJsonReply(text: string): Validation<unknown> {
  let t = text.trim();
  const fence = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(t);
  if (fence) t = (fence[1] as string).trim();
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch (e) {
    return { ok: false, error: `not valid JSON (${(e as Error).message})` };
  }
}

function check<T>(text: string, validate: Validator<T>): Validation<T> {
  const parsed = parseJsonReply(text);
  return parsed.ok ? validate(parsed.value) : parsed;
}

/**
 * Runs `send` with the request's messages; if the reply is invalid, sends the conversation
 * again with the reply and a repair request appended.
 */
export async function structuredWithRepair<T>(
  ctx: ErrorContext,
  request: ChatRequest,
  validate: Validator<T>,
  send: (messages: ChatMessage[]) => Promise<string>,
): Promise<T> {
  const first = await send(request.messages);
  const r1 = check(first, validate);
  if (r1.ok) return r1.value;
  const repair: ChatMessage[] = [
    ...request.messages,
    { role: 'assistant', content: first },
    { role: 'user', content: promptSet(request.language).repairRequest(r1.error) },
  ];
  const second = await send(repair);
  const r2 = check(second, validate);
  if (r2.ok) return r2.value;
  throw invalidReplyError(ctx, `${request.task} reply`, `${r2.error} (also after one repair attempt)`);
}
