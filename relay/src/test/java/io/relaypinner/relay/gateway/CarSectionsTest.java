package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.DefaultFileRegion;
import io.netty.util.ReferenceCountUtil;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.gateway.TrustlessRequest.Scope;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CAR body as pieces: byte-exact with {@link CarWriter}, large blocks as file spans (only
 * when files may be used), small blocks batched, and {@link SliceInput}'s bound on the block
 * files one response holds open.
 */
class CarSectionsTest {
  @TempDir
  Path dir;
  private FlatFsBlockstore store;
  private Cid file;
  private final List<FileChannel> opened = new ArrayList<>();

  @BeforeEach
  void setUp() {
    store = new FlatFsBlockstore(dir.resolve("blocks"));
    // 5 MiB and a bit in 1 MiB raw leaves under a dag-pb root.
    final byte[] content = new byte[5 * 1024 * 1024 + 777];
    new Random(1).nextBytes(content);
    file = new UnixFsImporter(store, UnixFsImporter.Options.HELIA).importBytes(content);
  }

  @AfterEach
  void tearDown() throws IOException {
    for (final FileChannel channel : opened) {
      channel.close();
    }
    store.close();
  }

  private Optional<FileChannel> open(final Cid cid) {
    final Optional<FileChannel> channel = store.openChannel(cid);
    channel.ifPresent(opened::add);
    return channel;
  }

  private CarPlanner.Plan plan(final Cid root) throws TrustlessRequest.BadRequest {
    return new CarPlanner(store, CodecLinkResolver.standard(), CarPlanner.Limits.DEFAULT)
        .plan(root, List.of(), root, Scope.ALL, Optional.empty(), false);
  }

