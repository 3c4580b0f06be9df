/**
 * The memory page's script, part three: the two bar charts (memory per day, tokens per day) as
 * SVG drawn to the width of the page, with their legend in HTML below so it stays readable on a
 * phone; and the start (chat list, then the chat and tab the address names). Numbers and dates
 * reach the SVG as text nodes only.
 */
export const CHARTS_JS = String.raw`
const NS = 'http://www.w3.org/2000/svg';
function chartFrame(id, H) {
  const W = Math.max(300, Math.min(820, ($('#main').clientWidth || 800) - 80));
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H); svg.setAttribute('role', 'img'); svg.id = id;
  const add = (tag, a, text, parent) => { const e = document.createElementNS(NS, tag); for (const k in a) e.setAttribute(k, a[k]); if (text != null) e.textContent = text; (parent || svg).append(e); return e; };
  return { svg, add, W };
}
const legend = (series) => el('div', { class: 'legend' }, series.map(([label, color]) => el('span', {}, el('i', { style: 'background:' + color }), label)));

const SERIES = [['messages', '#4f46e5', 'messages remembered'], ['facts', '#f59e0b', 'facts learnt'], ['notes', '#10b981', 'note lines'], ['consolidations', '#ef4444', 'summaries'], ['versions', '#a855f7', 'MEMORY.md edits']];
function timelineChart(days) {
  const H = 190, bottom = 24, top = 16;
  const { svg, add, W } = chartFrame('timeline-svg', H);
  if (!days.length) { add('text', { x: 0, y: 24, 'font-size': 13, fill: '#667085' }, 'Nothing kept yet.'); return el('div', { class: 'chart' }, svg); }
  const max = Math.max(1, ...days.map((d) => SERIES.reduce((s, [k]) => s + d[k], 0)));
  const step = (W - 40) / Math.max(days.length, 7);
  const bw = Math.max(4, Math.min(34, step - 6));
  add('text', { x: 0, y: top - 4, 'font-size': 11, fill: '#667085' }, 'up to ' + fmt(max) + ' a day');
  add('line', { x1: 0, y1: H - bottom + 0.5, x2: W, y2: H - bottom + 0.5, stroke: '#e2e5ee' });
  days.forEach((d, i) => {
    let y = H - bottom; const x = 20 + i * step;
    const g = add('g', { class: 'timeline-day', 'data-day': d.day });
    add('title', {}, day(d.day) + ': ' + SERIES.map(([k, , label]) => d[k] + ' ' + label).join(', '), g);
    for (const [k, color] of SERIES) {
      const h = (d[k] / max) * (H - bottom - top);
      if (h > 0) { add('rect', { x, y: y - h, width: bw, height: h, fill: color, rx: 2 }, null, g); y -= h; }
    }
    if (days.length <= 10 || i % Math.ceil(days.length / 8) === 0) add('text', { x, y: H - 7, 'font-size': 11, fill: '#667085' }, d.day.slice(5));
  });
  return el('div', { class: 'chart' }, svg, legend(SERIES.map(([, c, label]) => [label, c])));
}

// Tokens per day: answers and background work stacked; the cached part of the prompt drawn inside each bar.
const USAGE = [['answers', '#4f46e5'], ['background', '#f59e0b']];
function usageChart(days, withCache) {
  const H = 200, bottom = 24, top = 14, left = 52;
  const { svg, add, W } = chartFrame('usage-svg', H);
  const max = Math.max(1, ...days.map((d) => d.answers + d.background));
  const step = (W - left) / Math.max(1, days.length);
  const bw = Math.max(3, step - 3);
  add('line', { x1: left - 4, y1: H - bottom + 0.5, x2: W, y2: H - bottom + 0.5, stroke: '#e2e5ee' });
  add('text', { x: left - 8, y: top + 4, 'font-size': 11, 'text-anchor': 'end', fill: '#667085' }, fmt(max));
  add('text', { x: left - 8, y: H - bottom, 'font-size': 11, 'text-anchor': 'end', fill: '#667085' }, '0');
  days.forEach((d, i) => {
    const x = left + i * step;
    const g = add('g', { class: 'usage-day', 'data-day': d.day });
    add('title', {}, d.day + ': answers ' + fmt(d.answers) + ', background ' + fmt(d.background) + ' tokens in ' + d.calls + ' calls'
      + (d.promptTokens ? '; ' + (d.cachedTokens / d.promptTokens * 100).toFixed(1) + '% of the prompt cached' : ''), g);
    let y = H - bottom;
    for (const [k, color] of USAGE) {
      const h = (d[k] / max) * (H - bottom - top);
      if (h > 0) { add('rect', { x, y: y - h, width: bw, height: h, fill: color, class: 'usage-' + k }, null, g); y -= h; }
    }
    const ch = (d.cachedTokens / max) * (H - bottom - top);
    if (ch > 0) add('rect', { x: x + bw / 4, y: H - bottom - ch, width: bw / 2, height: ch, fill: '#1c2130', 'fill-opacity': 0.4, class: 'usage-cached' }, null, g);
    const last = i === days.length - 1;
    if (i % (W < 500 ? 10 : 5) === 0 || last) add('text', { x: last ? x + bw : x, y: H - 7, 'font-size': 11, fill: '#667085', 'text-anchor': last ? 'end' : 'start' }, d.day.slice(5));
  });
  return el('div', { class: 'chart' }, svg, legend([['answers', USAGE[0][1]], ['background work', USAGE[1][1]]].concat(withCache ? [['part of the prompt served from cache', '#8e929a']] : [])));
}

$('#menu').addEventListener('click', () => setMenu(!document.body.classList.contains('menu-open')));
window.addEventListener('hashchange', route);
loadChats().then(() => {
  // No address yet: the most recent chat (the list is one tap away on a phone).
  if (!location.hash && state.chats.length) return go(state.chats[0].key, 'overview');
  if (!state.chats.length) $('#main').replaceChildren(el('p', { class: 'empty' }, 'No chats yet: once someone talks to the bot, what it remembers shows here.'));
  return route();
}).catch((e) => { $('#chats').replaceChildren(el('li', { class: 'err' }, e.message)); });
`;
