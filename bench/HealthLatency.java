import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * GET /health at a fixed request rate over N keep-alive connections (one thread each), the latency
 * of every request measured from the moment it was due, not from when it was sent, so a stall
 * counts against every request it delays (no coordinated omission). wrk, by contrast, sends as
 * fast as answers come back, which on this 2-core machine saturates both cores and measures the
 * run queue. Usage: java bench/HealthLatency.java PORT [rate/s] [connections] [seconds] [warm-up s]
 */
public final class HealthLatency {
  public static void main(final String[] args) throws Exception {
    final int port = Integer.parseInt(args[0]);
    final int rate = args.length > 1 ? Integer.parseInt(args[1]) : 8_000;
    final int connections = args.length > 2 ? Integer.parseInt(args[2]) : 16;
    final int seconds = args.length > 3 ? Integer.parseInt(args[3]) : 10;
    final int warmUp = args.length > 4 ? Integer.parseInt(args[4]) : 5;
    run(port, rate, connections, warmUp, false);
    final long[][] latencies = run(port, rate, connections, seconds, true);
    final long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
    System.out.printf("rate %d/s, %d connections, %d s: %d requests; p50 %s p90 %s p99 %s p99.9 %s max %s%n",
        rate, connections, seconds, all.length, us(all, 0.50), us(all, 0.90), us(all, 0.99),
        us(all, 0.999), us(all, 1.0));
  }

  private static String us(final long[] sorted, final double q) {
    final int i = Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1);
    return String.format("%.0fus", sorted[Math.max(0, i)] / 1000.0);
  }

  private static long[][] run(final int port, final int rate, final int connections,
      final int seconds, final boolean record) throws Exception {
    final long[][] out = new long[connections][];
    final long interval = 1_000_000_000L * connections / rate;
    final int perConnection = (int) ((long) seconds * rate / connections);
    final CountDownLatch done = new CountDownLatch(connections);
    final long start = System.nanoTime() + 50_000_000L;
    for (int c = 0; c < connections; c++) {
      final int id = c;
      final Thread t = new Thread(() -> {
        final long[] lat = new long[perConnection];
        try (Socket s = new Socket()) {
          s.setTcpNoDelay(true);
          s.connect(new InetSocketAddress("127.0.0.1", port));
          final OutputStream o = s.getOutputStream();
          final InputStream in = s.getInputStream();
          final byte[] request = ("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII);
          final byte[] buf = new byte[16384];
          // Spread the connections' schedules over one interval.
          final long offset = interval * id / connections;
          for (int i = 0; i < perConnection; i++) {
            final long due = start + offset + i * interval;
            long now;
            while ((now = System.nanoTime()) < due) {
              LockSupport.parkNanos(due - now);
            }
            o.write(request);
            o.flush();
            readResponse(in, buf);
            lat[i] = System.nanoTime() - due;
          }
        } catch (final Exception e) {
          throw new RuntimeException(e);
        } finally {
          out[id] = lat;
          done.countDown();
        }
      });
      t.start();
    }
    done.await();
    return out;
  }

  /** Reads one response with a Content-Length body. */
  private static void readResponse(final InputStream in, final byte[] buf) throws Exception {
    int n = 0;
    int headerEnd = -1;
    while (headerEnd < 0) {
      final int r = in.read(buf, n, buf.length - n);
      if (r < 0) {
        throw new IllegalStateException("closed");
      }
      n += r;
      for (int i = 3; i < n; i++) {
        if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' && buf[i] == '\n') {
          headerEnd = i + 1;
          break;
        }
      }
    }
    final String head = new String(buf, 0, headerEnd, StandardCharsets.US_ASCII).toLowerCase();
    final int at = head.indexOf("content-length:");
    final int end = head.indexOf('\r', at);
    final int length = Integer.parseInt(head.substring(at + 15, end).trim());
    int body = n - headerEnd;
    while (body < length) {
      final int r = in.read(buf, 0, buf.length);
      if (r < 0) {
        throw new IllegalStateException("closed");
      }
      body += r;
    }
  }
}
