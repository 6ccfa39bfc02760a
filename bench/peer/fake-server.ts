/**
 * The fake OpenAI-compatible server of `npm run bench -- peer`: the one of
 * tests/helpers/fake-providers (zero latency, local-provider answers, request log), taught to
 * also understand the original NodeRAG's prompts, so both systems get the same content.
 *
 * noderag renders its own prompts (system + user message, plain strings); those are
 * recognised by tests/helpers' recognizePrompt. The original (PyPI NodeRAG 0.1.0) sends one
 * user message, as a list of content parts, whose text is one of its Python prompt templates
 * filled with `str.format`. The templates are read from the installed package (so they are
 * exactly the pinned version's), turned into anchored regular expressions, and the matched
 * fields are mapped to the same task inputs noderag's local provider gets:
 *
 *   text_decomposition {text}                          -> decompose {text}
 *   relationship_reconstraction {relationship}         -> repair {relationship} (the Python
 *       list repr of the split string is joined back with ", ", the string noderag would see)
 *   attribute_generation {entity, semantic_units, relationships}
 *                                                      -> attribute (one item per line)
 *   community_summary {content}                        -> community {texts} (one per line)
 *   decompose_query {query}                            -> query {question}
 *   answer {info, query}                               -> answer {context, question}
 *
 * LightRAG (PyPI lightrag-hku) sends a system message and plain-string user messages; its four
 * build/query templates (entity extraction, gleaning, keyword extraction, description summary)
 * are read from the installed package the same way and matched against the last user message
 * (see lightragReply for the answers, built from the same local-provider decomposition).
 *
 * The reply is the local provider's (ts/llm/local) for those inputs, serialised as JSON for
 * structured tasks: its output shapes (Output/semantic_unit/entities/relationships,
 * source/relationship/target, high_level_elements, elements) are the original's pydantic
 * models field for field. A prompt neither side's recogniser knows is counted in
 * `unrecognised` (the bench reports it; it must stay 0) and answered `{}` / a fixed text.
 */

import { chatCompletion, embeddingsRoute } from '../../tests/helpers/fake-providers/fake-openai.js';
import {
  FakeProviderServer,
  fakeReply,
  type RouteContext,
  type RouteResult,
} from '../../tests/helpers/fake-providers/fake-server.js';
import { recognizePrompt } from '../../tests/helpers/fake-providers/prompt-inputs.js';
import { localReply } from '../../ts/llm/local/provider.js';
import { localDecompose, localQuery, localRepair } from '../../ts/llm/local/tasks.js';
import { buildRequest } from '../../ts/llm/prompts/index.js';
import type { ChatMessage, TaskCall } from '../../ts/llm/types.js';

/** The original's English prompt templates, by its prompt_manager property name. */
export interface OriginalTemplates {
  text_decomposition: string;
  relationship_reconstraction: string;
  attribute_generation: string;
  community_summary: string;
  decompose_query: string;
  answer: string;
}

interface Matcher {
  re: RegExp;
  fields: string[];
  toCall: (f: Record<string, string>) => TaskCall;
}

/** A Python `str.format` template as an anchored regex, one lazy group per `{field}`. */
export function templateRegex(template: string): { re: RegExp; fields: string[] } {
  const fields: string[] = [];
  let src = '';
  const token = /\{\{|\}\}|\{(\w+)\}/g;
  let last = 0;
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (let m = token.exec(template); m; m = token.exec(template)) {
    src += esc(template.slice(last, m.index));
    if (m[0] === '{{') src += '\\{';
    else if (m[0] === '}}') src += '\\}';
    else {
      fields.push(m[1] as string);
      src += '([\\s\\S]*?)';
    }
    last = m.index + m[0].length;
  }
  src += esc(template.slice(last));
  return { re: new RegExp(`^${src}$`), fields };
}

const lines = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

/** `['A', "b's", 'c']` (Python list repr) -> `A, b's, c`. */
export function joinPythonList(repr: string): string {
  const items: string[] = [];
  const item = /'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/g;
  for (let m = item.exec(repr); m; m = item.exec(repr)) {
    items.push((m[1] ?? m[2] ?? '').replace(/\\(.)/g, '$1'));
  }
  return items.length ? items.join(', ') : repr;
}

