package io.relaypinner.libp2p.multistream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relaypinner.common.Failures;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Wire constants as js-libp2p sends them, and helpers that release every buffer they read. */
final class MultistreamTestSupport {
  /** {@code /multistream/1.0.0\n} with its prefix. */
  static final String HEADER = "132f6d756c746973747265616d2f312e302e300a";
  static final String NOISE = "072f6e6f6973650a";
  static final String YAMUX = "0d2f79616d75782f312e302e300a";
  static final String TLS = "0b2f746c732f312e302e300a";
  static final String NA = "036e610a";
  static final String LS = "036c730a";
  static final String HEADS_ID =
      "/orbitdb/heads/orbitdb/zdpuAuK3BHpS7NvMBivynypqciYCuy2UW77XYBPUYRnLjnw13";

  private MultistreamTestSupport() {}

  static ByteBuf bytes(final String hex) {
    return Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex));
  }

  /** The hex of {@code text} as one message. */
  static String message(final String text) {
    final ByteBuf out = Unpooled.buffer();
    try {
      MultistreamCodec.writeMessage(out, text);
      return ByteBufUtil.hexDump(out);
    } finally {
      out.release();
    }
  }

  static String utf8Hex(final String text) {
    return HexFormat.of().formatHex(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Every outbound buffer, one hex string each, in write order. */
  static List<String> outboundWrites(final EmbeddedChannel channel) {
    final List<String> writes = new ArrayList<>();
    for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
      try {
        writes.add(ByteBufUtil.hexDump(buf));
      } finally {
        buf.release();
      }
    }
    return writes;
  }

  /** Everything that went out, concatenated. */
  static String outboundHex(final EmbeddedChannel channel) {
    return String.join("", outboundWrites(channel));
  }

  /** Everything that reached the end of the pipeline, concatenated. */
  static String inboundHex(final EmbeddedChannel channel) {
    final StringBuilder hex = new StringBuilder();
    for (Object msg = channel.readInbound(); msg != null; msg = channel.readInbound()) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        hex.append(ByteBufUtil.hexDump(buf));
      } finally {
        buf.release();
      }
    }
    return hex.toString();
  }

  /** The failure of a completed future, without the {@link CompletionException} wrapper. */
  static Throwable failure(final CompletableFuture<String> future) {
    return Failures.unwrap(future.handle((value, e) -> e).getNow(null));
  }

  /**
   * An application handler: records what it reads (as hex) and passes the bytes on, so a test
   * sees both that the installed handler got them first and what reached the end.
   */
  static final class Recorder extends ChannelInboundHandlerAdapter {
    final StringBuilder seen = new StringBuilder();
    private final String greeting;

    Recorder() {
      this(null);
    }

    /** Writes {@code greeting} as soon as it is added, like a lazy js application would. */
    Recorder(final String greetingHex) {
      this.greeting = greetingHex;
    }

    @Override
    public void handlerAdded(final ChannelHandlerContext ctx) {
      if (greeting != null) {
        ctx.writeAndFlush(bytes(greeting));
      }
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      seen.append(ByteBufUtil.hexDump((ByteBuf) msg));
      ctx.fireChannelRead(msg);
    }
  }
}
