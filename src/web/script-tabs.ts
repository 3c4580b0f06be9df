/**
 * The memory page's script, part two: one builder per tab. Plain words first — "strong match",
 * "certain", "fades if it is not used" — and the figures behind them (scores, signals,
 * confidence, decay) only inside a "Details" disclosure. Saving MEMORY.md and Forget show what
 * would change and wait for a second button; the server holds them to that (confirm.ts).
 */
export const TABS_JS = String.raw`
const entryLines = (text) => text.split('\n').filter((l) => l.trim() && !/^#/.test(l.trim())).length;
function stat(value, label, tab, id) {
  return el('a', { class: 'stat', href: tabLink(state.key, tab), id }, el('b', {}, value), el('span', {}, label));
}
function overviewTab(d, u) {
  const facts = d.facts.filter((f) => !f.retired);
  const kept = facts.filter((f) => f.confirmed).length;
  const talk = d.session.filter((m) => !m.summary && (m.role === 'user' || m.role === 'assistant')).length;
  const tokens = u.days.reduce((s, x) => s + x.answers + x.background, 0);
  return [
    d.pending && d.pending.length ? pendingCard(d.pending) : null,
    el('div', { class: 'stats' },
      stat(fmt(entryLines(d.memory.text)), 'lines in MEMORY.md', 'memory', 'stat-memory'),
      stat(fmt(facts.length), 'facts learnt' + (kept ? ', ' + fmt(kept) + ' confirmed' : ''), 'facts', 'stat-facts'),
      stat(fmt(talk), 'messages in the current conversation', 'conversation', 'stat-conversation'),
      stat(d.notes.length ? new Date(d.notes[0].date + 'T12:00:00').toLocaleDateString('en-GB', { day: 'numeric', month: 'short' }) : '—', 'newest daily note', 'notes', 'stat-notes'),
      stat(fmt(tokens), 'tokens in the last 30 days', 'tokens', 'stat-tokens')),
    card('Memory per day', 'What the bot kept each day: messages it can search, facts it learnt, note lines, conversation summaries and MEMORY.md edits.', timelineChart(d.timeline)),
    card('People and things mentioned', d.entities.length ? 'Open one to see the newest memories that mention it.' : null,
      d.entities.length ? el('div', { class: 'entities' }, d.entities.map((e) => el('details', {}, el('summary', {}, el('b', {}, e.name), ' ', el('span', { class: 'muted' }, (e.type === 'other' ? '' : e.type + ' · ') + plural(e.links, 'memory', 'memories'))), el('ul', {}, e.memories.map((m) => el('li', {}, m))))))
        : el('p', { class: 'muted' }, 'No names noticed yet.')),
  ];
}

// Memory changes the model made after reading text from outside the bot: applied only when approved here or with /memory approve.
function pendingCard(list) {
  const status = el('p', { id: 'pending-status', class: 'muted', hidden: true });
  const decide = (p, decision) => async () => {
    try {
      const r = await api('/api/pending', { method: 'POST', body: JSON.stringify({ chat: state.key, id: p.id, decision: decision }) });
      await reloadChat();
      say($('#pending-status') || status, 'ok', r.result);
    } catch (e) { say(status, 'err', e.message); }
  };
  return card('Waiting for your approval', 'The bot tried to change its memory after reading text from outside it (a tool\'s output). Nothing is changed until you approve; unapproved changes are dropped after 7 days.', status,
    el('ul', { class: 'list', id: 'pending-list' }, list.map((p) => el('li', { class: 'pending', 'data-id': p.id },
      el('div', {}, el('b', {}, p.tool), ' ', p.what),
      el('div', { class: 'meta' }, 'after ' + p.after.join(', ') + ' · held ' + when(p.heldAt) + ' · dropped ' + when(p.expiresAt)),
      el('div', { class: 'fact-actions' },
        el('button', { class: 'pending-approve small primary', onclick: decide(p, 'approve') }, 'Approve'),
        el('button', { class: 'pending-reject small', onclick: decide(p, 'reject') }, 'Reject'))))));
}

const changeWords = (p) => [p.added ? 'add ' + plural(p.added, 'line') : '', p.removed ? 'remove ' + plural(p.removed, 'line') : ''].filter(Boolean).join(' and ');
function diffView(lines) {
  const box = el('div', { class: 'diff', id: 'memory-diff' });
  const changed = lines.map((l) => l.op !== '=');
  const near = (i) => changed.slice(Math.max(0, i - 2), i + 3).some(Boolean);
  let skipped = 0;
  const fold = () => { if (skipped) box.append(el('div', { class: 'fold' }, '… ' + plural(skipped, 'unchanged line') + ' …')); skipped = 0; };
  lines.forEach((l, i) => {
    if (!near(i)) { skipped++; return; }
    fold();
    box.append(el('div', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : null }, (l.op === '=' ? '  ' : l.op === '+' ? '+ ' : '− ') + l.text));
  });
  fold();
  return box;
}
function memoryTab(d) {
  const ta = el('textarea', { id: 'memory-text', spellcheck: 'false', 'aria-label': 'MEMORY.md' });
  ta.value = d.memory.text;
  const status = el('p', { id: 'memory-status', class: 'muted' }, d.memory.text ? '' : 'MEMORY.md is empty. What you write here, the bot reads in every conversation of this chat.');
  const ask = el('div', { id: 'memory-confirm', hidden: true });
  const done = (ok) => { ask.hidden = true; save.disabled = false; ta.readOnly = false; if (ok === false) say(status, 'muted', 'Not saved.'); };
  const save = el('button', { id: 'memory-save', class: 'primary', onclick: async () => {
    status.textContent = '';
    try {
      const r = await api('/api/memory', { method: 'PUT', body: JSON.stringify({ chat: state.key, text: ta.value, base: state.memoryHash }) });
      if (!r.confirm) return say(status, 'muted', 'Nothing to save: the text is the same as in MEMORY.md.');
      save.disabled = true; ta.readOnly = true;
      say(ask, 'note warn', el('p', { id: 'memory-change' }, 'Saving will ' + changeWords(r.preview) + ' in MEMORY.md:'), diffView(r.preview.lines),
        el('p', { class: 'muted' }, 'The text it replaces is kept as a version: /memory undo in the chat takes the save back.'),
        el('div', { class: 'row' }, el('button', { id: 'memory-overwrite', class: 'danger', onclick: async () => {
          try {
            const m = await api('/api/memory', { method: 'PUT', body: JSON.stringify({ chat: state.key, text: ta.value, base: state.memoryHash, confirm: r.confirm }) });
            state.memoryHash = m.hash; ta.value = m.text; done();
            say(status, 'ok', 'Saved as version ' + (m.versions[0] ? m.versions[0].n : '?') + '.');
            $('#versions').replaceWith(versionsList(m.versions));
          } catch (e) { done(); say(status, 'err', e.message); }
        } }, 'Overwrite MEMORY.md'), el('button', { id: 'memory-cancel', onclick: () => done(false) }, 'Cancel')));
    } catch (e) { say(status, 'err', e.message); }
  } }, 'Save…');
  return [
    card('MEMORY.md', 'What the bot keeps about this chat for good; it reads it at the start of every answer. Edit it like any text.', ta, el('div', { class: 'row' }, save, status), ask),
    card('Versions', 'Every change to MEMORY.md, newest first. Open one to read it as it was.', versionsList(d.memory.versions)),
  ];
}
const SOURCES = { 'memory page': 'edited on this page', 'before versioning': 'as it was before versions were kept' };
function versionsList(list) {
  const shown = el('pre', { id: 'version-text', hidden: true });
  if (!list.length) return el('div', { id: 'versions' }, el('p', { class: 'muted' }, 'No versions yet.'));
  return el('div', { id: 'versions', class: 'versions' }, el('ul', { class: 'list' }, list.slice(0, 20).map((v) => el('li', {},
    el('a', { href: '#', onclick: async (ev) => {
      ev.preventDefault();
      const r = await api('/api/version?' + q({ chat: state.key, n: v.n }));
      shown.textContent = r.text; shown.hidden = false;
    } }, 'Version ' + v.n), ' · ' + when(v.at) + ' · ' + (SOURCES[v.source] || v.source) + ' · ' + [v.added ? plural(v.added, 'line') + ' added' : '', v.removed ? plural(v.removed, 'line') + ' removed' : ''].filter(Boolean).join(', ')))), shown);
}

function notesTab(d) {
  return [
    card('Daily notes', 'One short line per exchange, a file per day (the newest 7).', d.notes.length ? d.notes.map((n) => el('div', {}, el('b', {}, day(n.date)), el('pre', {}, n.text))) : el('p', { class: 'muted' }, 'No notes yet.')),
    card('Summaries of past conversations', 'Written when the bot tidies a conversation into MEMORY.md.', d.history.length ? d.history.map((h) => el('div', {}, el('b', {}, h.at), el('pre', {}, h.text))) : el('p', { class: 'muted' }, 'None yet.')),
  ];
}

const certainty = (c) => c >= 0.9 ? 'sure' : c >= 0.7 ? 'fairly sure' : 'not sure';
function factsTab(d) {
  if (d.index !== 'on') return card('Facts', null, el('p', { class: 'err' }, 'The memory index is ' + d.index + ': facts cannot be shown now.'));
  const status = el('p', { id: 'facts-status', class: 'muted', hidden: true });
  const items = d.facts.map((f) => el('li', { class: 'fact' + (f.retired ? ' retired' : ''), 'data-id': f.id },
    el('div', { class: 'fact-content' }, f.content),
    el('div', { class: 'meta' }, f.retired ? (f.replacedBy ? 'Replaced by a correction on ' + when(f.retired) + ' — now: ' + f.replacedBy.content : 'No longer used since ' + when(f.retired)) : certainty(f.confidence) + ' · ' + (f.confirmed ? 'confirmed: kept for good' : 'fades if it is not used') + ' · learnt ' + when(f.date)),
    f.history && f.history.length ? el('ul', { class: 'fact-history meta' }, f.history.map((h) => el('li', {}, 'Before: ' + h.content + ' (from ' + when(h.date) + ' until ' + when(h.corrected) + ')'))) : null,
    more('Details', kv([['Confidence', f.confidence.toFixed(2)], ['Fades by', f.decayRate + ' a day'], ['Last used', when(f.lastAccessed)], ['Id', el('code', {}, f.id)]])),
    f.retired ? null : factActions(f, status)));
  return card('Facts', 'Short statements the bot learnt from the conversation. Confirm one that is right (it never fades), correct one that is wrong.', status, items.length ? el('ul', { class: 'list' }, items) : el('p', { class: 'muted' }, 'No facts yet.'));
}
// Confirm (never fades) or correct (the old fact is retired, the typed text replaces it).
function factActions(f, status) {
  const box = el('div', { class: 'fact-actions' });
  const confirm = f.confirmed ? null : el('button', { class: 'fact-confirm small', onclick: async () => {
    try { await api('/api/fact/confirm', { method: 'POST', body: JSON.stringify({ chat: state.key, id: f.id }) }); confirm.replaceWith(el('span', { class: 'ok' }, 'Confirmed: kept for good.')); } catch (e) { say(status, 'err', e.message); }
  } }, 'Confirm');
  const correct = el('button', { class: 'fact-correct small', onclick: () => {
    const input = el('input', { class: 'fact-text', type: 'text', 'aria-label': 'The right fact' });
    input.value = f.content;
    box.replaceChildren(el('div', { class: 'row', style: 'width:100%' }, input, el('button', { class: 'fact-save small primary', onclick: async () => {
      try {
        await api('/api/fact/correct', { method: 'POST', body: JSON.stringify({ chat: state.key, id: f.id, content: input.value }) });
        await reloadChat();
        say($('#facts-status'), 'ok', 'Corrected: the old fact is kept as replaced, the new one is used from now on.');
      } catch (e) { say(status, 'err', e.message); }
    } }, 'Save'), el('button', { class: 'small', onclick: () => box.replaceWith(factActions(f, status)) }, 'Cancel')));
    input.focus();
  } }, 'Correct');
  box.append(...[confirm, correct].filter(Boolean));
  return box;
}

const WHY = { text: 'has your words', date: 'from the day you named', reply: 'a reply to a match', context: 'said next to a match', entity: 'names the same person or thing', vector: 'close in meaning', feedback: 'close to the best matches', recent: 'recent', answer: 'answers a matching question', speaker: 'said by the person you named' };
function hitWho(h) {
  if (h.kind === 'fact') return 'A fact';
  if (h.kind === 'reflection') return 'A weekly insight';
  return h.role === 'assistant' ? 'The bot said' : (h.speaker ? h.speaker + ' said' : 'A message');
}
function searchTab() {
  const input = el('input', { id: 'search-q', type: 'search', placeholder: 'What are you looking for?', 'aria-label': 'Search this chat\'s memory' });
  const out = el('ol', { id: 'results', class: 'list' });
  const run = async () => {
    out.replaceChildren();
    try {
      const r = await api('/api/search?' + q({ chat: state.key, q: input.value }));
      if (r.off) out.append(el('li', { class: 'err' }, 'The memory index is off: only MEMORY.md and the notes can be read now.'));
      else if (!r.results.length) out.append(el('li', { class: 'muted' }, 'Nothing found. Try other words.'));
      const best = r.results.length ? r.results[0].score : 1;
      for (const h of r.results) {
        const share = best > 0 ? h.score / best : 0;
        const [level, cls] = share >= 0.66 ? ['strong match', 'strong'] : share >= 0.33 ? ['good match', 'good'] : ['weak match', 'weak'];
        const why = (h.lists || []).map((l) => WHY[l]).filter(Boolean).slice(0, 2);
        out.append(el('li', { class: 'result' }, el('div', { class: 'hit' }, h.content),
          el('div', { class: 'meta' }, el('span', { class: 'pill ' + cls, title: 'how well it matched' }, level), hitWho(h) + ' · ' + when(h.date) + (why.length ? ' · ' + why.join(', ') : '')),
          h.correctedBy ? el('div', { class: 'meta later' }, 'Later corrected (' + when(h.correctedBy.date) + '): ' + h.correctedBy.content) : null,
          more('Details', kv([['Score', h.score.toFixed(4)], ['Signals', (h.lists || []).join(', ') || '—'], ['Kind', h.kind], ['Id', el('code', {}, h.id)]]))));
      }
    } catch (e) { out.append(el('li', { class: 'err' }, e.message)); }
  };
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') run(); });
  return card('Search', 'Looks through this chat\'s memory the way the bot does when it searches: messages, facts and insights, best first.', el('div', { class: 'row' }, input, el('button', { id: 'search-go', class: 'primary', onclick: run }, 'Search')), out);
}

function conversationTab(d) {
  const who = (m) => m.summary ? 'Summary of the earlier conversation' : m.role === 'assistant' ? 'membot' : m.role === 'user' ? (m.sender || 'User') : m.role === 'tool' ? 'Tool result' : 'System note';
  const items = d.session.map((m) => {
    const head = el('div', {}, el('span', { class: 'who' }, who(m)), ' ', el('span', { class: 'meta' }, when(m.timestamp)));
    const body = m.summary ? m.content.replace(/^\[Conversation summary\]\n?/, '') : m.content;
    if (!m.summary && (m.role === 'tool' || m.role === 'system')) return el('li', { class: 'msg' }, more(who(m) + ' · ' + when(m.timestamp), el('pre', {}, body)));
    return el('li', { class: 'msg' + (m.role === 'assistant' ? ' bot' : '') + (m.summary ? ' summary' : '') }, head, el('div', { class: 'body' }, body));
  });
  return card('Conversation', 'The current conversation as the bot sees it (since the last /new). Older parts are kept as a summary.', items.length ? el('ul', { class: 'list', id: 'conversation-list' }, items) : el('p', { class: 'muted', id: 'conversation-list' }, 'The conversation is empty.'));
}

function tokensTab(d, u) {
  const sum = (k) => u.days.reduce((s, x) => s + x[k], 0);
  const prompt = sum('promptTokens'), cached = sum('cachedTokens'), total = sum('answers') + sum('background');
  const line = total === 0 ? 'No tokens recorded for this chat from ' + day(u.since) + ' to ' + day(u.until) + '.'
    : fmt(total) + ' tokens from ' + day(u.since) + ' to ' + day(u.until) + ': ' + fmt(sum('answers')) + ' for answers, ' + fmt(sum('background')) + ' for background work (summaries, tidying memory, facts). '
      + (cached > 0 ? (cached / prompt * 100).toFixed(1) + '% of prompt tokens served from the cache.' : 'The LLM server reported no cached tokens.');
  return card('Tokens per day', 'What this chat cost in the last 30 days. Point at a bar for its figures.', usageChart(u.days, cached > 0), el('p', { id: 'usage-total', class: 'muted' }, line));
}

const FORGET_WORDS = [['memoryEntries', 'line of MEMORY.md', 'lines of MEMORY.md'], ['facts', 'fact'], ['indexedMessages', 'remembered message (what search finds)', 'remembered messages (what search finds)'], ['sessionMessages', 'message of the current conversation', 'messages of the current conversation'], ['noteLines', 'line of the daily notes', 'lines of the daily notes'], ['historyLines', 'line of the conversation summaries', 'lines of the conversation summaries'], ['reminders', 'pending reminder'], ['pendingWrites', 'memory change held for approval', 'memory changes held for approval']];
function forgetTab() {
  const input = el('input', { id: 'forget-words', type: 'text', placeholder: 'Words to forget, e.g. a name or a phone number', 'aria-label': 'Words to forget' });
  const out = el('div', { id: 'forget-result', hidden: true });
  // A preview stands for the words it was made for: typing or Cancel takes it (and its button) away.
  const drop = () => { out.hidden = true; out.replaceChildren(); };
  input.addEventListener('input', drop);
  const preview = async () => {
    const words = input.value;
    try {
      const r = await api('/api/forget', { method: 'POST', body: JSON.stringify({ chat: state.key, words }) });
      const found = FORGET_WORDS.filter(([k]) => r.preview.counts[k] > 0).map(([k, one, many]) => el('li', {}, plural(r.preview.counts[k], one, many)));
      if (!r.confirm) return say(out, 'note good', 'Nothing in this chat\'s memory contains “' + words.trim() + '”. Nothing to forget.');
      say(out, 'note danger', el('p', {}, 'Forgetting “' + words.trim() + '” would remove:'), el('ul', { id: 'forget-list' }, found),
        el('p', { class: 'muted' }, 'In notes and summaries only the words become [forgotten]; the rest of the line stays. This cannot be undone.'),
        el('div', { class: 'row' }, el('button', { id: 'forget-confirm', class: 'danger', onclick: async () => {
          try {
            const a = await api('/api/forget', { method: 'POST', body: JSON.stringify({ chat: state.key, words, confirm: r.confirm }) });
            await reloadChat();
            say($('#forget-result'), 'note good', 'Forgotten: ' + plural(a.applied.total, 'place') + ' cleaned.' + (a.applied.indexOff ? ' The memory index was off, so search may still find them until it is back: forget them again then.' : ''));
          } catch (e) { say(out, 'note danger', e.message); }
        } }, 'Forget these'), el('button', { id: 'forget-cancel', onclick: drop }, 'Cancel')));
    } catch (e) { say(out, 'note danger', e.message); }
  };
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') preview(); });
  return card('Forget', 'Removes everything in this chat\'s memory that contains the words: MEMORY.md lines, facts, remembered messages, notes, the conversation and reminders. You see what would go before anything is removed.',
    el('div', { class: 'row' }, input, el('button', { id: 'forget-preview', class: 'primary', onclick: preview }, 'Preview')), out);
}

const PANELS = { overview: overviewTab, memory: memoryTab, notes: notesTab, facts: factsTab, search: searchTab, conversation: conversationTab, tokens: tokensTab, forget: forgetTab };
`;
