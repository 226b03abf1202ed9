package io.relaypinner.relay.pinsvc;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * One pin request as the Pinning Service API returns it ({@code PinStatus}) and as it is
 * persisted (plus the owner, the hash of its token). {@code preexisting} is read from requests
 * recorded before pins had holders and no longer used (a request releases only its own hold);
 * new requests leave it out.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PinStatusRecord(String requestid, String status, String created, Pin pin,
    List<String> delegates, Map<String, String> info, String owner, Boolean preexisting) {

  /** The {@code Pin} object. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Pin(String cid, String name, List<String> origins, Map<String, String> meta) {}

  /** The statuses of the API. */
  public static final String QUEUED = "queued";
  public static final String PINNING = "pinning";
  public static final String PINNED = "pinned";
  public static final String FAILED = "failed";

  PinStatusRecord withStatus(final String next, final Map<String, String> nextInfo) {
    return new PinStatusRecord(requestid, next, created, pin, delegates, nextInfo, owner,
        preexisting);
  }

  /** What the API shows: no owner, no internal flag. */
  public PinStatusRecord forClient() {
    return new PinStatusRecord(requestid, status, created, pin, delegates,
        info == null ? Map.of() : info, null, null);
  }
}
