/**
 * Token counts are what compaction decides on, so they are checked against a second,
 * independent BPE implementation (js-tiktoken) on text a chat bot really sees: prose, emoji
 * (ZWJ sequences, flags), CJK, right-to-left scripts, code, JSON, long numbers, whitespace runs
 * and special-token strings typed by a user.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { createTokenCounter, EstimateCounter } from '../../src/llm/tokens.js';
import { seededRandom as rng } from '../helpers/random.js';
import { patient } from '../helpers/wait.js';

const reference = {
  o200k_base: new Tiktoken(o200k),
  cl100k_base: new Tiktoken(cl100k),
} as const;

/** The reference count, with special-token strings treated as plain text (as the API does). */
function refCount(enc: keyof typeof reference, text: string): number {
  return reference[enc].encode(text, [], []).length;
}

const CORPUS: Record<string, string> = {
  'English prose':
    "It was a bright cold day in April, and the clocks were striking thirteen. Winston Smith, his chin nuzzled into his breast in an effort to escape the vile wind, slipped quickly through the glass doors of Victory Mansions — though not quickly enough to prevent a swirl of gritty dust from entering along with him. Don't you think so? I'd've said it's 3.5x faster; they're ready.",
  'chat with typos and casing': 'hey!!! can u remind me tmrw abt the DENTIST appt @ 9:30am?? thx sooo much :) ... LOL',
  'emoji, ZWJ sequences and flags': 'Family: 👨‍👩‍👧‍👦 👩‍❤️‍💋‍👨 🧑🏽‍💻 🏳️‍🌈 🏴‍☠️ flags: 🇫🇷🇯🇵🇺🇸🇧🇷🇺🇦 🏴󠁧󠁢󠁳󠁣󠁴󠁿 skin tones 👍🏻👍🏼👍🏽👍🏾👍🏿 keycap 1️⃣#️⃣ and plain 😀😂🥲🤖',
  CJK: '我今天去了北京的图书馆，借了三本书。東京都は日本の首都です。ひらがなとカタカナも混ぜます。한국어 문장도 하나 넣어 봅시다: 오늘 날씨가 좋네요.',
  'Arabic and Hebrew':
    'مرحبا بالعالم، كيف حالك اليوم؟ هذا نص عربي طويل بعض الشيء مع أرقام ١٢٣ و 456. שלום עולם, מה שלומך היום? זהו טקסט בעברית עם ניקוד: בְּרֵאשִׁית.',
  'mixed scripts with Cyrillic, Greek, Devanagari, Thai': 'Привет, мир! Ελληνικά γράμματα. नमस्ते दुनिया। สวัสดีชาวโลก. Ünïcödé ñ ß ø å Ł.',
  'code with indentation':
    'export async function main(argv: string[]): Promise<number> {\n    const files = await glob("src/**/*.ts");\n    for (const f of files) {\n        if (f.endsWith(".d.ts")) continue;\n\t\tconsole.log(`file: ${f}`);\n    }\n    return 0;\n}\n\ndef fib(n):\n    """Return the n-th Fibonacci number."""\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n',
  JSON: '{"user":{"id":12345678901234,"name":"Zoë \\"Z\\" O\'Neil","tags":["a","b",null,true,false],"nested":{"deep":{"deeper":[1.5e-10,-0.0,3.14159]}}},"emoji":"🎉","path":"C:\\\\Users\\\\zoe"}',
  'long numbers':
    '3.14159265358979323846264338327950288419716939937510 and 18446744073709551615 and 0x7fffffffffffffff and 1,234,567,890.12 and +49 (0)30 1234567-89',
  'whitespace runs': 'a    b\t\t\tc\n\n\n\nd          e \u00a0\u00a0 f\r\n\r\ng                                                   h\n\t \n',
  'special-token strings typed by a user':
    'Please explain what <|endoftext|> means, and also <|fim_prefix|>, <|fim_middle|>, <|fim_suffix|>, <|endofprompt|> and <|im_start|>.',
  'only the special token': '<|endoftext|>',
  'URLs and markdown': '## Notes\n- [link](https://example.com/a/b?c=d&e=f#g)\n- **bold** _italic_ `code`\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n',
  'single characters': 'a',
  'one emoji': '🤖',
};

function randomCorpus(n: number): string[] {
  const next = rng(42);
  const pools = [
    'abcdefghijklmnopqrstuvwxyz ',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    ' \t\n   ',
    '.,;:!?-_()[]{}<>"\'`~@#$%^&*+=/\\|',
    '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年',
    'مرحبا שלום',
    'Ωαβγδ Жжщ ñüéç',
  ];
  const emoji = ['😀', '👨‍👩‍👧‍👦', '🇫🇷', '🏳️‍🌈', '👍🏽', '1️⃣', '🤖'];
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    let s = '';
    const len = 1 + Math.floor(next() * 120);
    for (let i = 0; i < len; i++) {
      if (next() < 0.05) s += emoji[Math.floor(next() * emoji.length)]!;
      else if (next() < 0.02) s += '<|endoftext|>';
      else {
        const pool = pools[Math.floor(next() * pools.length)]!;
        s += [...pool][Math.floor(next() * [...pool].length)]!;
      }
    }
    out.push(s);
  }
  return out;
}

