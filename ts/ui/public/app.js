// @ts-check
/**
 * The page's script (a module; served as is, no build step). Checked by `tsc -p
 * tsconfig.ui.json` against the DOM and the API's reply types (../api-types.ts), linted by
 * biome. Every document and model text is written with textContent, never innerHTML, so a
 * document holding markup shows that markup as text.
 */

/** @typedef {import('../api-types.js').BuildEvent} BuildEvent */
/** @typedef {import('../api-types.js').ChatReply} ChatReply */
/** @typedef {import('../api-types.js').ConfigReply} ConfigReply */
/** @typedef {import('../api-types.js').ConfigSaveReply} ConfigSaveReply */
/** @typedef {import('../api-types.js').ErrorReply} ErrorReply */
/** @typedef {import('../api-types.js').FilesReply} FilesReply */
/** @typedef {import('../api-types.js').IndicesReply} IndicesReply */
/** @typedef {import('../api-types.js').StatusReply} StatusReply */
/** @typedef {import('../api-types.js').UploadReply} UploadReply */

/**
 * The element with this id, of the expected class (a missing or different element is a bug
 * of the page, reported at once).
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function byId(id, type) {
  const e = document.getElementById(id);
  if (!(e instanceof type)) throw new Error(`#${id} is missing or not a ${type.name}`);
  return e;
}

/**
 * Creates an element; text goes in with textContent only.
 * @param {string} tag
 * @param {Record<string, string> | null} [attrs]
 * @param {string | number | null} [text]
 * @returns {HTMLElement}
 */
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** A refused API request: the reply's message, its status and body. */
class ApiError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   * @param {ErrorReply | null} body
   */
  constructor(message, status, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

// ---- API key (a UI started with --api-key): typed once, kept in sessionStorage ----
const KEY_STORE = 'noderag.apiKey';
const keyBox = byId('key-box', HTMLElement);
const keyInput = byId('api-key', HTMLInputElement);
const keyMessage = byId('key-message', HTMLDivElement);
keyInput.value = sessionStorage.getItem(KEY_STORE) ?? '';
keyBox.hidden = keyInput.value === '';

/** @returns {Record<string, string>} */
function authHeader() {
  return keyInput.value ? { authorization: `Bearer ${keyInput.value}` } : {};
}

/** @param {string} message */
function askForKey(message) {
  const first = keyBox.hidden;
  keyBox.hidden = false;
  keyMessage.className = 'err';
  keyMessage.textContent = message;
  if (first) keyInput.focus();
}

/**
 * Calls the API and returns its JSON reply, typed by the caller.
 * @template T
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<T>}
 */
async function api(path, init) {
  const headers = new Headers(init?.headers);
  for (const [k, v] of Object.entries(authHeader())) headers.set(k, v);
  const res = await fetch(path, { ...init, headers });
  /** @type {unknown} */
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const error = /** @type {ErrorReply | null} */ (body);
    if (res.status === 401) askForKey(error?.error?.message ?? 'this UI needs its API key');
    throw new ApiError(error?.error?.message ?? `${res.status} ${res.statusText}`, res.status, error);
  }
  return /** @type {T} */ (body);
}

/**
 * @param {string} method
 * @param {unknown} data
 * @returns {RequestInit}
 */
const jsonInit = (method, data) => ({
  method,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(data),
});

const buildButton = byId('build-button', HTMLButtonElement);
const searchEngine = byId('search-engine', HTMLInputElement);
const chatTab = byId('tab-chat', HTMLButtonElement);

// ---- status (state.json, polled) ----
let searchable = false;
async function refreshStatus() {
  /** @type {StatusReply} */
  let s;
  const box = byId('status', HTMLDivElement);
  try {
    s = await api('/api/status');
  } catch (e) {
    // No answer at all (not an HTTP error): the UI server has stopped. Said plainly, so the
    // page does not keep showing "Building"; the next poll that gets through restores it.
    if (!(e instanceof ApiError)) {
      box.textContent = 'Server unreachable';
      box.className = 'status error';
      byId('status-detail', HTMLDivElement).textContent =
        'the UI server does not answer: start it again (noderag ui) and this page picks it up';
      const message = byId('build-message', HTMLDivElement);
      if (message.textContent === 'Building…') message.textContent = '';
    }
    return;
  }
  const failed = s.errorType !== null && s.errorType !== 'NO_ERROR';
  box.textContent = s.status;
  box.className = `status${s.status === 'Finished' ? ' finished' : failed ? ' error' : s.building ? ' building' : ''}`;
  const detail = [];
  if (s.building && s.state) detail.push(`state: ${s.state}`);
  if (s.generation) detail.push(`generation ${s.generation}`);
  if (failed) detail.push(s.errorType + (s.errorMessage ? `: ${s.errorMessage}` : ''));
  byId('status-detail', HTMLDivElement).textContent = detail.join(' · ');
  buildButton.disabled = s.building;
  const was = searchable;
  // A finished generation stays searchable while a build runs (the server answers from it).
  searchable = s.searchable;
  searchEngine.disabled = !searchable;
  chatTab.disabled = !(searchable && searchEngine.checked);
  if (searchable && !was) void refreshIndices();
}

