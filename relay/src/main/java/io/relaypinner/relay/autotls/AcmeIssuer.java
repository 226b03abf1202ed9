package io.relaypinner.relay.autotls;

import io.relaypinner.multiformats.Multiaddr;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import org.shredzone.acme4j.Account;
import org.shredzone.acme4j.AccountBuilder;
import org.shredzone.acme4j.Authorization;
import org.shredzone.acme4j.Order;
import org.shredzone.acme4j.Session;
import org.shredzone.acme4j.Status;
import org.shredzone.acme4j.challenge.Dns01Challenge;
import org.shredzone.acme4j.connector.HttpConnector;
import org.shredzone.acme4j.connector.NetworkSettings;
import org.shredzone.acme4j.exception.AcmeException;
import org.shredzone.acme4j.exception.AcmeRateLimitedException;
import org.shredzone.acme4j.exception.AcmeServerException;
import org.shredzone.acme4j.provider.GenericAcmeProvider;

/**
 * One ACME order for {@code *.<zone>} with acme4j (RFC 8555; libp2p/specs
 * tls/autotls-client.md): the account (its P-256 key kept in {@code accountKeyFile}, 0600; ACME
 * returns the same account for the same key, so nothing else needs storing), a DNS-01 challenge
 * whose TXT value goes to the broker, the trigger, the wait for validation, the finalization with a
 * fresh P-256 certificate key, and the download.
 *
 * <p>Like the JavaScript client, it does not poll DNS itself before triggering: the broker serves
 * the zone and answers as soon as it accepted the value.
 */
public final class AcmeIssuer implements CertificateIssuer {
  private final URI directory;
  private final Path accountKeyFile;
  private final BrokerClient broker;
  private final Duration acmeTimeout;
  private final Optional<SSLContext> trust;
  private final Clock clock;

  /**
   * @param trust the CAs the ACME server's HTTPS is checked against; empty: the JDK's
   * @param clock turns a rate limit's "retry after" instant into a delay
   */
  public AcmeIssuer(final URI directory, final Path accountKeyFile, final BrokerClient broker,
      final Duration acmeTimeout, final Optional<SSLContext> trust, final Clock clock) {
    this.directory = Objects.requireNonNull(directory, "directory");
    this.accountKeyFile = Objects.requireNonNull(accountKeyFile, "accountKeyFile");
    this.broker = Objects.requireNonNull(broker, "broker");
    this.acmeTimeout = Objects.requireNonNull(acmeTimeout, "acmeTimeout");
    this.trust = Objects.requireNonNull(trust, "trust");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public Issued issue(final String zone, final List<Multiaddr> addresses)
      throws AutoTlsFailure, InterruptedException {
    final KeyPair accountKey;
    try {
      accountKey = CertificateFiles.loadOrCreateAccountKey(accountKeyFile);
    } catch (final IOException e) {
      throw new AutoTlsFailure(FailureReason.STORAGE, "cannot keep the ACME account key in "
          + accountKeyFile + ": " + e);
    }
    try {
      final Session session = new Session(directory, new Provider(trust));
      session.networkSettings().setTimeout(Duration.ofSeconds(30));
      final Account account = new AccountBuilder().agreeToTermsOfService()
          .useKeyPair(accountKey).create(session);
      final Order order = account.newOrder().domain("*." + zone).create();
      for (final Authorization authorization : order.getAuthorizations()) {
        if (authorization.getStatus() == Status.VALID) {
          continue;
        }
        final Dns01Challenge challenge = authorization.findChallenge(Dns01Challenge.class)
            .orElseThrow(() -> new AutoTlsFailure(FailureReason.ACME_ERROR,
                "the ACME server offers no dns-01 challenge for *." + zone));
        broker.publish(challenge.getDigest(), addresses);
        challenge.trigger();
        final Status status = challenge.waitForCompletion(acmeTimeout);
        if (status != Status.VALID) {
          throw new AutoTlsFailure(FailureReason.ACME_ERROR, "dns-01 challenge for *." + zone
              + " is " + status + challenge.getError().map(p -> ": " + p.toString()).orElse(""));
        }
      }
      final KeyPair domainKey = CertificateFiles.newEcKeyPair();
      order.waitUntilReady(acmeTimeout);
      order.execute(domainKey);
      final Status status = order.waitForCompletion(acmeTimeout);
      if (status != Status.VALID) {
        throw new AutoTlsFailure(FailureReason.ACME_ERROR, "order for *." + zone + " is "
            + status + order.getError().map(p -> ": " + p.toString()).orElse(""));
      }
      return new Issued(order.getCertificate().getCertificateChain(), domainKey.getPrivate());
    } catch (final AcmeRateLimitedException e) {
      throw new AutoTlsFailure(FailureReason.ACME_RATE_LIMITED, "ACME rate limit: "
          + e.getMessage(), e.getRetryAfter().map(at -> Duration.between(
              clock.instant(), at)));
    } catch (final AcmeServerException e) {
      throw new AutoTlsFailure(FailureReason.ACME_ERROR, "ACME server " + directory + ": "
          + e.getMessage());
    } catch (final AcmeException e) {
      throw new AutoTlsFailure(FailureReason.ACME_ERROR, "ACME " + directory + ": "
          + e.getMessage());
    } catch (final IllegalStateException | IllegalArgumentException e) {
      // acme4j reports unexpected server answers (missing fields) as runtime exceptions.
      throw new AutoTlsFailure(FailureReason.ACME_ERROR, "ACME " + directory + ": " + e);
    }
  }

  /** The generic provider, with the given trust for the server's HTTPS. */
  private static final class Provider extends GenericAcmeProvider {
    private final Optional<SSLContext> trust;

    Provider(final Optional<SSLContext> trust) {
      this.trust = trust;
    }

    @Override
    protected HttpConnector createHttpConnector(final NetworkSettings settings) {
      return new HttpConnector(settings) {
        @Override
        public HttpClient.Builder createClientBuilder() {
          final HttpClient.Builder builder = super.createClientBuilder();
          trust.ifPresent(builder::sslContext);
          return builder;
        }
      };
    }
  }
}