function matchers(t: OriginalTemplates): Matcher[] {
  const make = (template: string, toCall: Matcher['toCall']): Matcher => ({
    ...templateRegex(template),
    toCall,
  });
  const language = 'English' as const;
  return [
    make(t.text_decomposition, (f) => ({ task: 'decompose', language, input: { text: f.text ?? '' } })),
    make(t.relationship_reconstraction, (f) => ({
      task: 'repair',
      language,
      input: { relationship: joinPythonList(f.relationship ?? ''), entities: [] },
    })),
    make(t.attribute_generation, (f) => ({
      task: 'attribute',
      language,
      input: {
        entity: (f.entity ?? '').trim(),
        units: lines(f.semantic_units ?? ''),
        relationships: lines(f.relationships ?? ''),
      },
    })),
    make(t.community_summary, (f) => ({
      task: 'community',
      language,
      input: { texts: lines(f.content ?? '') },
    })),
    make(t.decompose_query, (f) => ({
      task: 'query',
      language,
      input: { question: (f.query ?? '').trim() },
    })),
    make(t.answer, (f) => ({
      task: 'answer',
      language,
      input: { context: f.info ?? '', question: f.query ?? '' },
    })),
  ];
}

/** The task call behind an original-NodeRAG prompt, or undefined. */
export function recognizeOriginalPrompt(ms: readonly Matcher[], user: string): TaskCall | undefined {
  for (const m of ms) {
    const hit = m.re.exec(user);
    if (!hit) continue;
    const f: Record<string, string> = {};
    m.fields.forEach((name, i) => {
      f[name] = hit[i + 1] as string;
    });
    return m.toCall(f);
  }
  return undefined;
}

/** LightRAG's (lightrag-hku) prompt templates and delimiters, read from the installed package. */
export interface LightragTemplates {
  entity_extraction_user_prompt: string;
  entity_continue_extraction_user_prompt: string;
  keywords_extraction: string;
  summarize_entity_descriptions: string;
  tuple_delimiter: string;
  completion_delimiter: string;
}

interface LightragMatcher {
  task: 'extract' | 'glean' | 'keywords' | 'summary';
  re: RegExp;
  fields: string[];
}

/**
 * LightRAG's replies from the local provider's answers for the same inputs, so it indexes the
 * same entities and relationships as noderag and the original:
 *   extract {input_text}  -> localDecompose(input_text): one `entity` row per distinct entity
 *       (type `Other`, description: the first semantic unit naming it), one `relation` row per
 *       relationship string split with localRepair (description: its semantic unit), then the
 *       completion delimiter;
 *   glean                 -> the completion delimiter only (nothing missed);
 *   keywords {query}      -> localQuery(query).elements, names and years (an uppercase letter or a
 *       digit) as low-level keywords, the rest as high-level ones, either side falling back to all;
 *   summary {description_list} -> the unique descriptions joined with a space.
 */
export function lightragReply(
  t: LightragTemplates,
  task: LightragMatcher['task'],
  f: Record<string, string>,
) {
  const T = t.tuple_delimiter;
  const DONE = t.completion_delimiter;
  const clean = (s: string) => s.split(T).join(' ').replace(/\s+/g, ' ').trim();
  if (task === 'glean') return DONE;
  if (task === 'extract') {
    const { Output } = localDecompose(f.input_text ?? '', 'English');
    const entities = new Map<string, string>();
    const rows: string[] = [];
    const relations: string[] = [];
    for (const u of Output) {
      const desc = clean(u.semantic_unit);
      if (!desc) continue;
      for (const e of u.entities) {
        const name = clean(e);
        if (name && !entities.has(name)) entities.set(name, desc);
      }
      for (const r of u.relationships) {
        const { source, relationship, target } = localRepair(r);
        const [a, b, k] = [clean(source), clean(target), clean(relationship)];
        if (a && b && k && a !== b) relations.push(`relation${T}${a}${T}${b}${T}${k}${T}${desc}`);
      }
    }
    for (const [name, desc] of entities) rows.push(`entity${T}${name}${T}Other${T}${desc}`);
    return [...rows, ...relations, DONE].join('\n');
  }
  if (task === 'keywords') {
    const { elements } = localQuery((f.query ?? '').trim(), 'English');
    const low = elements.filter((e) => /[\p{Lu}\d]/u.test(e));
    const high = elements.filter((e) => !/[\p{Lu}\d]/u.test(e));
    return JSON.stringify({
      high_level_keywords: high.length ? high : elements,
      low_level_keywords: low.length ? low : elements,
    });
  }
  const descs: string[] = [];
  for (const line of lines(f.description_list ?? '')) {
    try {
      const d = (JSON.parse(line) as { Description?: unknown }).Description;
      if (typeof d === 'string' && !descs.includes(d)) descs.push(d);
    } catch {
      // not a JSON line: skipped
    }
  }
  return descs.join(' ');
}

const templateRegexOf = (template: string) => templateRegex(template);

/**
 * LightRAG strips its prompts before sending them (utils.sanitize_text_for_encoding), so the
 * templates are trimmed here and the message is trimmed before matching.
 */
