package conformance;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * JSON without losing numbers (docs/fixture-format.md, "Comparing decoded events"), on Jackson's
 * streaming API. A document becomes a tree of {@code LinkedHashMap} (members in order; a member
 * written twice keeps its last value in its first place, as Go's readers do), {@code ArrayList},
 * {@code String}, {@code Boolean}, {@code null} and numbers. Numbers are read by a caller's rule:
 * on the wire as {@link Number}, their exact text, for the decoder to read by column type; in the
 * kit's own files as {@code BigInteger} (integers) and {@code Double} (the rest), so that 2 and
 * 2.0 differ and {@code Double.equals} tells -0.0 from 0.0.
 */
public final class Json {
  private static final JsonFactory FACTORY =
      JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
  private static final Pattern INTEGER = Pattern.compile("-?(?:0|[1-9][0-9]*)");

  private Json() {}

  /** A JSON number as written: its exact text. */
  public record Number(String text) {
    /** Whether the text is an integer (not {@code -0}, which Go writes only for a float). */
    public boolean isInteger() {
      return INTEGER.matcher(text).matches() && !text.equals("-0");
    }
  }

  /** A number of the kit's JSON: {@code BigInteger} for integers, {@code Double} otherwise. */
  public static Object kitNumber(String text) {
    Number number = new Number(text);
    return number.isInteger() ? new BigInteger(text) : Double.valueOf(text);
  }

  /** JSON as TiCDC writes it, numbers kept as {@link Number}. */
  public static Object parseWire(String text) throws IOException {
    return parse(text, Number::new);
  }

  /** JSON written by the kit (manifest, decoded.jsonl, testee requests). */
  public static Object parseKit(String text) throws IOException {
    return parse(text, Json::kitNumber);
  }

  private static Object parse(String text, Function<String, Object> number) throws IOException {
    try (JsonParser parser = FACTORY.createParser(text)) {
      Object value = read(parser, parser.nextToken(), number);
      if (parser.nextToken() != null) {
        throw new IOException("trailing data after the JSON value");
      }
      return value;
    }
  }

  private static Object read(JsonParser parser, JsonToken token, Function<String, Object> number)
      throws IOException {
    if (token == null) {
      throw new IOException("no JSON value");
    }
    return switch (token) {
      case START_OBJECT -> {
        Map<String, Object> object = new LinkedHashMap<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          String name = parser.currentName();
          object.put(name, read(parser, parser.nextToken(), number));
        }
        yield object;
      }
      case START_ARRAY -> {
        List<Object> array = new ArrayList<>();
        for (JsonToken item = parser.nextToken(); item != JsonToken.END_ARRAY;
            item = parser.nextToken()) {
          array.add(read(parser, item, number));
        }
        yield array;
      }
      case VALUE_STRING -> parser.getText();
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> number.apply(parser.getText());
      case VALUE_TRUE -> Boolean.TRUE;
      case VALUE_FALSE -> Boolean.FALSE;
      case VALUE_NULL -> null;
      default -> throw new IOException("unexpected " + token);
    };
  }

  /** A float as JSON that a reader takes for a float: 2.0 as "2.0", minus zero as "-0.0". */
  public static String floatText(double value) {
    if (!Double.isFinite(value)) {
      throw new IllegalArgumentException(value + " is not a JSON number");
    }
    return Double.toString(value); // always a '.' or an exponent; round-trips exactly
  }

  /** JSON text (ASCII, non-ASCII as escapes) of a tree of the kinds {@link #parseKit} makes. */
  public static String write(Object value) {
    StringWriter out = new StringWriter();
    try (JsonGenerator generator = FACTORY.createGenerator(out)) {
      write(generator, value);
    } catch (IOException error) {
      throw new UncheckedIOException(error);
    }
    return out.toString();
  }

  private static void write(JsonGenerator generator, Object value) throws IOException {
    if (value == null) {
      generator.writeNull();
    } else if (value instanceof Map<?, ?> object) {
      generator.writeStartObject();
      for (Map.Entry<?, ?> member : object.entrySet()) {
        generator.writeFieldName((String) member.getKey());
        write(generator, member.getValue());
      }
      generator.writeEndObject();
    } else if (value instanceof List<?> array) {
      generator.writeStartArray();
      for (Object item : array) {
        write(generator, item);
      }
      generator.writeEndArray();
    } else if (value instanceof String text) {
      generator.writeString(text);
    } else if (value instanceof BigInteger integer) {
      generator.writeNumber(integer);
    } else if (value instanceof Double real) {
      generator.writeNumber(floatText(real));
    } else if (value instanceof Boolean flag) {
      generator.writeBoolean(flag);
    } else {
      throw new IllegalArgumentException("not a JSON value: " + value.getClass());
    }
  }

  /**
   * How {@code actual} differs from {@code expected}, as "JSON Pointer: expected …, got …"
   * lines (at most a dozen): objects by member whatever the order, arrays in order, integers
   * exactly, floats by value with the sign of zero, an integer never equal to a float.
   */
  public static List<String> differences(Object expected, Object actual) {
    List<String> out = new ArrayList<>();
    differences(expected, actual, "", out);
    return out;
  }

  private static void differences(
      Object expected, Object actual, String pointer, List<String> out) {
    if (out.size() >= 12) {
      return;
    }
    if (expected instanceof Map<?, ?> want && actual instanceof Map<?, ?> got) {
      List<Object> names = new ArrayList<>(want.keySet());
      got.keySet().stream().filter(name -> !want.containsKey(name)).forEach(names::add);
      for (Object name : names) {
        String at = pointer + "/" + ((String) name).replace("~", "~0").replace("/", "~1");
        if (!got.containsKey(name)) {
          out.add(at + ": missing (expected " + show(want.get(name)) + ")");
        } else if (!want.containsKey(name)) {
          out.add(at + ": unexpected member " + show(got.get(name)));
        } else {
          differences(want.get(name), got.get(name), at, out);
        }
      }
    } else if (expected instanceof List<?> want && actual instanceof List<?> got) {
      for (int i = 0; i < Math.max(want.size(), got.size()); i++) {
        if (i >= got.size()) {
          out.add(pointer + "/" + i + ": missing (expected " + show(want.get(i)) + ")");
        } else if (i >= want.size()) {
          out.add(pointer + "/" + i + ": unexpected " + show(got.get(i)));
        } else {
          differences(want.get(i), got.get(i), pointer + "/" + i, out);
        }
      }
    } else if (expected == null ? actual != null : !expected.equals(actual)) {
      // BigInteger never equals Double; Double.equals tells -0.0 from 0.0
      out.add((pointer.isEmpty() ? "/" : pointer) + ": expected " + show(expected) + ", got "
          + show(actual));
    }
  }

  private static String show(Object value) {
    String text = write(value);
    return text.length() > 120 ? text.substring(0, 119) + "…" : text;
  }
}
