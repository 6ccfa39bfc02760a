/** GET /api/status: the build state (info/state.json) and whether a build is running. */
import { Hono } from 'hono';
import { buildLockHolder } from '../../indexing/lock.js';
import { readState } from '../../project/state.js';
import type { StatusReply } from '../api-types.js';
import type { UiContext } from '../ui-context.js';

export function statusRoutes(ctx: UiContext): Hono {
  return new Hono().get('/status', async (c) => {
    const state = await readState(ctx.root);
    // This UI's build, or one another process runs (a `noderag build` in a terminal).
    const building = ctx.job.running || (await buildLockHolder(ctx.root)) !== null;
    const finished = state !== null && state.current_state === 'FINISHED' && state.error_type === 'NO_ERROR';
    return c.json<StatusReply>({
      folder: ctx.root,
      building,
      state: state?.current_state ?? null,
      errorType: state?.error_type ?? null,
      errorMessage: state?.error_message ?? null,
      generation: state?.last_finished_generation ?? 0,
      // A finished generation can be searched even while the next cycle is being built.
      searchable: (state?.last_finished_generation ?? 0) > 0,
      status: building ? 'Building' : finished ? 'Finished' : state ? state.current_state : 'Not built',
    });
  });
}
