package io.relaypinner.libp2p.mux.yamux;

import static io.relaypinner.libp2p.mux.yamux.YamuxFrame.FLAG_ACK;
import static io.relaypinner.libp2p.mux.yamux.YamuxFrame.FLAG_FIN;
import static io.relaypinner.libp2p.mux.yamux.YamuxFrame.FLAG_RST;
import static io.relaypinner.libp2p.mux.yamux.YamuxFrame.FLAG_SYN;
import static io.relaypinner.libp2p.mux.yamux.YamuxTestSession.QUIET;
import static io.relaypinner.libp2p.mux.yamux.YamuxTestSession.bytes;
import static io.relaypinner.libp2p.mux.yamux.YamuxTestSession.data;
import static io.relaypinner.libp2p.mux.yamux.YamuxTestSession.frame;
import static io.relaypinner.libp2p.mux.yamux.YamuxTestSession.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.ChannelOutputShutdownEvent;
import io.netty.channel.socket.ChannelOutputShutdownException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.mux.yamux.YamuxTestSession.Recorder;
import io.relaypinner.libp2p.mux.yamux.YamuxTestSession.Sent;
import java.io.ByteArrayOutputStream;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class YamuxHandlerTest {
  private static final int WINDOW = YamuxConfig.SPEC_INITIAL_WINDOW;

  private final List<YamuxTestSession> sessions = new ArrayList<>();

  private YamuxTestSession session(final boolean dialer) {
    return session(dialer, QUIET);
  }

  private YamuxTestSession session(final boolean dialer, final YamuxConfig config) {
    return session(dialer, config, ch -> {});
  }

  private YamuxTestSession session(
      final boolean dialer, final YamuxConfig config, final Consumer<Channel> inboundSetup) {
    final YamuxTestSession s = new YamuxTestSession(dialer, config, inboundSetup);
    sessions.add(s);
    return s;
  }

  /** Whatever a test left in the embedded connection is released, so leak reports are real. */
  @AfterEach
  void closeSessions() {
    for (final YamuxTestSession s : sessions) {
      s.close();
    }
  }

  // ---- opening streams ----

  @Test
  void inboundSyn_shouldCreateStreamDeliverDataAndAck_whenSynCarriesData() {
    final YamuxTestSession s = session(false);
    final ByteBuf in = data(FLAG_SYN, 1, bytes("/multistream/1.0.0\n"));
    s.feed(in);

    assertThat(s.inbound).hasSize(1);
    final YamuxStreamChannel stream = s.inbound.get(0);
    assertThat(stream.streamId()).isEqualTo(1);
    assertThat(stream.isOutbound()).isFalse();
    assertThat(stream.isActive()).isTrue();
    assertThat(s.recorderOf(stream).text()).isEqualTo("/multistream/1.0.0\n");
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_ACK, 1, 0));
    assertThat(s.events).containsExactly("opened 1");
    assertThat(s.yamux.stats().activeInboundStreams()).isEqualTo(1);
    assertThat(s.yamux.stats().inboundStreamsOpened()).isEqualTo(1);
    assertThat(in.refCnt()).isZero();
  }

  @Test
  void inboundSyn_shouldAcceptJsStyleOpen_whenSynComesOnWindowUpdateThenData() {
    final YamuxTestSession s = session(false);
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_SYN, 3, 0)), data(0, 3, bytes("hi")));
    assertThat(s.inbound).extracting(YamuxStreamChannel::streamId).containsExactly(3);
    assertThat(s.recorderOf(s.inbound.get(0)).text()).isEqualTo("hi");
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_ACK, 3, 0));
    // A repeated SYN for the same stream is tolerated, as js-libp2p tolerates it.
    s.feed(data(FLAG_SYN, 3, bytes("!")));
    assertThat(s.inbound).hasSize(1);
    assertThat(s.recorderOf(s.inbound.get(0)).text()).isEqualTo("hi!");
    assertThat(s.conn.isOpen()).isTrue();
  }

  @Test
  void inboundSyn_shouldAnnounceLargerWindowInAck_whenConfigured() {
    final YamuxConfig config = QUIET.toBuilder().initialStreamWindow(1 << 20).build();
    final YamuxTestSession s = session(false, config);
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_SYN, 1, 0)));
    assertThat(s.sentHeaders())
        .containsExactly(YamuxFrame.windowUpdate(FLAG_ACK, 1, (1 << 20) - WINDOW));
    // The remote may now send the whole larger window.
    s.feed(data(0, 1, new byte[1 << 20]));
    assertThat(s.conn.isOpen()).isTrue();
    assertThat(s.recorderOf(s.inbound.get(0)).data.size()).isEqualTo(1 << 20);
  }

  @Test
  void newStream_shouldUseOddIds_whenDialer() {
    final YamuxTestSession s = session(true);
    assertThat(s.open().streamId()).isEqualTo(1);
    assertThat(s.open().streamId()).isEqualTo(3);
    assertThat(s.sentHeaders())
        .containsExactly(
            YamuxFrame.windowUpdate(FLAG_SYN, 1, 0), YamuxFrame.windowUpdate(FLAG_SYN, 3, 0));
    assertThat(s.yamux.stats().activeOutboundStreams()).isEqualTo(2);
    assertThat(s.events).containsExactly("opened 1", "opened 3");
  }

  @Test
  void newStream_shouldUseEvenIds_whenListener_andSendDataAfterSyn() {
    final YamuxTestSession s = session(false);
    final YamuxStreamChannel first =
        s.open(ch -> ch.writeAndFlush(Unpooled.wrappedBuffer(bytes("hello"))));
    final YamuxStreamChannel second = s.open();
    assertThat(first.streamId()).isEqualTo(2);
    assertThat(second.streamId()).isEqualTo(4);
    assertThat(first.isOutbound()).isTrue();
    assertThat(s.sent())
        .containsExactly(
            Sent.of(YamuxFrame.windowUpdate(FLAG_SYN, 2, 0)),
            new Sent(YamuxFrame.data(0, 2, 5), bytes("hello")),
            Sent.of(YamuxFrame.windowUpdate(FLAG_SYN, 4, 0)));
  }

  @Test
  void newStream_shouldFail_whenOutboundLimitOrAckBacklogReached() {
    final YamuxConfig config = QUIET.toBuilder().maxOutboundStreams(2).maxAckBacklog(1).build();
    final YamuxTestSession s = session(true, config);
    final YamuxStreamChannel first = s.open();
    assertThat(openFailure(s)).isEqualTo(YamuxStreamOpenException.Reason.ACK_BACKLOG_FULL);
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_ACK, first.streamId(), 0)));
    s.open();
    assertThat(openFailure(s)).isEqualTo(YamuxStreamOpenException.Reason.TOO_MANY_STREAMS);
    // An unacknowledged stream that the remote resets leaves the backlog too.
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_RST, 3, 0)));
    assertThat(s.open().streamId()).isEqualTo(5);
  }

  @Test
  void newStream_shouldFailAndReset_whenTheInitializerCannotBeAdded() {
    final YamuxTestSession s = session(true);
    final Recorder notSharable = new Recorder();
    assertThat(s.yamux.newStream(notSharable).isSuccess()).isTrue();
    final Future<YamuxStreamChannel> second = s.yamux.newStream(notSharable);
    assertThat(second.cause())
        .isInstanceOf(YamuxStreamOpenException.class)
        .extracting(e -> ((YamuxStreamOpenException) e).reason())
        .isEqualTo(YamuxStreamOpenException.Reason.REGISTRATION_FAILED);
    assertThat(s.sentHeaders())
        .containsExactly(
            YamuxFrame.windowUpdate(FLAG_SYN, 1, 0),
            YamuxFrame.windowUpdate(FLAG_SYN, 3, 0),
            YamuxFrame.windowUpdate(FLAG_RST, 3, 0));
    assertThat(s.events).containsExactly("opened 1", "opened 3", "closed 3 LOCAL_RESET");
  }

  @Test
  void newStream_shouldFail_whenTheSessionIsNotInAPipeline() {
    final YamuxHandler detached =
        YamuxHandler.forDialer(QUIET, new Recorder.Sharable(), YamuxSessionListener.NOOP);
    assertThat(detached.newStream(new Recorder()).cause())
        .isInstanceOf(YamuxStreamOpenException.class);
    assertThat(detached.ping().cause()).isInstanceOf(ClosedChannelException.class);
    assertThat(detached.goAway().cause()).isInstanceOf(ClosedChannelException.class);
    assertThat(detached.isDialer()).isTrue();
    assertThat(detached.config()).isSameAs(QUIET);
  }

  private static YamuxStreamOpenException.Reason openFailure(final YamuxTestSession s) {
    final Future<YamuxStreamChannel> f = s.yamux.newStream(new Recorder());
    assertThat(f.isDone()).isTrue();
    assertThat(f.cause()).isInstanceOf(YamuxStreamOpenException.class);
    return ((YamuxStreamOpenException) f.cause()).reason();
  }

  // ---- flow control ----

  @Test
  void write_shouldSendAtMostTheRemoteWindow_andContinueAfterWindowUpdate() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    s.sent();
    final byte[] message = pattern(1 << 20, 7);
    final ChannelFuture write = stream.writeAndFlush(Unpooled.wrappedBuffer(message));

    final ByteArrayOutputStream received = new ByteArrayOutputStream();
    assertThat(dataBytes(s.sent(), received)).isEqualTo(WINDOW);
    assertThat(write.isDone()).isFalse();
    assertThat(stream.isWritable()).isFalse();

    s.feed(frame(YamuxFrame.windowUpdate(0, 1, WINDOW)));
    assertThat(dataBytes(s.sent(), received)).isEqualTo(WINDOW);
    assertThat(write.isDone()).isFalse();

    s.feed(frame(YamuxFrame.windowUpdate(FLAG_ACK, 1, 2 * WINDOW)));
    assertThat(dataBytes(s.sent(), received)).isEqualTo(2 * WINDOW);
    assertThat(write.isSuccess()).isTrue();
    assertThat(stream.isWritable()).isTrue();
    assertThat(received.toByteArray()).isEqualTo(message);
  }

  /** Sums the DATA payloads, checking each frame against the 64 KiB default cap. */
  private static int dataBytes(final List<Sent> frames, final ByteArrayOutputStream sink) {
    int total = 0;
    for (final Sent f : frames) {
      assertThat(f.header().type()).isEqualTo(YamuxFrameType.DATA);
      assertThat(f.header().length()).isLessThanOrEqualTo(64 * 1024);
      sink.writeBytes(f.payload());
      total += f.payload().length;
    }
    return total;
  }

  @Test
  void write_shouldSendEachWriteAsItsOwnFrame_whenItFits() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    s.sent();
    stream.write(Unpooled.wrappedBuffer(bytes("head-1")));
    stream.write(Unpooled.wrappedBuffer(new byte[600]));
    stream.writeAndFlush(Unpooled.wrappedBuffer(bytes("head-2")));
    assertThat(s.sentHeaders())
        .containsExactly(
            YamuxFrame.data(0, 1, 6), YamuxFrame.data(0, 1, 600), YamuxFrame.data(0, 1, 6));
  }

  @Test
  void write_shouldWaitForTheConnection_whenItIsNotWritable() {
    final YamuxTestSession s = session(true);
    s.conn.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1024, 2048));
    final FlushGate gate = new FlushGate();
    s.conn.pipeline().addFirst(gate);
    final YamuxStreamChannel stream = s.open();
    final ChannelFuture write = stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[200_000]));
    // One frame went into the connection, which then turned unwritable: the rest waits.
    assertThat(s.conn.isWritable()).isFalse();
    assertThat(write.isDone()).isFalse();
    assertThat(s.sent()).isEmpty();

    gate.open = true;
    s.conn.flush();
    s.conn.runPendingTasks();
    assertThat(write.isSuccess()).isTrue();
    final ByteArrayOutputStream received = new ByteArrayOutputStream();
    final List<Sent> frames = s.sent();
    assertThat(frames.get(0).header()).isEqualTo(YamuxFrame.windowUpdate(FLAG_SYN, 1, 0));
    assertThat(dataBytes(frames.subList(1, frames.size()), received)).isEqualTo(200_000);
  }

  /** Holds back flushes until opened, so the connection's outbound buffer fills up. */
  private static final class FlushGate extends ChannelOutboundHandlerAdapter {
    boolean open;

    @Override
    public void flush(final ChannelHandlerContext ctx) {
      if (open) {
        ctx.flush();
      }
    }
  }

  @Test
  void shutdownInput_shouldDropInputButKeepGrantingWindow() {
    final YamuxTestSession s = session(false);
    s.feed(data(FLAG_SYN, 1, bytes("seen")));
    final YamuxStreamChannel stream = s.inbound.get(0);
    assertThat(stream.shutdownInput().isSuccess()).isTrue();
    assertThat(stream.isInputShutdown()).isTrue();
    assertThat(stream.isShutdown()).isFalse();
    s.sent();
    s.feed(data(0, 1, new byte[WINDOW / 2]));
    assertThat(s.recorderOf(stream).text()).isEqualTo("seen");
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(0, 1, WINDOW / 2 + 4));
    assertThat(stream.shutdown().isSuccess()).isTrue();
    assertThat(stream.isShutdown()).isTrue();
    assertThat(stream.isOpen()).isTrue();
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_FIN, 1, 0)));
    assertThat(stream.isOpen()).isFalse();
    assertThat(s.recorderOf(stream).events).doesNotContain(ChannelInputShutdownEvent.INSTANCE);
  }

  @Test
  void streamChannel_shouldExposeItsIdentityAndRefuseSocketOperations() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    assertThat(stream.parent()).isSameAs(s.conn);
    assertThat(stream.session()).isSameAs(s.yamux);
    assertThat(stream.id().asShortText()).isEqualTo(s.conn.id().asShortText() + "/1");
    assertThat(stream.id().compareTo(s.open().id())).isNegative();
    assertThat(stream.remoteAddress()).isEqualTo(s.conn.remoteAddress());
    assertThat(stream.metadata().hasDisconnect()).isFalse();
    assertThat(stream.config().getOptions()).containsKey(ChannelOption.ALLOW_HALF_CLOSURE);
    assertThat(stream.connect(s.conn.remoteAddress()).cause())
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(stream.termination()).isEmpty();
  }

  @Test
  void receive_shouldGrantWindowOnlyAsTheApplicationReads_whenAutoReadIsOff() {
    final YamuxTestSession s = session(false, QUIET, ch -> ch.config().setAutoRead(false));
    s.feed(data(FLAG_SYN, 1, pattern(WINDOW / 2, 1)), data(0, 1, pattern(WINDOW / 2, 2)));
    final YamuxStreamChannel stream = s.inbound.get(0);
    final Recorder r = s.recorderOf(stream);
    assertThat(r.reads).isZero();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_ACK, 1, 0));

    stream.read();
    assertThat(r.data.size()).isEqualTo(WINDOW / 2);
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(0, 1, WINDOW / 2));
    stream.read();
    assertThat(r.data.size()).isEqualTo(WINDOW);
    assertThat(r.readCompletes).isEqualTo(2);
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(0, 1, WINDOW / 2));
    stream.read();
    assertThat(s.sentHeaders()).isEmpty();
  }

  @Test
  void receive_shouldGrantWindowOnceHalfIsConsumed_whenAutoReadIsOn() {
    final YamuxTestSession s = session(false);
    s.feed(data(FLAG_SYN, 1, new byte[1000]));
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_ACK, 1, 0));
    s.feed(data(0, 1, new byte[WINDOW / 2 - 1000]));
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(0, 1, WINDOW / 2));
    assertThat(s.recorderOf(s.inbound.get(0)).readCompletes).isEqualTo(2);
  }

  @Test
  void receive_shouldDoubleWindow_whenHalfOfItIsConsumedWithinFourRoundTrips() {
    final YamuxTestSession s = session(false);
    final Future<Duration> ping = s.yamux.ping();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.ping(FLAG_SYN, 0));
    s.conn.advanceTimeBy(50, TimeUnit.MILLISECONDS);
    s.feed(frame(YamuxFrame.ping(FLAG_ACK, 0)));
    assertThat(ping.getNow()).isEqualTo(Duration.ofMillis(50));
    assertThat(s.yamux.stats().rttNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(50));

    s.feed(data(FLAG_SYN, 1, new byte[WINDOW / 2]));
    assertThat(s.sentHeaders())
        .containsExactly(
            YamuxFrame.windowUpdate(FLAG_ACK, 1, 0),
            YamuxFrame.windowUpdate(0, 1, WINDOW / 2 + WINDOW));
    // The remote may now have 2 x 256 KiB in flight.
    s.feed(data(0, 1, new byte[2 * WINDOW]));
    assertThat(s.conn.isOpen()).isTrue();
  }

  @Test
  void receive_shouldCloseWithProtocolError_whenDataExceedsTheWindow() {
    final YamuxTestSession s = session(false, QUIET, ch -> ch.config().setAutoRead(false));
    s.feed(data(FLAG_SYN, 1, new byte[WINDOW - 10]));
    s.sent();
    final ByteBuf tooMuch = data(0, 1, new byte[11]);
    s.feed(tooMuch);
    assertThat(s.sentHeaders())
        .containsExactly(YamuxFrame.goAway(YamuxFrame.GO_AWAY_PROTOCOL_ERROR));
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(s.failures).singleElement().isInstanceOf(ProtocolViolationException.class);
    assertThat(tooMuch.refCnt()).isZero();
    assertThat(s.inbound.get(0).isOpen()).isFalse();
    assertThat(s.inbound.get(0).termination()).contains(YamuxStreamTermination.SESSION_CLOSED);
  }

  @Test
  void receive_shouldRejectOversizedSynData_whenLargerThanTheInitialWindow() {
    final YamuxTestSession s = session(false);
    s.feed(data(FLAG_SYN, 1, new byte[WINDOW + 1]));
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(s.failures).singleElement().isInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void windowUpdate_shouldBeAProtocolViolation_whenItOverflowsTheSendWindow() {
    final YamuxTestSession s = session(true);
    s.open();
    s.sent();
    s.feed(frame(YamuxFrame.windowUpdate(0, 1, YamuxFrame.MAX_LENGTH - WINDOW)));
    assertThat(s.conn.isOpen()).isTrue();
    s.feed(frame(YamuxFrame.windowUpdate(0, 1, 1)));
    assertThat(s.sentHeaders())
        .containsExactly(YamuxFrame.goAway(YamuxFrame.GO_AWAY_PROTOCOL_ERROR));
    assertThat(s.conn.isOpen()).isFalse();
  }

  // ---- half-close, close, reset ----

  @Test
  void fin_shouldHalfCloseInbound_thenAnswerAndFinish_whenRemoteClosesFirst() {
    final YamuxTestSession s = session(false);
    s.feed(
        frame(YamuxFrame.windowUpdate(FLAG_SYN, 1, 0)),
        data(0, 1, bytes("request")),
        frame(YamuxFrame.windowUpdate(FLAG_FIN, 1, 0)));
    final YamuxStreamChannel stream = s.inbound.get(0);
    final Recorder r = s.recorderOf(stream);
    assertThat(r.text()).isEqualTo("request");
    assertThat(r.events)
        .containsExactly(
            ChannelInputShutdownEvent.INSTANCE, ChannelInputShutdownReadComplete.INSTANCE);
    assertThat(stream.isInputShutdown()).isTrue();
    assertThat(stream.isActive()).isTrue();
    s.sent();

    stream.writeAndFlush(Unpooled.wrappedBuffer(bytes("answer")));
    final ChannelFuture fin = stream.shutdownOutput();
    s.conn.runPendingTasks();
    assertThat(fin.isSuccess()).isTrue();
    assertThat(s.sent())
        .containsExactly(
            new Sent(YamuxFrame.data(0, 1, 6), bytes("answer")),
            Sent.of(YamuxFrame.windowUpdate(FLAG_FIN, 1, 0)));
    assertThat(r.events).contains(ChannelOutputShutdownEvent.INSTANCE);
    assertThat(stream.isOpen()).isFalse();
    assertThat(r.inactive).isTrue();
    assertThat(stream.termination()).contains(YamuxStreamTermination.CLOSED);
    assertThat(s.events).containsExactly("opened 1", "closed 1 CLOSED");
    assertThat(s.yamux.stats().activeInboundStreams()).isZero();
  }

  @Test
  void fin_shouldBeSentAfterQueuedData_andStreamFinishOnRemoteFin_whenWeCloseFirst() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    final Recorder r = s.recorderOf(stream);
    s.sent();
    stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[WINDOW + 100]));
    final ChannelFuture fin = stream.shutdownOutput();
    assertThat(fin.isDone()).isFalse();
    assertThat(s.sent()).allMatch(f -> f.header().type() == YamuxFrameType.DATA);
    assertThat(stream.write(Unpooled.wrappedBuffer(new byte[1])).cause())
        .isInstanceOf(ChannelOutputShutdownException.class);

    s.feed(frame(YamuxFrame.windowUpdate(FLAG_ACK, 1, 1000)));
    assertThat(s.sentHeaders())
        .containsExactly(YamuxFrame.data(0, 1, 100), YamuxFrame.windowUpdate(FLAG_FIN, 1, 0));
    assertThat(fin.isSuccess()).isTrue();
    assertThat(stream.isActive()).isTrue();

    s.feed(data(0, 1, bytes("reply")), frame(YamuxFrame.windowUpdate(FLAG_FIN, 1, 0)));
    assertThat(r.text()).isEqualTo("reply");
    assertThat(r.events).contains(ChannelInputShutdownEvent.INSTANCE);
    assertThat(stream.isOpen()).isFalse();
    assertThat(r.inactive).isTrue();
    assertThat(s.yamux.stats().activeOutboundStreams()).isZero();
  }

  @Test
  void fin_shouldCloseTheStream_whenHalfClosureIsOff() {
    final YamuxTestSession s =
        session(false, QUIET, ch -> ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, false));
    s.feed(data(FLAG_SYN | FLAG_FIN, 1, bytes("x")));
    final YamuxStreamChannel stream = s.inbound.get(0);
    assertThat(s.recorderOf(stream).text()).isEqualTo("x");
    assertThat(s.recorderOf(stream).events).doesNotContain(ChannelInputShutdownEvent.INSTANCE);
    assertThat(stream.isOpen()).isFalse();
    assertThat(stream.config().getOption(ChannelOption.ALLOW_HALF_CLOSURE)).isFalse();
    assertThat(s.sentHeaders())
        .containsExactly(
            YamuxFrame.windowUpdate(FLAG_ACK, 1, 0), YamuxFrame.windowUpdate(FLAG_FIN, 1, 0));
    assertThat(s.yamux.stats().activeInboundStreams()).isZero();
  }

  @Test
  void fin_shouldWaitForTheApplicationToReadBufferedData_whenAutoReadIsOff() {
    final YamuxTestSession s = session(false, QUIET, ch -> ch.config().setAutoRead(false));
    s.feed(data(FLAG_SYN, 1, bytes("a")), data(FLAG_FIN, 1, bytes("b")));
    final YamuxStreamChannel stream = s.inbound.get(0);
    final Recorder r = s.recorderOf(stream);
    assertThat(r.events).isEmpty();
    stream.read();
    assertThat(r.text()).isEqualTo("a");
    assertThat(r.events).isEmpty();
    stream.read();
    assertThat(r.text()).isEqualTo("ab");
    assertThat(r.events)
        .containsExactly(
            ChannelInputShutdownEvent.INSTANCE, ChannelInputShutdownReadComplete.INSTANCE);
  }

  @Test
  void dataAfterFin_shouldResetTheStream_butKeepTheConnection() {
    final YamuxTestSession s = session(false);
    s.feed(data(FLAG_SYN | FLAG_FIN, 1, bytes("x")));
    s.sent();
    s.feed(data(0, 1, bytes("late")));
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_RST, 1, 0));
    assertThat(s.inbound.get(0).termination()).contains(YamuxStreamTermination.LOCAL_RESET);
    assertThat(s.conn.isOpen()).isTrue();
  }

  @Test
  void close_shouldSendFin_discardLaterData_grantItsWindow_andResetAfterLinger() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    s.sent();
    stream.close();
    s.conn.runPendingTasks();
    assertThat(s.recorderOf(stream).inactive).isTrue();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_FIN, 1, 0));
    assertThat(s.yamux.stats().activeOutboundStreams()).isEqualTo(1);

    // The remote still writes: dropped, but its window is granted so it can finish.
    final ByteBuf late = data(FLAG_ACK, 1, new byte[WINDOW / 2]);
    s.feed(late);
    assertThat(late.refCnt()).isZero();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(0, 1, WINDOW / 2));

    s.conn.advanceTimeBy(30, TimeUnit.SECONDS);
    s.conn.runScheduledPendingTasks();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_RST, 1, 0));
    assertThat(stream.termination()).contains(YamuxStreamTermination.LINGER_TIMEOUT);
    assertThat(s.yamux.stats().activeOutboundStreams()).isZero();
    assertThat(s.events).containsExactly("opened 1", "closed 1 LINGER_TIMEOUT");
  }

  @Test
  void close_shouldResetInsteadOfFin_whenFlushedDataIsStillWaitingForWindow() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    final ChannelFuture write = stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[WINDOW + 1]));
    s.sent();
    stream.close();
    s.conn.runPendingTasks();
    assertThat(write.isSuccess()).isFalse();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_RST, 1, 0));
    assertThat(stream.termination()).contains(YamuxStreamTermination.LOCAL_RESET);
    assertThat(s.yamux.stats().activeOutboundStreams()).isZero();
  }

  @Test
  void close_shouldForgetTheStream_whenRemoteFinArrivesWhileLingering() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    stream.close();
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_ACK | FLAG_FIN, 1, 0)));
    assertThat(stream.termination()).contains(YamuxStreamTermination.CLOSED);
    assertThat(s.yamux.stats().activeOutboundStreams()).isZero();
    s.conn.advanceTimeBy(1, TimeUnit.MINUTES);
    s.conn.runScheduledPendingTasks();
    assertThat(s.sentHeaders())
        .containsExactly(
            YamuxFrame.windowUpdate(FLAG_SYN, 1, 0), YamuxFrame.windowUpdate(FLAG_FIN, 1, 0));
  }

  @Test
  void remoteRst_shouldFireResetEvent_closeTheStream_andFailPendingWrites() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    final ChannelFuture write = stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[WINDOW * 2]));
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_RST, 1, 0)));
    final Recorder r = s.recorderOf(stream);
    assertThat(r.events).contains(YamuxStreamResetEvent.INSTANCE);
    assertThat(stream.isOpen()).isFalse();
    assertThat(r.inactive).isTrue();
    assertThat(write.cause()).isInstanceOf(YamuxStreamResetException.class);
    assertThat(((YamuxStreamResetException) write.cause()).byRemote()).isTrue();
    assertThat(stream.termination()).contains(YamuxStreamTermination.REMOTE_RESET);
    assertThat(s.yamux.stats().streamsResetByRemote()).isEqualTo(1);
    assertThat(s.yamux.stats().activeOutboundStreams()).isZero();
    s.sent();
    // The late FIN of a stream we already forgot is ignored.
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_FIN, 1, 0)));
    assertThat(s.sent()).isEmpty();
  }

  @Test
  void remoteRst_shouldDropBufferedInput_whenItArrivesWithData() {
    final YamuxTestSession s = session(false, QUIET, ch -> ch.config().setAutoRead(false));
    final ByteBuf in = data(FLAG_SYN, 1, bytes("lost"));
    s.feed(in, data(FLAG_RST, 1, bytes("also lost")));
    assertThat(in.refCnt()).isZero();
    assertThat(s.recorderOf(s.inbound.get(0)).data.size()).isZero();
    assertThat(s.inbound.get(0).termination()).contains(YamuxStreamTermination.REMOTE_RESET);
  }

  @Test
  void reset_shouldSendRst_andIgnoreLaterFramesOfThatStream() {
    final YamuxTestSession s = session(false);
    s.feed(data(FLAG_SYN, 1, bytes("x")));
    final YamuxStreamChannel stream = s.inbound.get(0);
    final ChannelFuture pending = stream.write(Unpooled.wrappedBuffer(bytes("unsent")));
    s.sent();
    stream.reset();
    s.conn.runPendingTasks();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_RST, 1, 0));
    assertThat(stream.termination()).contains(YamuxStreamTermination.LOCAL_RESET);
    // Unflushed writes fail as on any closed channel, with the reset as the cause.
    assertThat(pending.cause())
        .isInstanceOf(ClosedChannelException.class)
        .hasCauseInstanceOf(YamuxStreamResetException.class);
    assertThat(s.events).containsExactly("opened 1", "closed 1 LOCAL_RESET");
    final ByteBuf late = data(0, 1, bytes("late"));
    s.feed(late, frame(YamuxFrame.windowUpdate(FLAG_FIN, 1, 0)));
    assertThat(late.refCnt()).isZero();
    assertThat(s.sent()).isEmpty();
    assertThat(s.conn.isOpen()).isTrue();
  }

  @Test
  void write_shouldFail_whenQueueWouldExceedTheHardCap() {
    final YamuxConfig config = QUIET.toBuilder().maxStreamWriteBuffer(WINDOW * 2).build();
    final YamuxTestSession s = session(true, config);
    final YamuxStreamChannel stream = s.open();
    stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[WINDOW * 2]));
    final ChannelFuture over = stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[WINDOW + 1]));
    assertThat(over.cause()).isInstanceOf(InternalErrorException.class);
    assertThat(stream.writeAndFlush(new Object()).cause())
        .isInstanceOf(UnsupportedOperationException.class);
  }

  // ---- limits and hostile input ----

  @Test
  void inboundLimit_shouldResetExcessStreams_countThem_andKeepTheConnection() {
    final YamuxConfig config = QUIET.toBuilder().maxInboundStreams(2).build();
    final YamuxTestSession s = session(false, config);
    final ByteBuf third = data(FLAG_SYN, 5, bytes("dropped"));
    s.feed(data(FLAG_SYN, 1, bytes("a")), data(FLAG_SYN, 3, bytes("b")), third);
    assertThat(s.inbound).extracting(YamuxStreamChannel::streamId).containsExactly(1, 3);
    assertThat(s.sentHeaders())
        .containsExactly(
            YamuxFrame.windowUpdate(FLAG_ACK, 1, 0),
            YamuxFrame.windowUpdate(FLAG_ACK, 3, 0),
            YamuxFrame.windowUpdate(FLAG_RST, 5, 0));
    assertThat(third.refCnt()).isZero();
    assertThat(s.yamux.stats().inboundStreamsRejected()).isEqualTo(1);
    assertThat(s.events).contains("rejected 5");
    assertThat(s.conn.isOpen()).isTrue();

    // Once a stream is done, a new one fits again.
    s.inbound.get(0).reset();
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_SYN, 7, 0)));
    assertThat(s.inbound).extracting(YamuxStreamChannel::streamId).containsExactly(1, 3, 7);
  }

  @Test
  void inboundSyn_shouldBeAProtocolViolation_whenTheIdHasOurParity() {
    final YamuxTestSession s = session(false);
    s.feed(frame(YamuxFrame.windowUpdate(FLAG_SYN, 2, 0)));
    assertThat(s.sentHeaders())
        .containsExactly(YamuxFrame.goAway(YamuxFrame.GO_AWAY_PROTOCOL_ERROR));
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(s.failures.get(0)).hasMessageContaining("our parity");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "000000000000000000000000", // DATA on stream 0
        "000100000000000000000001", // WINDOW_UPDATE on stream 0
        "000200010000000100000001", // PING on stream 1
        "000300000000000300000000", // GO_AWAY on stream 3
        "010000000000000100000000", // version 1
        "000700000000000100000000" // type 7
      })
  void frame_shouldCloseWithProtocolError_whenMalformed(final String hex) {
    final YamuxTestSession s = session(true);
    s.feed(Unpooled.wrappedBuffer(HexFormat.of().parseHex(hex)));
    assertThat(s.sentHeaders())
        .containsExactly(YamuxFrame.goAway(YamuxFrame.GO_AWAY_PROTOCOL_ERROR));
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(s.failures).singleElement().isInstanceOf(ProtocolViolationException.class);
  }

  @Test
  void unknownStream_shouldBeIgnored_andItsPayloadReleased() {
    final YamuxTestSession s = session(false);
    final ByteBuf in = data(0, 7, bytes("zz"));
    s.feed(
        in,
        frame(YamuxFrame.windowUpdate(0, 9, 10)),
        frame(YamuxFrame.windowUpdate(FLAG_FIN, 11, 0)),
        frame(YamuxFrame.windowUpdate(FLAG_RST, 13, 0)),
        data(FLAG_ACK, 2, bytes("never opened")));
    assertThat(in.refCnt()).isZero();
    assertThat(s.sent()).isEmpty();
    assertThat(s.conn.isOpen()).isTrue();
    assertThat(s.inbound).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void randomBytes_shouldCloseTheConnection_withoutAnExceptionEscaping(final long seed) {
    final YamuxTestSession s = session(false);
    final Random random = new Random(seed);
    final byte[] garbage = new byte[4096];
    random.nextBytes(garbage);
    garbage[0] = (byte) (1 + random.nextInt(255));
    final ByteBuf in = Unpooled.wrappedBuffer(garbage);
    s.feed(in);
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(in.refCnt()).isZero();
    s.sent();
    assertThat(s.conn.finishAndReleaseAll()).isFalse();
  }

  @ParameterizedTest
  @ValueSource(longs = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
  void plausibleFrames_shouldNeverLeakOrThrow_whatever_theirOrder(final long seed) {
    final YamuxTestSession s = session(false);
    final Random random = new Random(seed);
    final List<ByteBuf> fed = new ArrayList<>();
    for (int i = 0; i < 400 && s.conn.isOpen(); i++) {
      final int type = random.nextInt(4);
      final int flags = random.nextInt(16);
      final int id = type >= 2 ? 0 : 1 + 2 * random.nextInt(4);
      final ByteBuf buf;
      if (type == 0) {
        buf = data(flags, id, new byte[random.nextInt(3000)]);
      } else {
        final long length = type == 1 ? random.nextInt(100_000) : random.nextInt(3);
        buf = frame(new YamuxFrame(YamuxFrameType.fromCode(type), flags, id, length));
      }
      fed.add(buf);
      s.feed(buf);
      s.sent();
    }
    assertThat(fed).allMatch(b -> b.refCnt() == 0);
    s.conn.close();
    s.conn.runPendingTasks();
    assertThat(s.inbound).allMatch(ch -> !ch.isOpen());
    assertThat(s.yamux.stats().activeInboundStreams()).isZero();
    s.sent();
    assertThat(s.conn.finishAndReleaseAll()).isFalse();
  }

  // ---- ping and keep-alive ----

  @Test
  void ping_shouldBeEchoedWithAck_andUnsolicitedAnswersIgnored() {
    final YamuxTestSession s = session(false);
    s.feed(frame(YamuxFrame.ping(FLAG_SYN, 0x12345678L)), frame(YamuxFrame.ping(FLAG_SYN, 0)));
    assertThat(s.sentHeaders())
        .containsExactly(YamuxFrame.ping(FLAG_ACK, 0x12345678L), YamuxFrame.ping(FLAG_ACK, 0));
    s.feed(frame(YamuxFrame.ping(FLAG_ACK, 99)));
    assertThat(s.sent()).isEmpty();
    assertThat(s.conn.isOpen()).isTrue();
  }

  @Test
  void ping_shouldCloseTheConnection_whenThePeerLeavesTooManyAnswersUnread() {
    final YamuxConfig config = QUIET.toBuilder().maxPendingPingReplies(4).build();
    final YamuxTestSession s = session(false, config);
    // Writes that never complete: the peer is not reading.
    s.conn.pipeline().addFirst(new BlackHole());
    final ByteBuf pings = Unpooled.buffer();
    for (int i = 0; i < 5; i++) {
      YamuxFrame.writeHeader(pings, YamuxFrameType.PING, FLAG_SYN, 0, i);
    }
    s.feed(pings);
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(s.failures.get(0)).hasMessageContaining("pings");
  }

  /** Swallows every write without completing it, like a socket whose peer stopped reading. */
  private static final class BlackHole extends ChannelOutboundHandlerAdapter {
    @Override
    public void write(final ChannelHandlerContext ctx, final Object msg, final ChannelPromise p) {
      ReferenceCountUtil.release(msg);
    }
  }

  @Test
  void keepAlive_shouldPingAtOnceAndEveryInterval_andCloseWhenAPingIsNotAnswered() {
    final YamuxConfig config =
        YamuxConfig.builder()
            .keepAliveInterval(Duration.ofSeconds(30))
            .keepAliveTimeout(Duration.ofSeconds(10))
            .build();
    final YamuxTestSession s = session(true, config);
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.ping(FLAG_SYN, 0));
    s.conn.advanceTimeBy(5, TimeUnit.MILLISECONDS);
    s.feed(frame(YamuxFrame.ping(FLAG_ACK, 0)));
    assertThat(s.yamux.stats().rttNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(5));

    s.conn.advanceTimeBy(30, TimeUnit.SECONDS);
    s.conn.runScheduledPendingTasks();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.ping(FLAG_SYN, 1));
    s.conn.advanceTimeBy(10, TimeUnit.SECONDS);
    s.conn.runScheduledPendingTasks();
    s.conn.runPendingTasks();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.goAway(YamuxFrame.GO_AWAY_NORMAL));
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(s.failures.get(0)).hasMessageContaining("ping unanswered");
  }

  // ---- GO_AWAY and connection close ----

  @Test
  void goAwayReceived_shouldRefuseNewStreams_butKeepOpenOnes() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    s.feed(frame(YamuxFrame.goAway(YamuxFrame.GO_AWAY_NORMAL)));
    assertThat(s.events).contains("goaway 0");
    assertThat(s.yamux.stats().goAwayReceived()).isTrue();
    assertThat(openFailure(s)).isEqualTo(YamuxStreamOpenException.Reason.GO_AWAY_RECEIVED);
    assertThat(stream.isActive()).isTrue();
    s.feed(data(FLAG_ACK, 1, bytes("still flowing")));
    assertThat(s.recorderOf(stream).text()).isEqualTo("still flowing");
    assertThat(s.conn.isOpen()).isTrue();
  }

  @Test
  void goAwayReceived_shouldCloseTheConnection_whenItCarriesAnError() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel stream = s.open();
    s.sent();
    s.feed(frame(YamuxFrame.goAway(YamuxFrame.GO_AWAY_PROTOCOL_ERROR)));
    assertThat(s.conn.isOpen()).isFalse();
    assertThat(s.sent()).isEmpty();
    assertThat(stream.termination()).contains(YamuxStreamTermination.SESSION_CLOSED);
  }

  @Test
  void goAway_shouldResetStreamsTheRemoteStillOpens() {
    final YamuxTestSession s = session(false);
    s.yamux.goAway();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.goAway(YamuxFrame.GO_AWAY_NORMAL));
    s.feed(data(FLAG_SYN, 1, bytes("x")));
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.windowUpdate(FLAG_RST, 1, 0));
    assertThat(s.inbound).isEmpty();
    assertThat(openFailure(s)).isEqualTo(YamuxStreamOpenException.Reason.GO_AWAY_SENT);
  }

  @Test
  void closingTheConnection_shouldSendGoAway_andCloseEveryStream() {
    final YamuxTestSession s = session(true);
    final YamuxStreamChannel a = s.open();
    final YamuxStreamChannel b = s.open();
    final ChannelFuture pending = b.writeAndFlush(Unpooled.wrappedBuffer(new byte[WINDOW * 2]));
    s.sent();
    s.conn.close();
    s.conn.runPendingTasks();
    assertThat(s.sentHeaders()).containsExactly(YamuxFrame.goAway(YamuxFrame.GO_AWAY_NORMAL));
    assertThat(a.isOpen()).isFalse();
    assertThat(b.isOpen()).isFalse();
    assertThat(s.recorderOf(a).inactive).isTrue();
    assertThat(pending.isSuccess()).isFalse();
    assertThat(a.termination()).contains(YamuxStreamTermination.SESSION_CLOSED);
    assertThat(s.yamux.stats().activeOutboundStreams()).isZero();
    assertThat(openFailure(s)).isEqualTo(YamuxStreamOpenException.Reason.SESSION_CLOSED);
    assertThat(s.yamux.ping().cause()).isNotNull();
  }

  @Test
  void handler_shouldRejectANonSharableInboundInitializer() {
    final Recorder notSharable = new Recorder();
    assertThatThrownBy(
            () -> YamuxHandler.forListener(QUIET, notSharable, YamuxSessionListener.NOOP))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
