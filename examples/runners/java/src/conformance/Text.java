package conformance;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.regex.Pattern;

/**
 * Bytes and text as TiCDC's Open Protocol carries them (docs/open-protocol.md, "Values" and "JSON
 * text"). Profile ticdc copies bytes that are not valid UTF-8 raw into its JSON, so a decoder must
 * read JSON from bytes without losing any: each such byte becomes the lone surrogate U+DC80 + byte
 * (the "surrogate escape" of Python's codecs), which Java strings can hold, and turns back into
 * that byte when the value is bytes.
 */
final class Text {
  private static final Pattern BASE64 =
      Pattern.compile("(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?");
  private static final byte[] REPLACEMENT = "\ufffd".getBytes(StandardCharsets.UTF_8);
  private static final Map<Character, Integer> NAMED_ESCAPES = Map.of(
      'a', 7, 'b', 8, 'f', 12, 'n', 10, 'r', 13, 't', 9, 'v', 11, '\\', 92, '"', 34);

  private Text() {}

  /** Strictly decoded UTF-8 (a byte order mark stays), or null when the bytes are not UTF-8. */
  static String strictUtf8(byte[] bytes, int offset, int length) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes, offset, length))
          .toString();
    } catch (CharacterCodingException error) {
      return null;
    }
  }

  /** The length of the valid UTF-8 sequence at {@code bytes[i]}, or 0. */
  private static int sequenceLength(byte[] bytes, int i) {
    int lead = bytes[i] & 0xff;
    if (lead < 0x80) {
      return 1;
    }
    int length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3
        : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length == 0 || i + length > bytes.length) {
      return 0;
    }
    for (int k = 1; k < length; k++) {
      if ((bytes[i + k] & 0xc0) != 0x80) {
        return 0;
      }
    }
    int second = bytes[i + 1] & 0xff;
    boolean overlong = (lead == 0xe0 && second < 0xa0) || (lead == 0xf0 && second < 0x90);
    boolean outOfRange = (lead == 0xed && second > 0x9f) || (lead == 0xf4 && second > 0x8f);
    return overlong || outOfRange ? 0 : length;
  }

  /** UTF-8 bytes as text, each byte that is not part of valid UTF-8 kept as U+DC80 + byte. */
  static String decodeEscaping(byte[] bytes) {
    String strict = strictUtf8(bytes, 0, bytes.length);
    if (strict != null) {
      return strict;
    }
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < bytes.length; ) {
      int length = sequenceLength(bytes, i);
      if (length == 0) {
        text.append((char) (0xdc00 + (bytes[i] & 0xff)));
        i += 1;
      } else {
        text.append(new String(bytes, i, length, StandardCharsets.UTF_8));
        i += length;
      }
    }
    return text.toString();
  }

  /**
   * The bytes a text stands for: UTF-8, with each lone U+DC80..U+DCFF as {@code invalidByte} maps
   * its raw byte; any other lone surrogate cannot be encoded.
   */
  static byte[] encodeEscaped(String text, IntFunction<byte[]> invalidByte) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    text.codePoints().forEach(code -> {
      if (code >= 0xdc80 && code <= 0xdcff) {
        out.writeBytes(invalidByte.apply(code - 0xdc00));
      } else if (code >= 0xd800 && code <= 0xdfff) {
        throw new IllegalArgumentException("text holds a lone surrogate");
      } else {
        out.writeBytes(Character.toString(code).getBytes(StandardCharsets.UTF_8));
      }
    });
    return out.toByteArray();
  }

  /** The decoded-event form of raw bytes: {"bytes": standard base64 with padding}. */
  static Map<String, Object> bytesValue(byte[] bytes) {
    return Map.of("bytes", Base64.getEncoder().encodeToString(bytes));
  }

  /** A text value, or {bytes} when it carries raw bytes that were not valid UTF-8. */
  static Object textOrBytes(String text) {
    boolean lone = text.codePoints().anyMatch(code -> code >= 0xd800 && code <= 0xdfff);
    return lone ? bytesValue(encodeEscaped(text, b -> new byte[] {(byte) b})) : text;
  }

  /** Standard base64 with padding, strictly. */
  static byte[] fromBase64(String text) {
    if (!BASE64.matcher(text).matches()) {
      throw new IllegalArgumentException("invalid base64");
    }
    return Base64.getDecoder().decode(text);
  }

  /** Bytes as text when they are valid UTF-8, else {bytes}. */
  static Object utf8OrBytes(byte[] bytes) {
    String text = strictUtf8(bytes, 0, bytes.length);
    return text != null ? text : bytesValue(bytes);
  }

  /**
   * Go's strconv.Unquote of a double-quoted literal whose quotes were removed: how TiCDC wrote a
   * BINARY/VARBINARY value. Escapes: \a \b \f \n \r \t \v \\ \", \xHH, \NNN (octal, at most
   * 255), \\uHHHH and \UHHHHHHHH (a Unicode scalar value); a bare quote or newline, or any other
   * escape, is refused.
   */
  static byte[] goUnquote(String text) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int[] chars = text.codePoints().toArray();
    for (int i = 0; i < chars.length; i++) {
      int c = chars[i];
      if (c == '"' || c == '\n') {
        throw new IllegalArgumentException("unescaped quote or newline in literal");
      }
      if (c != '\\') {
        out.writeBytes(encodeEscaped(Character.toString(c), b -> REPLACEMENT));
        continue;
      }
      int kind = i + 1 < chars.length ? chars[i + 1] : -1;
      if (kind >= 0 && kind < 0x10000 && NAMED_ESCAPES.containsKey((char) kind)) {
        out.write(NAMED_ESCAPES.get((char) kind));
        i += 1;
        continue;
      }
      boolean octal = kind >= '0' && kind <= '7';
      int width = switch (kind) {
        case 'x' -> 2;
        case 'u' -> 4;
        case 'U' -> 8;
        default -> octal ? 3 : -1;
      };
      int start = octal ? i + 1 : i + 2;
      if (width < 0 || start + width > chars.length) {
        throw new IllegalArgumentException("invalid escape at character " + i);
      }
      String digits = new String(chars, start, width);
      if (!digits.matches(octal ? "[0-7]+" : "[0-9a-fA-F]+")) {
        throw new IllegalArgumentException("invalid escape at character " + i);
      }
      int code = Integer.parseUnsignedInt(digits, octal ? 8 : 16);
      if (kind == 'u' || kind == 'U') {
        if (code < 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
          throw new IllegalArgumentException("escape is not a valid rune at character " + i);
        }
        out.writeBytes(Character.toString(code).getBytes(StandardCharsets.UTF_8));
      } else if (code > 255) {
        throw new IllegalArgumentException("octal escape out of range at character " + i);
      } else {
        out.write(code);
      }
      i = start + width - 1;
    }
    return out.toByteArray();
  }
}
