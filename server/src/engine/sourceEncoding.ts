/**
 * Decoding a source file's bytes, and encoding a fixed text back: `--fix` must
 * never touch bytes outside its edits, so a file is only rewritten when its encoding round-trips
 * exactly.
 *
 * Python (PEP 3120, PEP 263): UTF-8 unless a coding cookie on line 1 or 2 (line 2 only after a
 * blank or comment-only line 1) names another codec; the cookie regex and the name normalisation
 * follow CPython's tokenizer (`get_coding_spec`, `get_normal_name`). A UTF-8 BOM with a cookie for
 * another codec is a SyntaxError in CPython. Notebooks (nbformat) and manifests are UTF-8.
 *
 * Written back: UTF-8 (BOM kept), ASCII, latin-1 (byte for byte), and the single-byte code pages
 * that WHATWG's TextDecoder knows (windows-125x, iso-8859-N, koi8, mac-roman, cp866), through a
 * table built from the decoder itself. Multi-byte codecs (shift_jis, gbk, big5, euc-*) are decoded
 * for linting but never written. A file that is not valid in its encoding is linted from a lossy
 * decoding and never written.
 * Node only; no `vscode`.
 */
import { isUtf8 } from "node:buffer";

/** A decoded source and how (whether) to write a fixed text back. */
export interface DecodedSource {
  /** The text, without a BOM; positions are UTF-16 code units of this text. */
  text: string;
  /** Whether the file starts with a UTF-8 BOM (EF BB BF). */
  bom: boolean;
  /** The encoding as the file names it ("utf-8" when it names none). */
  encoding: string;
  /** Why fixes must not be written to this file, or null when they may. */
  noFix: string | null;
  /**
   * The bytes of `text` in the file's encoding, BOM included; null when a character cannot be
   * written in it (or {@link noFix} is set).
   */
  encode(text: string): Buffer | null;
}

const LATIN1 = new Set([
  "latin-1",
  "latin1",
  "iso-8859-1",
  "iso8859-1",
  "8859",
  "cp819",
  "l1",
  "latin",
  "iso-latin-1",
  "iso-ir-100",
  "ibm819",
]);
const UTF8 = new Set(["utf-8", "utf8", "u8", "utf", "cp65001"]);
const ASCII = new Set(["ascii", "us-ascii", "646", "us"]);
/** Python codec name (normalised) → WHATWG label, single-byte code pages. */
const SINGLE_BYTE: Record<string, string> = {
  "koi8-r": "koi8-r",
  "koi8-u": "koi8-u",
  "mac-roman": "macintosh",
  macroman: "macintosh",
  macintosh: "macintosh",
  cp866: "ibm866",
  ibm866: "ibm866",
  cp874: "windows-874",
  latin2: "iso-8859-2",
  "latin-2": "iso-8859-2",
  latin9: "iso-8859-15",
  "latin-9": "iso-8859-15",
  cyrillic: "iso-8859-5",
  greek: "iso-8859-7",
  hebrew: "iso-8859-8",
};
for (let n = 1250; n <= 1258; n++) {
  SINGLE_BYTE[`cp${n}`] = `windows-${n}`;
  SINGLE_BYTE[`windows-${n}`] = `windows-${n}`;
}
for (const n of [2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16]) {
  SINGLE_BYTE[`iso-8859-${n}`] = `iso-8859-${n}`;
  SINGLE_BYTE[`iso8859-${n}`] = `iso-8859-${n}`;
}
/** Multi-byte codecs: decoded for linting, never written. */
const MULTI_BYTE: Record<string, string> = {
  "shift-jis": "shift_jis",
  sjis: "shift_jis",
  cp932: "shift_jis",
  "ms-kanji": "shift_jis",
  "euc-jp": "euc-jp",
  gbk: "gbk",
  cp936: "gbk",
  gb2312: "gbk",
  gb18030: "gb18030",
  big5: "big5",
  cp950: "big5",
  "euc-kr": "euc-kr",
  cp949: "euc-kr",
  "iso-2022-jp": "iso-2022-jp",
};

/**
 * The PEP 263 coding cookie of Python source bytes (BOM already removed): the codec name as
 * written and its 1-based line, or null. CPython's rule: `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`
 * on line 1, or on line 2 when line 1 is blank or only a comment.
 */
export function codingCookie(bytes: Buffer): { name: string; line: number } | null {
  const head = bytes.subarray(0, 1024).toString("latin1");
  const lines = head.split(/\r\n|\r|\n/, 2);
  const cookie = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;
  const m1 = cookie.exec(lines[0] ?? "");
  if (m1) return { name: m1[1], line: 1 };
  if (lines.length > 1 && /^[ \t\f]*(#|$)/.test(lines[0])) {
    const m2 = cookie.exec(lines[1]);
    if (m2) return { name: m2[1], line: 2 };
  }
  return null;
}

/** CPython's get_normal_name plus the lower-casing and `_` → `-` that codec lookup does. */
function normalName(name: string): string {
  const n = name.toLowerCase().replace(/_/g, "-");
  if (n === "utf-8" || n.startsWith("utf-8-")) return "utf-8";
  for (const l of ["latin-1", "iso-8859-1", "iso-latin-1"]) if (n === l || n.startsWith(`${l}-`)) return "iso-8859-1";
  return n;
}

/** Where the first byte that is not UTF-8 is: "byte 0xE9 at line 3". `bytes` must fail isUtf8. */
function firstBadUtf8(bytes: Buffer, lossy: string): string {
  let from = 0;
  for (;;) {
    const i = lossy.indexOf("\ufffd", from);
    if (i < 0) return "an invalid byte";
    const at = Buffer.byteLength(lossy.slice(0, i), "utf8");
    if (!(bytes[at] === 0xef && bytes[at + 1] === 0xbf && bytes[at + 2] === 0xbd)) {
      let line = 1;
      for (let k = 0; k < at; k++) if (bytes[k] === 10) line++;
      return `byte 0x${bytes[at].toString(16).toUpperCase().padStart(2, "0")} at line ${line}`;
    }
    from = i + 1;
  }
}

/**
 * windows-1252 bytes 0x80-0x9F (WHATWG index-windows-1252). Node 20's TextDecoder decodes
 * windows-1252 as ISO-8859-1 (C1 controls there), so GPU Pilot decodes it itself.
 */
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

/** Decodes bytes with a WHATWG label (windows-1252 by {@link CP1252_HIGH}). @throws TypeError when `fatal` and a byte is invalid. */
function decodeWith(label: string, bytes: Uint8Array, fatal: boolean): string {
  if (label !== "windows-1252") return new TextDecoder(label, { fatal }).decode(bytes);
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    const chunk = bytes.subarray(i, i + 8192);
    out += String.fromCharCode(...Array.from(chunk, (b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : b)));
  }
  return out;
}

