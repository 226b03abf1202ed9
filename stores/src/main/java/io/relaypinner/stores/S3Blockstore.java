package io.relaypinner.stores;

import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.CorruptBlockException;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.InvalidBlockException;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * A {@link Blockstore} in an S3 bucket (AWS or any S3-compatible service), with the keys of
 * {@link FlatFsBlockstore}: {@code <prefix><SH>/<KEY>.data}, so a flatfs directory copied into a
 * bucket (for example with {@code aws s3 sync blocks/ s3://bucket/prefix/}) is a store as is, and
 * back.
 *
 * <ul>
 *   <li>Puts are verified before upload and sent with {@code If-None-Match: *}: blocks are
 *       immutable, so a put of a block already present (by this relay or another on the same
 *       bucket) is answered 412 and is a success. Objects appear whole or not at all (S3 PUT).
 *   <li>Every read is verified against its multihash ({@link CorruptBlockException} otherwise),
 *       and refused beyond {@link Blocks#MAX_BLOCK_SIZE} before reading it.
 *   <li>At most {@code maxConnections} requests are in flight (further callers wait up to the
 *       request timeout); each request is retried by the SDK's standard strategy with backoff.
 *   <li>Unreachable service, 5xx after retries, throttling: {@link StoreUnavailableException};
 *       nothing is half-written then.
 * </ul>
 *
 * <p>Thread-safe; calls block on the network, so callers on event loops use an executor.
 */
public final class S3Blockstore implements Blockstore, Closeable {
  static final String STORE = "s3";
  private static final Logger LOG = LoggerFactory.getLogger(S3Blockstore.class);
  private static final String SUFFIX = ".data";

  private final S3StoreConfig config;
  private final S3Client s3;
  private final Semaphore inFlight;
  private final AtomicLong blocksWritten = new AtomicLong();
  private final AtomicLong putsRejected = new AtomicLong();
  private final StoreAvailability availability;

  /** {@link #open(S3StoreConfig, Clock)} on the system clock. */
  public static S3Blockstore open(final S3StoreConfig config) {
    return open(config, Clock.systemUTC());
  }

  /**
   * Connects and checks that the bucket can be listed.
   *
   * @param clock what {@link #availability()} measures outages on
   * @throws StoreUnavailableException when the service cannot be reached or refuses us (names
   *     the endpoint and bucket)
   */
  public static S3Blockstore open(final S3StoreConfig config, final Clock clock) {
    final S3Blockstore store = new S3Blockstore(config, clock);
    try {
      store.call(() -> store.s3.listObjectsV2(
          ListObjectsV2Request.builder().bucket(config.bucket()).prefix(config.prefix())
              .maxKeys(1).build()));
      store.availability.opened();
      return store;
    } catch (final RuntimeException e) {
      store.close();
      throw e;
    }
  }

  private S3Blockstore(final S3StoreConfig config, final Clock clock) {
    this.config = config;
    this.availability = new StoreAvailability(STORE, clock);
    this.inFlight = new Semaphore(config.maxConnections());
    final AwsCredentialsProvider credentials = config.accessKeyId().isPresent()
        ? StaticCredentialsProvider.create(AwsBasicCredentials.create(
            config.accessKeyId().get(), config.secretAccessKey().orElseThrow()))
        : DefaultCredentialsProvider.builder().build();
    final var builder = S3Client.builder()
        .httpClientBuilder(UrlConnectionHttpClient.builder()
            .connectionTimeout(java.time.Duration.ofSeconds(5))
            .socketTimeout(config.requestTimeout()))
        .region(Region.of(config.region()))
        .credentialsProvider(credentials)
        // Whole-object SigV4 signing only: S3-compatible services (s3proxy, older MinIO, Ceph)
        // refuse the aws-chunked trailing checksums the SDK would add by default.
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
        .overrideConfiguration(o -> o
            .apiCallTimeout(config.requestTimeout())
            .retryStrategy(r -> r.maxAttempts(config.maxAttempts())));
    config.endpoint().ifPresent(uri -> builder.endpointOverride(uri).forcePathStyle(true));
    this.s3 = builder.build();
  }

  /** The object key of a block: the flatfs path under the prefix. */
  public String objectKey(final Multihash multihash) {
    final String key = FlatFsBlockstore.keyOf(multihash);
    return config.prefix() + shardOf(key) + "/" + key + SUFFIX;
  }

  @Override
  public boolean has(final Cid cid) {
    return Blocks.isIdentity(cid) || head(cid).isPresent();
  }

  @Override
  public Optional<Integer> size(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.of(cid.multihash().digestLength());
    }
    return head(cid).map(h -> (int) checkedSize(h.contentLength(), cid));
  }

  private Optional<HeadObjectResponse> head(final Cid cid) {
    final String key = objectKey(cid.multihash());
    try {
      return Optional.of(call(() -> s3.headObject(b -> b.bucket(config.bucket()).key(key))));
    } catch (final NoSuchKeyException e) {
      return Optional.empty();
    } catch (final S3Exception e) {
      if (e.statusCode() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public Optional<byte[]> get(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.of(cid.multihash().digest());
    }
    final String key = objectKey(cid.multihash());
    final byte[] data;
    try {
      data = call(() -> {
        try (ResponseInputStream<GetObjectResponse> in =
            s3.getObject(b -> b.bucket(config.bucket()).key(key))) {
          final Long length = in.response().contentLength();
          if (length != null) {
            checkedSize(length, cid);
          }
          return readAtMost(in, cid);
        } catch (final IOException e) {
          throw SdkClientException.create("reading " + key + " failed", e);
        }
      });
    } catch (final NoSuchKeyException e) {
      return Optional.empty();
    }
    if (!cid.multihash().verify(data)) {
      throw new CorruptBlockException("object " + key + " in bucket " + config.bucket()
          + " does not hash to " + cid);
    }
    return Optional.of(data);
  }

  private static byte[] readAtMost(final InputStream in, final Cid cid) throws IOException {
    final byte[] data = in.readNBytes(Blocks.MAX_BLOCK_SIZE + 1);
    checkedSize(data.length, cid);
    return data;
  }

  @Override
  public void put(final Cid cid, final byte[] data) {
    try {
      Blocks.verify(cid, data);
    } catch (final InvalidBlockException e) {
      putsRejected.incrementAndGet();
      throw e;
    }
    if (Blocks.isIdentity(cid)) {
      return;
    }
    final String key = objectKey(cid.multihash());
    try {
      call(() -> s3.putObject(b -> b.bucket(config.bucket()).key(key).ifNoneMatch("*")
          .contentType("application/octet-stream"), RequestBody.fromBytes(data)));
      blocksWritten.incrementAndGet();
    } catch (final S3Exception e) {
      // 412: present already (immutable, same bytes). 409: a concurrent conditional put won.
      if (e.statusCode() != 412 && e.statusCode() != 409) {
        throw e;
      }
    }
  }

  @Override
  public boolean delete(final Cid cid) {
    if (Blocks.isIdentity(cid) || head(cid).isEmpty()) {
      return false;
    }
    final String key = objectKey(cid.multihash());
    call(() -> s3.deleteObject(b -> b.bucket(config.bucket()).key(key)));
    return true;
  }

  /**
   * Visits every block under the prefix as a CIDv1 {@code raw}; objects that are not
   * {@code <SH>/<KEY>.data} in their right shard are ignored.
   */
  @Override
  public void forEachKey(final Consumer<Cid> visitor) {
    final ListObjectsV2Request request = ListObjectsV2Request.builder()
        .bucket(config.bucket()).prefix(config.prefix()).maxKeys(1000).build();
    call(() -> {
      for (final S3Object object : s3.listObjectsV2Paginator(request).contents()) {
        parseKey(object.key().substring(config.prefix().length()))
            .ifPresent(mh -> visitor.accept(Blocks.rawCid(mh)));
      }
      return null;
    });
  }

  /**
   * Asks the bucket for one key (a cheap LIST): how an outage is noticed to end when nothing
   * else calls the store.
   *
   * @throws StoreUnavailableException when it still cannot be reached
   */
  public void probe() {
    call(() -> s3.listObjectsV2(ListObjectsV2Request.builder().bucket(config.bucket())
        .prefix(config.prefix()).maxKeys(1).build()));
  }

  /** Blocks newly uploaded since open (puts answered "already there" do not count). */
  public long blocksWritten() {
    return blocksWritten.get();
  }

  /** Puts refused since open because the bytes did not verify or were too large. */
  public long putsRejected() {
    return putsRejected.get();
  }

  /** Calls that failed with the service unavailable since open. */
  public long failures() {
    return availability.failures();
  }

  /** Whether the bucket answers, as the last call found it; outages are logged once. */
  public StoreAvailability availability() {
    return availability;
  }

  /** The settings this store was opened with. */
  public S3StoreConfig config() {
    return config;
  }

  @Override
  public void close() {
    s3.close();
  }

  /**
   * Runs one S3 call within the in-flight bound, turning transport failures, server errors and
   * refusals of the bucket into {@link StoreUnavailableException}. Client errors about one object
   * (404, 412) are left to the caller.
   */
  private <T> T call(final Supplier<T> request) {
    try {
      if (!inFlight.tryAcquire(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        throw availability.failed(new StoreUnavailableException(STORE, "all "
            + config.maxConnections() + " connections to " + where() + " stayed busy", null));
      }
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException(STORE, "interrupted", e);
    }
    try {
      final T result = request.get();
      availability.succeeded();
      return result;
    } catch (final NoSuchKeyException e) {
      availability.succeeded();
      throw e;
    } catch (final NoSuchBucketException e) {
      throw availability.failed(
          new StoreUnavailableException(STORE, "bucket does not exist at " + where(), e));
    } catch (final S3Exception e) {
      final int status = e.statusCode();
      if (status == 404 || status == 412 || status == 409) {
        availability.succeeded();
        throw e;
      }
      final String code = e.awsErrorDetails() != null ? e.awsErrorDetails().errorCode() : null;
      LOG.debug("S3 request to {} failed: {} {}", where(), status, code);
      throw availability.failed(new StoreUnavailableException(STORE, where() + " answered "
          + status + (code != null ? " " + code : ""), e));
    } catch (final SdkException e) {
      throw availability.failed(
          new StoreUnavailableException(STORE, where() + ": " + rootMessage(e), e));
    } finally {
      inFlight.release();
    }
  }

  /** The innermost message (the SDK's own wraps the transport's several times). */
  private static String rootMessage(final Throwable e) {
    final Throwable t = Failures.rootCause(e);
    return t == e || t.getMessage() == null ? String.valueOf(e.getMessage())
        : e.getClass().getSimpleName() + ": " + t.getMessage();
  }

  private String where() {
    return "bucket " + config.bucket() + " at "
        + config.endpoint().map(Object::toString).orElse("AWS " + config.region());
  }

  private static long checkedSize(final long size, final Cid cid) {
    if (size > Blocks.MAX_BLOCK_SIZE) {
      throw new CorruptBlockException("stored block " + cid + " has " + size
          + " bytes, more than the limit of " + Blocks.MAX_BLOCK_SIZE);
    }
    return size;
  }

  /** Kubo's {@code next-to-last/2} shard of a key, as flatfs computes it. */
  static String shardOf(final String key) {
    final String padded = key.length() < 3 ? "_".repeat(3 - key.length()) + key : key;
    return padded.substring(padded.length() - 3, padded.length() - 1);
  }

  /** The multihash of {@code SH/KEY.data} when it is a block key in its right shard. */
  static Optional<Multihash> parseKey(final String relative) {
    final int slash = relative.indexOf('/');
    if (slash != 2 || !relative.endsWith(SUFFIX)) {
      return Optional.empty();
    }
    final String key = relative.substring(3, relative.length() - SUFFIX.length());
    if (key.isEmpty() || !key.chars().allMatch(c -> c >= 'A' && c <= 'Z' || c >= '2' && c <= '7')
        || !shardOf(key).equals(relative.substring(0, 2))) {
      return Optional.empty();
    }
    try {
      final Multihash multihash = Multihash.decode(Multibase.Base.BASE32_UPPER.decodeBare(key));
      return FlatFsBlockstore.keyOf(multihash).equals(key) ? Optional.of(multihash)
          : Optional.empty();
    } catch (final MultiformatException e) {
      return Optional.empty();
    }
  }
}
