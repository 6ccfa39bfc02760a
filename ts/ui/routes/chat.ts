/**
 * POST /api/chat `{question}`: the answer with its retrieval context, as sections by node type
 * built from the answer's items (NodeSearch.answer gives them; the context string is not
 * parsed), each with its number `[n]`, and the answer's sources (input files, cited numbers). The question is validated as the search API validates it; a client that leaves
 * aborts the model calls.
 */
import { Hono } from 'hono';
import { isSearchable, readState } from '../../project/state.js';
import { CONTEXT_SECTION_ORDER } from '../../search/context.js';
import { validateQuestion } from '../../search/question.js';
import { HttpError, readJsonObject, withRequestSignal } from '../../server/http.js';
import type { ChatReply, ChatSection } from '../api-types.js';
import type { UiAnswer, UiContext } from '../ui-context.js';

/** The items grouped by node type, sections in the context's order, items in theirs. */
export function sectionsOf(items: UiAnswer['items']): ChatSection[] {
  const sections: ChatSection[] = [];
  const numbered = items.map((item, i) => ({ item, n: i + 1 }));
  for (const type of CONTEXT_SECTION_ORDER) {
    const of = numbered.filter((x) => x.item.type === type);
    if (of.length > 0)
      sections.push({
        type,
        items: of.map(({ item, n }) => ({ n, text: item.text.trim(), document: item.document })),
      });
  }
  return sections;
}

export function chatRoutes(ctx: UiContext): Hono {
  return new Hono().post('/chat', async (c) => {
    const question = validateQuestion((await readJsonObject(c)).question).trim();
    const state = await readState(ctx.root);
    if (!state || !isSearchable(state)) throw new HttpError(503, 'index_not_built', 'build the index first');
    const r = await ctx.withSearch((search) =>
      withRequestSignal(c, (signal) => search.answer(question, { signal })),
    );
    return c.json<ChatReply>({
      response: r.response,
      responseTokens: r.responseTokens,
      retrievalTokens: r.retrievalTokens,
      sections: sectionsOf(r.items),
      sources: r.sources ?? [],
    });
  });
}
