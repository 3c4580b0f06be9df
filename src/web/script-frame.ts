/**
 * The memory page's script, part one: helpers, the chat list (topics nested under their group),
 * the chat's header and tab bar, and the address in the URL hash (`#chat=…&tab=…`), so a reload
 * or a shared link opens the same chat and tab. Tab contents are in script-tabs.ts. Plain
 * JavaScript in a String.raw: no template literals inside (they would be this file's).
 */
export const FRAME_JS = String.raw`'use strict';
const TABS = [['overview', 'Overview'], ['memory', 'MEMORY.md'], ['notes', 'Notes'], ['facts', 'Facts'], ['search', 'Search'], ['conversation', 'Conversation'], ['tokens', 'Tokens'], ['forget', 'Forget']];
const KIND = { private: 'Private chat', group: 'Group', topic: 'Topic', chat: 'Chat' };
const state = { chats: [], key: null, tab: 'overview', chat: null, memoryHash: null };
const $ = (sel) => document.querySelector(sel);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat(Infinity)) if (k != null && k !== false) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
async function api(path, opts) {
  const res = await fetch(path, Object.assign({ credentials: 'same-origin', headers: { 'content-type': 'application/json' } }, opts || {}));
  const body = await res.json().catch(() => ({ error: 'The daemon answered something that is not JSON (status ' + res.status + ').' }));
  if (!res.ok) throw new Error(body.error || ('HTTP ' + res.status));
  return body;
}
const q = (o) => new URLSearchParams(o).toString();
const fmt = (n) => n.toLocaleString('en-US');
const size = (b) => b < 1024 ? b + ' B' : b < 1048576 ? (b / 1024).toFixed(1) + ' KB' : (b / 1048576).toFixed(1) + ' MB';
const plural = (n, one, many) => fmt(n) + ' ' + (n === 1 ? one : (many || one + 's'));
const when = (iso) => iso ? new Date(iso).toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' }) : '—';
const day = (iso) => iso ? new Date(iso.length === 10 ? iso + 'T12:00:00' : iso).toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }) : '—';
function ago(iso) {
  if (!iso) return 'no activity yet';
  const min = (Date.now() - new Date(iso).getTime()) / 60000;
  if (min < 1) return 'just now';
  if (min < 60) return Math.round(min) + ' min ago';
  if (min < 48 * 60) return Math.round(min / 60) + ' h ago';
  if (min < 30 * 1440) return Math.round(min / 1440) + ' days ago';
  return day(iso);
}
function colour(s) { let h = 7; for (const c of s) h = (h * 31 + c.codePointAt(0)) >>> 0; return 'c' + (h % 6); }
const initial = (name) => ([...name.trim()][0] || '?').toUpperCase();
const tabLink = (key, tab) => '#' + q({ chat: key, tab: tab });
function card(title, lead, ...kids) { return el('div', { class: 'card' }, el('h2', {}, title), lead ? el('p', { class: 'lead' }, lead) : null, ...kids); }
function more(label, ...kids) { return el('details', { class: 'more' }, el('summary', {}, label), ...kids); }
function kv(pairs) { return el('dl', { class: 'kv' }, pairs.filter(Boolean).map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])); }
function say(node, cls, ...kids) { node.className = cls; node.hidden = false; node.replaceChildren(...kids.flat()); }

// Groups with their topics under them, most recently active first; a group that has no
// conversation of its own (only its topics talk to the bot) is a heading.
function tree(chats) {
  const byKey = new Map(chats.map((c) => [c.key, c]));
  const nodes = new Map();
  for (const c of chats) {
    const k = c.kind === 'topic' && c.parent ? c.parent.key : c.key;
    let n = nodes.get(k);
    if (!n) nodes.set(k, n = { head: byKey.get(k) || { key: k, name: c.parent.name, named: c.parent.named, kind: 'group', header: true }, topics: [] });
    if (k !== c.key) n.topics.push(c);
  }
  return [...nodes.values()];
}
function chatButton(c, topic) {
  const meta = c.header ? 'Group' : (topic ? 'Topic' : KIND[c.kind]) + ' · ' + ago(c.lastActivity);
  return el(c.header ? 'div' : 'button', { class: 'chat' + (c.header ? ' header' : '') + (c.named ? '' : ' unnamed'), 'data-key': c.key, title: c.name, onclick: c.header ? null : () => (c.key === state.key ? setMenu(false) : go(c.key, state.tab)) },
    el('span', { class: 'avatar ' + (topic ? 'topic ' : '') + colour(c.key), 'aria-hidden': 'true' }, topic ? '#' : initial(c.name)),
    el('span', { class: 'chat-text' }, el('span', { class: 'chat-name' }, c.name), el('span', { class: 'chat-meta' }, meta)));
}
function renderList() {
  const ul = $('#chats');
  ul.replaceChildren();
  if (!state.chats.length) ul.append(el('li', { class: 'muted' }, 'No chats yet: once someone talks to the bot, the chat shows here.'));
  for (const n of tree(state.chats)) {
    ul.append(el('li', {}, chatButton(n.head, false), n.topics.length ? el('ul', { class: 'topics' }, n.topics.map((t) => el('li', {}, chatButton(t, true)))) : null));
  }
  markChosen();
}
function markChosen() { for (const b of document.querySelectorAll('#chats .chat')) b.classList.toggle('on', b.dataset.key === state.key); }
function go(key, tab) { location.hash = q({ chat: key, tab: tab || 'overview' }); }
function setMenu(open) { document.body.classList.toggle('menu-open', open); $('#menu').setAttribute('aria-expanded', String(open)); }

function chatHead(c, d) {
  const kind = c.kind === 'topic' && c.parent ? 'Topic in ' + c.parent.name : KIND[c.kind];
  return el('header', { class: 'chat-head' },
    el('span', { class: 'avatar big ' + colour(c.key), 'aria-hidden': 'true' }, c.kind === 'topic' ? '#' : initial(c.name)),
    el('div', {},
      el('h1', { id: 'chat-name', class: c.named ? null : 'unnamed' }, c.name),
      el('p', { class: 'sub', id: 'chat-kind' }, kind + ' · last active ' + ago(c.lastActivity)),
      more('Details', kv([
        ['Chat key', el('code', { id: 'chat-key' }, c.key)],
        !c.named && ['Name', 'none seen yet: the channel gives it with the next message'],
        ['On disk', size(c.bytes) + ' (conversation file and memory folder)'],
        ['Last change', when(c.lastActivity)],
        ['Memory index', d.index],
      ]))));
}

// Every tab is built once per visit of a chat and shown or hidden, so an edit in progress or a
// search's results stay while the owner looks at another tab.
async function openChat(key) {
  const [d, usage] = await Promise.all([api('/api/chat?' + q({ chat: key })), api('/api/usage?' + q({ chat: key }))]);
  state.key = key; state.chat = d.chat; state.memoryHash = d.memory.hash;
  const tabs = el('nav', { class: 'tabs', role: 'tablist', 'aria-label': 'Sections' }, TABS.map(([t, label]) => el('a', { role: 'tab', href: tabLink(key, t), 'data-tab': t, id: 'tab-link-' + t }, label)));
  const panels = TABS.map(([t]) => el('section', { id: 'tab-' + t, role: 'tabpanel', 'aria-labelledby': 'tab-link-' + t, hidden: true }, PANELS[t](d, usage)));
  $('#main').replaceChildren(chatHead(d.chat, d), tabs, ...panels);
  $('#topbar-title').textContent = d.chat.name;
  document.title = d.chat.name + ' — membot memory';
  markChosen();
}
function showTab(tab) {
  state.tab = tab;
  for (const [t] of TABS) {
    const p = $('#tab-' + t);
    if (p) p.hidden = t !== tab;
    const a = $('#tab-link-' + t);
    if (a) a.setAttribute('aria-selected', String(t === tab));
  }
}
/** After a change (forget, a corrected fact): the chat read again, the same tab shown. */
async function reloadChat() {
  await openChat(state.key);
  showTab(state.tab);
  loadChats().catch(() => undefined);
}
async function route() {
  const p = new URLSearchParams(location.hash.slice(1));
  const key = p.get('chat');
  const tab = TABS.some(([t]) => t === p.get('tab')) ? p.get('tab') : 'overview';
  setMenu(false);
  if (!key) return;
  try {
    if (key !== state.key) await openChat(key);
    showTab(tab);
  } catch (e) {
    state.key = null;
    $('#main').replaceChildren(el('p', { class: 'empty err' }, e.message === 'No such chat.' ? 'That chat is not here any more (purged, or the link is from another workspace). Pick one on the left.' : e.message));
  }
}
async function loadChats() {
  state.chats = (await api('/api/chats')).chats;
  renderList();
}
`;