for (const enc of ['o200k_base', 'cl100k_base'] as const) {
  test(`${enc}: exact counts equal js-tiktoken on a varied corpus`, async () => {
    const counter = await createTokenCounter(enc);
    assert.equal(counter.mode, 'exact');
    assert.equal(counter.encoding, enc);
    for (const [name, text] of Object.entries(CORPUS)) {
      const want = refCount(enc, text);
      assert.ok(want > 0, `reference counted 0 tokens for ${name}`);
      assert.equal(counter.countText(text), want, `${enc}: ${name}`);
    }
    // Everything at once (merges across the boundaries between samples).
    const all = Object.values(CORPUS).join('\n');
    assert.equal(counter.countText(all), refCount(enc, all), `${enc}: whole corpus`);
  });

  test(`${enc}: exact counts equal js-tiktoken on 300 random mixed strings`, async () => {
    const counter = await createTokenCounter(enc);
    for (const s of randomCorpus(300)) assert.equal(counter.countText(s), refCount(enc, s), `${enc}: ${JSON.stringify(s)}`);
  });

  test(`${enc}: risk: a long prompt counted line by line drifts from its exact count — it never does`, async () => {
    const counter = await createTokenCounter(enc);
    const lines = randomCorpus(600);
    const next = rng(7);
    // Lines joined by every kind of break a prompt has: newline runs, indentation, "/" starts.
    const joins = ['\n', '\n\n', '\n  ', '\n/', '\n\t', ' \n', '\r\n', '\n- ', '\n### '];
    for (let doc = 0; doc < 30; doc++) {
      let text = '';
      for (let i = 0; i < 40; i++) text += lines[Math.floor(next() * lines.length)]! + joins[Math.floor(next() * joins.length)]!;
      assert.ok(text.length >= 2_000 || doc > 0);
      assert.equal(counter.countText(text), refCount(enc, text), `${enc}: document ${doc}`);
    }
    // A system prompt with notes that grew by one line since the last count.
    const prompt = `# Memory\n\n## Today's Notes\n${Object.values(CORPUS).join('\n')}\n`;
    assert.equal(counter.countText(prompt), refCount(enc, prompt));
    const grown = `${prompt}[10:42] User: and /status please | Assistant: here\n`;
    assert.equal(counter.countText(grown), refCount(enc, grown));
  });

  test(`${enc}: "<|endoftext|>" typed by a user counts as text and does not throw`, async () => {
    const counter = await createTokenCounter(enc);
    const n = counter.countText('<|endoftext|>');
    // As text it is several tokens; as the special token it would be exactly one.
    assert.ok(n > 1, `counted ${n}`);
    assert.equal(n, refCount(enc, '<|endoftext|>'));
    assert.doesNotThrow(() => counter.countMessages([{ role: 'user', content: 'say <|endoftext|> now' }]));
  });
}

test('countMessages = Σ (3 + role + content [+ name]) + 3 priming, checked by hand with js-tiktoken', async () => {
  const counter = await createTokenCounter('o200k_base');
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a helpful assistant. Answer briefly.' },
    { role: 'user', content: 'Wie spät ist es in Tokyo? 東京の時間を教えて 🕐', name: 'alice' },
    { role: 'assistant', content: 'It is 21:37 in Tokyo (JST, UTC+9).' },
    { role: 'user', content: 'thanks!   \n\n  <|endoftext|>' },
  ];
  const t = (s: string) => refCount('o200k_base', s);
  let hand = 3;
  for (const m of messages) {
    hand += 3 + t(m.role) + t(m.content as string);
    if ('name' in m && m.name) hand += t(m.name);
  }
  assert.equal(counter.countMessages(messages), hand);
  // The framing on its own: no messages → only the reply priming.
  assert.equal(counter.countMessages([]), 3);
  // One empty user message: 3 framing + "user" + 3 priming.
  assert.equal(counter.countMessages([{ role: 'user', content: '' }]), 3 + t('user') + 3);
});

test('cl100k_base countMessages also follows the formula', async () => {
  const counter = await createTokenCounter('cl100k_base');
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'System 🧠 prompt' },
    { role: 'user', content: 'مرحبا — שלום — 你好' },
  ];
  const t = (s: string) => refCount('cl100k_base', s);
  assert.equal(counter.countMessages(messages), 3 + (3 + t('system') + t('System 🧠 prompt')) + (3 + t('user') + t('مرحبا — שלום — 你好')));
});