const tables = new Map<string, Map<number, number>>();
/** UTF-16 code unit → byte, for a single-byte WHATWG decoder (ASCII is kept as is). */
function singleByteTable(label: string): Map<number, number> {
  let t = tables.get(label);
  if (t) return t;
  t = new Map();
  for (let b = 0x80; b <= 0xff; b++) {
    const ch = decodeWith(label, Uint8Array.of(b), false);
    if (ch.length === 1 && ch !== "\ufffd" && !t.has(ch.charCodeAt(0))) t.set(ch.charCodeAt(0), b);
  }
  tables.set(label, t);
  return t;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const never = (): null => null;

function utf8Source(bytes: Buffer, bom: boolean, encoding: string, asciiOnly = false): DecodedSource {
  const text = bytes.toString("utf8");
  if (asciiOnly && bytes.some((b) => b >= 0x80)) {
    return { text, bom, encoding, noFix: `not valid ${encoding}: it has bytes above 0x7F`, encode: never };
  }
  if (!isUtf8(bytes)) {
    return { text, bom, encoding, noFix: `not valid UTF-8 (${firstBadUtf8(bytes, text)})`, encode: never };
  }
  return {
    text,
    bom,
    encoding,
    noFix: null,
    encode: (t) => {
      const out = Buffer.from(t, "utf8");
      if (asciiOnly && out.some((b) => b >= 0x80)) return null;
      if (/[\ud800-\udfff]/.test(t) && !isUtf8(out)) return null; // a lone surrogate would become U+FFFD
      return bom ? Buffer.concat([BOM, out]) : out;
    },
  };
}

/**
 * Decodes a source file's bytes.
 * @param python whether the file is Python source (a PEP 263 cookie is honoured); otherwise UTF-8.
 * @returns the text and how to write a fixed text back; never throws.
 */
export function decodeSource(bytes: Buffer, python: boolean): DecodedSource {
  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const body = bom ? bytes.subarray(3) : bytes;
  const cookie = python ? codingCookie(body) : null;
  if (!cookie) {
    const r = utf8Source(body, bom, "utf-8");
    return r.noFix && python ? { ...r, noFix: `${r.noFix} and no PEP 263 coding cookie: Python would reject it` } : r;
  }
  const name = normalName(cookie.name);
  const where = `(PEP 263 cookie, line ${cookie.line})`;
  if (bom && name !== "utf-8") {
    const r = utf8Source(body, bom, cookie.name);
    return {
      ...r,
      noFix: `it has a UTF-8 BOM but its coding cookie says ${cookie.name}: Python would reject it`,
      encode: never,
    };
  }
  if (UTF8.has(name)) return utf8Source(body, bom, cookie.name);
  if (ASCII.has(name)) return utf8Source(body, bom, cookie.name, true);
  if (LATIN1.has(name)) {
    return {
      text: body.toString("latin1"),
      bom,
      encoding: cookie.name,
      noFix: null,
      encode: (t) => (/[^\x00-\xff]/.test(t) ? null : Buffer.from(t, "latin1")), // eslint-disable-line no-control-regex
    };
  }
  const label = SINGLE_BYTE[name] ?? MULTI_BYTE[name];
  if (!label) {
    const r = utf8Source(body, bom, cookie.name);
    return {
      ...r,
      noFix: `GPU Pilot does not know the encoding ${cookie.name} ${where}; linted as UTF-8`,
      encode: never,
    };
  }
  let text: string;
  try {
    text = decodeWith(label, body, true);
  } catch {
    return {
      text: decodeWith(label, body, false),
      bom,
      encoding: cookie.name,
      noFix: `not valid ${cookie.name} ${where}`,
      encode: never,
    };
  }
  if (!SINGLE_BYTE[name])
    return {
      text,
      bom,
      encoding: cookie.name,
      noFix: `GPU Pilot does not write files in ${cookie.name} ${where}`,
      encode: never,
    };
  const table = singleByteTable(label);
  return {
    text,
    bom,
    encoding: cookie.name,
    noFix: null,
    encode: (t) => {
      const out = Buffer.allocUnsafe(t.length);
      for (let i = 0; i < t.length; i++) {
        const c = t.charCodeAt(i);
        const b = c < 0x80 ? c : table.get(c);
        if (b === undefined) return null;
        out[i] = b;
      }
      return out;
    },
  };
}
