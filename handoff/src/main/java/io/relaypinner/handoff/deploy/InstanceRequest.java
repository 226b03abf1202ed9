package io.relaypinner.handoff.deploy;

import java.util.Objects;

/**
 * What the controller asks a provider to create for one attempt.
 *
 * @param deploymentId the deployment the attempt belongs to
 * @param attempt the attempt number, from 1
 * @param host the candidate host
 * @param manifest the image (its ports are mapped)
 * @param authorizedKey the SSH public key line to authorize; for the pull handoff its comment is
 *     {@code aleph-bootstrap-config:<owner>:<token>}
 * @param recordsUrl the record store the guest should use (pull, registration)
 */
public record InstanceRequest(String deploymentId, int attempt, HostCandidate host,
    ImageManifest manifest, String authorizedKey, String recordsUrl) {
  public InstanceRequest {
    Objects.requireNonNull(deploymentId, "deploymentId");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(manifest, "manifest");
    Objects.requireNonNull(authorizedKey, "authorizedKey");
    Objects.requireNonNull(recordsUrl, "recordsUrl");
  }
}
