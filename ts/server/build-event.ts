/**
 * One event of a build's progress stream (GET /build/events on the search server, GET
 * /api/build/events in the web UI): `event:` is its kind, `data:` the JSON. This file
 * imports nothing, so the web page's type check (tsconfig.ui.json) reads it through
 * ts/ui/api-types.ts without the Node types.
 */
export type BuildEvent =
  | { kind: 'line'; stream: 'out' | 'err'; text: string }
  | { kind: 'done'; exitCode: number; message: string };
