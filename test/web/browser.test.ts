/**
 * The memory page in a real browser: headless Chromium (Debian's `chromium`, installed by
 * .ci/run when missing) driven by puppeteer-core. Opens the page with the token, reads a chat's
 * MEMORY.md, runs a search, sees the token chart, corrects a fact, saves an edit and checks the
 * file on disk; a message holding `<script>` must show as text and run nothing. Screenshot: test-artifacts/memory-page.png
 * (MEMORY_PAGE_SCREENSHOT=docs also refreshes the README's docs/memory-page.png).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import puppeteer from 'puppeteer-core';
import { MEMORY, TOKEN, startPageBot } from './helpers.js';

function chromiumPath(): string {
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('chromium is not installed: run `apt-get install -y chromium` (.ci/run does it when missing)');
  }
}

test('memory page in Chromium: the token opens it, MEMORY.md, a search hit and the token chart show, a fact is corrected, an edit reaches the file, <script> stays text', async () => {
  const t = await startPageBot();
  // A few days of background work with a prompt cache, so the chart has more than today's answers.
  const s = t.bot.app.services;
  for (const back of [1, 2, 4]) {
    s.usage.record({ chat: 'test:1', kind: 'consolidation' }, { promptTokens: 300 * back, cachedTokens: 120 * back, completionTokens: 80 }, new Date(Date.now() - back * 86_400_000));
    s.usage.record({ chat: 'test:1', kind: 'answer' }, { promptTokens: 500, cachedTokens: 200, completionTokens: 60 }, new Date(Date.now() - back * 86_400_000));
  }
  const [fact] = s.index.saveFacts([{ content: 'Ada sells honey on Saturdays', scope: 'test:1', sessionId: 'conv_x', sourceIds: [] }]);
  const browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const res = await page.goto(`${t.page.url}?token=${TOKEN}`);
    assert.equal(res?.status(), 200);
    assert.equal(page.url(), t.page.url, 'the token is gone from the address bar');

    await page.waitForSelector('#chats button[data-key="test:1"]');
    await page.click('#chats button[data-key="test:1"]');
    await page.waitForSelector('#memory-text');
    assert.equal(await page.$eval('#memory-text', (e: any) => e.value as string), MEMORY);

    // The hostile message is shown as its characters; nothing of it ran or became an element.
    const session = await page.$eval('#session', (e) => e.textContent ?? '');
    assert.ok(session.includes('<script>alert("pwned")</script><img src=x onerror=alert(1)>'), session);
    assert.equal(await page.$$eval('script', (s) => s.length), 1, 'only the page\'s own script');
    assert.equal(await page.$$eval('img', (s) => s.length), 0);

    await page.type('#search-q', 'where does my honey sell');
    await page.click('#search-go');
    await page.waitForSelector('#results li .hit');
    const first = await page.$eval('#results li', (e) => e.textContent ?? '');
    assert.match(first, /honey.*Saturday/, 'the best hit is one of the two that say where the honey sells');
    assert.match(first, /^text/, 'tagged with the list that found it');

    await page.waitForSelector('#timeline-svg rect');

    // The token chart: one bar group per day, answers and background stacked, the cached part inside.
    const today = s.usage.dayOf();
    const bar = await page.$eval(`#usage-svg g.usage-day[data-day="${today}"]`, (g) => ({ title: g.querySelector('title')?.textContent ?? '', answers: g.querySelectorAll('rect.usage-answers').length }));
    assert.equal(bar.answers, 1, 'today\'s answers are drawn');
    assert.match(bar.title, new RegExp(`^${today}: answers ${s.usage.day('test:1').answers.total.toLocaleString('en-US')},`));
    const twoDaysAgo = s.usage.dayOf(new Date(Date.now() - 2 * 86_400_000));
    assert.equal(await page.$$eval(`#usage-svg g.usage-day[data-day="${twoDaysAgo}"] rect`, (r) => r.map((x) => x.getAttribute('class')).join(' ')), 'usage-answers usage-background usage-cached');
    assert.match(await page.$eval('#usage-total', (e) => e.textContent ?? ''), /% of prompt tokens served from the cache/);

    // Correct a fact: the old one is retired, the typed text becomes the active fact.
    await page.click(`#facts tr[data-id="${fact!.id}"] .fact-correct`);
    await page.$eval(`#facts tr[data-id="${fact!.id}"] .fact-text`, (e: any) => (e.value = ''));
    await page.type(`#facts tr[data-id="${fact!.id}"] .fact-text`, 'Ada sells honey on Saturdays and Sundays');
    await page.click(`#facts tr[data-id="${fact!.id}"] .fact-save`);
    await page.waitForFunction("/Corrected/.test(document.querySelector('#facts-status')?.textContent ?? '')");
    assert.equal(s.index.getFact(fact!.id, 'test:1')?.valid, false);
    const rows = await page.$$eval('#facts tr[data-id]', (trs) => trs.map((tr) => [tr.querySelector('td')?.textContent, tr.className]));
    assert.deepEqual(rows, [['Ada sells honey on Saturdays and Sundays', ''], ['Ada sells honey on Saturdays', 'muted']]);

    const edited = `${MEMORY}- Edited in the browser: Ada's hives are on the roof.\n`;
    await page.$eval('#memory-text', (e: any, v) => (e.value = v), edited);
    await page.click('#memory-save');
    await page.waitForFunction("/Saved as version/.test(document.querySelector('#memory-status')?.textContent ?? '')");
    assert.equal(await readFile(t.memoryFile, 'utf8'), edited);

    // The fact correction redrew the chat; search again so the screenshot shows hits.
    await page.type('#search-q', 'where does my honey sell');
    await page.click('#search-go');
    await page.waitForSelector('#results li .hit');
    await page.evaluate('window.scrollTo(0, 0)');
    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/memory-page.png', fullPage: true });
    if (process.env.MEMORY_PAGE_SCREENSHOT === 'docs') {
      // Tall enough for MEMORY.md, the search, and both pictures.
      await page.setViewport({ width: 1280, height: 1420 });
      await page.screenshot({ path: 'docs/memory-page.png' });
    }
    assert.deepEqual(dialogs, [], 'no script from memory text ran');
  } finally {
    await browser.close();
    await t.close();
  }
});
