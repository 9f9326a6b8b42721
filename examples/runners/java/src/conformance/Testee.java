package conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A testee (docs/testee-protocol.md) around {@link OpenProtocol}: requests on stdin, one JSON
 * object per line; one response line each on stdout; logs go to stderr.
 *
 * <pre>
 *   ticdc-conformance run --protocol open \
 *       --testee "java -cp classes:jackson-core.jar conformance.Testee"
 * </pre>
 *
 * <p>Numbers: requests are read with integers as BigInteger, and responses written with integers
 * as BigInteger and floats as Double (always with a '.' or an exponent), so that commit ts beyond
 * 2^53, integer vs float and -0.0 survive both ways ({@link Json}).
 */
public final class Testee {
  private Testee() {}

  private static Map<String, Object> response(Object id, String member, Object value) {
    Map<String, Object> response = new LinkedHashMap<>();
    response.put("id", id);
    response.put(member, value);
    return response;
  }

  private static byte[] bytes(Object base64) {
    return base64 == null ? null : Text.fromBase64((String) base64);
  }

  @SuppressWarnings("unchecked")
  static Object answer(Map<String, Object> request) {
    Object id = request.get("id");
    switch ((String) request.get("type")) {
      case "hello" -> {
        return Map.of("protocol_version", BigInteger.ONE,
            "name", "ticdc-conformance example (Java)", "version", "0.1.0",
            "capabilities", Map.of("decode", Map.of("open", List.of("tiflow", "ticdc"))));
      }
      case "decode" -> {
        Map<String, Object> options = (Map<String, Object>) request.get("options");
        Object compression = options == null ? null
            : options.get("large-message-handle-compression");
        if (compression != null && !"none".equals(compression)) {
          String reason = compression + ": this example has no snappy or LZ4 to decompress with";
          return response(id, "error", Map.of("message", reason, "category", "compression"));
        }
        List<OpenProtocol.Message> messages = new ArrayList<>();
        for (Object item : (List<Object>) request.get("messages")) {
          Map<String, Object> message = (Map<String, Object>) item;
          messages.add(
              new OpenProtocol.Message(bytes(message.get("key")), bytes(message.get("value"))));
        }
        try {
          return response(id, "events", OpenProtocol.decode(messages));
        } catch (OpenProtocol.DecodeError error) {
          // category: the class of the fault (docs/testee-protocol.md)
          return response(id, "error",
              Map.of("message", error.getMessage(), "category", error.category()));
        }
      }
      default -> {
        String reason = request.get("type") + " is not implemented";
        return response(id, "skipped", Map.of("reason", reason));
      }
    }
  }

  @SuppressWarnings("unchecked")
  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      Map<String, Object> request = (Map<String, Object>) Json.parseKit(line);
      if ("shutdown".equals(request.get("type"))) {
        break;
      }
      out.print(Json.write(answer(request)) + "\n");
      out.flush(); // the runner waits for each response line
    }
  }
}
