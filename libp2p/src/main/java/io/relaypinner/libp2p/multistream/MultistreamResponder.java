package io.relaypinner.libp2p.multistream;

import io.netty.channel.ChannelHandlerContext;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.Objects;

/**
 * The listening side of multistream-select 1.0 ({@code /multistream/1.0.0};
 * {@code multiformats/multistream-select} {@code README.md}, {@code libp2p/specs}
 * {@code connections/README.md}), as js-libp2p's {@code handle} answers it.
 *
 * <p>Add it as the last handler of a connection or stream pipeline. The first message must be the
 * header, which is echoed. Each later message is answered: a protocol the {@link ProtocolMatcher}
 * accepts is echoed and selected; {@code ls} gets the matcher's advertised list in the js/go
 * format; a repeated header is echoed again (as js does); anything else gets {@code na}. Answers
 * to messages that arrived in one read leave in one write, so js's one-write header + proposal is
 * answered by one write of header echo + protocol echo.
 *
 * <p>On selection the answer is flushed, the {@link ProtocolInstaller} adds the protocol's
 * handlers, this handler removes itself and the bytes that arrived behind the proposal (js sends
 * application data right behind it) go to the new handlers. Then {@link #result()} completes.
 *
 * <p>Limits ({@link MultistreamConfig}): message size, messages after the header, total bytes and
 * a timeout. Any violation, the timeout, or a remote that half-closes before a protocol is
 * selected fails {@link #result()} and closes this channel only.
 */
public final class MultistreamResponder extends MultistreamHandler {
  private final ProtocolMatcher matcher;
  private boolean headerSeen;
  private int proposals;

  /** A responder with {@link MultistreamConfig#DEFAULT}. */
  public MultistreamResponder(final ProtocolMatcher matcher, final ProtocolInstaller installer) {
    this(matcher, installer, MultistreamConfig.DEFAULT);
  }

  public MultistreamResponder(
      final ProtocolMatcher matcher,
      final ProtocolInstaller installer,
      final MultistreamConfig config) {
    super(installer, config);
    this.matcher = Objects.requireNonNull(matcher, "matcher");
  }

  @Override
  void onStart(final ChannelHandlerContext ctx) {
    // The header is echoed when it arrives, as js-libp2p does, never sent unprompted: the answer
    // to a one-write header + proposal is then a single write.
  }

  @Override
  void onMessage(final ChannelHandlerContext ctx, final String message) {
    if (!headerSeen) {
      if (!MultistreamProtocol.PROTOCOL_ID.equals(message)) {
        throw new ProtocolViolationException(
            "expected " + MultistreamProtocol.PROTOCOL_ID + ", got " + quote(message));
      }
      headerSeen = true;
      queueMessages(ctx, MultistreamProtocol.PROTOCOL_ID);
      return;
    }
    if (++proposals > config.maxProposals()) {
      throw new ProtocolViolationException(
          "more than " + config.maxProposals() + " multistream-select proposals");
    }
    if (MultistreamProtocol.PROTOCOL_ID.equals(message)) {
      queueMessages(ctx, MultistreamProtocol.PROTOCOL_ID);
    } else if (MultistreamProtocol.LS.equals(message)) {
      queueLs(ctx, matcher.advertised());
    } else if (MultistreamProtocol.isSelectable(message) && matcher.matches(message)) {
      queueMessages(ctx, message);
      select(ctx, message);
    } else {
      queueMessages(ctx, MultistreamProtocol.NA);
    }
  }
}
