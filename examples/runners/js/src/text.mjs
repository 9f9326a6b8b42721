// Bytes and text as TiCDC's Open Protocol carries them (docs/open-protocol.md, "Values" and
// "JSON text"). Profile ticdc copies bytes that are not valid UTF-8 raw into its JSON, so a
// decoder must read JSON from bytes without losing any: each such byte becomes the lone
// surrogate U+DC80 + byte (the "surrogate escape" of Python's codecs), which JavaScript
// strings can hold, and turns back into that byte when the value is bytes.

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The length of the valid UTF-8 sequence at `bytes[i]`, or 0 (overlong, surrogate, cut off). */
function sequenceLength(bytes, i) {
  const lead = bytes[i];
  if (lead < 0x80) return 1;
  const length =
    lead >= 0xc2 && lead <= 0xdf
      ? 2
      : lead >= 0xe0 && lead <= 0xef
        ? 3
        : lead >= 0xf0 && lead <= 0xf4
          ? 4
          : 0;
  if (length === 0 || i + length > bytes.length) return 0;
  for (let k = 1; k < length; k += 1) if ((bytes[i + k] & 0xc0) !== 0x80) return 0;
  const second = bytes[i + 1];
  if ((lead === 0xe0 && second < 0xa0) || (lead === 0xf0 && second < 0x90)) return 0; // overlong
  if ((lead === 0xed && second > 0x9f) || (lead === 0xf4 && second > 0x8f)) return 0; // surrogate, > U+10FFFF
  return length;
}

/** UTF-8 bytes as text, each byte that is not part of valid UTF-8 kept as U+DC80 + byte. */
export function decodeEscaping(bytes) {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    let text = '';
    for (let i = 0; i < bytes.length;) {
      const length = sequenceLength(bytes, i);
      text +=
        length === 0
          ? String.fromCharCode(0xdc00 + bytes[i])
          : strictUtf8.decode(bytes.subarray(i, i + length));
      i += length || 1;
    }
    return text;
  }
}

const utf8 = new TextEncoder();

/**
 * The bytes a text stands for: UTF-8, with each lone U+DC80..U+DCFF back as its raw byte.
 * `invalidByte` maps such a byte: `(b) => [b]` keeps it; Go's strconv.Unquote reads it as
 * U+FFFD. Any other lone surrogate cannot be encoded and throws.
 */
export function encodeEscaped(text, invalidByte = (b) => [b]) {
  const out = [];
  for (const char of text) {
    const code = char.codePointAt(0);
    if (code >= 0xdc80 && code <= 0xdcff) out.push(...invalidByte(code - 0xdc00));
    else if (code >= 0xd800 && code <= 0xdfff) throw new Error('text holds a lone surrogate');
    else out.push(...utf8.encode(char));
  }
  return Uint8Array.from(out);
}

const anySurrogate = /[\ud800-\udfff]/;

/** A text value, or `{bytes}` when it carries raw bytes that were not valid UTF-8 (profile ticdc). */
export function textOrBytes(text) {
  return hasLoneSurrogate(text) ? bytesValue(encodeEscaped(text)) : text;
}

function hasLoneSurrogate(text) {
  if (!anySurrogate.test(text)) return false;
  for (const char of text) {
    const code = char.codePointAt(0);
    if (code >= 0xd800 && code <= 0xdfff) return true;
  }
  return false;
}

/** The decoded-event form of raw bytes: `{"bytes": standard base64 with padding}`. */
export function bytesValue(bytes) {
  return { bytes: Buffer.from(bytes).toString('base64') };
}

const base64Text = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 with padding, strictly: anything else throws. */
export function fromBase64(text) {
  if (!base64Text.test(text)) throw new Error('invalid base64');
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/** Bytes as text when they are valid UTF-8, else `{bytes}`. */
export function utf8OrBytes(bytes) {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return bytesValue(bytes);
  }
}

const namedEscapes = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };
const replacement = [...utf8.encode('\ufffd')];

/**
 * Go's strconv.Unquote of a double-quoted literal whose quotes were removed: how TiCDC wrote a
 * BINARY/VARBINARY value (strconv.Quote of the bytes). Escapes: \a \b \f \n \r \t \v \\ \",
 * \xHH, \NNN (octal, at most 255), \uHHHH and \UHHHHHHHH (a Unicode scalar value); a bare `"`
 * or newline, or any other escape, throws.
 */
export function goUnquote(text) {
  const out = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i += 1) {
    const char = chars[i];
    if (char === '"' || char === '\n') throw new Error('unescaped quote or newline in literal');
    if (char !== '\\') {
      out.push(...encodeEscaped(char, () => replacement));
      continue;
    }
    const kind = chars[i + 1];
    if (kind in namedEscapes) {
      out.push(namedEscapes[kind]);
      i += 1;
    } else if (kind === 'x' || kind === 'u' || kind === 'U' || /[0-7]/.test(kind ?? '')) {
      const [width, radix, start] =
        kind === 'x'
          ? [2, 16, 2]
          : kind === 'u'
            ? [4, 16, 2]
            : kind === 'U'
              ? [8, 16, 2]
              : [3, 8, 1];
      const digits = chars.slice(i + start, i + start + width).join('');
      const pattern = radix === 16 ? /^[0-9a-fA-F]+$/ : /^[0-7]+$/;
      if (digits.length !== width || !pattern.test(digits))
        throw new Error(`invalid escape at character ${i}`);
      const code = Number.parseInt(digits, radix);
      if (kind === 'u' || kind === 'U') {
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
          throw new Error(`escape is not a valid rune at character ${i}`);
        out.push(...utf8.encode(String.fromCodePoint(code)));
      } else {
        if (code > 255) throw new Error(`octal escape out of range at character ${i}`);
        out.push(code);
      }
      i += start + width - 1;
    } else {
      throw new Error(`invalid escape at character ${i}`);
    }
  }
  return Uint8Array.from(out);
}
