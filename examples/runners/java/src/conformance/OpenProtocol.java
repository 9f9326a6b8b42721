package conformance;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A TiCDC Open Protocol decoder: Kafka key and value bytes to decoded events in the JSON form of
 * docs/decoded-events.md, for both producer profiles (tiflow: classic TiCDC; ticdc: the new
 * architecture) and the legacy 2020 forms. The rules are docs/open-protocol.md's:
 *
 * <pre>
 *   key   = version:u64be(1) ‖ { length:u64be ‖ key JSON }×N
 *   value =                    { length:u64be ‖ value JSON }×N     (resolved: length 0, no JSON)
 * </pre>
 *
 * <p>Key JSON: ts (uint64), scm, tbl, rid, ptn (int64), t (1 row, 2 DDL, 3 resolved), ohk, ccl.
 * Row value: u (new image), p (old image of an update), d (old image of a delete); a column is
 * {t: type code, h: true (handle key), f: flag bits, v: value}. Every other input is refused with
 * a {@link DecodeError} naming the part, the byte offset of the entry and the JSON Pointer, and
 * the class of the fault (docs/fixture-format.md, must-reject categories): framing, length, type,
 * range, schema or encoding.
 */
public final class OpenProtocol {
  private static final BigInteger UINT64_MAX = BigInteger.TWO.pow(64).subtract(BigInteger.ONE);
  private static final BigInteger INT64_MIN = BigInteger.TWO.pow(63).negate();
  private static final BigInteger INT64_MAX = BigInteger.TWO.pow(63).subtract(BigInteger.ONE);
  private static final Set<Integer> INTEGERS = Set.of(1, 2, 3, 8, 9, 13, 16, 247, 248);
  private static final Set<Integer> STRINGS = Set.of(15, 253, 254);
  private static final Set<Integer> BASE64 = Set.of(249, 250, 251, 252);
  private static final Set<Integer> TEXTS = Set.of(10, 11, 12, 14, 225, 245);
  private static final Pattern DECIMAL = Pattern.compile("-?[0-9]+(?:\\.[0-9]+)?");
  private static final Pattern TIMESTAMP =
      Pattern.compile("[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]{1,6})?");
  private static final Set<String> KEY_MEMBERS = Set.of("ts", "scm", "tbl", "rid", "ptn", "t",
      "ohk", "ccl");

  private OpenProtocol() {}

  /** A message the decoder refuses, with where (part, byte offset, JSON Pointer) and why. */
  public static final class DecodeError extends Exception {
    private static final long serialVersionUID = 1L;
    private final String category;

    DecodeError(String category, String reason, int messageIndex, String part, long offset,
        String pointer) {
      super("message " + messageIndex + " " + part + " at byte " + offset
          + (pointer.isEmpty() ? "" : " " + pointer) + ": " + reason);
      this.category = category;
    }

    /** The class of the fault: framing, length, type, range, schema or encoding. */
    public String category() {
      return category;
    }
  }

  /** A value reader's refusal, with the class of its fault. */
  private static final class Invalid extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String category;

