/**
 * The memory page: one HTML document and one script, served by the daemon (no CDN: it works
 * offline). Every piece of memory text reaches the page through textContent or SVG text nodes,
 * never innerHTML, so a message holding `<script>` shows as those characters.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>membot — memory</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;display:flex;min-height:100vh;color:#1d2330;background:#f5f6f8}
nav{width:250px;background:#232a36;color:#dde;padding:12px;box-sizing:border-box}
nav h1{font-size:16px;margin:0 0 10px} nav ul{list-style:none;margin:0;padding:0}
nav button{width:100%;text-align:left;background:none;border:0;color:inherit;padding:6px;border-radius:4px;cursor:pointer}
nav button.on,nav button:hover{background:#3a4458} nav small{display:block;color:#9aa}
main{flex:1;padding:14px 20px;max-width:1100px}
section{background:#fff;border:1px solid #dde;border-radius:6px;padding:10px 14px;margin:0 0 14px}
h2{font-size:15px;margin:0 0 8px} textarea{width:100%;box-sizing:border-box;height:180px;font:13px ui-monospace,monospace}
pre{white-space:pre-wrap;margin:4px 0;font:12px ui-monospace,monospace;background:#f7f7fa;padding:6px;border-radius:4px;max-height:220px;overflow:auto}
ul.list{margin:0;padding-left:18px} .tag{display:inline-block;background:#e4ecff;color:#234;border-radius:3px;padding:0 5px;margin-right:3px;font-size:11px}
.summary{background:#fff6d6;border-left:4px solid #e0a800;padding-left:6px} .muted{color:#778} .err{color:#b00020} .ok{color:#176b2c}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:14px} .row{display:flex;gap:6px;align-items:center;margin:6px 0}
</style></head>
<body><nav><h1>membot memory</h1><ul id="chats"><li class="muted">loading…</li></ul></nav>
<main id="main"><p class="muted">Pick a chat on the left.</p></main>
<script src="/app.js"></script></body></html>
`;

export const PAGE_JS = String.raw`'use strict';
let current = null; // { key, memoryHash }
const $ = (sel) => document.querySelector(sel);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
async function api(path, opts) {
  const res = await fetch(path, Object.assign({ credentials: 'same-origin', headers: { 'content-type': 'application/json' } }, opts || {}));
  const body = await res.json().catch(() => ({ error: 'The daemon answered something that is not JSON (status ' + res.status + ').' }));
  if (!res.ok) throw new Error(body.error || ('HTTP ' + res.status));
  return body;
}
const q = (o) => new URLSearchParams(o).toString();
const size = (b) => b < 1024 ? b + ' B' : b < 1048576 ? (b / 1024).toFixed(1) + ' KB' : (b / 1048576).toFixed(1) + ' MB';
const when = (iso) => iso ? iso.slice(0, 16).replace('T', ' ') : '—';

async function loadChats() {
  const { chats } = await api('/api/chats');
  const ul = $('#chats');
  ul.replaceChildren();
  if (!chats.length) ul.append(el('li', { class: 'muted' }, 'No chats yet.'));
  for (const c of chats) {
    ul.append(el('li', {}, el('button', { 'data-key': c.key, onclick: () => openChat(c.key) }, c.key, el('small', {}, when(c.lastActivity) + ' · ' + size(c.bytes)))));
  }
}

function section(title, id, ...kids) { return el('section', { id }, el('h2', {}, title), ...kids); }

async function openChat(key) {
  for (const b of document.querySelectorAll('#chats button')) b.classList.toggle('on', b.dataset.key === key);
  const d = await api('/api/chat?' + q({ chat: key }));
  current = { key, memoryHash: d.memory.hash };
  const main = $('#main');
  main.replaceChildren(
    el('h2', {}, 'Chat ' + key),
    memorySection(d.memory),
    searchSection(),
    section('Memory per day', 'timeline', timelineSvg(d.timeline), el('p', { class: 'muted' }, 'Tokens per day: no usage accounting in this build yet (issue 15), so only the timeline is drawn.')),
    el('div', { class: 'grid' },
      section('Recent daily notes', 'notes', ...(d.notes.length ? d.notes.map((n) => el('div', {}, el('b', {}, n.date), el('pre', {}, n.text))) : [el('p', { class: 'muted' }, 'No notes yet.')])),
      section('History', 'history', ...(d.history.length ? d.history.map((h) => el('div', {}, el('b', {}, h.at), el('pre', {}, h.text))) : [el('p', { class: 'muted' }, 'No history entries yet.')]))),
    factsSection(d.facts, d.index),
    section('Entities', 'entities', d.entities.length ? el('ul', { class: 'list' }, ...d.entities.map((e) => el('li', {}, el('b', {}, e.name), ' ', el('span', { class: 'tag' }, e.type), ' ' + e.links + ' memories', el('ul', {}, ...e.memories.map((m) => el('li', { class: 'muted' }, m)))))) : el('p', { class: 'muted' }, 'No entities.')),
    section('Current session', 'session', d.session.length ? el('ul', { class: 'list' }, ...d.session.map((m) => el('li', { class: m.summary ? 'summary' : '' }, el('b', {}, m.summary ? '[Conversation summary]' : (m.sender || m.role)), ' ', el('span', { class: 'muted' }, when(m.timestamp)), el('pre', {}, m.summary ? m.content.replace(/^\[Conversation summary\]\n?/, '') : m.content)))) : el('p', { class: 'muted' }, 'The session is empty.')),
    forgetSection(),
  );
}

function memorySection(m) {
  const ta = el('textarea', { id: 'memory-text', spellcheck: 'false' });
  ta.value = m.text;
  const status = el('span', { id: 'memory-status', class: 'muted' }, m.text ? '' : 'MEMORY.md is empty.');
  const save = el('button', { id: 'memory-save', onclick: async () => {
    status.className = 'muted'; status.textContent = 'Saving…';
    try {
      const r = await api('/api/memory', { method: 'PUT', body: JSON.stringify({ chat: current.key, text: ta.value, base: current.memoryHash }) });
      current.memoryHash = r.hash; ta.value = r.text;
      status.className = 'ok'; status.textContent = 'Saved as version ' + (r.versions[0] ? r.versions[0].n : '?') + '.';
      $('#versions').replaceWith(versionsList(r.versions));
    } catch (e) { status.className = 'err'; status.textContent = e.message; }
  } }, 'Save MEMORY.md');
  return section('MEMORY.md', 'memory', ta, el('div', { class: 'row' }, save, status), versionsList(m.versions));
}

function versionsList(list) {
  const shown = el('pre', { id: 'version-text', hidden: '' });
  return el('div', { id: 'versions' }, el('b', {}, 'Versions '), list.length ? '' : el('span', { class: 'muted' }, 'none yet'),
    el('ul', { class: 'list' }, ...list.slice(0, 20).map((v) => el('li', {}, el('a', { href: '#', onclick: async (ev) => {
      ev.preventDefault();
      const r = await api('/api/version?' + q({ chat: current.key, n: v.n }));
      shown.textContent = r.text; shown.hidden = false;
    } }, '#' + v.n), ' ' + when(v.at) + ' — ' + v.source + ' (+' + v.added + ' / −' + v.removed + ')'))), shown);
}

function searchSection() {
  const input = el('input', { id: 'search-q', type: 'search', placeholder: 'Search this chat\'s memory (same search as the search_memory tool)', size: '60' });
  const out = el('ol', { id: 'results', class: 'list' });
  const run = async () => {
    out.replaceChildren();
    try {
      const r = await api('/api/search?' + q({ chat: current.key, q: input.value }));
      if (r.off) out.append(el('li', { class: 'err' }, 'The index is off; only MEMORY.md and the notes are available.'));
      else if (!r.results.length) out.append(el('li', { class: 'muted' }, 'Nothing found.'));
      for (const h of r.results) out.append(el('li', {}, ...(h.lists || []).map((l) => el('span', { class: 'tag' }, l)), el('span', { class: 'muted' }, ' ' + when(h.date) + ' ' + h.kind + (h.speaker ? ' (' + h.speaker + ')' : '') + ' score ' + h.score.toFixed(4) + ' '), el('span', { class: 'hit' }, h.content)));
    } catch (e) { out.append(el('li', { class: 'err' }, e.message)); }
  };
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') run(); });
  return section('Search', 'search', el('div', { class: 'row' }, input, el('button', { id: 'search-go', onclick: run }, 'Search')), el('p', { class: 'muted' }, 'Tags say which signals raised each hit: text (full-text match), date, reply (follows a match), context, entity, vector, feedback, recent, speaker.'), out);
}

function factsSection(facts, index) {
  if (index !== 'on') return section('Facts', 'facts', el('p', { class: 'err' }, 'The index is ' + index + '.'));
  const rows = facts.map((f) => el('tr', {},
    el('td', {}, f.content), el('td', {}, f.confidence.toFixed(2)), el('td', {}, f.retired ? 'retired ' + when(f.retired) : f.confirmed ? 'confirmed' : 'decays ' + f.decayRate + '/day'),
    el('td', {}, when(f.date)),
    el('td', {}, f.retired || f.confirmed ? '' : el('button', { onclick: async (ev) => { await api('/api/fact/confirm', { method: 'POST', body: JSON.stringify({ chat: current.key, id: f.id }) }); ev.target.replaceWith('confirmed'); } }, 'Confirm'))));
  return section('Facts', 'facts', facts.length ? el('table', {}, el('tr', {}, el('th', {}, 'fact'), el('th', {}, 'confidence'), el('th', {}, 'decay'), el('th', {}, 'since'), el('th', {})), ...rows) : el('p', { class: 'muted' }, 'No facts yet.'));
}

function forgetSection() {
  const input = el('input', { id: 'forget-words', placeholder: 'words to forget everywhere in this chat', size: '40' });
  const out = el('p', { id: 'forget-status', class: 'muted' });
  const go = async (confirm) => {
    try {
      const r = await api('/api/forget', { method: 'POST', body: JSON.stringify({ chat: current.key, words: input.value, confirm }) });
      if (r.preview) { out.className = 'muted'; out.textContent = 'Found ' + r.preview.total + ' place(s): ' + JSON.stringify(r.preview.counts) + '. Press Forget to remove them.'; }
      else { out.className = 'ok'; out.textContent = 'Forgotten: ' + r.applied.total + ' place(s) cleaned.'; await openChat(current.key); }
    } catch (e) { out.className = 'err'; out.textContent = e.message; }
  };
  return section('Forget', 'forget', el('div', { class: 'row' }, input, el('button', { onclick: () => go(false) }, 'Preview'), el('button', { id: 'forget-go', onclick: () => go(true) }, 'Forget')), out);
}

const SERIES = [['messages', '#4c78a8'], ['facts', '#f58518'], ['notes', '#54a24b'], ['consolidations', '#e45756'], ['versions', '#b279a2']];
function timelineSvg(days) {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  const W = 760, H = 170, pad = 30;
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H); svg.setAttribute('width', W); svg.setAttribute('height', H); svg.id = 'timeline-svg';
  const add = (tag, a, text) => { const e = document.createElementNS(NS, tag); for (const k in a) e.setAttribute(k, a[k]); if (text != null) e.textContent = text; svg.append(e); return e; };
  if (!days.length) { add('text', { x: 10, y: 20 }, 'Nothing recorded yet.'); return svg; }
  const max = Math.max(1, ...days.map((d) => SERIES.reduce((s, [k]) => s + d[k], 0)));
  const bw = Math.max(4, Math.min(40, (W - pad * 2) / days.length - 4));
  days.forEach((d, i) => {
    let y = H - pad; const x = pad + i * (bw + 4);
    for (const [k, color] of SERIES) {
      const h = (d[k] / max) * (H - pad * 2);
      if (h > 0) { const r = add('rect', { x, y: y - h, width: bw, height: h, fill: color }); const t = document.createElementNS(NS, 'title'); t.textContent = d.day + ': ' + d[k] + ' ' + k; r.append(t); y -= h; }
    }
    if (days.length <= 14 || i % Math.ceil(days.length / 10) === 0) add('text', { x, y: H - 12, 'font-size': 9 }, d.day.slice(5));
  });
  add('text', { x: pad, y: 12, 'font-size': 10 }, 'max ' + max + ' per day');
  SERIES.forEach(([k, color], i) => { add('rect', { x: W - 120, y: 6 + i * 13, width: 9, height: 9, fill: color }); add('text', { x: W - 106, y: 14 + i * 13, 'font-size': 10 }, k); });
  return svg;
}

loadChats().catch((e) => { $('#chats').replaceChildren(el('li', { class: 'err' }, e.message)); });
`;
