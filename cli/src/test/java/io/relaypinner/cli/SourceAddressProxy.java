package io.relaypinner.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on 127.0.0.1 whose connections reach {@code target} from another local
 * address ({@code source}, e.g. 127.0.0.2: Linux routes all of 127/8 to lo), so that clients
 * whose sockets cannot be bound (a libp2p {@code Host} dials from the kernel's choice) look to
 * the relay like one other host. Bytes are copied both ways, two threads per connection; a
 * close or reset on either side closes both.
 */
final class SourceAddressProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetAddress source;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  SourceAddressProxy(final String source, final InetSocketAddress target) throws IOException {
    this.source = InetAddress.getByName(source);
    this.target = target;
    this.listener = new ServerSocket(0, 256, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::accept, "proxy-from-" + source);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** The port on 127.0.0.1 to dial instead of the target's. */
  int port() {
    return listener.getLocalPort();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        final Socket client = listener.accept();
        sockets.add(client);
        final Socket upstream = new Socket();
        sockets.add(upstream);
        try {
          upstream.bind(new InetSocketAddress(source, 0));
          upstream.connect(target, 5_000);
        } catch (final IOException e) {
          client.close();
          upstream.close();
          continue;
        }
        pump(client, upstream);
        pump(upstream, client);
      } catch (final IOException e) {
        // closed: the loop ends
      }
    }
  }

  private static void pump(final Socket from, final Socket to) {
    final Thread thread = new Thread(() -> {
      final byte[] buffer = new byte[16 * 1024];
      try {
        final InputStream in = from.getInputStream();
        final OutputStream out = to.getOutputStream();
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (final IOException e) {
        // one side closed or reset: close both below
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, "proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  private static void closeQuietly(final Socket socket) {
    try {
      socket.close();
    } catch (final IOException ignored) {
      // closing anyway
    }
  }

  /** Stops accepting and closes every connection. */
  @Override
  public void close() throws IOException {
    listener.close();
    sockets.forEach(SourceAddressProxy::closeQuietly);
  }
}
