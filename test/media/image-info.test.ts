import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readImageInfo } from '../../src/media/image-info.js';
import { jpegHeader, png } from '../helpers/images.js';

function webp(kind: 'VP8X' | 'VP8L' | 'VP8 ', width: number, height: number): Buffer {
  const b = Buffer.alloc(40);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(32, 4);
  b.write('WEBP', 8, 'latin1');
  b.write(kind, 12, 'latin1');
  if (kind === 'VP8X') {
    b.writeUIntLE(width - 1, 24, 3);
    b.writeUIntLE(height - 1, 27, 3);
  } else if (kind === 'VP8L') {
    b[20] = 0x2f;
    b.writeUInt32LE((width - 1) | ((height - 1) << 14), 21);
  } else {
    b.set([0x9d, 0x01, 0x2a], 23);
    b.writeUInt16LE(width, 26);
    b.writeUInt16LE(height, 28);
  }
  return b;
}

test('format and size are read from the bytes of PNG, JPEG, GIF and WebP files', () => {
  assert.deepEqual(readImageInfo(png(300, 200)), { mime: 'image/png', width: 300, height: 200 });
  assert.deepEqual(readImageInfo(jpegHeader(1280, 960)), { mime: 'image/jpeg', width: 1280, height: 960 });
  const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([0x40, 0x01, 0xf0, 0x00]), Buffer.alloc(8)]);
  assert.deepEqual(readImageInfo(gif), { mime: 'image/gif', width: 320, height: 240 });
  assert.deepEqual(readImageInfo(webp('VP8X', 4000, 3000)), { mime: 'image/webp', width: 4000, height: 3000 });
  assert.deepEqual(readImageInfo(webp('VP8L', 500, 400)), { mime: 'image/webp', width: 500, height: 400 });
  assert.deepEqual(readImageInfo(webp('VP8 ', 640, 360)), { mime: 'image/webp', width: 640, height: 360 });
});

test('what is not a readable image is null: other formats, text, cut-off or zero-sized headers', () => {
  assert.equal(readImageInfo(Buffer.from('not an image at all')), null);
  assert.equal(readImageInfo(Buffer.from('\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic', 'latin1')), null, 'HEIC');
  assert.equal(readImageInfo(Buffer.from('BM\x36\x00\x00\x00', 'latin1')), null, 'BMP');
  assert.equal(readImageInfo(png(10, 10).subarray(0, 20)), null, 'PNG cut inside IHDR');
  assert.equal(readImageInfo(jpegHeader(100, 100).subarray(0, 12)), null, 'JPEG cut before its frame header');
  assert.equal(readImageInfo(jpegHeader(0, 100)), null, 'zero width');
  assert.equal(readImageInfo(Buffer.alloc(0)), null);
});
