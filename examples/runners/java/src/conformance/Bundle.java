package conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An unpacked fixture bundle (docs/fixture-format.md), checked against its SHA256SUMS before a
 * byte of it is trusted.
 */
public final class Bundle {
  private static final Pattern SUMS_LINE = Pattern.compile("([0-9a-f]{64}) [ *](.+)");

  /** A bundle that fails its checksums; the message names every file at fault. */
  public static final class BundleError extends Exception {
    private static final long serialVersionUID = 1L;

    BundleError(String message) {
      super(message);
    }
  }

  /** One case a decoder answers; {@code expected} is null for a must-reject case. */
  public record Case(String id, String direction, List<OpenProtocol.Message> messages,
      List<Object> expected) {}

  private final Path root;
  private final Map<String, String> sums;
  private final Map<String, Object> manifest;

  private Bundle(Path root, Map<String, String> sums, Map<String, Object> manifest) {
    this.root = root;
    this.sums = sums;
    this.manifest = manifest;
  }

  public int files() {
    return sums.size();
  }

  public Object kitVersion() {
    return manifest.get("kit_version");
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException error) {
      throw new IllegalStateException(error); // every Java platform has SHA-256
    }
  }

  /** A bundle-relative name that stays inside the bundle: no absolute path, .., \ or :. */
  private static boolean isInside(String name) {
    return !name.startsWith("/") && !name.contains("\\") && !name.contains(":")
        && !List.of(name.split("/")).contains("..");
  }

  /**
   * Check every file of the bundle at {@code root} against its SHA256SUMS (which covers the
   * manifest), and the manifest's own sha256 entries against SHA256SUMS.
   */
  @SuppressWarnings("unchecked")
  public static Bundle open(Path root) throws BundleError, IOException {
    String text;
    try {
      text = Files.readString(root.resolve("SHA256SUMS"), StandardCharsets.UTF_8);
    } catch (IOException error) {
      throw new BundleError("SHA256SUMS: cannot read it (" + error + "): not an unpacked bundle");
    }
    Map<String, String> sums = new LinkedHashMap<>();
    List<String> problems = new ArrayList<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].isEmpty() && i == lines.length - 1) {
        continue;
      }
      Matcher match = SUMS_LINE.matcher(lines[i]);
      if (!match.matches() || sums.containsKey(match.group(2)) || !isInside(match.group(2))) {
        problems.add("SHA256SUMS line " + (i + 1) + ": not '<sha256>  <file inside the bundle>'");
      } else {
        sums.put(match.group(2), match.group(1));
      }
    }
    for (Map.Entry<String, String> sum : sums.entrySet()) {
      Path file = root.resolve(sum.getKey());
      if (!Files.isRegularFile(file)) {
        problems.add(sum.getKey() + ": missing");
        continue;
      }
      String actual = sha256(Files.readAllBytes(file));
      if (!actual.equals(sum.getValue())) {
        problems.add(
            sum.getKey() + ": sha256 " + actual + ", but SHA256SUMS says " + sum.getValue());
      }
    }
    try (Stream<Path> walk = Files.walk(root)) {
      walk.filter(path -> !Files.isDirectory(path))
          .map(path -> root.relativize(path).toString().replace('\\', '/'))
          .filter(name -> !name.equals("SHA256SUMS") && !sums.containsKey(name))
          .sorted()
          .forEach(name -> problems.add(name + ": not listed in SHA256SUMS"));
    }
    if (!problems.isEmpty()) {
      throw new BundleError(String.join("\n", problems));
    }
    Bundle bundle = new Bundle(root, sums, (Map<String, Object>) Json.parseKit(
        Files.readString(root.resolve("manifest.json"), StandardCharsets.UTF_8)));
    for (Object fixture : ((Map<String, Object>) bundle.manifest.get("fixtures")).values()) {
      Map<String, Object> entry = (Map<String, Object>) fixture;
      ((Map<String, Object>) entry.get("sha256")).forEach((name, digest) -> {
        if (!digest.equals(sums.get(name))) {
          problems.add(name + ": the manifest's sha256 " + digest + " is not SHA256SUMS's");
        }
      });
    }
    if (!problems.isEmpty()) {
      throw new BundleError(String.join("\n", problems));
    }
    return bundle;
  }

  /** A file the manifest names, read only when SHA256SUMS vouches for it; null stays null. */
  private byte[] checked(Object name) {
    if (name == null) {
      return null;
    }
    if (!sums.containsKey((String) name)) {
      throw new IllegalStateException(name + ": named by the manifest, not in SHA256SUMS");
    }
    try {
      return Files.readAllBytes(root.resolve((String) name));
    } catch (IOException error) {
      throw new UncheckedIOException(error);
    }
  }

  /** The JSON Lines of a checked file (split on \n only: text values hold U+2028). */
  private List<Object> jsonLines(Object name) throws IOException {
    List<Object> documents = new ArrayList<>();
    for (String line : new String(checked(name), StandardCharsets.UTF_8).split("\n")) {
      if (!line.isEmpty()) {
        documents.add(Json.parseKit(line));
      }
    }
    return documents;
  }

  /**
   * Whether a manifest case is a must-reject case of category invalid-value (tier recommended):
   * a value outside its column type, which only a decoder checking values rejects.
   */
  @SuppressWarnings("unchecked")
  public static boolean isValueCheck(Map<String, Object> entry) {
    return "reject".equals(entry.get("direction"))
        && ((List<Object>) entry.get("tags")).contains("invalid-value");
  }

  /**
   * Whether a manifest case's messages are compressed (large-message-handle-compression snappy
   * or lz4, tag compression): this small decoder has no snappy or LZ4 and leaves them out.
   */
  @SuppressWarnings("unchecked")
  public static boolean isCompressed(Map<String, Object> entry) {
    return ((List<Object>) entry.get("tags")).contains("compression");
  }

  /** The number of compressed decode and reject cases of {@code protocol}, left out. */
  @SuppressWarnings("unchecked")
  public long compressedCases(String protocol) {
    return ((List<Object>) manifest.get("cases")).stream()
        .map(item -> (Map<String, Object>) item)
        .filter(entry -> protocol.equals(entry.get("protocol"))
            && !"encode".equals(entry.get("direction")) && isCompressed(entry))
        .count();
  }

  /** The number of invalid-value cases of {@code protocol}, which {@link #decoderCases} leaves out. */
  @SuppressWarnings("unchecked")
  public long valueChecks(String protocol) {
    return ((List<Object>) manifest.get("cases")).stream()
        .map(item -> (Map<String, Object>) item)
        .filter(entry -> protocol.equals(entry.get("protocol")) && isValueCheck(entry))
        .count();
  }

  /**
   * The cases of {@code protocol} a decoder answers (decode and reject), in id order, but for
   * the invalid-value cases.
   */
  @SuppressWarnings("unchecked")
  public List<Case> decoderCases(String protocol) throws IOException {
    Map<String, Object> fixtures = (Map<String, Object>) manifest.get("fixtures");
    List<Case> cases = new ArrayList<>();
    for (Object item : (List<Object>) manifest.get("cases")) {
      Map<String, Object> entry = (Map<String, Object>) item;
      String direction = (String) entry.get("direction");
      if (!protocol.equals(entry.get("protocol")) || direction.equals("encode")
          || isValueCheck(entry) || isCompressed(entry)) {
        continue;
      }
      Map<String, Object> fixture = (Map<String, Object>) fixtures.get(entry.get("fixture"));
      List<OpenProtocol.Message> messages = new ArrayList<>();
      for (Object message : (List<Object>) fixture.get("messages")) {
        Map<String, Object> files = (Map<String, Object>) message;
        messages.add(
            new OpenProtocol.Message(checked(files.get("key")), checked(files.get("value"))));
      }
      List<Object> expected = direction.equals("decode") ? jsonLines(fixture.get("decoded")) : null;
      cases.add(new Case((String) entry.get("id"), direction, messages, expected));
    }
    return cases;
  }
}
