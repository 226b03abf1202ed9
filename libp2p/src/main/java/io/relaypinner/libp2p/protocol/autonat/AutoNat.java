package io.relaypinner.libp2p.protocol.autonat;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.netty.SingleMessageReader;
import io.relaypinner.libp2p.protocol.autonat.pb.AutoNatProtos.Message;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An AutoNAT v1 server {@value #PROTOCOL_ID} (libp2p/specs autonat/autonat-v1.md) on a
 * {@link Host}: a peer asks to be dialled back on its addresses; the relay dials them on a fresh
 * connection, answers OK with the address that worked (or E_DIAL_ERROR / E_DIAL_REFUSED /
 * E_BAD_REQUEST) and closes that connection. Which addresses and how often: {@link AutoNatEngine}.
 * One request per stream, read within {@link AutoNatConfig#streamTimeout()}.
 */
public final class AutoNat implements AutoCloseable {
  public static final String PROTOCOL_ID = "/libp2p/autonat/1.0.0";
  private static final Logger LOG = LoggerFactory.getLogger(AutoNat.class);

  private final Host host;
  private final AutoNatEngine engine;

  private AutoNat(final Host host, final AutoNatEngine engine) {
    this.host = host;
    this.engine = engine;
  }

  /**
   * Answers {@value #PROTOCOL_ID} on {@code host}.
   *
   * @param dialable which addresses may ever be dialled (in deployed mode: public ones only)
   */
  public static AutoNat start(final Host host, final AutoNatConfig config, final Clock clock,
      final Predicate<Multiaddr> dialable) {
    final AutoNat autonat = new AutoNat(Objects.requireNonNull(host, "host"),
        new AutoNatEngine(config, clock, dialable));
    host.protocols().register(PROTOCOL_ID, (stream, protocol) ->
        stream.pipeline().addLast(autonat.new Handler(Connection.of(stream).orElseThrow())));
    return autonat;
  }

  public AutoNatEngine engine() {
    return engine;
  }

  @Override
  public void close() {
    host.protocols().unregister(PROTOCOL_ID);
  }

  private static Message response(final Message.ResponseStatus status, final String text,
      final Multiaddr address) {
    final Message.DialResponse.Builder response = Message.DialResponse.newBuilder()
        .setStatus(status).setStatusText(text);
    if (address != null) {
      response.setAddr(ByteString.copyFrom(address.bytes()));
    }
    return Message.newBuilder().setType(Message.MessageType.DIAL_RESPONSE)
        .setDialResponse(response).build();
  }

  /** One request stream. */
  private final class Handler extends ChannelInboundHandlerAdapter {
    private final Connection connection;
    private final SingleMessageReader reader;
    private ChannelHandlerContext ctx;
    private ScheduledFuture<?> timer;
    private boolean answered;

    Handler(final Connection connection) {
      this.connection = connection;
      this.reader = new SingleMessageReader(engine.config().maxMessageSize());
    }

    @Override
    public void handlerAdded(final ChannelHandlerContext ctx) {
      this.ctx = ctx;
      timer = ctx.executor().schedule(() -> {
        if (!answered) {
          engine.badRequest();
          answered = true;
          ctx.close();
        }
      }, engine.config().streamTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      if (!(msg instanceof ByteBuf in)) {
        ReferenceCountUtil.release(msg);
        return;
      }
      if (answered) {
        in.release();
        return;
      }
      final byte[] bytes;
      try {
        bytes = reader.add(ctx.alloc(), in);
      } catch (final ProtocolViolationException e) {
        engine.badRequest();
        answered = true;
        ctx.close();
        return;
      }
      if (bytes != null) {
        answered = true;
        timer.cancel(false);
        handle(bytes);
      }
    }

    private void handle(final byte[] bytes) {
      final Message request;
      final List<Multiaddr> addresses = new ArrayList<>();
      try {
        request = Message.parseFrom(bytes);
        if (request.getType() != Message.MessageType.DIAL || !request.getDial().hasPeer()) {
          throw new ProtocolViolationException("not a DIAL");
        }
        final PeerId claimed = PeerId.fromBytes(request.getDial().getPeer().getId()
            .toByteArray());
        if (!claimed.equals(connection.remotePeer())) {
          throw new ProtocolViolationException("DIAL for another peer");
        }
        for (final ByteString address : request.getDial().getPeer().getAddrsList()) {
          try {
            addresses.add(Multiaddr.fromBytes(address.toByteArray()));
          } catch (final MultiformatException e) {
            // One bad address does not spoil the others.
          }
        }
      } catch (final InvalidProtocolBufferException | ProtocolViolationException
          | MultiformatException e) {
        engine.badRequest();
        respond(response(Message.ResponseStatus.E_BAD_REQUEST, "bad request", null));
        return;
      }
      final byte[] observed = connection.remoteAddress().components().isEmpty() ? new byte[0]
          : connection.remoteAddress().components().get(0).value();
      final AutoNatEngine.Decision decision = engine.decide(connection.remotePeer(), observed,
          addresses);
      if (decision.refusal() != null) {
        LOG.debug("autonat request of {} refused: {}", connection.remotePeer(),
            decision.refusal().label());
        respond(response(Message.ResponseStatus.E_DIAL_REFUSED, decision.refusal().label(),
            null));
        return;
      }
      dialBack(decision.dial(), 0);
    }

    private void dialBack(final List<Multiaddr> addresses, final int index) {
      if (index == addresses.size()) {
        engine.dialed(false);
        respond(response(Message.ResponseStatus.E_DIAL_ERROR, "dial failed", null));
        return;
      }
      final Multiaddr address = addresses.get(index);
      final CompletableFuture<Connection> dial = host.dial(
          address.withPeerId(connection.remotePeer()));
      dial.orTimeout(engine.config().dialTimeout().toMillis(), TimeUnit.MILLISECONDS)
          .whenComplete((back, error) -> ctx.executor().execute(() -> {
            if (error != null) {
              // A dial that completes after the timeout still must not stay open.
              dial.thenAccept(Connection::close);
              dialBack(addresses, index + 1);
              return;
            }
            back.close();
            engine.dialed(true);
            respond(response(Message.ResponseStatus.OK, "OK", address));
          }));
    }

    private void respond(final Message message) {
      if (!ctx.channel().isActive()) {
        return;
      }
      ctx.writeAndFlush(SingleMessageReader.frame(ctx.alloc(), message))
          .addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      ctx.close();
    }

    @Override
    public void handlerRemoved(final ChannelHandlerContext ctx) {
      if (timer != null) {
        timer.cancel(false);
      }
      reader.release();
    }
  }
}
