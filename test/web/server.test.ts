/**
 * The memory page over HTTP against a real daemon (createApp, real files, real SQLite): the
 * token is required everywhere, edits go through MemoryFiles.update (locked, versioned, a stale
 * edit refused), forged origins and hosts are refused, and no chat parameter reaches a path.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { MEMORY, TOKEN, pageApi, pageDeps, startPageBot } from './helpers.js';
import { PAGE_HTML, PAGE_JS } from '../../src/web/page.js';

const sha = (t: string) => createHash('sha256').update(t).digest('hex');
const auth = { authorization: `Bearer ${TOKEN}` };

test('memory page: no token → 401 for the page and every API; ?token= sets an HttpOnly SameSite cookie that opens them', async () => {
  const t = await startPageBot();
  try {
    for (const p of ['', 'app.js', 'api/chats', 'api/chat?chat=test:1', 'api/search?chat=test:1&q=honey']) {
      assert.equal((await fetch(t.page.url + p)).status, 401, p);
      assert.equal((await fetch(t.page.url + p, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status, 401, p);
    }
    assert.equal((await fetch(`${t.page.url}?token=nope`, { redirect: 'manual' })).status, 401);
    const res = await fetch(`${t.page.url}?token=${TOKEN}`, { redirect: 'manual' });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/', 'the token leaves the address bar');
    const setCookie = res.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /HttpOnly/i);
    assert.match(setCookie, /SameSite=Strict/i);
    const cookie = setCookie.split(';')[0]!;
    const page = await fetch(t.page.url, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    const chats = (await (await fetch(`${t.page.url}api/chats`, { headers: { cookie } })).json()) as {
      chats: Array<{ key: string; bytes: number; lastActivity: string }>;
    };
    assert.deepEqual(chats.chats.map((c) => c.key).sort(), ['test:1', 'test:2']);
    for (const c of chats.chats) assert.ok(c.bytes > 0 && c.lastActivity, JSON.stringify(c));
    assert.equal((await fetch(`${t.page.url}api/chats`, { headers: auth })).status, 200, 'Bearer works too');
  } finally {
    await t.close();
  }
});

test('memory page: a chat shows MEMORY.md, notes, facts, the session; <script> comes back as plain JSON text and the page never uses innerHTML', async () => {
  const t = await startPageBot();
  try {
    const res = await fetch(`${t.page.url}api/chat?chat=test:1`, { headers: auth });
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const d = (await res.json()) as any;
    assert.equal(d.memory.text, MEMORY);
    assert.equal(d.memory.hash, sha(MEMORY));
    assert.match(d.notes[0].text, /Saturday market/);
    assert.ok(
      d.session.some((m: any) => m.content.includes('<script>alert("pwned")</script>')),
      'kept verbatim as data',
    );
    assert.ok(!JSON.stringify(d).includes('zeppelins'), 'nothing of chat two');
    assert.ok(d.timeline.length >= 1 && d.timeline.at(-1).messages >= 2, JSON.stringify(d.timeline));
    // The page is static: no memory text is ever in its HTML, and the script builds nodes with textContent.
    assert.doesNotMatch(PAGE_HTML + PAGE_JS, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    const search = (await (
      await fetch(`${t.page.url}api/search?chat=test:1&q=${encodeURIComponent('where does my honey sell')}`, { headers: auth })
    ).json()) as any;
    assert.match(search.results[0].content, /Saturday market/);
    assert.ok(search.results[0].lists.includes('text'), JSON.stringify(search.results[0]));
  } finally {
    await t.close();
  }
});

test('memory page: a MEMORY.md edit is saved as a version; an edit based on an older text is refused (409) and changes nothing', async () => {
  const t = await startPageBot();
  const api = pageApi(t);
  const put = (text: string, base: string) => api.confirmed('PUT', 'memory', { chat: 'test:1', text, base });
  try {
    const edited = `${MEMORY}- Ada's queen bee is called Beatrix.\n`;
    const ok = await put(edited, sha(MEMORY));
    assert.equal(ok.status, 200);
    assert.equal(await readFile(t.memoryFile, 'utf8'), edited);
    const body = (await ok.json()) as any;
    assert.equal(body.versions[0].source, 'memory page');
    const files = t.bot.app.parts.memory.forChat('test', '1');
    assert.equal(await files.versions.read(body.versions[0].n), edited);
    assert.equal(await files.versions.read(body.versions[1].n), MEMORY, 'the replaced text is kept as the version before');

    // The bot writes in between (through the same locked path): the page's copy is stale now.
    await files.appendMemory('Ada sells candles too.');
    const afterBot = await readFile(t.memoryFile, 'utf8');
    const stale = await put(`${MEMORY}- something else\n`, sha(edited));
    assert.equal(stale.status, 409);
    assert.match(((await stale.json()) as any).error, /changed since you opened it.*Reload/);
    assert.equal(await readFile(t.memoryFile, 'utf8'), afterBot, "the bot's write survives");

    // Two saves from the same loaded text at once, each after its preview: the lock lets exactly one through.
    const previews = await Promise.all(
      ['- one\n', '- two\n'].map(async (text) => ({
        text,
        confirm: ((await (await api.call('PUT', 'memory', { chat: 'test:1', text, base: sha(afterBot) })).json()) as any).confirm,
      })),
    );
    const both = await Promise.all(previews.map(({ text, confirm }) => api.call('PUT', 'memory', { chat: 'test:1', text, base: sha(afterBot), confirm })));
    assert.deepEqual(both.map((r) => r.status).sort(), [200, 409]);
    assert.match(await readFile(t.memoryFile, 'utf8'), /^- (one|two)\n$/);
  } finally {
    await t.close();
  }
});

test('memory page: saving MEMORY.md needs its preview — the preview lists the lines added and removed and writes nothing; a save without it, or with a token for another text, is refused', async () => {
  const t = await startPageBot();
  const api = pageApi(t);
  try {
    const edited = MEMORY.replace('- Ada keeps bees in Lisbon.\n', '- Ada keeps bees in Porto.\n- Ada has 3 hives.\n');
    const res = await api.call('PUT', 'memory', { chat: 'test:1', text: edited, base: sha(MEMORY) });
    assert.equal(res.status, 200);
    const { preview, confirm } = (await res.json()) as any;
    assert.deepEqual(
      preview.lines.filter((l: any) => l.op !== '='),
      [
        { op: '-', text: '- Ada keeps bees in Lisbon.' },
        { op: '+', text: '- Ada keeps bees in Porto.' },
        { op: '+', text: '- Ada has 3 hives.' },
      ],
    );
    assert.deepEqual([preview.added, preview.removed], [2, 1]);
    assert.equal(await readFile(t.memoryFile, 'utf8'), MEMORY, 'a preview writes nothing');

    assert.equal(
      (await api.call('PUT', 'memory', { chat: 'test:1', text: edited, base: sha(MEMORY), confirm: true })).status,
      400,
      'confirm: true is not a preview token',
    );
    const other = await api.call('PUT', 'memory', { chat: 'test:1', text: '- hacked\n', base: sha(MEMORY), confirm });
    assert.equal(other.status, 409, 'the token is for the previewed text only');
    assert.match(((await other.json()) as any).error, /Preview again/);
    assert.equal(await readFile(t.memoryFile, 'utf8'), MEMORY);
    // The token was used up by the refused try: the previewed text needs a new preview too.
    assert.equal((await api.call('PUT', 'memory', { chat: 'test:1', text: edited, base: sha(MEMORY), confirm })).status, 409);
    assert.equal((await api.confirmed('PUT', 'memory', { chat: 'test:1', text: edited, base: sha(MEMORY) })).status, 200);
    assert.equal(await readFile(t.memoryFile, 'utf8'), edited);
    const same = (await (await api.call('PUT', 'memory', { chat: 'test:1', text: edited, base: sha(edited) })).json()) as any;
    assert.deepEqual([same.preview.added, same.preview.removed, same.confirm], [0, 0, null], 'no change, nothing to confirm');
  } finally {
    await t.close();
  }
});

test('memory page: a forged or missing Origin, a foreign Host and a made-up chat are refused, even with the token', async () => {
  const t = await startPageBot();
  const body = JSON.stringify({ chat: 'test:1', text: '- hacked\n', base: sha(MEMORY) });
  const headers = { ...auth, 'content-type': 'application/json' };
  try {
    const forged = await fetch(`${t.page.url}api/memory`, { method: 'PUT', headers: { ...headers, origin: 'http://evil.example' }, body });
    assert.equal(forged.status, 403);
    assert.match(((await forged.json()) as any).error, /did not come from the memory page/);
    assert.equal((await fetch(`${t.page.url}api/memory`, { method: 'PUT', headers, body })).status, 403, 'no Origin at all');
    const forget = await fetch(`${t.page.url}api/forget`, {
      method: 'POST',
      headers: { ...headers, origin: 'http://evil.example' },
      body: JSON.stringify({ chat: 'test:1', words: 'honey', confirm: true }),
    });
    assert.equal(forget.status, 403);
    assert.equal(await readFile(t.memoryFile, 'utf8'), MEMORY, 'nothing changed');

    // DNS rebinding: a page on another name that resolves to 127.0.0.1 does not get in.
    const port = new URL(t.page.url).port;
    const rebound = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/chats', headers: { host: `evil.example:${port}`, authorization: `Bearer ${'x'}` } }, (res) =>
          resolve(res.statusCode ?? 0),
        );
        req.on('error', reject);
        req.end();
      }, reject);
    });
    assert.equal(rebound, 421);

    for (const chat of ['../../etc', 'test:../../sessions', 'test:1/../2', '/etc/passwd', 'test:3']) {
      assert.equal((await fetch(`${t.page.url}api/chat?chat=${encodeURIComponent(chat)}`, { headers: auth })).status, 404, chat);
    }
    const origin = t.page.url.slice(0, -1);
    assert.equal(
      (
        await fetch(`${t.page.url}api/memory`, {
          method: 'PUT',
          headers: { ...headers, origin },
          body: JSON.stringify({ chat: '../test:1', text: 'x', base: sha(MEMORY) }),
        })
      ).status,
      404,
    );
    assert.equal(await readFile(path.join(t.bot.workspace, 'memory', 'test:1', 'MEMORY.md'), 'utf8'), MEMORY);
  } finally {
    await t.close();
  }
});

test("memory page: forget previews (nothing removed), then removes the words through ForgetService only with the preview's token; a fact can be confirmed", async () => {
  const t = await startPageBot();
  const api = pageApi(t);
  const post = (p: string, body: Record<string, unknown>) => api.call('POST', p, body);
  try {
    const preview = (await (await post('forget', { chat: 'test:1', words: 'bees' })).json()) as any;
    assert.equal(preview.preview.counts.memoryEntries, 1);
    assert.equal(typeof preview.confirm, 'string');
    assert.match(await readFile(t.memoryFile, 'utf8'), /bees/, 'a preview changes nothing');

    // A stray click or a script cannot skip the preview.
    assert.equal((await post('forget', { chat: 'test:1', words: 'bees', confirm: true })).status, 400);
    assert.equal((await post('forget', { chat: 'test:1', words: 'Ada', confirm: preview.confirm })).status, 409, 'a token for other words');
    assert.equal((await post('forget', { chat: 'test:1', words: 'bees', confirm: preview.confirm })).status, 409, 'the refused try used the token up');
    assert.match(await readFile(t.memoryFile, 'utf8'), /bees/);

    const again = (await (await post('forget', { chat: 'test:1', words: '  bees ' })).json()) as any;
    assert.equal((await post('forget', { chat: 'test:2', words: 'bees', confirm: again.confirm })).status, 409, 'a token for another chat');
    const fresh = (await (await post('forget', { chat: 'test:1', words: 'bees' })).json()) as any;
    const applied = (await (await post('forget', { chat: 'test:1', words: 'bees', confirm: fresh.confirm })).json()) as any;
    assert.ok(applied.applied.total >= 1);
    assert.doesNotMatch(await readFile(t.memoryFile, 'utf8'), /bees/);
    assert.equal((await post('forget', { chat: 'test:1', words: 'bees', confirm: fresh.confirm })).status, 409, 'used once');
    assert.equal((await post('forget', { chat: 'test:1', words: 'ab' })).status, 400);
    const none = (await (await post('forget', { chat: 'test:1', words: 'zeppelins' })).json()) as any;
    assert.deepEqual([none.preview.total, none.confirm], [0, null], "nothing found, nothing to confirm (chat two's words are not this chat's)");

    const s = t.bot.app.parts;
    const [fact] = s.index.saveFacts([{ content: 'Ada sells honey on Saturdays', scope: 'test:1', sessionId: 'x', sourceIds: [] }]);
    assert.equal((await post('fact/confirm', { chat: 'test:2', id: fact!.id })).status, 404, "another chat's id is not found");
    assert.equal((await post('fact/confirm', { chat: 'test:1', id: fact!.id })).status, 200);
    const d = (await (await fetch(`${t.page.url}api/chat?chat=test:1`, { headers: auth })).json()) as any;
    assert.deepEqual(
      d.facts.map((f: any) => [f.content, f.confirmed]),
      [['Ada sells honey on Saturdays', true]],
    );
  } finally {
    await t.close();
  }
});

test('memory page on 0.0.0.0: Host is still checked — its loopback names and the MEMORY_PAGE_ORIGIN hosts pass, any other name gets 421; the configured origin may make changes', async () => {
  const { startMemoryPage } = await import('../../src/web/server.js');
  const t = await startPageBot();
  const page = await startMemoryPage(pageDeps(t.bot), t.bot.logs.log, { token: TOKEN, host: '0.0.0.0', port: 0, origins: ['https://memory.example.com'] });
  try {
    const port = new URL(page.url).port;
    assert.equal(page.url, `http://127.0.0.1:${port}/`, 'the address printed is one the page answers, not 0.0.0.0');
    assert.equal((await fetch(`${page.url}api/chats`, { headers: auth })).status, 200);
    const at = (host: string, extra: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        // fetch() sets Host from the URL; a raw request sets it as a rebinding page's browser would.
        const req = httpRequest({ host: '127.0.0.1', port, path: '/api/chats', headers: { host, ...auth, ...extra } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    assert.equal(await at(`127.0.0.1:${port}`), 200);
    assert.equal(await at(`localhost:${port}`), 200);
    assert.equal(await at('memory.example.com'), 200, 'the configured origin, behind its TLS proxy');
    assert.equal(await at(`evil.example:${port}`), 421, 'a rebinding name is refused although the page listens on every address');
    assert.equal(await at('memory.example.com:8443'), 421);
    const save = await fetch(`${page.url}api/memory`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json', origin: 'https://memory.example.com' },
      body: JSON.stringify({ chat: 'test:1', text: 'x', base: sha(MEMORY) }),
    });
    assert.notEqual(save.status, 403, 'a change from the configured origin is taken');
  } finally {
    await page.close();
    await t.close();
  }
});

test('MEMORY_PAGE_ORIGIN: addresses are checked at start, kept as origins', async () => {
  const { loadConfig } = await import('../../src/config/env.js');
  const base = { OPENAI_API_KEY: 'sk-x', TZ: 'UTC' };
  assert.deepEqual(loadConfig({ ...base, MEMORY_PAGE_ORIGIN: 'https://memory.example.com, http://10.0.0.5:8790/' }).config.memoryPageOrigins, [
    'https://memory.example.com',
    'http://10.0.0.5:8790',
  ]);
  const bad = loadConfig({ ...base, MEMORY_PAGE_ORIGIN: 'memory.example.com,https://x.example/path' });
  assert.equal(bad.problems.filter((p) => /^MEMORY_PAGE_ORIGIN has/.test(p)).length, 2);
});
