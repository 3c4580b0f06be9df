/**
 * Which messages ask the bot to remember something, and what is kept (remember-words.ts): a
 * request kept as a question would lose a fact the user asked for; a question kept as a request
 * would fill the chat's memory with "do you remember…?".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FACT_MAX_CHARS, rememberAsk } from '../../../src/features/memory-access/remember-words.js';

test('explicit requests, in English and a few other languages, keep the words without the lead-in', () => {
  const asks: Array<[string, string]> = [
    ['Remember that my cat is called Miso.', 'My cat is called Miso.'],
    ["remember my wife's name is Ann", "My wife's name is Ann"],
    ['Please remember: I am allergic to peanuts', 'I am allergic to peanuts'],
    ['Please, remember that I live in Braga, thanks', 'I live in Braga'],
    ["Don't forget that my birthday is on May 3", 'My birthday is on May 3'],
    ['Note that the meeting moved to Friday.', 'The meeting moved to Friday.'],
    ['Keep in mind I prefer tea.', 'I prefer tea.'],
    ['Save this: passport expires 2031-04-02', 'Passport expires 2031-04-02'],
    ['add this to your memory: I take the 8:10 train', 'I take the 8:10 train'],
    ['can you remember that my cat is Miso?', 'My cat is Miso'],
    ['I want you to remember that I am vegan', 'I am vegan'],
    ['Hi! Please remember that my cat is Miso. What should I feed her?', 'My cat is Miso.'],
    ['My cat is called Miso. Remember that!', 'My cat is called Miso.'],
    ['My cat is called Miso, remember that.', 'My cat is called Miso'],
    ['[Voice message, transcribed] remember that the garage code is 4412', 'The garage code is 4412'],
    ['Merk dir, dass meine Katze Miso heißt.', 'Meine Katze Miso heißt.'],
    ['Recuerda que mi gato se llama Miso.', 'Mi gato se llama Miso.'],
    ["N'oublie pas que mon chat s'appelle Miso.", "Mon chat s'appelle Miso."],
    ['Lembre-se de que o meu gato se chama Miso.', 'O meu gato se chama Miso.'],
    ['Ricorda che il mio gatto si chiama Miso.', 'Il mio gatto si chiama Miso.'],
    ['Запомни, что моего кота зовут Мисо.', 'Моего кота зовут Мисо.'],
  ];
  for (const [message, words] of asks) assert.deepEqual(rememberAsk(message), { words }, message);
});

test('questions, recall, reminders and the word "remember" in passing are not requests', () => {
  for (const message of [
    'do you remember my cat?',
    'Do you remember my cat? She is called Miso.',
    'remember my cat?',
    'Remember when we went to Rome?',
    'remember when we went to Rome',
    'Remember that time we went to Rome?',
    "can you remember my cat's name?",
    'I remember that my cat liked fish',
    'I forgot to remember',
    'Remembering is hard',
    'remember me',
    'remember him!',
    "don't forget to buy milk",
    'note my cat',
    'save the file please',
    '¿Recuerdas a mi gato?',
    'Помнишь моего кота?',
    'Is my cat Miso? Remember that.',
    '/memory',
  ]) {
    assert.equal(rememberAsk(message), undefined, message);
  }
});

test('"remember that" alone points at the message before; long words are cut on a word', () => {
  assert.deepEqual(rememberAsk('Remember that.'), { previous: true });
  assert.deepEqual(rememberAsk('keep that in mind'), { previous: true });
  const long = rememberAsk(`remember that ${'the hive by the old oak tree '.repeat(40)}`);
  assert.ok(long && 'words' in long);
  assert.ok(long.words.length <= FACT_MAX_CHARS, `${long.words.length}`);
  assert.match(long.words, /^The hive by the old oak tree .* (?:the|hive|by|old|oak|tree)…$/, 'ends on a whole word');
});
