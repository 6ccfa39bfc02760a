/**
 * Name and one-line description of each sub-command, apart from the command files: the root
 * usage (`noderag`, `noderag --help`) lists them without importing the five files, which
 * between them load the whole program (the server, the providers' SDKs, the native addon).
 */
import type { CommandMeta } from 'citty';

export const SUB_COMMAND_METAS = {
  build: {
    name: 'build',
    description: 'build the index of <folder>/input, add new documents to it, or rebuild it from scratch',
  },
  vis: { name: 'vis', description: 'write an interactive HTML view of the graph to <folder>/index.html' },
  search: {
    name: 'search',
    description:
      'serve the index over HTTP: POST /answer, /retrieval, /answer_retrieval, /v1/chat/completions; GET /health, /v1/models; documents and builds: GET/POST /documents, DELETE /documents/{path}, POST /build, GET /build/events',
  },
  ui: { name: 'ui', description: 'open the local web UI: configure, upload, build, inspect, ask' },
  eval: {
    name: 'eval',
    description:
      'retrieval quality on your questions: answer recall, support recall and tokens, against naive top-k chunks at the same tokens',
  },
} as const satisfies Record<string, CommandMeta>;