export function lightragMatchersFor(t: LightragTemplates): LightragMatcher[] {
  const templateRegex = (template: string) => templateRegexOf(template.trim());
  return [
    { task: 'extract', ...templateRegex(t.entity_extraction_user_prompt) },
    { task: 'glean', ...templateRegex(t.entity_continue_extraction_user_prompt) },
    { task: 'keywords', ...templateRegex(t.keywords_extraction) },
    { task: 'summary', ...templateRegex(t.summarize_entity_descriptions) },
  ];
}

/** LightRAG's task and reply for its last user message, or undefined. */
export function recognizeLightragPrompt(
  t: LightragTemplates,
  ms: readonly LightragMatcher[],
  user: string,
): { task: string; content: string } | undefined {
  for (const m of ms) {
    const hit = m.re.exec(user.trim());
    if (!hit) continue;
    const f: Record<string, string> = {};
    m.fields.forEach((name, i) => {
      f[name] = hit[i + 1] as string;
    });
    return { task: m.task, content: lightragReply(t, m.task, f) };
  }
  return undefined;
}

type Part = { type?: string; text?: string };
interface WireMessage {
  role: ChatMessage['role'];
  content: string | Part[] | null;
}

function flatten(messages: readonly WireMessage[]): ChatMessage[] {
  return messages.map((m) => ({
    role: m.role,
    content:
      typeof m.content === 'string'
        ? m.content
        : (m.content ?? []).map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join(''),
  }));
}

export class PeerFakeServer extends FakeProviderServer {
  /** Chat requests by whose prompt they were: noderag's, the original's, or unknown. */
  readonly recognised = { noderag: 0, original: 0, lightrag: 0, unrecognised: 0 };
  /** Chat requests per `<side> <task>`, e.g. `original decompose`. */
  readonly byTask: Record<string, number> = {};
  /** First few unrecognised prompts (for the report). */
  readonly unrecognisedSamples: string[] = [];

  get baseUrl(): string {
    return `${this.origin}/v1`;
  }
}

function chatRoute(
  server: () => PeerFakeServer,
  ms: Matcher[],
  lr?: { t: LightragTemplates; ms: LightragMatcher[] },
) {
  return ({ body }: RouteContext): RouteResult => {
    const b = (body ?? {}) as {
      model?: string;
      messages?: WireMessage[];
      response_format?: { type?: string };
    };
    const wantJson = b.response_format?.type === 'json_schema' || b.response_format?.type === 'json_object';
    const messages = flatten(b.messages ?? []);
    const s = server();
    let content: string;
    const ours = recognizePrompt(messages);
    const tally = (key: string) => {
      s.byTask[key] = (s.byTask[key] ?? 0) + 1;
    };
    if (ours) {
      s.recognised.noderag++;
      tally(`noderag ${ours.task}`);
      content = fakeReply(messages, wantJson, undefined);
    } else {
      const user = messages.find((m) => m.role === 'user')?.content ?? '';
      const call = recognizeOriginalPrompt(ms, user);
      // LightRAG: its extraction prompt is repeated in the gleaning call's history, so the last
      // user message is the one that says which task this is.
      const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      const lrHit = !call && lr ? recognizeLightragPrompt(lr.t, lr.ms, lastUser) : undefined;
      if (lrHit) {
        s.recognised.lightrag++;
        tally(`lightrag ${lrHit.task}`);
        content = lrHit.content;
      } else if (call) {
        s.recognised.original++;
        tally(`original ${call.task}`);
        const reply = localReply(buildRequest(call));
        content = typeof reply === 'string' ? reply : JSON.stringify(reply);
      } else {
        s.recognised.unrecognised++;
        if (s.unrecognisedSamples.length < 3) s.unrecognisedSamples.push(user.slice(0, 300));
        content = wantJson ? '{}' : 'fake reply to an unknown prompt';
      }
    }
    return chatCompletion(b.model ?? 'fake', content);
  };
}

/** `templates` null: the original's prompts are not recognised (bench quality serves LightRAG only). */
export async function startPeerFakeServer(
  templates: OriginalTemplates | null,
  dim: number,
  lightrag?: LightragTemplates,
): Promise<PeerFakeServer> {
  const ms = templates ? matchers(templates) : [];
  const lr = lightrag ? { t: lightrag, ms: lightragMatchersFor(lightrag) } : undefined;
  let self: PeerFakeServer | undefined;
  const server = new PeerFakeServer(
    [
      {
        name: 'chat',
        match: (m, p) => m === 'POST' && p === '/v1/chat/completions',
        handle: chatRoute(() => self as PeerFakeServer, ms, lr),
      },
      // The same embeddings as tests/helpers' fake OpenAI server: the local provider's vectors.
      {
        name: 'embeddings',
        match: (m, p) => m === 'POST' && p === '/v1/embeddings',
        handle: embeddingsRoute(),
      },
    ],
    () => true,
    (status, message) => ({
      error: { message, type: 'invalid_request_error', param: null, code: null, status },
    }),
    { dim },
  );
  self = server;
  return server.start();
}
