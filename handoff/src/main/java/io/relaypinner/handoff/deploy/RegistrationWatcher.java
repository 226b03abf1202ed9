package io.relaypinner.handoff.deploy;

import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordStoreException;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits up to {@link DeployConfig#registrationTimeout()} for the guest's bootstrap registration
 * and verifies it here ({@link RegistrationCheck}): the best one seen, {@code dual-key-attested}
 * first. Not seeing one is not a failure (the relay works either way).
 */
final class RegistrationWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(RegistrationWatcher.class);

  private final DeployContext context;
  private final Attempt attempt;

  RegistrationWatcher(final DeployContext context, final Attempt attempt) {
    this.context = context;
    this.attempt = attempt;
  }

  Optional<PostRecord> await(final String registrationId, final HandoffGuest guest)
      throws InterruptedException {
    attempt.stage("waiting-for-registration", "waiting for registration " + registrationId, 88);
    final String wanted = guest.authorized() ? GuestRecords.DUAL_KEY_ATTESTED
        : GuestRecords.WALLET_SIGNED;
    final Instant deadline = context.clock().instant()
        .plus(context.config().registrationTimeout());
    PostRecord best = null;
    while (true) {
      try {
        for (final PostRecord post : context.store().posts(PostQuery.builder()
            .types(GuestRecords.REGISTRATION_POST_TYPE).refs(GuestRecords.REGISTRATION_REF)
            .addresses(guest.publisher().toString()).pagination(50).build()).posts()) {
          final Optional<String> trust = RegistrationCheck.trustMode(post, registrationId,
              context.owner(), guest.publisher(), guest.peerId(), context.clock());
          if (trust.filter(wanted::equals).isPresent()) {
            return Optional.of(post);
          }
          if (trust.isPresent() && best == null) {
            best = post;
          }
        }
      } catch (final RecordRejectedException | RecordStoreException e) {
        LOG.debug("registration lookup: {}", e.getMessage());
      }
      if (!context.clock().instant().isBefore(deadline)) {
        return Optional.ofNullable(best);
      }
      context.pause();
    }
  }
}
