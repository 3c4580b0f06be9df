/**
 * The memory page in a real browser: headless Chromium (Debian's `chromium`, installed by
 * .ci/run when missing) driven by puppeteer-core, against a real daemon. At 1400 px: chats by
 * their names (topics under their group, raw keys only under Details), one tab at a time with
 * the place kept in the address across a reload, search and facts in plain words, MEMORY.md
 * saved only after its preview is confirmed, Forget previewed in plain words and nothing
 * removed before "Forget these". At 390 px (a phone): the list folds behind a button, nothing
 * is wider than the screen. A message and a chat name holding markup stay text.
 * Screenshots: test-artifacts/memory-page{,-phone}.png; MEMORY_PAGE_SCREENSHOT=docs also
 * refreshes docs/memory-page.png and docs/memory-page-phone.png.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { MEMORY, TOKEN, startPageBot, type PageBot } from './helpers.js';
import { patient } from '../helpers/wait.js';
import type { FileSessionStore } from '../../src/sessions/file-store.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const SHOTS = process.env.MEMORY_PAGE_SCREENSHOT === 'docs' ? ['test-artifacts', 'docs'] : ['test-artifacts'];

let t: PageBot | undefined;
let browser: Browser | undefined;
const dialogs: string[] = [];

before(async () => {
  // The browser first: when it cannot start, the test fails at once with the reason (and
  // `after` has no daemon to wait for), instead of leaving servers that keep the run alive.
  if (!CHROMIUM) throw new Error('chromium is not installed: run `apt-get install -y chromium` (.ci/run does it when missing)');
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: patient(20_000),
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  t = await startPageBot();
  const bee = { chat: { kind: 'private', name: 'Ada Lovelace' } } as const;
  await t.bot.send('1', 'my bees are calm today', bee);
  const group = { chatId: '-100777', name: 'Beekeepers of Lisbon' };
  await t.bot.send('-100777', 'hello everyone', { chat: { kind: 'group', name: group.name } });
  await t.bot.send('-100777:5', 'how much honey did we sell in May?', { chat: { kind: 'topic', name: 'Honey sales', group } });
  // Only a topic of this group talks to the bot: the group is a heading with its topic under it.
  await t.bot.send('-100888:3', 'wax prices', { chat: { kind: 'topic', name: 'Wax', group: { chatId: '-100888', name: 'Candle makers' } } });
  await t.bot.app.parts.sessions.flush();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

async function open(width: number, height: number, hash = ''): Promise<Page> {
  const page = await browser!.newPage();
  await page.setViewport({ width, height, deviceScaleFactor: width < 500 ? 2 : 1, isMobile: width < 500, hasTouch: width < 500 });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const res = await page.goto(`${t!.page.url}?token=${TOKEN}${hash}`);
  assert.equal(res?.status(), 200);
  return page;
}

const text = (page: Page, sel: string) => page.$eval(sel, (e: any) => e.innerText as string);
const shown = (page: Page, sel: string) => page.$eval(sel, (e) => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height > 0);
async function tab(page: Page, name: string) {
  await page.click(`.tabs a[data-tab="${name}"]`);
  await page.waitForFunction(`!document.querySelector('#tab-${name}').hidden`);
}
async function shot(page: Page, name: string) {
  for (const dir of SHOTS) {
    await mkdir(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, name) });
  }
}

test('memory page at 1400 px: chats by name with topics under their group, tabs kept in the address, plain words, MEMORY.md and Forget only after their confirm', async () => {
  const s = t!.bot.app.parts;
  for (const back of [1, 2, 4]) {
    s.usage.record(
      { chat: 'test:1', kind: 'consolidation' },
      { promptTokens: 300 * back, cachedTokens: 120 * back, completionTokens: 80 },
      new Date(Date.now() - back * 86_400_000),
    );
    s.usage.record(
      { chat: 'test:1', kind: 'answer' },
      { promptTokens: 500, cachedTokens: 200, completionTokens: 60 },
      new Date(Date.now() - back * 86_400_000),
    );
  }
  const [fact] = s.index.saveFacts([{ content: 'Ada sells honey on Saturdays', scope: 'test:1', sessionId: 'conv_x', sourceIds: [] }]);
  const page = await open(1400, 1000);
  assert.equal(page.url().split('#')[0], t!.page.url, 'the token is gone from the address bar');

  // Names, not keys; the topic under its group; the group no one talks in directly is a heading.
  await page.waitForSelector('#chats .chat[data-key="test:1"]');
  const list = await text(page, '#chats');
  for (const name of ['Ada Lovelace', 'Beekeepers of Lisbon', 'Honey sales', 'Candle makers', 'Wax', '<img src=x onerror=alert(2)> Zeppelin fans'])
    assert.ok(list.includes(name), `${name} in ${list}`);
  assert.doesNotMatch(list, /test:|-100777/, 'no raw ids in the list');
  assert.equal(
    await page.$eval('#chats .chat[data-key="test:-100777:5"]', (b) =>
      b.closest('ul.topics')?.parentElement?.querySelector(':scope > .chat')?.getAttribute('data-key'),
    ),
    'test:-100777',
  );
  assert.equal(
    await page.$eval('#chats .chat[data-key="test:-100888:3"]', (b) => b.closest('ul.topics')?.parentElement?.querySelector(':scope > .chat')?.textContent),
    'CCandle makersGroup',
  );
  assert.equal(await page.$$eval('#chats img', (i) => i.length), 0, 'a name holding markup stays text');

  // The place is in the address: chat and tab come back after a reload.
  await page.click('#chats .chat[data-key="test:1"]');
  await page.waitForFunction("document.querySelector('#chat-name')?.textContent === 'Ada Lovelace'");
  assert.match(await text(page, '#chat-kind'), /^Private chat · last active/);
  assert.doesNotMatch(await text(page, 'main'), /test:1/, 'the key is not shown while Details is closed');
  await page.click('.chat-head details summary');
  assert.match(await text(page, '.chat-head details'), /Chat key\s+test:1/);
  await tab(page, 'memory');
  assert.equal(await shown(page, '#tab-overview'), false, 'one tab at a time');
  assert.match(page.url(), /#chat=test%3A1&tab=memory$/);
  await page.reload();
  await page.waitForSelector('#memory-text');
  await page.waitForFunction("!document.querySelector('#tab-memory').hidden");
  assert.equal(await page.$eval('#memory-text', (e: any) => e.value as string), MEMORY);

  // Saving MEMORY.md: Save shows the change; Cancel writes nothing; Overwrite writes it.
  const edited = `${MEMORY}- Edited in the browser: Ada's hives are on the roof.\n`;
  await page.$eval('#memory-text', (e: any, v) => (e.value = v), edited);
  await page.click('#memory-save');
  await page.waitForSelector('#memory-confirm:not([hidden])');
  assert.equal(await text(page, '#memory-change'), 'Saving will add 1 line in MEMORY.md:');
  assert.match(await text(page, '#memory-diff'), /^\+ - Edited in the browser: Ada's hives are on the roof\.$/m);
  assert.equal(await readFile(t!.memoryFile, 'utf8'), MEMORY, 'nothing written before the confirm');
  await page.click('#memory-cancel');
  assert.equal(await text(page, '#memory-status'), 'Not saved.');
  await page.click('#memory-save');
  await page.waitForSelector('#memory-confirm:not([hidden])');
  await page.click('#memory-overwrite');
  await page.waitForFunction("/Saved as version/.test(document.querySelector('#memory-status')?.textContent ?? '')");
  assert.equal(await readFile(t!.memoryFile, 'utf8'), edited);

  // The hostile message is shown as its characters; nothing of it ran or became an element.
  await tab(page, 'conversation');
  assert.ok((await text(page, '#conversation-list')).includes('<script>alert("pwned")</script><img src=x onerror=alert(1)>'));
  assert.equal(await page.$$eval('script', (x) => x.length), 1, "only the page's own script");
  assert.equal(await page.$$eval('img', (x) => x.length), 0);

  // Correct a fact: the old one is kept as replaced, the typed text becomes the active fact.
  await tab(page, 'facts');
  assert.match(await text(page, `#facts-status ~ ul li[data-id="${fact!.id}"] .meta`), /^sure · fades if it is not used · learnt /);
  await page.click(`li[data-id="${fact!.id}"] .fact-correct`);
  await page.$eval(`li[data-id="${fact!.id}"] .fact-text`, (e: any) => (e.value = ''));
  await page.type(`li[data-id="${fact!.id}"] .fact-text`, 'Ada sells honey on Saturdays and Sundays');
  await page.click(`li[data-id="${fact!.id}"] .fact-save`);
  await page.waitForFunction("/Corrected/.test(document.querySelector('#facts-status')?.textContent ?? '')");
  assert.ok(!(await page.$eval('#tab-facts', (e: any) => e.hidden as boolean)), 'still on the Facts tab after the reload');
  assert.equal(s.index.getFact(fact!.id, 'test:1')?.valid, false);
  const facts = await page.$$eval('#tab-facts li.fact', (li) =>
    li.map((x) => [x.querySelector('.fact-content')?.textContent, x.classList.contains('retired')]),
  );
  assert.deepEqual(facts, [
    ['Ada sells honey on Saturdays and Sundays', false],
    ['Ada sells honey on Saturdays', true],
  ]);
  // The fact's history: the value it replaced with its dates; the replaced one names the value now.
  assert.match(await text(page, '#tab-facts li.fact:not(.retired) .fact-history'), /^Before: Ada sells honey on Saturdays \(from .+ until .+\)$/);
  assert.match(await text(page, `li[data-id="${fact!.id}"] .meta`), /^Replaced by a correction on .+ — now: Ada sells honey on Saturdays and Sundays$/);

  // The token chart: one bar group per day, answers and background stacked, the cached part inside.
  await tab(page, 'tokens');
  const today = s.usage.dayOf();
  const bar = await page.$eval(`#usage-svg g.usage-day[data-day="${today}"]`, (g) => ({
    title: g.querySelector('title')?.textContent ?? '',
    answers: g.querySelectorAll('rect.usage-answers').length,
  }));
  assert.equal(bar.answers, 1, "today's answers are drawn");
  assert.match(bar.title, new RegExp(`^${today}: answers ${(await s.usage.day('test:1')).answers.total.toLocaleString('en-US')},`));
  const twoDaysAgo = s.usage.dayOf(new Date(Date.now() - 2 * 86_400_000));
  assert.equal(
    await page.$$eval(`#usage-svg g.usage-day[data-day="${twoDaysAgo}"] rect`, (r) => r.map((x) => x.getAttribute('class')).join(' ')),
    'usage-answers usage-background usage-cached',
  );
  assert.match(await text(page, '#usage-total'), /% of prompt tokens served from the cache/);

  // Search in plain words; the score and the signal names only under Details.
  await tab(page, 'search');
  await page.type('#search-q', 'where does my honey sell');
  await page.click('#search-go');
  await page.waitForSelector('#results li .hit');
  const first = await text(page, '#results li');
  assert.match(first, /honey.*Saturday/, 'the best hit is one of those that say where the honey sells');
  assert.match(first, /strong match/);
  assert.match(first, /has your words/);
  assert.doesNotMatch(await text(page, '#results'), /\d\.\d{4}|episode|Score/, 'no internal scores or terms while Details is closed');
  await page.click('#results li details summary');
  assert.match(await text(page, '#results li details'), /Score\s+\d+\.\d{4}\s+Signals\s+text/);
  await page.click('#results li details summary');
  await shot(page, 'memory-page.png');

  // Forget: a plain preview, nothing removed until "Forget these".
  const sessionFile = (s.sessions as FileSessionStore).fileFor('test', '1');
  const hits = () => s.index.search('bees', { scope: 'test:1', limit: 10 }).filter((h) => /bees/i.test(h.content)).length;
  await tab(page, 'forget');
  await page.type('#forget-words', 'bees');
  await page.click('#forget-preview');
  await page.waitForSelector('#forget-list');
  const preview = await text(page, '#forget-result');
  assert.match(preview, /^Forgetting “bees” would remove:/);
  assert.match(preview, /1 line of MEMORY\.md/);
  assert.match(preview, /messages of the current conversation/);
  assert.doesNotMatch(preview, /[{}]|memoryEntries/, 'sentences, not JSON');
  await s.sessions.flush();
  assert.match(await readFile(t!.memoryFile, 'utf8'), /bees/, 'nothing removed by the preview');
  assert.match(await readFile(sessionFile, 'utf8'), /my bees are calm/);
  assert.ok(hits() > 0, 'the index still finds them');
  await page.click('#forget-cancel');
  assert.equal(await shown(page, '#forget-result'), false);
  await page.click('#forget-preview');
  await page.waitForSelector('#forget-confirm');
  await page.click('#forget-confirm');
  await page.waitForFunction("/^Forgotten: \\d+ places cleaned\\./.test(document.querySelector('#forget-result')?.textContent ?? '')");
  await s.sessions.flush();
  assert.doesNotMatch(await readFile(t!.memoryFile, 'utf8'), /bees/);
  assert.doesNotMatch(await readFile(sessionFile, 'utf8'), /bees/);
  assert.equal(hits(), 0);
  assert.deepEqual(dialogs, [], 'no script from memory text or a name ran');
  await page.close();
});

test('memory page at 390 px: the chat list folds behind a button, every tab fits the screen, a topic opens from the menu', async () => {
  const page = await open(390, 844, '#chat=test%3A1&tab=overview');
  await page.waitForFunction("document.querySelector('#chat-name')?.textContent === 'Ada Lovelace'");
  assert.equal(await shown(page, '#sidebar'), false, 'the list is folded');
  assert.equal(await shown(page, '#menu'), true);
  assert.equal(await text(page, '#topbar-title'), 'Ada Lovelace');
  const fits = async (where: string) => {
    const w = (await page.evaluate('({ doc: document.documentElement.scrollWidth, body: document.body.scrollWidth })')) as { doc: number; body: number };
    assert.ok(w.doc <= 390 && w.body <= 390, `${where}: ${JSON.stringify(w)} wider than 390 px`);
    const head = await page.$eval('#chat-name', (e) => e.getBoundingClientRect().toJSON());
    assert.ok(head.left >= 0 && head.right <= 390 && head.height > 0, `${where}: the chat's name is on screen`);
  };
  await fits('overview');
  const tabs = await page.$$eval('.tabs a', (a) => a.map((x) => x.getBoundingClientRect().right));
  assert.ok(
    tabs.every((r) => r <= 390),
    `every tab is on screen: ${tabs}`,
  );
  for (const name of ['memory', 'notes', 'facts', 'conversation', 'tokens', 'forget']) {
    await tab(page, name);
    await fits(name);
  }
  await tab(page, 'search');
  await page.type('#search-q', 'honey Saturday market');
  await page.click('#search-go');
  await page.waitForSelector('#results li .hit');
  await page.click('#results li details summary');
  await fits('search results with details open');
  await tab(page, 'memory');
  await page.$eval('#memory-text', (e: any) => (e.value += `- A very long line to see the preview wrap: ${'honeycomb '.repeat(30)}\n`));
  await page.click('#memory-save');
  await page.waitForSelector('#memory-confirm:not([hidden])');
  await fits('MEMORY.md preview');
  await page.click('#memory-cancel');
  await tab(page, 'overview');
  await page.evaluate('window.scrollTo(0, 0)');
  await shot(page, 'memory-page-phone.png');

  await page.click('#menu');
  assert.equal(await shown(page, '#sidebar'), true, 'the menu shows the list');
  assert.ok((await text(page, '#sidebar')).includes('Honey sales'));
  await page.click('#chats .chat[data-key="test:-100777:5"]');
  await page.waitForFunction("document.querySelector('#chat-name')?.textContent === 'Honey sales'");
  assert.equal(await shown(page, '#sidebar'), false, 'choosing a chat folds the list again');
  assert.match(await text(page, '#chat-kind'), /^Topic in Beekeepers of Lisbon · /);
  await fits('topic');
  assert.deepEqual(dialogs, []);
  await page.close();
});
