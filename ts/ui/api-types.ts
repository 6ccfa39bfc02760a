/**
 * The JSON the web UI's API sends, one interface per reply. The routes (./routes/) declare
 * their replies with these types and the page's script (./public/app.js) reads them through
 * JSDoc imports, so `tsc` checks both sides against one declaration. This file imports
 * only type files that import nothing (ts/server/build-event.ts, shared with the search
 * server): the browser check (tsconfig.ui.json) sees it without the Node types.
 */

/** Every error reply. `problems` names the fields of a refused config save. */
export interface ErrorReply {
  error: { code: string; message: string; problems?: { path: string; message: string }[] };
}

/** GET /api/status */
export interface StatusReply {
  folder: string;
  building: boolean;
  state: string | null;
  errorType: string | null;
  errorMessage: string | null;
  generation: number;
  /** A finished generation exists (it can be searched even while the next one builds). */
  searchable: boolean;
  /** 'Building', 'Finished', 'Not built' or the build state name. */
  status: string;
}

/** The sections of the config form, each with its fields' values. */
export type ConfigValues = Record<string, Record<string, string | number | boolean | null>>;

/** GET /api/config */
export interface ConfigReply {
  values: ConfigValues;
  /** Whether an API key is set (file or environment); never the key. */
  apiKeySet: { model_config: boolean; embedding_config: boolean };
  choices: { service_provider: readonly string[]; language: readonly string[] };
  warnings: readonly string[];
  /** A file that does not load: its values as written, and what is wrong, by key path. */
  problems?: { path: string; message: string }[];
}

/** POST /api/config */
export interface ConfigSaveReply {
  ok: true;
  warnings: readonly string[];
}

export interface FileEntry {
  path: string;
  size: number;
  status: 'indexed' | 'new' | 'changed' | 'renamed' | 'not-indexable';
  /** Why a not-indexable file is left out until it changes. */
  reason?: string;
}

/** GET /api/files */
export interface FilesReply {
  files: FileEntry[];
  /** Indexed documents no longer in input/. */
  deleted: string[];
  unreadable: string[];
  /** Extensions (with the dot) the config's docu_type admits. */
  accepted: string[];
  maxUploadBytes: number;
}

/** POST /api/files */
export interface UploadReply {
  ok: true;
  written: string[];
}

/** One event of GET /api/build/events (`event:` is its kind, `data:` the JSON). */
export type { BuildEvent } from '../server/build-event.js';

/** GET /api/indices */
export interface IndicesReply {
  documents: number;
  chunks: number;
  edges: number | null;
  nodeTypes: Record<string, number>;
}

/** One retrieved item as the chat shows it. */
export interface ChatItem {
  /** The item's number in the context, as the answer cites it (`[n]`). */
  n: number;
  text: string;
  /** The source document (relative to input/), or null (high-level elements). */
  document: string | null;
}

/** The items of one node type, in context order. */
export interface ChatSection {
  type: string;
  items: ChatItem[];
}

/** POST /api/chat */
export interface ChatReply {
  response: string;
  responseTokens: number;
  retrievalTokens: number;
  sections: ChatSection[];
  /** Input files of the context, with the item numbers the answer cites (ts/search/sources.ts). */
  sources: readonly ChatSource[];
}

/** One input file of an answer's context. */
export interface ChatSource {
  /** Relative to input/. */
  readonly document: string;
  readonly chunks: readonly string[];
  readonly items: readonly number[];
  readonly cited: readonly number[];
}
