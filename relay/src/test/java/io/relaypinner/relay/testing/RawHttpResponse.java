package io.relaypinner.relay.testing;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * An HTTP/1.1 response read byte by byte from a stream, for tests that need what
 * {@code java.net.http} hides: exact headers, HEAD responses, what follows on the connection.
 * Bodies are read by {@code Content-Length} only (the server never uses chunked responses).
 */
public record RawHttpResponse(
    String statusLine, int status, Map<String, List<String>> headers, byte[] body) {

  /** The first value of a header (case-insensitive name), or null. */
  public String header(final String name) {
    final List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
    return values == null ? null : values.get(0);
  }

  /** All values of a header (case-insensitive name). */
  public List<String> headerValues(final String name) {
    return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
  }

  public String bodyText() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /**
   * Reads one response.
   *
   * @param noBody true for answers to HEAD: Content-Length is present but no body follows
   */
  public static RawHttpResponse read(final InputStream in, final boolean noBody)
      throws IOException {
    final String statusLine = readLine(in);
    final String[] parts = statusLine.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP status line: " + statusLine);
    }
    final Map<String, List<String>> headers = new TreeMap<>();
    for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
      final int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new IOException("bad header line: " + line);
      }
      headers.computeIfAbsent(line.substring(0, colon).toLowerCase(Locale.ROOT),
          k -> new ArrayList<>()).add(line.substring(colon + 1).strip());
    }
    final int status = Integer.parseInt(parts[1]);
    final List<String> length = headers.get("content-length");
    byte[] body = new byte[0];
    if (!noBody && length != null && status != 204 && status != 304) {
      body = in.readNBytes(Integer.parseInt(length.get(0)));
    }
    return new RawHttpResponse(statusLine, status, headers, body);
  }

  private static String readLine(final InputStream in) throws IOException {
    final ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (true) {
      final int b = in.read();
      if (b < 0) {
        throw new EOFException("connection closed after " + line.size() + " bytes of a line");
      }
      if (b == '\n') {
        final byte[] bytes = line.toByteArray();
        final int end = bytes.length > 0 && bytes[bytes.length - 1] == '\r'
            ? bytes.length - 1 : bytes.length;
        return new String(bytes, 0, end, StandardCharsets.ISO_8859_1);
      }
      line.write(b);
    }
  }
}