// ---- config form ----
const form = byId('config-form', HTMLFormElement);

/**
 * The form's input or select of this name (`section.key`).
 * @param {string} name
 * @returns {HTMLInputElement | HTMLSelectElement}
 */
function field(name) {
  const f = form.elements.namedItem(name);
  if (f instanceof HTMLInputElement || f instanceof HTMLSelectElement) return f;
  throw new Error(`the form has no field ${name}`);
}

/**
 * @param {string} name
 * @param {readonly string[]} options
 */
function fillSelect(name, options) {
  field(name).replaceChildren(...options.map((o) => el('option', { value: o }, o)));
}

async function loadConfig() {
  /** @type {ConfigReply} */
  const c = await api('/api/config');
  fillSelect('model_config.service_provider', c.choices.service_provider);
  fillSelect('embedding_config.service_provider', c.choices.service_provider);
  fillSelect('config.language', c.choices.language);
  for (const [section, values] of Object.entries(c.values)) {
    for (const [key, v] of Object.entries(values)) {
      const f = form.elements.namedItem(`${section}.${key}`);
      if (f instanceof HTMLInputElement || f instanceof HTMLSelectElement)
        f.value = v === null ? '' : String(v);
    }
  }
  for (const section of /** @type {const} */ (['model_config', 'embedding_config'])) {
    const f = /** @type {HTMLInputElement} */ (field(`${section}.api_keys`));
    f.value = '';
    f.placeholder = c.apiKeySet[section] ? 'set (type to replace)' : 'not set';
  }
  // A file that does not load comes with its problems: shown next to their fields to fix here.
  for (const s of form.querySelectorAll('.field-error')) s.textContent = '';
  if (c.problems?.length) {
    const out = byId('save-result', HTMLDivElement);
    out.className = 'err';
    out.textContent = `Node_config.yaml does not load: ${c.problems.length} field${c.problems.length === 1 ? '' : 's'} to fix`;
    showProblems(c.problems, out);
  }
}

/**
 * Each problem next to its field; those without one after `out`'s text.
 * @param {{ path: string, message: string }[]} problems
 * @param {HTMLElement} out
 */
function showProblems(problems, out) {
  const rest = [];
  for (const p of problems) {
    const slot = form.querySelector(`.field-error[data-for="${CSS.escape(p.path)}"]`);
    if (slot) slot.textContent = p.message;
    else rest.push(`${p.path}: ${p.message}`);
  }
  if (rest.length) out.textContent += ` — ${rest.join('; ')}`;
}

// Choosing the offline provider for the model also picks it for embeddings.
field('model_config.service_provider').addEventListener('change', () => {
  if (field('model_config.service_provider').value !== 'local') return;
  field('embedding_config.service_provider').value = 'local';
  field('model_config.model_name').value = 'local';
  field('embedding_config.embedding_model_name').value = 'feature-hash';
  field('model_config.base_url').value = '';
  field('embedding_config.base_url').value = '';
});

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  for (const s of form.querySelectorAll('.field-error')) s.textContent = '';
  /** @type {Record<string, Record<string, string>>} */
  const data = { model_config: {}, embedding_config: {}, config: {} };
  for (const f of form.querySelectorAll('input[name], select[name]')) {
    if (!(f instanceof HTMLInputElement || f instanceof HTMLSelectElement)) continue;
    const [section, key] = f.name.split('.');
    const values = section === undefined ? undefined : data[section];
    if (values && key) values[key] = f.value;
  }
  const out = byId('save-result', HTMLDivElement);
  out.className = 'muted';
  try {
    /** @type {ConfigSaveReply} */
    const r = await api('/api/config', jsonInit('POST', data));
    out.textContent = `Saved Node_config.yaml${r.warnings.length ? ` (${r.warnings.join('; ')})` : ''}`;
    out.className = 'ok';
    await loadConfig();
    void refreshFiles();
  } catch (e) {
    out.className = 'err';
    out.textContent = messageOf(e);
    showProblems((e instanceof ApiError && e.body?.error?.problems) || [], out);
  }
});