  /** The CAR as the whole-buffer writer makes it. */
  private byte[] expected(final CarPlanner.Plan plan) throws IOException {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, plan.roots())) {
      for (final Cid cid : plan.blocks()) {
        writer.write(cid, store.get(cid).orElseThrow());
      }
    }
    return out.toByteArray();
  }

  private static byte[] concat(final Iterator<BodyPiece> pieces, final List<BodyPiece> seen)
      throws IOException {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (pieces.hasNext()) {
      final BodyPiece piece = pieces.next();
      seen.add(piece);
      final List<ByteBuffer> buffers = piece instanceof BodyPiece.Bytes bytes ? bytes.buffers()
          : ((BodyPiece.FileSpan) piece).head();
      for (final ByteBuffer buffer : buffers) {
        final byte[] copy = new byte[buffer.remaining()];
        buffer.duplicate().get(copy);
        out.write(copy);
      }
      if (piece instanceof BodyPiece.FileSpan span) {
        final ByteBuffer data = ByteBuffer.allocate((int) span.count());
        while (data.hasRemaining() && span.file().read(data, span.position() + data.position())
            > 0) {
          // read on
        }
        out.write(data.array());
        span.discard();
      }
    }
    return out.toByteArray();
  }

  @Test
  void largeBlocks_goAsFileSpans_andTheBytesEqualTheWholeBufferWriter() throws Exception {
    final CarPlanner.Plan plan = plan(file);
    final List<BodyPiece> pieces = new ArrayList<>();
    final byte[] car = concat(new CarSections(store, this::open, plan), pieces);
    assertThat(car).isEqualTo(expected(plan));
    assertThat(car.length).isEqualTo(plan.length());
    // Five 1 MiB leaves from their files (the first after the header and the root), the
    // 777-byte tail read.
    assertThat(pieces.stream().filter(p -> p instanceof BodyPiece.FileSpan)).hasSize(5);
    assertThat(opened).allSatisfy(channel -> assertThat(channel.isOpen()).isFalse());
  }

  @Test
  void withoutFiles_everyBlockIsRead_sameBytes() throws Exception {
    final CarPlanner.Plan plan = plan(file);
    final List<BodyPiece> pieces = new ArrayList<>();
    final byte[] car = concat(new CarSections(store, CarSections.NO_FILES, plan), pieces);
    assertThat(car).isEqualTo(expected(plan));
    assertThat(pieces).allSatisfy(p -> assertThat(p).isInstanceOf(BodyPiece.Bytes.class));
  }

  @Test
  void smallBlocks_areJoinedIntoPiecesOfAboutTheBatchSize() throws Exception {
    // A file of 300 chunks of 1 KiB (raw leaves): 301 blocks, a few pieces.
    final byte[] content = new byte[300 * 1024];
    new Random(2).nextBytes(content);
    final Cid small = new UnixFsImporter(store, new UnixFsImporter.Options(1024, 174))
        .importBytes(content);
    final CarPlanner.Plan plan = plan(small);
    final List<BodyPiece> pieces = new ArrayList<>();
    final byte[] car = concat(new CarSections(store, this::open, plan), pieces);
    assertThat(car).isEqualTo(expected(plan));
    assertThat(plan.blocks().size()).isGreaterThan(300);
    assertThat(pieces.size()).isLessThan(plan.blocks().size() / 20);
  }

  @Test
  void aBlockWhoseSizeChangedAfterPlanning_failsTheStream() throws Exception {
    final CarPlanner.Plan plan = plan(file);
    final Cid leaf = plan.blocks().get(1);
    final CarPlanner.Plan lying = new CarPlanner.Plan(plan.roots(), plan.blocks(),
        plan.sizes().clone(), plan.length(), true);
    lying.sizes()[1] = lying.sizes()[1] - 1;
    final Iterator<BodyPiece> pieces = new CarSections(store, this::open, lying);
    assertThatThrownBy(pieces::next).hasMessageContaining(leaf + " changed size");
    assertThat(opened).allSatisfy(channel -> assertThat(channel.isOpen()).isFalse());
  }

  @Test
  void sliceInput_holdsAtMostReadAheadFilesOpen_andClosesWhatItDidNotSend() throws Exception {
    final CarPlanner.Plan plan = plan(file);
    final AtomicInteger resumes = new AtomicInteger();
    final SliceInput input = new SliceInput(() -> new CarSections(store, this::open, plan),
        plan.length(), Runnable::run, resumes::incrementAndGet,
        new GatewayMetrics(new PrometheusRegistry()));
    final List<DefaultFileRegion> regions = new ArrayList<>();
    // Pull without letting the channel release any region: the input stops at its bound.
    boolean waited = false;
    for (int i = 0; i < 50; i++) {
      final Object chunk = input.readChunk(UnpooledByteBufAllocator.DEFAULT);
      if (chunk == null) {
        // Null while a piece is prepared (here at once, on this thread): ask again, once.
        if (waited) {
          break;
        }
        waited = true;
        continue;
      }
      waited = false;
      if (chunk instanceof DefaultFileRegion region) {
        regions.add(region);
      } else {
        ReferenceCountUtil.release((ByteBuf) chunk);
      }
    }
    assertThat(regions).hasSize(SliceInput.READ_AHEAD);
    assertThat(input.isEndOfInput()).isFalse();
    final long openNow = opened.stream().filter(FileChannel::isOpen).count();
    assertThat(openNow).isLessThanOrEqualTo(SliceInput.READ_AHEAD);
    // The channel sends one: the next is prepared.
    regions.remove(0).release();
    Object chunk = input.readChunk(UnpooledByteBufAllocator.DEFAULT);
    for (int i = 0; i < 10 && (chunk == null || chunk instanceof ByteBuf); i++) {
      ReferenceCountUtil.release(chunk);
      chunk = input.readChunk(UnpooledByteBufAllocator.DEFAULT);
    }
    assertThat(chunk).isInstanceOf(DefaultFileRegion.class);
    ((DefaultFileRegion) chunk).release();
    input.close();
    regions.forEach(DefaultFileRegion::release);
    assertThat(opened).allSatisfy(channel -> assertThat(channel.isOpen()).isFalse());
  }

  @Test
  void sliceInput_failsTheResponse_andThrowsAnErrorOn_whenPreparingAPieceRunsOutOfHeap()
      throws Exception {
    final OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
    final Iterator<BodyPiece> failing = new Iterator<>() {
      @Override
      public boolean hasNext() {
        return true;
      }

      @Override
      public BodyPiece next() {
        throw oom;
      }
    };
    final List<Runnable> tasks = new ArrayList<>();
    final SliceInput input = new SliceInput(() -> failing, 100, tasks::add, () -> { },
        new GatewayMetrics(new PrometheusRegistry()));
    assertThat(input.readChunk(UnpooledByteBufAllocator.DEFAULT)).isNull();
    assertThat(tasks).hasSize(1);
    // The executor's thread sees the Error (it is never swallowed into an answer) ...
    assertThatThrownBy(() -> tasks.get(0).run()).isSameAs(oom);
    // ... and the response fails instead of waiting for a piece that never comes.
    assertThat(input.isEndOfInput()).isFalse();
    assertThatThrownBy(() -> input.readChunk(UnpooledByteBufAllocator.DEFAULT)).isSameAs(oom);
    assertThat(tasks).hasSize(1);
  }
}