test('EstimateCounter: ceil(chars / 3.5), and createTokenCounter(null) gives it', async () => {
  const est = await createTokenCounter(null);
  assert.equal(est.mode, 'estimate');
  assert.equal(est.encoding, null);
  assert.ok(est instanceof EstimateCounter);
  for (const s of ['a', 'abc', 'abcd', 'x'.repeat(7), 'x'.repeat(8), 'x'.repeat(35), 'x'.repeat(36), CORPUS['English prose']!]) {
    assert.equal(est.countText(s), Math.ceil(s.length / 3.5), `${s.length} chars`);
  }
  assert.equal(est.countText(''), 0);
  assert.equal(est.countText('x'.repeat(7)), 2);
  assert.equal(est.countText('x'.repeat(8)), 3);
  // Messages use the same framing as the exact counter.
  assert.equal(est.countMessages([{ role: 'user', content: 'x'.repeat(35) }]), 3 + Math.ceil(4 / 3.5) + 10 + 3);
});

test('counting the same 1,000-message list twice gives the same total (cache is consistent)', async () => {
  const counter = await createTokenCounter('o200k_base');
  const next = rng(7);
  const sample = Object.values(CORPUS);
  const messages: ChatCompletionMessageParam[] = [];
  for (let i = 0; i < 1000; i++) {
    const content = `${i}: ${sample[Math.floor(next() * sample.length)]!.slice(0, 20 + Math.floor(next() * 200))}`;
    messages.push(i % 2 === 0 ? { role: 'user', content } : { role: 'assistant', content });
  }
  const first = counter.countMessages(messages);
  const second = counter.countMessages(messages);
  assert.equal(second, first);
  // And the total is right, not just stable.
  const hand = 3 + messages.reduce((n, m) => n + 3 + refCount('o200k_base', m.role) + refCount('o200k_base', m.content as string), 0);
  assert.equal(first, hand);
  // A fresh counter (empty cache) agrees with the warmed one.
  const fresh = await createTokenCounter('o200k_base');
  assert.equal(fresh.countMessages(messages), first);
});

/** Heap in use after a full collection (the flag is switched on here: the runner does not pass it). */
function heapAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

test('risk: one long chat grows memory without bound — lines cut out of growing prompts must not keep each prompt alive', async () => {
  // A long chat's memory block grows by one note line per turn and is counted line by line.
  // Each new line counted is remembered; if the cache keeps a line cut out of the block, V8
  // keeps the whole block alive behind it (about 60 KB a turn here, 1.8 GB in a real chat).
  const counter = await createTokenCounter('o200k_base');
  const base = Array.from({ length: 600 }, (_, i) => `[10:${String(i % 60).padStart(2, '0')}] User: line ${i} of the notes | Assistant: noted, thank you`).join(
    '\n',
  );
  counter.countText(base);
  const before = heapAfterGc();
  for (let turn = 0; turn < 1500; turn++) counter.countText(`${base}\n[11:00] User: message number ${turn} | Assistant: answer ${turn}`);
  const grown = heapAfterGc() - before;
  assert.ok(grown < 10 * 2 ** 20, `1,500 counted prompts kept ${(grown / 2 ** 20).toFixed(0)} MiB alive (bound: 10 MiB)`);
});

test('risk: the count cache holds whatever size of text it is given — it is bounded by characters, not only entries', async () => {
  // 500 different 100,000-character texts (long pasted messages, MEMORY.md lines): 50 M characters.
  const counter = new EstimateCounter();
  const before = heapAfterGc();
  for (let i = 0; i < 500; i++) counter.countText(`${i} ${'abcdefghij'.repeat(10_000)}`);
  const grown = heapAfterGc() - before;
  assert.ok(grown < 15 * 2 ** 20, `the cache kept ${(grown / 2 ** 20).toFixed(0)} MiB (bound: 15 MiB)`);
  // Still a cache: the last text is counted again from it, with the same result.
  assert.equal(counter.countText(`499 ${'abcdefghij'.repeat(10_000)}`), Math.ceil(100_004 / 3.5));
});

test('risk: a 200,000-character run (letters, spaces, CJK) freezes every chat while its tokens are counted', async () => {
  const counter = await createTokenCounter('o200k_base');
  for (const [name, text] of [
    ['letters', 'a'.repeat(200_000)],
    ['spaces inside a line', `a${' '.repeat(200_000)}b`],
    ['CJK', '字'.repeat(200_000)],
  ] as const) {
    const t0 = performance.now();
    const n = counter.countText(text);
    const ms = performance.now() - t0;
    // A generous bound: BPE on one unsplit 200,000-character piece took minutes.
    assert.ok(ms < patient(10_000), `${name}: ${ms.toFixed(0)} ms`);
    // Cut into 256-character pieces, the count stays what the pieces cost, near the whole run's.
    assert.ok(n > 0 && n <= text.length, `${name}: ${n} tokens`);
  }
  // Text without long runs is still counted in one piece: exact, as the corpus tests check.
  const prose = CORPUS['English prose']!.repeat(20);
  assert.equal(counter.countText(prose), refCount('o200k_base', prose));
});
