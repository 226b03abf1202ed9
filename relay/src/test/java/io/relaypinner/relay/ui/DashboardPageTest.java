package io.relaypinner.relay.ui;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.relay.sync.RecentProblems;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class DashboardPageTest {
  @Test
  void page_shouldBeSelfContained_andItsCspShouldAllowOnlyItsOwnInlineScriptAndStyle() {
    final DashboardPage page = new DashboardPage();
    final String csp = page.contentSecurityPolicy();
    assertThat(csp).startsWith("default-src 'none'; script-src 'sha256-")
        .contains("style-src 'sha256-", "connect-src 'self'", "frame-ancestors 'none'")
        .doesNotContain("unsafe-inline", "unsafe-eval", "http:", "https:");
  }

  @Test
  void hashes_shouldBeTheBase64Sha256OfEachInlineElement() {
    // echo -n 'x' | openssl dgst -sha256 -binary | base64
    assertThat(DashboardPage.hashes("<script>x</script>", "script"))
        .isEqualTo("'sha256-LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE='");
    assertThat(DashboardPage.hashes("<p>no script</p>", "script")).isEqualTo("'none'");
  }

  @Test
  void recentProblems_shouldKeepTheLastFifty_mostRecentFirst_withMessagesCut() {
    final RecentProblems problems = new RecentProblems(
        Clock.fixed(Instant.parse("2026-11-24T10:00:00Z"), ZoneOffset.UTC));
    for (int i = 0; i < 60; i++) {
      problems.record("sync_failed", "/orbitdb/zdpu" + i, "x".repeat(i == 59 ? 1000 : 3));
    }
    assertThat(problems.list()).hasSize(RecentProblems.MAX);
    assertThat(problems.list().get(0).subject()).isEqualTo("/orbitdb/zdpu59");
    assertThat(problems.list().get(0).message()).hasSize(RecentProblems.MAX_CHARS + 1);
    assertThat(problems.list().get(49).subject()).isEqualTo("/orbitdb/zdpu10");
  }
}
