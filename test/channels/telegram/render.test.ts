import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, renderTelegramHtml, visibleLength } from '../../../src/channels/telegram/render.js';
import { splitMessage } from '../../../src/channels/telegram/split.js';
import { patient } from '../../helpers/wait.js';

/** Telegram accepts only these tags; every other "<" must arrive escaped. */
const ALLOWED_TAG = /^<\/?(b|i|s|u|code|pre|blockquote|tg-spoiler|a)(\s[^>]*)?>$/;

function tagsOf(html: string): string[] {
  return html.match(/<[^>]*>/g) ?? [];
}

/** Tags open and close in nested order (what Telegram's parser insists on). */
function assertBalanced(html: string): void {
  const stack: string[] = [];
  for (const tag of tagsOf(html)) {
    assert.match(tag, ALLOWED_TAG, `only Telegram tags: ${tag} in ${html}`);
    const name = /^<\/?([a-z-]+)/.exec(tag)![1]!;
    if (tag.startsWith('</')) assert.equal(stack.pop(), name, `closing ${tag} matches the last open tag in ${html}`);
    else stack.push(name);
  }
  assert.deepEqual(stack, [], `every tag is closed in ${html}`);
}

test('escapes <, > and & in prose so the model cannot open tags of its own', () => {
  const html = renderTelegramHtml('if a < b && c > d then <script>alert(1)</script> & <b>not bold</b>');
  assert.equal(html, 'if a &lt; b &amp;&amp; c &gt; d then &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;not bold&lt;/b&gt;');
  assert.equal(escapeHtml('&lt;'), '&amp;lt;', 'an entity written by the model stays visible as written');
});

test('bold, italic, strike, spoiler, inline code and links become Telegram tags', () => {
  assert.equal(renderTelegramHtml('**bold** and __also__'), '<b>bold</b> and <b>also</b>');
  assert.equal(renderTelegramHtml('*it* and _it_'), '<i>it</i> and <i>it</i>');
  assert.equal(renderTelegramHtml('~~gone~~ ||secret||'), '<s>gone</s> <tg-spoiler>secret</tg-spoiler>');
  assert.equal(renderTelegramHtml('run `a <b> & c`'), 'run <code>a &lt;b&gt; &amp; c</code>');
  assert.equal(
    renderTelegramHtml('see [the docs](https://example.com/a?b=1&c="2")'),
    'see <a href="https://example.com/a?b=1&amp;c=&quot;2&quot;">the docs</a>',
  );
  assert.equal(renderTelegramHtml('***both***'), '<b><i>both</i></b>');
});

test('markup that does not close, or is not markup, stays literal text', () => {
  assert.equal(renderTelegramHtml('snake_case_name and 2 * 3 * 4'), 'snake_case_name and 2 * 3 * 4');
  assert.equal(renderTelegramHtml('a lone ** here'), 'a lone ** here');
  assert.equal(renderTelegramHtml('an `unclosed code span'), 'an `unclosed code span');
  assert.equal(renderTelegramHtml('[click](javascript:alert(1))'), '[click](javascript:alert(1))', 'only http(s)/tg/mailto links');
});

test('headings, lists and quotes: Telegram has no such tags, so they become bold, bullets, blockquote', () => {
  const html = renderTelegramHtml('# Title\n\n- one\n* two\n1. three\n\n> quoted <x>\n> more\n\n---');
  assert.equal(html, '<b>Title</b>\n\n• one\n• two\n1. three\n\n<blockquote>quoted &lt;x&gt;\nmore</blockquote>\n\n———');
  assertBalanced(html);
});

test('a fenced code block becomes <pre><code class="language-…"> with its content escaped and not formatted', () => {
  const md = 'Here:\n```ts\nconst x = a < b && **not bold**;\n  indented\n```\nafter';
  const html = renderTelegramHtml(md);
  assert.equal(html, 'Here:\n<pre><code class="language-ts">const x = a &lt; b &amp;&amp; **not bold**;\n  indented</code></pre>\nafter');
  assert.equal(renderTelegramHtml('```\nplain\n```'), '<pre>plain</pre>');
  assertBalanced(html);
});

test('an answer cut off inside a code block still renders a closed <pre>', () => {
  const html = renderTelegramHtml('text\n```python\nprint("<hi>")');
  assert.equal(html, 'text\n<pre><code class="language-python">print("&lt;hi&gt;")</code></pre>');
  assertBalanced(html);
});

test('rendered text is never longer (as Telegram counts it) than the Markdown it came from', () => {
  const samples = [
    '# Heading with <angle> & amp\n\n**bold** *it* `code <x>` [link](https://a.b/c?d=1&e=2)\n\n- a\n- b\n\n> q & a',
    '```js\nif (a<b && c>d) {}\n```',
    '&&&&&&<<<<>>>>',
    'plain words only',
  ];
  for (const md of samples) {
    const html = renderTelegramHtml(md);
    assertBalanced(html);
    assert.ok(visibleLength(html) <= md.length, `visible ${visibleLength(html)} <= source ${md.length} for ${JSON.stringify(md)}`);
  }
});

test('risk: a 200,000-character answer of markup-like runs freezes every chat while it is rendered (quadratic lookahead)', () => {
  const n = 200_000;
  const answers = {
    'unclosed italics': '*a '.repeat(n / 3),
    'unclosed underscores': '_a '.repeat(n / 3),
    brackets: '['.repeat(n),
    'half links': '[a]('.repeat(n / 4),
    'a fence line ending in a backtick': `\`\`\`${'a'.repeat(n)}\``,
    'headings padded with tabs': `# ${'\t'.repeat(4000)}x\n`.repeat(n / 4004),
  };
  for (const [name, md] of Object.entries(answers)) {
    const t0 = performance.now();
    const html = splitMessage(md).map((chunk) => renderTelegramHtml(chunk));
    const ms = performance.now() - t0;
    // A generous bound: the quadratic code took tens of seconds to minutes; linear code, milliseconds.
    assert.ok(ms < patient(10_000), `${name}: ${ms.toFixed(0)} ms`);
    for (const h of html) assertBalanced(h);
  }
});