    Invalid(String category, String reason) {
      super(reason);
      this.category = category;
    }
  }

  /** A number that is not what the member needs is out of range; anything else a wrong type. */
  private static String numberClass(Object raw) {
    return raw instanceof Json.Number ? "range" : "type";
  }

  /** A Kafka message: key and value bytes, either null. */
  public record Message(byte[] key, byte[] value) {}

  /** One JSON document inside the frame: what an error needs to say where it is. */
  private record Entry(String part, long offset, int messageIndex) {
    DecodeError fail(String category, String reason, String... tokens) {
      StringBuilder pointer = new StringBuilder();
      for (String token : tokens) {
        pointer.append('/').append(token.replace("~", "~0").replace("/", "~1"));
      }
      return new DecodeError(category, reason, messageIndex, part, offset, pointer.toString());
    }

    Object parse(byte[] bytes) throws DecodeError {
      try {
        return Json.parseWire(Text.decodeEscaping(bytes));
      } catch (IOException | RuntimeException error) { // Jackson's limits throw unchecked ones
        String reason = error.getMessage().split("\n")[0];
        // a document cut off at the end of its entry: the entry's length is too small
        String category = reason.contains("end-of-input") ? "length" : "framing";
        throw fail(category, "invalid JSON: " + reason);
      }
    }
  }

  /** A JSON integer within [min, max], else null (floats, -0, other types). */
  private static BigInteger integerIn(Object raw, BigInteger min, BigInteger max) {
    if (!(raw instanceof Json.Number number) || !number.isInteger()) {
      return null;
    }
    BigInteger value = new BigInteger(number.text());
    return value.compareTo(min) >= 0 && value.compareTo(max) <= 0 ? value : null;
  }

  private static double floatOf(Object raw) {
    if (!(raw instanceof Json.Number number)) {
      throw new Invalid("type", "expected a JSON number");
    }
    double value = Double.parseDouble(number.text()); // Go writes -0.0 as -0
    if (!Double.isFinite(value)) {
      throw new Invalid("range", "a float beyond float64, which TiCDC never writes");
    }
    return value;
  }

  /** A JSON string of the shape TiDB prints a DECIMAL or TIMESTAMP (server zone) in. */
  private static String matching(Object raw, Pattern pattern, String what) {
    String text = text(raw);
    if (!pattern.matcher(text).matches()) {
      throw new Invalid("range", "not " + what + " text: " + Json.write(text));
    }
    return text;
  }

  private static String text(Object raw) {
    if (!(raw instanceof String text)) {
      throw new Invalid("type", "expected a JSON string");
    }
    return text;
  }

  /** Any JSON scalar as it is: type code 255 and legacy columns without f. */
  private static Object scalar(Object raw) {
    if (raw instanceof String) {
      return raw;
    }
    if (raw instanceof Json.Number number) {
      return number.isInteger() ? new BigInteger(number.text()) : (Object) floatOf(raw);
    }
    throw new Invalid("type", "expected a JSON scalar");
  }

  /** The decoded value of a column's v; flags null is the legacy form, whose v passes as it is. */
  private static Object readValue(int typeCode, Object raw, BigInteger flags) {
    if (flags == null) {
      return raw == null ? null : scalar(raw);
    }
    boolean known = INTEGERS.contains(typeCode) || STRINGS.contains(typeCode)
        || BASE64.contains(typeCode) || TEXTS.contains(typeCode)
        || Set.of(4, 5, 6, 7, 246, 255).contains(typeCode);
    if (!known) { // TiCDC writes only the type codes of docs/open-protocol.md, null or not
      throw new Invalid("range", "unknown type code " + typeCode);
    }
    if (raw == null) {
      return null;
    }
    boolean binary = flags.testBit(0); // BinaryFlag
    if (INTEGERS.contains(typeCode)) {
      BigInteger value = integerIn(raw, INT64_MIN, UINT64_MAX);
      if (value == null) {
        throw new Invalid(numberClass(raw), "expected a JSON integer in the int64/uint64 range");
      }
      return value;
    }
    if (STRINGS.contains(typeCode)) {
      return binary ? Text.bytesValue(Text.goUnquote(text(raw))) : Text.textOrBytes(text(raw));
    }
    if (BASE64.contains(typeCode)) {
      byte[] bytes = Text.fromBase64(text(raw));
      return binary ? Text.bytesValue(bytes) : Text.utf8OrBytes(bytes);
    }
    if (TEXTS.contains(typeCode)) {
      return text(raw);
    }
    return switch (typeCode) {
      case 4, 5 -> floatOf(raw); // FLOAT (shortest float32 digits, read as float64), DOUBLE
      case 6 -> throw new Invalid("range", "a column of type NULL holds only null");
      case 7 -> ordered("timestamp", matching(raw, TIMESTAMP, "a timestamp"), "zone", null);
      case 246 -> Map.of("decimal", matching(raw, DECIMAL, "a decimal")); // scale kept: "1.50"
      default -> scalar(raw); // 255: GEOMETRY and the like, the JSON value as it is
    };
  }

  private static Map<String, Object> ordered(Object... pairs) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      map.put((String) pairs[i], pairs[i + 1]);
    }
    return map;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Object raw, Entry entry, String reason,
      String... tokens) throws DecodeError {
    if (!(raw instanceof Map<?, ?>)) {
      throw entry.fail("type", reason, tokens);
    }
    return (Map<String, Object>) raw;
  }

  private static String unknown(Map<String, Object> object, Set<String> known) {
    return object.keySet().stream().filter(name -> !known.contains(name)).findFirst().orElse(null);
  }

  private static List<Object> columns(Object raw, String member, Entry entry) throws DecodeError {
    List<Object> columns = new ArrayList<>();
    for (Map.Entry<String, Object> named : object(raw, entry, "must be an object of columns",
        member).entrySet()) {
      String name = named.getKey();
      Map<String, Object> column = object(named.getValue(), entry, "a column must be an object",
          member, name);
      String extra = unknown(column, Set.of("t", "h", "f", "v"));
      if (extra != null) {
        throw entry.fail("schema", "unknown column member", member, name, extra);
      }
      if (!column.containsKey("t")) {
        throw entry.fail("schema", "column has no t", member, name);
      }
      BigInteger typeCode = integerIn(column.get("t"), BigInteger.ZERO, BigInteger.valueOf(255));
      if (typeCode == null) {
        throw entry.fail(numberClass(column.get("t")), "t must be a type code 0..255", member,
            name, "t");
      }
      BigInteger flags = integerIn(column.get("f"), BigInteger.ZERO, UINT64_MAX);
      if (column.containsKey("f") && flags == null) {
        throw entry.fail(numberClass(column.get("f")), "f must be uint64 flag bits", member, name,
            "f");
      }
      if (column.containsKey("h") && column.get("h") != Boolean.TRUE) {
        String category = column.get("h") instanceof Boolean ? "range" : "type";
        throw entry.fail(category, "h is only ever present as true", member, name, "h");
      }
      if (!column.containsKey("v")) {
        throw entry.fail("schema", "column has no v", member, name);
      }
      Object value;
      try {
        value = readValue(typeCode.intValue(), column.get("v"), flags);
      } catch (IllegalArgumentException error) { // Text's helpers refuse bad escapes and base64
        String category = error instanceof Invalid invalid ? invalid.category : "encoding";
        throw entry.fail(category, error.getMessage(), member, name, "v");
      }
      columns.add(ordered("name", name, "value", value, "type_code", typeCode, "flags", flags,
          "handle_key", column.get("h") == Boolean.TRUE, "mysql_type", null, "ambiguity", null));
    }
    return columns;
  }

  /** The checked key of one event. */
  private record Key(BigInteger ts, String scm, String tbl, BigInteger rid, BigInteger ptn,
      int t, boolean ohk, String ccl) {}

  private static Key checkKey(Object parsed, Entry entry) throws DecodeError {
    Map<String, Object> raw = object(parsed, entry, "key must be a JSON object");
    String extra = unknown(raw, KEY_MEMBERS);
    if (extra != null) {
      throw entry.fail("schema", "unknown key member", extra);
    }
    for (String name : List.of("ts", "t")) {
      if (!raw.containsKey(name)) {
        throw entry.fail("schema", "key has no " + name);
      }
    }
    BigInteger ts = integerMember(raw, "ts", BigInteger.ZERO, UINT64_MAX, entry);
    BigInteger rid = integerMember(raw, "rid", INT64_MIN, INT64_MAX, entry);
    BigInteger ptn = integerMember(raw, "ptn", INT64_MIN, INT64_MAX, entry);
    for (String name : List.of("scm", "tbl", "ccl")) {
      if (raw.containsKey(name) && !(raw.get(name) instanceof String)) {
        throw entry.fail("type", name + " must be a string", name);
      }
    }
    Object ohk = raw.getOrDefault("ohk", Boolean.FALSE);
    if (!(ohk instanceof Boolean)) {
      throw entry.fail("type", "ohk must be a boolean", "ohk");
    }
    BigInteger t = integerIn(raw.get("t"), BigInteger.ONE, BigInteger.valueOf(3));
    if (t == null) {
      throw entry.fail(numberClass(raw.get("t")), "t must be 1 (row), 2 (DDL) or 3 (resolved)",
          "t");
    }
    return new Key(ts, (String) raw.getOrDefault("scm", ""), (String) raw.getOrDefault("tbl", ""),
        rid, ptn, t.intValue(), (Boolean) ohk, (String) raw.get("ccl"));
  }

  private static BigInteger integerMember(Map<String, Object> raw, String name, BigInteger min,
      BigInteger max, Entry entry) throws DecodeError {
    if (!raw.containsKey(name)) {
      return null;
    }
    BigInteger value = integerIn(raw.get(name), min, max);
    if (value == null) {
      throw entry.fail(numberClass(raw.get(name)),
          name + " must be an integer in [" + min + ", " + max + "]", name);
    }
    return value;
  }

  private static Map<String, Object> row(Key key, Object parsed, Entry entry) throws DecodeError {
    Map<String, Object> value = object(parsed, entry, "row value must be a JSON object");
    String extra = unknown(value, Set.of("u", "p", "d"));
    if (extra != null) {
      throw entry.fail("schema", "unknown row member", extra);
    }
    String op;
    Object before = null;
    Object after = null;
    if (value.containsKey("d")) {
      if (value.size() > 1) {
        throw entry.fail("schema", "d (delete) cannot come with u or p");
      }
      op = "delete";
      before = columns(value.get("d"), "d", entry);
    } else if (value.containsKey("u")) {
      op = value.containsKey("p") ? "update" : "insert";
      after = columns(value.get("u"), "u", entry);
      before = value.containsKey("p") ? columns(value.get("p"), "p", entry) : null;
    } else {
      throw entry.fail("schema", "row value needs u (insert, update) or d (delete)");
    }
    return ordered("kind", "row", "commit_ts", key.ts(), "schema", key.scm(), "table", key.tbl(),
        "op", op, "before", before, "after", after, "partition_id", key.ptn(), "table_id", null,
        "row_id", key.rid(), "schema_version", null, "handle_key_only", key.ohk(),
        "claim_check_location", key.ccl());
  }

  private static Map<String, Object> ddl(Key key, Object parsed, Entry entry) throws DecodeError {
    Map<String, Object> value = object(parsed, entry, "DDL value must be a JSON object");
    if (!new TreeSet<>(value.keySet()).equals(new TreeSet<>(Set.of("q", "t")))) {
      throw entry.fail("schema", "DDL value has exactly q and t");
    }
    if (!(value.get("q") instanceof String query)) {
      throw entry.fail("type", "q must be a string", "q");
    }
    // a JSON number, not a string as old documents say
    BigInteger ddlType = integerIn(value.get("t"), BigInteger.ZERO, BigInteger.valueOf(255));
    if (ddlType == null) {
      throw entry.fail(numberClass(value.get("t")), "t must be an ActionType number 0..255", "t");
    }
    return ordered("kind", "ddl", "commit_ts", key.ts(), "schema", key.scm(), "table", key.tbl(),
        "query", query, "ddl_type", ddlType, "ddl_kind", null, "table_info", null,
        "pre_table_info", null);
  }

  /** The length-prefixed entry at {@code position}: its bytes; {@code next[0]} gets the end. */
  private static byte[] readEntry(byte[] data, int position, String part, int messageIndex,
      int[] next) throws DecodeError {
    int left = data.length - position;
    if (left < 8) {
      throw new DecodeError("length", left + " bytes left where an 8-byte length belongs",
          messageIndex, part, position, "");
    }
    long size = readLong(data, position);
    if (size < 0 || size > left - 8) {
      throw new DecodeError("length", "entry length " + Long.toUnsignedString(size)
          + " exceeds the " + (left - 8) + " bytes left", messageIndex, part, position, "");
    }
    next[0] = position + 8 + (int) size;
    return Arrays.copyOfRange(data, position + 8, next[0]);
  }

  private static long readLong(byte[] data, int position) {
    long value = 0;
    for (int i = 0; i < 8; i++) {
      value = (value << 8) | (data[position + i] & 0xff);
    }
    return value;
  }

  /** Decode one Kafka message into its events, in order. */
  public static List<Object> decode(Message message, int messageIndex) throws DecodeError {
    byte[] key = message.key();
    if (key == null || key.length < 8) {
      throw new DecodeError(key == null ? "framing" : "length",
          "key must start with the 8-byte version", messageIndex, "key", 0, "");
    }
    long version = readLong(key, 0);
    if (version != 1) {
      throw new DecodeError("framing",
          "version " + Long.toUnsignedString(version) + ", only version 1 exists", messageIndex,
          "key", 0, "");
    }
    byte[] value = message.value() == null ? new byte[0] : message.value();
    List<Object> events = new ArrayList<>();
    int[] keyPosition = {8};
    int[] valuePosition = {0};
    while (keyPosition[0] < key.length) {
      Entry keyEntry = new Entry("key", keyPosition[0] + 8L, messageIndex);
      byte[] keyJson = readEntry(key, keyPosition[0], "key", messageIndex, keyPosition);
      if (valuePosition[0] >= value.length) {
        throw new DecodeError("framing", "key entry " + events.size() + " has no value entry "
            + "(a resolved event has 8 zero bytes)", messageIndex, "value", valuePosition[0], "");
      }
      Entry valueEntry = new Entry("value", valuePosition[0] + 8L, messageIndex);
      byte[] valueJson = readEntry(value, valuePosition[0], "value", messageIndex, valuePosition);
      Key parsedKey = checkKey(keyEntry.parse(keyJson), keyEntry);
      if (parsedKey.t() == 3) {
        if (valueJson.length > 0) {
          throw valueEntry.fail("framing", "a resolved event's value entry must be empty");
        }
        events.add(ordered("kind", "resolved", "commit_ts", parsedKey.ts()));
      } else {
        Object parsed = valueEntry.parse(valueJson);
        events.add(parsedKey.t() == 1 ? row(parsedKey, parsed, valueEntry)
            : ddl(parsedKey, parsed, valueEntry));
      }
    }
    if (valuePosition[0] < value.length) {
      throw new DecodeError("framing", "value has more entries than the key", messageIndex,
          "value", valuePosition[0], "");
    }
    return events;
  }

  /** Decode the messages of one partition in order, as one consumer: every event, in order. */
  public static List<Object> decode(List<Message> messages) throws DecodeError {
    List<Object> events = new ArrayList<>();
    for (int i = 0; i < messages.size(); i++) {
      events.addAll(decode(messages.get(i), i));
    }
    return events;
  }
}
