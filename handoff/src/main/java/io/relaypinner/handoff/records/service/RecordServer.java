package io.relaypinner.handoff.records.service;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.relaypinner.common.Shutdown;
import io.relaypinner.handoff.records.MessageVerifier;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The embedded record service: the Aleph API subset of {@link RecordHttpHandler} over Netty HTTP,
 * backed by a {@link LocalRecordStore}. It owns its event loop (one thread), its worker (one
 * thread with a bounded queue: signature checks and durable writes) and its store.
 *
 * <p>Pipeline per connection: request deadline (a request must arrive whole in time,
 * timed from its first byte to its last content), idle timeout, HTTP codec (bounded request line
 * and headers), body aggregator (bounded, JSON 413), router.
 */
public final class RecordServer implements AutoCloseable {
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
  private static final int MAX_INITIAL_LINE = 8 * 1024;
  private static final int MAX_HEADER_SIZE = 16 * 1024;

  private final RecordServiceConfig config;
  private final LocalRecordStore store;
  private final EventLoopGroup group;
  private final ThreadPoolExecutor worker;
  private final ChannelGroup channels =
      new DefaultChannelGroup("record-service", ImmediateEventExecutor.INSTANCE);
  private final AtomicLong rejected = new AtomicLong();
  private volatile Channel serverChannel;
  private boolean closed;

  /** A service over an existing store (tests use {@link MemoryRecordStorage}). */
  public RecordServer(final RecordServiceConfig config, final LocalRecordStore store) {
    this.config = Objects.requireNonNull(config, "config");
    this.store = Objects.requireNonNull(store, "store");
    this.group = new MultiThreadIoEventLoopGroup(
        1, new DefaultThreadFactory("records-http", true), NioIoHandler.newFactory());
    this.worker = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(config.workQueue()),
        new DefaultThreadFactory("records-worker", true));
  }

  /**
   * A service persisting to {@code dataDir} ({@link MvStoreRecordStorage}).
   *
   * @throws io.relaypinner.handoff.records.RecordStoreException when the store cannot be opened
   */
  public static RecordServer open(final RecordServiceConfig config, final Path dataDir) {
    final LocalRecordStore store = new LocalRecordStore(new MvStoreRecordStorage(dataDir),
        new MessageVerifier(config.maxItemContentBytes()), config.maxMessages());
    return new RecordServer(config, store);
  }

  /** The engine behind the HTTP routes (for in-process use next to the server). */
  public LocalRecordStore store() {
    return store;
  }

  /** Requests and connections refused for bad input since start. */
  public long rejectedCount() {
    return rejected.get();
  }

  /**
   * Binds and returns once the port accepts connections.
   *
   * @return the bound address (the real port when 0 was configured)
   * @throws UncheckedIOException when the address cannot be bound
   */
  public synchronized InetSocketAddress start() {
    if (serverChannel != null || closed) {
      throw new IllegalStateException("record service already started or closed");
    }
    final ServerBootstrap bootstrap = new ServerBootstrap()
        .group(group)
        .channel(NioServerSocketChannel.class)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(final Channel channel) {
            channels.add(channel);
            final RequestDeadline deadline =
                new RequestDeadline(config.requestTimeout(), rejected::addAndGet);
            channel.pipeline()
                .addLast("deadline-start", deadline.start())
                .addLast("idle", new IdleStateHandler(
                    0, 0, config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS))
                .addLast("codec", new HttpServerCodec(new HttpDecoderConfig()
                    .setMaxInitialLineLength(MAX_INITIAL_LINE)
                    .setMaxHeaderSize(MAX_HEADER_SIZE)))
                .addLast("deadline-stop", deadline.stop())
                .addLast("aggregator",
                    new RecordBodyAggregator(config.maxBodyBytes(), rejected::addAndGet))
                .addLast("router", new RecordHttpHandler(
                    store, worker, config.maxPagination(), rejected::addAndGet));
          }
        });
    final ChannelFuture bind = bootstrap.bind(config.host(), config.port());
    try {
      bind.sync();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      bind.channel().close();
      throw new IllegalStateException("interrupted while binding the record service", e);
    } catch (final Exception e) {
      final BindException bindException = new BindException("cannot bind the record service to "
          + config.host() + ":" + config.port() + ": " + e.getMessage());
      bindException.initCause(e);
      throw new UncheckedIOException(bindException);
    }
    serverChannel = bind.channel();
    return (InetSocketAddress) serverChannel.localAddress();
  }

  /** The bound port, or -1 when not listening. */
  public int port() {
    final Channel channel = serverChannel;
    return channel == null ? -1 : ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /**
   * Stops accepting, closes connections, lets the worker finish the requests it holds, then
   * closes the store (so every accepted message is on disk). Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    final Channel channel = serverChannel;
    serverChannel = null;
    if (channel != null) {
      channel.close().awaitUninterruptibly(CLOSE_TIMEOUT.toMillis());
    }
    channels.close().awaitUninterruptibly(CLOSE_TIMEOUT.toMillis());
    // Accepted messages finish their store write; the store closes after, whatever happened.
    Shutdown.shutdownGracefully(worker, CLOSE_TIMEOUT, false, "record service worker");
    group.shutdownGracefully(0, CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
        .awaitUninterruptibly(CLOSE_TIMEOUT.toMillis());
    store.close();
  }
}
