package conformance;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Runs every Open Protocol decode and must-reject case of an unpacked fixture bundle against
 * {@link OpenProtocol} and prints the verdict.
 *
 * <pre>
 *   java -cp classes:jackson-core.jar conformance.Runner ticdc-conformance-fixtures-0.1.0
 * </pre>
 *
 * <p>Exit status: 0 every case passed, 1 a case failed, 2 usage error or a bundle that fails its
 * checksums (refused before any case runs, naming each file at fault).
 */
public final class Runner {
  private Runner() {}

  /** The verdict on one case: null when it passed, else what went wrong. */
  static String check(Bundle.Case testCase) {
    List<Object> events;
    try {
      events = OpenProtocol.decode(testCase.messages());
    } catch (OpenProtocol.DecodeError error) {
      return testCase.expected() == null ? null
          : "rejected a message it must decode: " + error.getMessage();
    } catch (RuntimeException error) {
      return "the decoder crashed: " + error;
    }
    if (testCase.expected() == null) {
      return "accepted a message it must reject (" + events.size() + " event(s) decoded)";
    }
    List<String> found = Json.differences(testCase.expected(), events);
    return found.isEmpty() ? null
        : "decoded events differ (expected vs actual, by JSON Pointer):\n    "
            + String.join("\n    ", found);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: java conformance.Runner UNPACKED_BUNDLE_FOLDER");
      System.exit(2);
    }
    Bundle bundle;
    try {
      bundle = Bundle.open(Path.of(args[0]));
    } catch (Bundle.BundleError error) {
      System.err.println("refused: the bundle " + args[0] + " fails its checksums:\n  "
          + error.getMessage().replace("\n", "\n  "));
      System.exit(2);
      return;
    }
    System.out.println("bundle " + args[0] + ": kit " + bundle.kitVersion() + ", " + bundle.files()
        + " files match SHA256SUMS");
    long started = System.nanoTime();
    int[][] tally = {{0, 0}, {0, 0}}; // decode, reject: passed, failed
    for (Bundle.Case testCase : bundle.decoderCases("open")) {
      String failure = check(testCase);
      tally[testCase.expected() == null ? 1 : 0][failure == null ? 0 : 1]++;
      if (failure != null) {
        System.out.println("FAIL " + testCase.id() + "\n  " + failure);
      }
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    System.out.println("open reject: " + bundle.valueChecks("open") + " invalid-value case(s) left"
        + " out: this decoder does not check values against their column types");
    System.out.println("open: " + bundle.compressedCases("open") + " compressed case(s) left out:"
        + " this decoder has no snappy or LZ4");
    System.out.printf("open decode: %d passed, %d failed%n", tally[0][0], tally[0][1]);
    System.out.printf("open reject: %d passed, %d failed%n", tally[1][0], tally[1][1]);
    int passed = tally[0][0] + tally[1][0];
    int failed = tally[0][1] + tally[1][1];
    System.out.printf(Locale.ROOT,
        "verdict: %s: %d passed, %d failed (Open Protocol, Java, %.2f s)%n",
        failed == 0 ? "PASS" : "FAIL", passed, failed, seconds);
    System.exit(failed == 0 ? 0 : 1);
  }
}
