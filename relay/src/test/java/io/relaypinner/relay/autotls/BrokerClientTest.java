package io.relaypinner.relay.autotls;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BrokerClientTest {
  @Test
  void retryAfter_shouldReadDeltaSeconds_andIgnoreAnythingElse() {
    assertThat(BrokerClient.retryAfter("120")).contains(Duration.ofSeconds(120));
    assertThat(BrokerClient.retryAfter(" 5 ")).contains(Duration.ofSeconds(5));
    assertThat(BrokerClient.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT")).isEmpty();
    assertThat(BrokerClient.retryAfter("-1")).isEmpty();
    assertThat(BrokerClient.retryAfter("99999999999999")).isEmpty();
  }

  @Test
  void sanitize_shouldKeepOneBoundedPrintableLine() {
    assertThat(BrokerClient.sanitize("bad\nrequest\u0000!")).isEqualTo("bad request !");
    assertThat(BrokerClient.sanitize("x".repeat(10_000))).hasSize(200);
  }
}
