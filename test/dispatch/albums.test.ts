/**
 * The album collector and merge (src/dispatch/albums.ts) on their own: which items make one
 * album, in what order, and what one message they become. The window is 0 ms here (the
 * end-to-end tests in test/channels/telegram/albums.test.ts run it with the real channel).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AlbumCollector, mergeAlbum, type AlbumItem } from '../../src/dispatch/albums.js';

function item(journalId: string, messageId: string, text: string, fileId: string, attempt = 0): AlbumItem {
  return {
    journalId,
    attempt,
    msg: { channel: 'telegram', chatId: '7', userId: '7', text, messageId, receivedAt: new Date(0), albumId: 'g', image: { kind: 'photo', fileId } },
  };
}

test('items become one message in message order, each with its own line; a repeated item counts once; one item stays an ordinary photo', () => {
  const merged = mergeAlbum([
    item('j3', '12', '[Photo]', 'c'),
    item('j1', '10', '[Photo] trip', 'a'),
    item('j2', '11', '[Photo] second caption', 'b'),
    item('j4', '11', '[Photo] second caption', 'b'),
  ]);
  assert.equal(merged.text, '[Photo] trip\n[Photo] second caption\n[Photo]');
  assert.deepEqual(
    merged.images?.map((i) => i.fileId),
    ['a', 'b', 'c'],
  );
  assert.equal(merged.image, undefined, 'the album has images, not one image');
  assert.equal(merged.messageId, '10', 'it stands for its first item');

  // Sent as a reply: every item carries the quote; the album says it once.
  const quote = '[Quoting a message by you]\n> pick a colour\n> \n> any\n\n';
  const replied = mergeAlbum([item('r1', '30', `${quote}[Photo] this one?`, 'r1'), item('r2', '31', `${quote}[Photo]`, 'r2')]);
  assert.equal(replied.text, `${quote}[Photo] this one?\n[Photo]`);

  const one = mergeAlbum([item('j9', '20', '[Photo] alone', 'z')]);
  assert.equal(one.images, undefined);
  assert.equal(one.image?.fileId, 'z');
});

test('the collector: the first item collects its album, the others were taken; an album belongs to its key; a later item opens a new album', async () => {
  const albums = new AlbumCollector(0);
  const chat1 = AlbumCollector.keyOf('telegram:1', 'g');
  const chat2 = AlbumCollector.keyOf('telegram:2', 'g');
  albums.add(chat1, item('a1', '1', '[Photo]', 'a1'));
  albums.add(chat2, item('b1', '1', '[Photo]', 'b1'));
  albums.add(chat1, item('a2', '2', '[Photo]', 'a2'));
  assert.equal(albums.isOpen(chat1), true);
  assert.equal(albums.wasTaken('a1'), false);
  const got = await albums.collect(chat1, 'a1');
  assert.deepEqual(
    got.map((i) => i.journalId),
    ['a1', 'a2'],
  );
  assert.equal(albums.isOpen(chat1), false);
  assert.equal(albums.wasTaken('a2'), true, 'taken with a1');
  assert.equal(albums.wasTaken('a2'), false, 'told once');
  assert.equal(albums.wasTaken('b1'), false, 'the other chat is untouched');
  assert.deepEqual(
    (await albums.collect(chat2, 'b1')).map((i) => i.journalId),
    ['b1'],
  );

  albums.add(chat1, item('a3', '3', '[Photo]', 'a3'));
  assert.deepEqual(
    (await albums.collect(chat1, 'a3')).map((i) => i.journalId),
    ['a3'],
    'after the album was answered: a new one',
  );
});
