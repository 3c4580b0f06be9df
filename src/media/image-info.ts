/**
 * What an image file is, read from its own bytes: format and pixel size. The MIME type a
 * sender claims is not trusted (a `.heic` renamed to `.jpg` would make the provider refuse the
 * whole request), and image documents carry no width or height, which the token cost needs.
 * Only the formats OpenAI-style vision endpoints accept are recognised: JPEG, PNG, GIF, WebP.
 */

export type ImageMime = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

export interface ImageInfo {
  mime: ImageMime;
  width: number;
  height: number;
}

export const READABLE_IMAGE_TYPES: readonly ImageMime[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
/** Names some senders give JPEG files. */
const JPEG_ALIASES = new Set(['image/jpg', 'image/pjpeg']);

/**
 * False when the type a sender announced is one the model cannot read (HEIC and the like), so
 * it is refused without a download; true leaves it to the bytes (readImageInfo), which decide.
 */
export function announcedReadable(mime: string | undefined): boolean {
  return !mime || READABLE_IMAGE_TYPES.includes(mime as ImageMime) || JPEG_ALIASES.has(mime);
}

/** Format and size, or null when the bytes are not a JPEG, PNG, GIF or WebP we can measure. */
export function readImageInfo(b: Buffer): ImageInfo | null {
  const sized = (mime: ImageMime, width: number, height: number): ImageInfo | null => (width > 0 && height > 0 ? { mime, width, height } : null);
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') {
    return sized('image/png', b.readUInt32BE(16), b.readUInt32BE(20));
  }
  if (b.length >= 10 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) {
    return sized('image/gif', b.readUInt16LE(6), b.readUInt16LE(8));
  }
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webp(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpeg(b);
  return null;
}

function webp(b: Buffer): ImageInfo | null {
  const chunk = b.toString('latin1', 12, 16);
  let width = 0;
  let height = 0;
  if (chunk === 'VP8 ') {
    width = b.readUInt16LE(26) & 0x3fff;
    height = b.readUInt16LE(28) & 0x3fff;
  } else if (chunk === 'VP8L' && b.length >= 25) {
    const bits = b.readUInt32LE(21);
    width = (bits & 0x3fff) + 1;
    height = ((bits >> 14) & 0x3fff) + 1;
  } else if (chunk === 'VP8X') {
    width = b.readUIntLE(24, 3) + 1;
    height = b.readUIntLE(27, 3) + 1;
  }
  return width > 0 && height > 0 ? { mime: 'image/webp', width, height } : null;
}

/** Walks the JPEG segments to the first start-of-frame marker, which holds the size. */
function jpeg(b: Buffer): ImageInfo | null {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = b.readUInt16BE(i + 5);
      const width = b.readUInt16BE(i + 7);
      return width > 0 && height > 0 ? { mime: 'image/jpeg', width, height } : null;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      i += 2; // markers without a length
      continue;
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  return null;
}
