package io.relaypinner.libp2p.multistream;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.PendingWriteQueue;
import io.relaypinner.libp2p.core.NoSuchProtocolException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.OutboundPassThrough;
import java.util.List;

/**
 * The dialing side of multistream-select 1.0 ({@code /multistream/1.0.0};
 * {@code multiformats/multistream-select} {@code README.md}, {@code libp2p/specs}
 * {@code connections/README.md}), as js-libp2p's {@code select} drives it.
 *
 * <p>When the channel is active it writes the header and the first proposal in one write, as js
 * does. It expects the header echo, then for each proposal either its echo (selected) or
 * {@code na} (the next proposal is written). Anything else is a {@link
 * ProtocolViolationException}; {@code na} to the last proposal is a {@link
 * NoSuchProtocolException}. Either way the channel is closed and {@link #result()} fails.
 *
 * <p>Two modes:
 *
 * <ul>
 *   <li><b>Eager</b> ({@link #MultistreamInitiator(List, ProtocolInstaller, MultistreamConfig)}):
 *       one or more proposals in order. On the echo the {@link ProtocolInstaller} adds the
 *       protocol's handlers, this handler removes itself and bytes that arrived behind the echo go
 *       to the new handlers. Writes that reach this handler before then are held and sent, in
 *       order, once the protocol is selected (failed if it never is).
 *   <li><b>Lazy</b> ({@link #lazy(String, MultistreamConfig)}): one proposal, and the application's
 *       handlers are added right behind this one at once. Their writes pass straight through after
 *       the header and proposal, saving the round trip; their reads start with the first byte
 *       after the echo. If the answer is {@code na} the channel is closed, so nothing the
 *       application wrote is ever read as another protocol.
 * </ul>
 */
public final class MultistreamInitiator extends MultistreamHandler
    implements OutboundPassThrough {
  private final List<String> protocols;
  private final boolean lazy;
  private int current;
  private boolean headerSeen;
  private PendingWriteQueue heldWrites;
  private boolean flushHeld;

  /** An eager initiator with {@link MultistreamConfig#DEFAULT}. */
  public MultistreamInitiator(final List<String> protocols, final ProtocolInstaller installer) {
    this(protocols, installer, MultistreamConfig.DEFAULT);
  }

  /**
   * An eager initiator proposing {@code protocols} in order of preference.
   *
   * @throws IllegalArgumentException when the list is empty or longer than {@link
   *     MultistreamConfig#maxProposals()}, or holds an invalid id or one that does not fit {@link
   *     MultistreamConfig#maxMessageLength()}
   */
  public MultistreamInitiator(
      final List<String> protocols,
      final ProtocolInstaller installer,
      final MultistreamConfig config) {
    this(protocols, installer, config, false);
  }

  private MultistreamInitiator(
      final List<String> protocols,
      final ProtocolInstaller installer,
      final MultistreamConfig config,
      final boolean lazy) {
    super(installer, config);
    if (protocols.isEmpty() || protocols.size() > config.maxProposals()) {
      throw new IllegalArgumentException(
          "between 1 and " + config.maxProposals() + " protocols expected: " + protocols.size());
    }
    for (final String protocol : protocols) {
      MultistreamProtocol.checkProtocolId(protocol, config.maxMessageLength());
    }
    this.protocols = List.copyOf(protocols);
    this.lazy = lazy;
  }

  /** A lazy initiator for {@code protocol} with {@link MultistreamConfig#DEFAULT}. */
  public static MultistreamInitiator lazy(final String protocol) {
    return lazy(protocol, MultistreamConfig.DEFAULT);
  }

  /**
   * A lazy initiator for {@code protocol}: add the protocol's handlers right behind it in the same
   * event-loop task; they may write at once.
   *
   * @throws IllegalArgumentException when {@code protocol} is not a valid id
   */
  public static MultistreamInitiator lazy(final String protocol, final MultistreamConfig config) {
    return new MultistreamInitiator(List.of(protocol), ProtocolInstaller.NONE, config, true);
  }

  /** The proposals in order. */
  public List<String> protocols() {
    return protocols;
  }

  /** Whether this initiator lets the application write before the answer. */
  public boolean isLazy() {
    return lazy;
  }

  @Override
  void onStart(final ChannelHandlerContext ctx) {
    queueMessages(ctx, MultistreamProtocol.PROTOCOL_ID, protocols.get(0));
    sendQueued(ctx);
  }

  @Override
  void onMessage(final ChannelHandlerContext ctx, final String message) {
    if (!headerSeen) {
      if (!MultistreamProtocol.PROTOCOL_ID.equals(message)) {
        throw new ProtocolViolationException(
            "expected " + MultistreamProtocol.PROTOCOL_ID + ", got " + quote(message));
      }
      headerSeen = true;
      return;
    }
    final String proposal = protocols.get(current);
    if (proposal.equals(message)) {
      select(ctx, proposal);
    } else if (MultistreamProtocol.NA.equals(message)) {
      current++;
      if (current < protocols.size()) {
        queueMessages(ctx, protocols.get(current));
        sendQueued(ctx);
      } else {
        fail(ctx, new NoSuchProtocolException("remote supports none of " + protocols));
      }
    } else {
      throw new ProtocolViolationException(
          "expected " + quote(proposal) + " or na, got " + quote(message));
    }
  }

  @Override
  void onFinish(final ChannelHandlerContext ctx, final Throwable failure) {
    final PendingWriteQueue held = heldWrites;
    if (held == null) {
      return;
    }
    heldWrites = null;
    if (failure != null) {
      held.removeAndFailAll(failure);
      return;
    }
    held.removeAndWriteAll();
    if (flushHeld) {
      ctx.flush();
    }
  }

  /** Whether writes must wait for the selection: eager mode, still negotiating. */
  private boolean holdingWrites() {
    return !lazy && !isFinished();
  }

  @Override
  public void write(
      final ChannelHandlerContext ctx, final Object msg, final ChannelPromise promise) {
    if (holdingWrites()) {
      if (heldWrites == null) {
        heldWrites = new PendingWriteQueue(ctx);
      }
      heldWrites.add(msg, promise);
      return;
    }
    // The header and proposal must precede application bytes even if the application writes
    // before the channel reported active.
    start(ctx);
    ctx.write(msg, promise);
  }

  @Override
  public void flush(final ChannelHandlerContext ctx) {
    if (holdingWrites()) {
      flushHeld = true;
      return;
    }
    ctx.flush();
  }

}
