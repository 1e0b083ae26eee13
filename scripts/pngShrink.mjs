// Lossless re-encoding of the screenshots (scripts/screenshot.mjs): Chromium writes RGBA PNGs with
// its fast filter choice; the same pixels as RGB (when opaque) with one filter for the whole image
// (the smallest of none, sub, up, Paeth and a per-row choice) and zlib level 9 are 10-20 % smaller.
// The .vsix carries the README's screenshots and must stay under its budget (scripts/vsixBudget.mjs, 1.85 MiB).
// Only 8-bit, non-interlaced RGB/RGBA PNGs (what Chromium writes); anything else is left as it is.
//
//   node scripts/pngShrink.mjs FILE.png...   (also: import { shrinkPng } from "./pngShrink.mjs")
import * as fs from "node:fs";
import * as zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

/** The predictor of PNG filter `f` for byte x of a row (a: left, b: up, c: up-left). */
function predict(f, a, b, c) {
  if (f === 0) return 0;
  if (f === 1) return a;
  if (f === 2) return b;
  if (f === 3) return (a + b) >> 1;
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** The pixels of `png`: { width, height, channels (3 or 4), data }, or undefined for another kind of PNG. */
export function decodePng(png) {
  if (!png.subarray(0, 8).equals(SIGNATURE)) return undefined;
  let pos = 8;
  let header;
  const idat = [];
  while (pos + 8 <= png.length) {
    const len = png.readUInt32BE(pos);
    const type = png.toString("ascii", pos + 4, pos + 8);
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR")
      header = {
        width: data.readUInt32BE(0),
        height: data.readUInt32BE(4),
        depth: data[8],
        color: data[9],
        interlace: data[12],
      };
    else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  if (!header || header.depth !== 8 || header.interlace !== 0 || (header.color !== 2 && header.color !== 6))
    return undefined;
  const channels = header.color === 6 ? 4 : 3;
  const { width, height } = header;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const row = y * (stride + 1) + 1;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[y * stride + x - channels] : 0;
      const b = y > 0 ? data[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? data[(y - 1) * stride + x - channels] : 0;
      data[y * stride + x] = (raw[row + x] + predict(f, a, b, c)) & 255;
    }
  }
  return { width, height, channels, data };
}

/** `image` as a PNG with filter `fixed` on every row (-1: per row, the smallest sum of differences). */
function encodePng({ width, height, channels, data }, fixed) {
  const stride = width * channels;
  const out = Buffer.alloc(height * (stride + 1));
  const rows = [0, 1, 2, 3, 4].map(() => Buffer.alloc(stride));
  for (let y = 0; y < height; y++) {
    let best = fixed < 0 ? 0 : fixed;
    let bestSum = Infinity;
    for (const f of fixed < 0 ? [0, 1, 2, 3, 4] : [fixed]) {
      let sum = 0;
      for (let x = 0; x < stride; x++) {
        const a = x >= channels ? data[y * stride + x - channels] : 0;
        const b = y > 0 ? data[(y - 1) * stride + x] : 0;
        const c = x >= channels && y > 0 ? data[(y - 1) * stride + x - channels] : 0;
        const d = (data[y * stride + x] - predict(f, a, b, c)) & 255;
        rows[f][x] = d;
        sum += d < 128 ? d : 256 - d;
      }
      if (sum < bestSum) [best, bestSum] = [f, sum];
    }
    out[y * (stride + 1)] = best;
    rows[best].copy(out, y * (stride + 1) + 1);
  }
  const chunk = (type, body) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    const typed = Buffer.concat([Buffer.from(type, "ascii"), body]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(typed) >>> 0);
    return Buffer.concat([len, typed, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = channels === 4 ? 6 : 2;
  const idat = zlib.deflateSync(out, { level: 9, memLevel: 9 });
  return Buffer.concat([SIGNATURE, chunk("IHDR", ihdr), chunk("IDAT", idat), chunk("IEND", Buffer.alloc(0))]);
}

/** Whether `a` and `b` hold the same RGB pixels and `a`'s alpha, if any, is opaque where `b` has none. */
function samePixels(a, b) {
  if (a.width !== b.width || a.height !== b.height) return false;
  for (let i = 0, j = 0; i < a.data.length; i += a.channels, j += b.channels) {
    for (let k = 0; k < 3; k++) if (a.data[i + k] !== b.data[j + k]) return false;
    const alphaA = a.channels === 4 ? a.data[i + 3] : 255;
    const alphaB = b.channels === 4 ? b.data[j + 3] : 255;
    if (alphaA !== alphaB) return false;
  }
  return true;
}

/**
 * Re-encodes the PNG `file` losslessly and writes it back when smaller (checked: the new file
 * decodes to the same pixels). Returns [bytes before, bytes after].
 */
export function shrinkPng(file) {
  const before = fs.readFileSync(file);
  const image = decodePng(before);
  if (!image) return [before.length, before.length];
  let opaque = image.channels === 3;
  if (!opaque) {
    opaque = true;
    for (let i = 3; i < image.data.length && opaque; i += 4) opaque = image.data[i] === 255;
  }
  const target = opaque && image.channels === 4 ? { ...image, channels: 3, data: dropAlpha(image.data) } : image;
  const smallest = [-1, 0, 1, 2, 4].map((f) => encodePng(target, f)).reduce((a, b) => (b.length < a.length ? b : a));
  if (smallest.length >= before.length || !samePixels(image, decodePng(smallest)))
    return [before.length, before.length];
  fs.writeFileSync(file, smallest);
  return [before.length, smallest.length];
}

function dropAlpha(rgba) {
  const rgb = Buffer.alloc((rgba.length / 4) * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4) {
    rgb[j++] = rgba[i];
    rgb[j++] = rgba[i + 1];
    rgb[j++] = rgba[i + 2];
  }
  return rgb;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of process.argv.slice(2)) {
    const [before, after] = shrinkPng(file);
    console.log(`${file}: ${before} -> ${after} bytes`);
  }
}