// ---- files ----
/** @param {number} n */
const sizeText = (n) =>
  n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`;

const uploadResult = byId('upload-result', HTMLDivElement);

async function refreshFiles() {
  /** @type {FilesReply} */
  let r;
  try {
    r = await api('/api/files');
  } catch (e) {
    uploadResult.textContent = messageOf(e);
    return;
  }
  listed = new Set(r.files.map((f) => f.path));
  maxUploadBytes = r.maxUploadBytes;
  byId('accepted', HTMLParagraphElement).textContent =
    `Accepted: ${r.accepted.join(' ')} · up to ${sizeText(r.maxUploadBytes)} per file`;
  const rows = r.files.map((f) => {
    const tr = el('tr', { 'data-path': f.path });
    tr.append(
      el('td', null, f.path),
      el('td', { class: 'num' }, sizeText(f.size)),
      el(
        'td',
        { class: `st-${f.status}`, ...(f.reason ? { title: f.reason } : {}) },
        f.reason ? `${f.status} (${f.reason})` : f.status,
      ),
    );
    return tr;
  });
  for (const d of r.deleted) {
    const tr = el('tr');
    tr.append(el('td', null, d), el('td'), el('td', { class: 'st-changed' }, 'deleted (still indexed)'));
    rows.push(tr);
  }
  byId('file-list', HTMLTableElement).tBodies[0]?.replaceChildren(...rows);
}

/** Paths of the files in input/, as last listed. */
let listed = new Set();

/**
 * The question before replacing: every chosen file that exists is named, since the answer
 * replaces them all.
 * @param {File[]} files
 * @returns {string}
 */
function replaceQuestion(files) {
  const existing = files.map((f) => f.name).filter((n) => listed.has(n));
  const names = existing.length ? existing : files.map((f) => f.name);
  const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? ` and ${names.length - 10} more` : '');
  return `Already in input/: ${shown}. Replace ${names.length === 1 ? 'it' : 'them'}?`;
}

/**
 * Uploads the files; on "already exists" asks before replacing.
 * @param {File[]} files
 * @param {boolean} overwrite
 * @returns {Promise<void>}
 */
async function upload(files, overwrite) {
  if (!files.length) return;
  /** @type {string[]} */
  const written = [];
  try {
    for (const batch of batches(files)) {
      const body = new FormData();
      for (const f of batch) body.append('file', f, f.name);
      /** @type {UploadReply} */
      const r = await api(`/api/files${overwrite ? '?overwrite=1' : ''}`, { method: 'POST', body });
      written.push(...r.written);
    }
    uploadResult.className = 'ok';
    uploadResult.textContent = `Added ${written.join(', ')}`;
  } catch (e) {
    if (
      e instanceof ApiError &&
      e.body?.error?.code === 'file_exists' &&
      !overwrite &&
      window.confirm(replaceQuestion(files))
    ) {
      // The batches already written are written again, the same bytes.
      return upload(files, true);
    }
    uploadResult.className = 'err';
    uploadResult.textContent = written.length
      ? `Added ${written.join(', ')}; then: ${messageOf(e)}`
      : messageOf(e);
  }
  void refreshFiles();
}

/** The server's limit per file, which is also its limit per request (from GET /api/files). */
let maxUploadBytes = Number.POSITIVE_INFINITY;

/**
 * The files in requests of at most `maxUploadBytes` together (a file over it alone in its
 * own, for the server to refuse by name): the page promises the limit per file.
 * @param {File[]} files
 * @returns {File[][]}
 */
function batches(files) {
  /** @type {File[][]} */
  const out = [];
  /** @type {File[]} */
  let current = [];
  let size = 0;
  for (const f of files) {
    // Some room for the multipart framing of each part.
    const cost = f.size + 512;
    if (current.length > 0 && size + cost > maxUploadBytes) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(f);
    size += cost;
  }
  if (current.length > 0) out.push(current);
  return out;
}

const drop = byId('dropzone', HTMLDivElement);
drop.addEventListener('dragover', (ev) => {
  ev.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (ev) => {
  ev.preventDefault();
  drop.classList.remove('over');
  void upload([...(ev.dataTransfer?.files ?? [])], false);
});
const fileInput = byId('file-input', HTMLInputElement);
fileInput.addEventListener('change', () => {
  void upload([...(fileInput.files ?? [])], false);
  fileInput.value = '';
});

// ---- build (server-sent events) ----
const log = byId('build-log', HTMLPreElement);
const buildMessage = byId('build-message', HTMLDivElement);
const buildStage = byId('build-stage', HTMLSpanElement);
/** @param {Extract<BuildEvent, { kind: 'line' }>} e */
function onBuildLine(e) {
  log.append(el('span', e.stream === 'err' ? { class: 'err' } : null, `${e.text}\n`));
  while (log.childNodes.length > 500) log.firstChild?.remove();
  log.scrollTop = log.scrollHeight;
  const m = /^\s*\[(\d+)\/(\d+)\]\s*(.*)$/.exec(e.text);
  if (m) buildStage.textContent = `Stage ${m[1]} of ${m[2]}: ${m[3]}`;
  if (!buildButton.disabled) {
    buildButton.disabled = true;
    void refreshStatus();
  }
}
/** @param {Extract<BuildEvent, { kind: 'done' }>} e */
function onBuildDone(e) {
  buildMessage.className = e.exitCode === 0 ? 'ok' : 'err';
  buildMessage.textContent = e.message;
  buildStage.textContent = '';
  void refreshStatus();
  void refreshFiles();
  if (e.exitCode === 0) void refreshIndices();
}

/**
 * The `data:` value of one event block. Lines end at CR, LF or CRLF only, as SSE says: a
 * JavaScript `.` or multiline `$` would also end them at U+2028/U+2029, which JSON strings
 * may hold raw (a file name with one cut its build-log line, and the page reconnected forever).
 * @param {string} block
 */
function eventData(block) {
  const lines = block.split(/\r\n|\r|\n/).filter((l) => l.startsWith('data:'));
  if (lines.length === 0) return undefined;
  return lines.map((l) => l.slice(l.startsWith('data: ') ? 6 : 5)).join('\n');
}

/**
 * Follows GET /api/build/events, read with fetch because EventSource cannot send the key;
 * reconnects after a pause when the stream ends or fails. The server sends the current
 * build's events so far on each connection, so the log starts again with each.
 */
async function followBuildEvents() {
  for (;;) {
    try {
      const res = await fetch('/api/build/events?follow=1', { headers: authHeader() });
      // The server's own words ("the API key is not valid"), not a generic line over them.
      if (res.status === 401) {
        const reply = /** @type {ErrorReply | null} */ (await res.json().catch(() => null));
        askForKey(reply?.error?.message ?? 'this UI needs its API key');
      }
      if (res.ok && res.body) {
        log.replaceChildren();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += value;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = eventData(block);
            if (data === undefined) continue; // a keep-alive comment
            const e = /** @type {BuildEvent} */ (JSON.parse(data));
            if (e.kind === 'line') onBuildLine(e);
            else onBuildDone(e);
          }
        }
      }
    } catch {
      // The server went away or the page is closing: try again below.
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}
buildButton.addEventListener('click', async () => {
  try {
    log.replaceChildren();
    buildMessage.className = 'muted';
    buildMessage.textContent = 'Building…';
    buildButton.disabled = true;
    await api('/api/build', { method: 'POST' });
  } catch (e) {
    buildMessage.className = 'err';
    buildMessage.textContent = messageOf(e);
  }
  void refreshStatus();
});

// ---- indices ----
async function refreshIndices() {
  /** @type {IndicesReply} */
  let r;
  try {
    r = await api('/api/indices');
  } catch {
    return;
  }
  byId('indices-empty', HTMLParagraphElement).hidden = true;
  /** @type {[string, string | number][]} */
  const rows = [
    ['documents', r.documents],
    ['chunks', r.chunks],
    ['edges', r.edges === null ? 'unknown' : r.edges],
  ];
  for (const [k, v] of Object.entries(r.nodeTypes)) rows.push([k, v]);
  byId('indices', HTMLTableElement).tBodies[0]?.replaceChildren(
    ...rows.map(([k, v]) => {
      const tr = el('tr', { 'data-key': k });
      tr.append(el('td', null, k), el('td', { class: 'num' }, v));
      return tr;
    }),
  );
}

// ---- tabs and the Search Engine option ----
/** @param {string} id */
function showPanel(id) {
  for (const t of document.querySelectorAll('.tab')) {
    if (t instanceof HTMLElement) t.classList.toggle('active', t.dataset.panel === id);
  }
  for (const p of document.querySelectorAll('.panel')) {
    if (p instanceof HTMLElement) p.hidden = p.id !== id;
  }
  if (id === 'panel-indices') void refreshIndices();
}
for (const t of document.querySelectorAll('.tab')) {
  if (t instanceof HTMLElement) t.addEventListener('click', () => showPanel(t.dataset.panel ?? ''));
}
searchEngine.addEventListener('change', () => {
  chatTab.disabled = !searchEngine.checked;
  showPanel(searchEngine.checked ? 'panel-chat' : 'panel-files');
});

// ---- chat: retrieval context above each answer ----
const chatForm = byId('chat-form', HTMLFormElement);
const question = byId('question', HTMLTextAreaElement);
const ask = byId('ask', HTMLButtonElement);

/**
 * The retrieval context of an answer, one section per node type.
 * @param {ChatReply} r
 */
function contextView(r) {
  const ctx = el('details', { class: 'context' });
  const count = r.sections.reduce((n, s) => n + s.items.length, 0);
  ctx.append(el('summary', null, `Retrieval context: ${count} items, ${r.retrievalTokens} tokens`));
  for (const s of r.sections) {
    const sec = el('div', { class: 'section', 'data-type': s.type });
    sec.append(el('h4', null, `${s.type} (${s.items.length})`));
    const ol = el('ol');
    for (const item of s.items) {
      const li = el('li', { value: String(item.n) }, item.text);
      if (item.document !== null) li.append(el('span', { class: 'muted source' }, item.document));
      ol.append(li);
    }
    sec.append(ol);
    ctx.append(sec);
  }
  return ctx;
}

/**
 * The input files an answer's context comes from, cited ones first and marked.
 * @param {ChatReply} r
 */
function sourcesView(r) {
  const box = el('div', { class: 'sources' });
  if (r.sources.length === 0) return box;
  box.append(el('h4', null, 'Sources'));
  const ul = el('ul');
  const sorted = [...r.sources].sort((a, b) => Number(b.cited.length > 0) - Number(a.cited.length > 0));
  for (const s of sorted) {
    const li = el('li', { class: s.cited.length > 0 ? 'cited' : 'uncited' });
    li.append(
      el('span', { class: 'source-numbers' }, s.items.map((n) => `[${n}]`).join('')),
      ` ${s.document}`,
    );
    if (s.cited.length > 0) {
      li.append(el('span', { class: 'muted' }, ` (cited ${s.cited.map((n) => `[${n}]`).join('')})`));
    }
    ul.append(li);
  }
  box.append(ul);
  return box;
}

chatForm.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const q = question.value.trim();
  if (!q || ask.disabled) return;
  const box = el('div', { class: 'exchange' });
  box.append(el('div', { class: 'question' }, q));
  const pending = el('div', { class: 'muted' }, 'Searching…');
  box.append(pending);
  byId('chat-log', HTMLDivElement).append(box);
  ask.disabled = true;
  try {
    /** @type {ChatReply} */
    const r = await api('/api/chat', jsonInit('POST', { question: q }));
    const answer = el('div', { class: 'answer' });
    answer.append(
      el('div', { class: 'answer-text' }, r.response),
      sourcesView(r),
      el('div', { class: 'muted tokens' }, `${r.responseTokens} answer tokens`),
    );
    pending.replaceWith(contextView(r), answer);
    question.value = '';
  } catch (e) {
    pending.className = 'err';
    pending.textContent = messageOf(e);
  } finally {
    ask.disabled = false;
  }
});
// Enter asks; Shift+Enter is a new line (and Enter while an IME composes is the IME's).
question.addEventListener('keydown', (ev) => {
  if (ev.key !== 'Enter' || ev.shiftKey || ev.isComposing) return;
  ev.preventDefault();
  chatForm.requestSubmit();
});

function loadPage() {
  // Messages of an earlier attempt (a missing or wrong key) go with it.
  for (const id of ['save-result', 'upload-result']) {
    const box = byId(id, HTMLDivElement);
    box.textContent = '';
    box.className = '';
  }
  loadConfig().catch((e) => {
    byId('save-result', HTMLDivElement).textContent = messageOf(e);
  });
  void refreshFiles();
  void refreshStatus();
}
keyInput.addEventListener('change', () => {
  sessionStorage.setItem(KEY_STORE, keyInput.value);
  keyMessage.className = 'muted';
  keyMessage.textContent = 'Kept for this tab only.';
  loadPage();
});
loadPage();
void followBuildEvents();
setInterval(refreshStatus, 2000);
