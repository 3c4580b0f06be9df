/**
 * The memory page in a real browser: headless Chromium (Debian's `chromium`, installed by
 * .ci/run when missing) driven by puppeteer-core. Opens the page with the token, reads a chat's
 * MEMORY.md, runs a search, saves an edit and checks the file on disk; a message holding
 * `<script>` must show as text and run nothing. Screenshot: test-artifacts/memory-page.png
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

test('memory page in Chromium: the token opens it, MEMORY.md and a search hit show, an edit reaches the file, <script> stays text', async () => {
  const t = await startPageBot();
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
    assert.match(first, /Saturday market/);
    assert.match(first, /^text/, 'tagged with the list that found it');

    await page.waitForSelector('#timeline-svg rect');

    const edited = `${MEMORY}- Edited in the browser: Ada's hives are on the roof.\n`;
    await page.$eval('#memory-text', (e: any, v) => (e.value = v), edited);
    await page.click('#memory-save');
    await page.waitForFunction("/Saved as version/.test(document.querySelector('#memory-status')?.textContent ?? '')");
    assert.equal(await readFile(t.memoryFile, 'utf8'), edited);

    await page.evaluate('window.scrollTo(0, 0)');
    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/memory-page.png', fullPage: true });
    if (process.env.MEMORY_PAGE_SCREENSHOT === 'docs') await page.screenshot({ path: 'docs/memory-page.png' });
    assert.deepEqual(dialogs, [], 'no script from memory text ran');
  } finally {
    await browser.close();
    await t.close();
  }
});
