/**
 * The page, its stylesheet and its script, served by the app itself (no CDN, no external
 * fonts; the Content-Security-Policy in app.ts allows nothing else). The script writes every
 * document and model text with textContent, never innerHTML, so a document holding markup
 * shows that markup as text.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>noderag</title>
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<aside id="sidebar">
  <h1>noderag</h1>
  <section class="box">
    <h2>Build status</h2>
    <div id="status" class="status">…</div>
    <div id="status-detail" class="muted"></div>
    <label class="check"><input type="checkbox" id="search-engine" disabled> Search Engine</label>
  </section>
  <form id="config-form" class="box" novalidate>
    <h2>Parameters</h2>
    <fieldset><legend>Model</legend>
      <label>Provider <select name="model_config.service_provider"></select></label>
      <span class="field-error" data-for="model_config.service_provider"></span>
      <label>Model <input name="model_config.model_name"></label>
      <span class="field-error" data-for="model_config.model_name"></span>
      <label>Base URL <input name="model_config.base_url" placeholder="official API"></label>
      <span class="field-error" data-for="model_config.base_url"></span>
      <label>API key <input type="password" name="model_config.api_keys" autocomplete="off"></label>
      <span class="field-error" data-for="model_config.api_keys"></span>
    </fieldset>
    <fieldset><legend>Embeddings</legend>
      <label>Provider <select name="embedding_config.service_provider"></select></label>
      <span class="field-error" data-for="embedding_config.service_provider"></span>
      <label>Model <input name="embedding_config.embedding_model_name"></label>
      <span class="field-error" data-for="embedding_config.embedding_model_name"></span>
      <label>Base URL <input name="embedding_config.base_url" placeholder="official API"></label>
      <span class="field-error" data-for="embedding_config.base_url"></span>
      <label>API key <input type="password" name="embedding_config.api_keys" autocomplete="off"></label>
      <span class="field-error" data-for="embedding_config.api_keys"></span>
      <label>Dimension <input name="config.dim" inputmode="numeric"></label>
      <span class="field-error" data-for="config.dim"></span>
    </fieldset>
    <fieldset><legend>Documents</legend>
      <label>Language <select name="config.language"></select></label>
      <span class="field-error" data-for="config.language"></span>
      <label>File types <select name="config.docu_type">
        <option>mixed</option><option>txt</option><option>md</option><option>doc</option>
        <option>docx</option><option>pdf</option><option>html</option></select></label>
      <span class="field-error" data-for="config.docu_type"></span>
      <label>Chunk size <input name="config.chunk_size" inputmode="numeric"></label>
      <span class="field-error" data-for="config.chunk_size"></span>
    </fieldset>
    <fieldset><legend>Search quotas</legend>
      <label>Entities <input name="config.Enode" inputmode="numeric"></label>
      <span class="field-error" data-for="config.Enode"></span>
      <label>Relationships <input name="config.Rnode" inputmode="numeric"></label>
      <span class="field-error" data-for="config.Rnode"></span>
      <label>High-level <input name="config.Hnode" inputmode="numeric"></label>
      <span class="field-error" data-for="config.Hnode"></span>
      <label>Cross nodes <input name="config.cross_node" inputmode="numeric"></label>
      <span class="field-error" data-for="config.cross_node"></span>
      <label>Vector hits <input name="config.HNSW_results" inputmode="numeric"></label>
      <span class="field-error" data-for="config.HNSW_results"></span>
    </fieldset>
    <button type="submit" id="save-config">Save Config</button>
    <div id="save-result" class="muted" role="status"></div>
  </form>
</aside>
<main>
  <nav class="tabs">
    <button type="button" class="tab active" id="tab-files" data-panel="panel-files">Files &amp; Build</button>
    <button type="button" class="tab" id="tab-indices" data-panel="panel-indices">Indices</button>
    <button type="button" class="tab" id="tab-chat" data-panel="panel-chat" disabled>Chat</button>
  </nav>
  <section id="panel-files" class="panel">
    <div id="dropzone" class="dropzone">
      <p>Drop documents here, or <label class="link">choose files<input type="file" id="file-input" multiple hidden></label></p>
      <p id="accepted" class="muted"></p>
    </div>
    <div id="upload-result" role="status"></div>
    <table id="file-list"><thead><tr><th>File</th><th>Size</th><th>Status</th></tr></thead><tbody></tbody></table>
    <div class="build-row">
      <button type="button" id="build-button">Build</button>
      <span id="build-stage" class="muted"></span>
    </div>
    <div id="build-message" role="status"></div>
    <pre id="build-log"></pre>
  </section>
  <section id="panel-indices" class="panel" hidden>
    <p id="indices-empty" class="muted">No finished build yet.</p>
    <table id="indices"><thead><tr><th>What</th><th>Count</th></tr></thead><tbody></tbody></table>
  </section>
  <section id="panel-chat" class="panel" hidden>
    <div id="chat-log"></div>
    <form id="chat-form">
      <textarea id="question" rows="2" placeholder="Ask a question about your documents"></textarea>
      <button type="submit" id="ask">Ask</button>
    </form>
  </section>
</main>
</body>
</html>
`;

export const APP_CSS = `
* { box-sizing: border-box; }
body { margin: 0; display: flex; min-height: 100vh; font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
#sidebar { width: 320px; padding: 12px 16px; background: #eef0f4; border-right: 1px solid #d5d9e0; overflow-y: auto; }
h1 { font-size: 20px; margin: 4px 0 12px; }
h2 { font-size: 14px; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em; color: #4a5368; }
.box { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; padding: 10px; margin-bottom: 12px; }
.status { font-size: 18px; font-weight: 600; }
.status.finished { color: #17803d; } .status.error { color: #b3261e; } .status.building { color: #a15c00; }
.muted { color: #667085; font-size: 12px; }
fieldset { border: none; padding: 0; margin: 0 0 8px; }
legend { font-weight: 600; margin-bottom: 4px; }
label { display: flex; justify-content: space-between; align-items: center; gap: 8px; margin: 3px 0; }
label.check { justify-content: flex-start; margin-top: 8px; }
input, select, textarea { font: inherit; padding: 3px 5px; border: 1px solid #b8bfcc; border-radius: 4px; }
label input, label select { width: 160px; }
label.check input { width: auto; }
.field-error { display: block; color: #b3261e; font-size: 12px; }
.field-error:empty { display: none; }
button { font: inherit; padding: 6px 14px; border-radius: 5px; border: 1px solid #3056d3; background: #3b63e0; color: #fff; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
main { flex: 1; padding: 12px 20px; min-width: 0; }
.tabs { display: flex; gap: 4px; border-bottom: 1px solid #d5d9e0; margin-bottom: 12px; }
.tab { background: transparent; color: #1d2330; border: 1px solid transparent; border-bottom: none; border-radius: 5px 5px 0 0; }
.tab.active { background: #fff; border-color: #d5d9e0; }
.dropzone { border: 2px dashed #9aa4b8; border-radius: 8px; padding: 18px; text-align: center; background: #fff; }
.dropzone.over { border-color: #3b63e0; background: #eef3ff; }
.link { display: inline; color: #3b63e0; text-decoration: underline; cursor: pointer; }
table { border-collapse: collapse; margin: 10px 0; background: #fff; min-width: 360px; }
th, td { border: 1px solid #d5d9e0; padding: 4px 10px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.st-indexed { color: #17803d; } .st-new { color: #3b63e0; } .st-changed { color: #a15c00; }
.build-row { display: flex; align-items: center; gap: 12px; }
#build-log { background: #1d2330; color: #e6e9ef; padding: 8px; border-radius: 6px; max-height: 260px; overflow: auto; font-size: 12px; white-space: pre-wrap; }
#build-log:empty { display: none; }
.err { color: #b3261e; } .ok { color: #17803d; }
.exchange { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; padding: 10px; margin-bottom: 10px; }
.question { font-weight: 600; }
details.context { background: #f3f5f9; border-radius: 5px; padding: 6px 10px; margin: 6px 0; }
details.context h4 { margin: 6px 0 2px; font-size: 12px; text-transform: uppercase; color: #4a5368; }
details.context ol { margin: 0; padding-left: 20px; white-space: pre-wrap; }
.answer-text { white-space: pre-wrap; }
#chat-form { display: flex; gap: 8px; }
#chat-form textarea { flex: 1; }
`;

export const APP_JS = `'use strict';
(() => {
  const $ = (sel) => document.querySelector(sel);
  /** Creates an element; text goes in with textContent only. */
  const el = (tag, props, text) => {
    const e = document.createElement(tag);
    if (props) for (const [k, v] of Object.entries(props)) e.setAttribute(k, v);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const api = async (path, init) => {
    const res = await fetch(path, init);
    let body = null;
    try { body = await res.json(); } catch { body = null; }
    if (!res.ok) {
      const err = new Error((body && body.error && body.error.message) || res.status + ' ' + res.statusText);
      err.status = res.status; err.body = body;
      throw err;
    }
    return body;
  };
  const jsonInit = (method, data) => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) });

  // ---- status (state.json, polled) ----
  let searchable = false;
  async function refreshStatus() {
    let s;
    try { s = await api('/api/status'); } catch { return; }
    const box = $('#status');
    box.textContent = s.status;
    box.className = 'status' + (s.status === 'Finished' ? ' finished' : s.errorType && s.errorType !== 'NO_ERROR' ? ' error' : s.building ? ' building' : '');
    const detail = [];
    if (s.building && s.state) detail.push('state: ' + s.state);
    if (s.generation) detail.push('generation ' + s.generation);
    if (s.errorType && s.errorType !== 'NO_ERROR') detail.push(s.errorType + (s.errorMessage ? ': ' + s.errorMessage : ''));
    $('#status-detail').textContent = detail.join(' · ');
    $('#build-button').disabled = s.building;
    const was = searchable;
    searchable = s.searchable && !s.building;
    $('#search-engine').disabled = !searchable;
    $('#tab-chat').disabled = !(searchable && $('#search-engine').checked);
    if (searchable && !was) refreshIndices();
  }

  // ---- config form ----
  const form = $('#config-form');
  function fillSelect(name, options) {
    const sel = form.elements[name];
    sel.replaceChildren(...options.map((o) => el('option', { value: o }, o)));
  }
  async function loadConfig() {
    const c = await api('/api/config');
    fillSelect('model_config.service_provider', c.choices.service_provider);
    fillSelect('embedding_config.service_provider', c.choices.service_provider);
    fillSelect('config.language', c.choices.language);
    for (const [section, values] of Object.entries(c.values)) {
      for (const [key, v] of Object.entries(values)) {
        const field = form.elements[section + '.' + key];
        if (field) field.value = v === null ? '' : String(v);
      }
    }
    for (const section of ['model_config', 'embedding_config']) {
      const f = form.elements[section + '.api_keys'];
      f.value = '';
      f.placeholder = c.apiKeySet[section] ? 'set (type to replace)' : 'not set';
    }
  }
  // Choosing the offline provider for the model also picks it for embeddings.
  form.elements['model_config.service_provider'].addEventListener('change', (ev) => {
    if (ev.target.value !== 'local') return;
    form.elements['embedding_config.service_provider'].value = 'local';
    form.elements['model_config.model_name'].value = 'local';
    form.elements['embedding_config.embedding_model_name'].value = 'feature-hash';
    form.elements['model_config.base_url'].value = '';
    form.elements['embedding_config.base_url'].value = '';
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const s of form.querySelectorAll('.field-error')) s.textContent = '';
    const data = { model_config: {}, embedding_config: {}, config: {} };
    for (const f of form.querySelectorAll('input[name], select[name]')) {
      const [section, key] = f.name.split('.');
      data[section][key] = f.value;
    }
    const out = $('#save-result');
    out.className = 'muted';
    try {
      const r = await api('/api/config', jsonInit('POST', data));
      out.textContent = 'Saved Node_config.yaml' + (r.warnings.length ? ' (' + r.warnings.join('; ') + ')' : '');
      out.className = 'ok';
      await loadConfig();
      refreshFiles();
    } catch (e) {
      out.className = 'err';
      out.textContent = e.message;
      const problems = (e.body && e.body.error && e.body.error.problems) || [];
      const rest = [];
      for (const p of problems) {
        const slot = form.querySelector('.field-error[data-for="' + CSS.escape(p.path) + '"]');
        if (slot) slot.textContent = p.message; else rest.push(p.path + ': ' + p.message);
      }
      if (rest.length) out.textContent += ' — ' + rest.join('; ');
    }
  });

  // ---- files ----
  const sizeText = (n) => n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB';
  async function refreshFiles() {
    let r;
    try { r = await api('/api/files'); } catch (e) { $('#upload-result').textContent = e.message; return; }
    $('#accepted').textContent = 'Accepted: ' + r.accepted.join(' ') + ' · up to ' + sizeText(r.maxUploadBytes) + ' per file';
    const rows = r.files.map((f) => {
      const tr = el('tr', { 'data-path': f.path });
      tr.append(el('td', null, f.path), el('td', { class: 'num' }, sizeText(f.size)), el('td', { class: 'st-' + f.status }, f.status));
      return tr;
    });
    for (const d of r.deleted) {
      const tr = el('tr');
      tr.append(el('td', null, d), el('td'), el('td', { class: 'st-changed' }, 'deleted (still indexed)'));
      rows.push(tr);
    }
    $('#file-list tbody').replaceChildren(...rows);
  }
  async function upload(files, overwrite) {
    if (!files.length) return;
    const body = new FormData();
    for (const f of files) body.append('file', f, f.name);
    const out = $('#upload-result');
    try {
      const r = await api('/api/files' + (overwrite ? '?overwrite=1' : ''), { method: 'POST', body });
      out.className = 'ok';
      out.textContent = 'Added ' + r.written.join(', ');
    } catch (e) {
      if (e.status === 409 && !overwrite && window.confirm(e.message + '. Replace it?')) return upload(files, true);
      out.className = 'err';
      out.textContent = e.message;
    }
    refreshFiles();
  }
  const drop = $('#dropzone');
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    upload([...ev.dataTransfer.files], false);
  });
  $('#file-input').addEventListener('change', (ev) => {
    upload([...ev.target.files], false);
    ev.target.value = '';
  });

  // ---- build (server-sent events) ----
  const log = $('#build-log');
  const events = new EventSource('/api/build/events');
  events.addEventListener('line', (ev) => {
    const e = JSON.parse(ev.data);
    const line = el('span', e.stream === 'err' ? { class: 'err' } : null, e.text + '\\n');
    log.append(line);
    while (log.childNodes.length > 500) log.firstChild.remove();
    log.scrollTop = log.scrollHeight;
    const m = /^\\s*\\[(\\d+)\\/(\\d+)\\]\\s*(.*)$/.exec(e.text);
    if (m) $('#build-stage').textContent = 'Stage ' + m[1] + ' of ' + m[2] + ': ' + m[3];
    if (!$('#build-button').disabled) { $('#build-button').disabled = true; refreshStatus(); }
  });
  events.addEventListener('done', (ev) => {
    const e = JSON.parse(ev.data);
    const msg = $('#build-message');
    msg.className = e.exitCode === 0 ? 'ok' : 'err';
    msg.textContent = e.message;
    $('#build-stage').textContent = '';
    refreshStatus();
    refreshFiles();
    if (e.exitCode === 0) refreshIndices();
  });
  $('#build-button').addEventListener('click', async () => {
    const msg = $('#build-message');
    try {
      log.replaceChildren();
      msg.className = 'muted';
      msg.textContent = 'Building…';
      $('#build-button').disabled = true;
      await api('/api/build', { method: 'POST' });
      refreshStatus();
    } catch (e) {
      msg.className = 'err';
      msg.textContent = e.message;
      refreshStatus();
    }
  });

  // ---- indices ----
  async function refreshIndices() {
    let r;
    try { r = await api('/api/indices'); } catch { return; }
    $('#indices-empty').hidden = true;
    const rows = [['documents', r.documents], ['chunks', r.chunks], ['edges', r.edges === null ? 'unknown' : r.edges]];
    for (const [k, v] of Object.entries(r.nodeTypes)) rows.push([k, v]);
    $('#indices tbody').replaceChildren(...rows.map(([k, v]) => {
      const tr = el('tr', { 'data-key': k });
      tr.append(el('td', null, k), el('td', { class: 'num' }, v));
      return tr;
    }));
  }

  // ---- tabs and the Search Engine option ----
  function showPanel(id) {
    for (const t of document.querySelectorAll('.tab')) t.classList.toggle('active', t.dataset.panel === id);
    for (const p of document.querySelectorAll('.panel')) p.hidden = p.id !== id;
    if (id === 'panel-indices') refreshIndices();
  }
  for (const t of document.querySelectorAll('.tab')) t.addEventListener('click', () => showPanel(t.dataset.panel));
  $('#search-engine').addEventListener('change', (ev) => {
    $('#tab-chat').disabled = !ev.target.checked;
    showPanel(ev.target.checked ? 'panel-chat' : 'panel-files');
  });

  // ---- chat: retrieval context above each answer ----
  $('#chat-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const q = $('#question').value.trim();
    if (!q) return;
    const box = el('div', { class: 'exchange' });
    box.append(el('div', { class: 'question' }, q));
    const pending = el('div', { class: 'muted' }, 'Searching…');
    box.append(pending);
    $('#chat-log').append(box);
    $('#ask').disabled = true;
    try {
      const r = await api('/api/chat', jsonInit('POST', { question: q }));
      const ctx = el('details', { class: 'context' });
      const items = r.sections.reduce((n, s) => n + s.items.length, 0);
      ctx.append(el('summary', null, 'Retrieval context: ' + items + ' items, ' + r.retrievalTokens + ' tokens'));
      for (const s of r.sections) {
        const sec = el('div', { class: 'section', 'data-type': s.type });
        sec.append(el('h4', null, s.type + ' (' + s.items.length + ')'));
        const ol = el('ol');
        for (const t of s.items) ol.append(el('li', null, t));
        sec.append(ol);
        ctx.append(sec);
      }
      const answer = el('div', { class: 'answer' });
      answer.append(el('div', { class: 'answer-text' }, r.response), el('div', { class: 'muted tokens' }, r.responseTokens + ' answer tokens'));
      pending.replaceWith(ctx, answer);
      $('#question').value = '';
    } catch (e) {
      pending.className = 'err';
      pending.textContent = e.message;
    } finally {
      $('#ask').disabled = false;
    }
  });

  loadConfig().catch((e) => { $('#save-result').textContent = e.message; });
  refreshFiles();
  refreshStatus();
  setInterval(refreshStatus, 2000);
})();
`;
