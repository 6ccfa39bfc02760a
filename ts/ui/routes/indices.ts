/** GET /api/indices: counts of the built index (info/indices.json) and its edge count; 503 before a build. */
import { Hono } from 'hono';
import { readIndices } from '../../indexing/info-files.js';
import { isSearchable, readState } from '../../project/state.js';
import { HttpError } from '../../server/http.js';
import type { IndicesReply } from '../api-types.js';
import type { UiContext } from '../ui-context.js';

export function indicesRoutes(ctx: UiContext): Hono {
  return new Hono().get('/indices', async (c) => {
    const state = await readState(ctx.root);
    if (!state || !isSearchable(state)) throw new HttpError(503, 'index_not_built', 'no finished build yet');
    const counters = await readIndices(ctx.root);
    return c.json<IndicesReply>({
      documents: counters.document_index,
      chunks: counters.text_unit_index,
      edges: await ctx.countEdges(ctx.root),
      nodeTypes: {
        semantic_unit: counters.semantic_unit_index,
        entity: counters.entity_index,
        relationship: counters.relation_index,
        attribute: counters.attribute_index,
        community: counters.community_summary_index,
        high_level_element: counters.high_level_element_index,
      },
    });
  });
}
