package io.relaypinner.common.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class IpRangeTest {
  @Test
  void ranges_shouldMatchTheirAddresses_only() throws Exception {
    final IpRange net = IpRange.parse("10.1.0.0/16");
    assertThat(net.contains(InetAddress.getByName("10.1.200.3"))).isTrue();
    assertThat(net.contains(InetAddress.getByName("10.2.0.1"))).isFalse();
    assertThat(net.contains(InetAddress.getByName("::ffff:10.1.0.9"))).isTrue();
    assertThat(net.contains(InetAddress.getByName("fd00::1"))).isFalse();
    final IpRange one = IpRange.parse("::1");
    assertThat(one.contains(InetAddress.getByName("::1"))).isTrue();
    assertThat(one.contains(InetAddress.getByName("::2"))).isFalse();
    assertThat(IpRange.parse("fd00::/8").contains(InetAddress.getByName("fdab::7"))).isTrue();
    assertThat(IpRange.parse("0.0.0.0/0").contains(InetAddress.getByName("203.0.113.9")))
        .isTrue();
  }

  @Test
  void names_andBadPrefixes_shouldBeRefused_withoutALookup() {
    assertThatThrownBy(() -> IpRange.parse("localhost")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IpRange.parse("10.0.0.0/33")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IpRange.parse("10.0.0/8")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IpRange.parse("10.0.0.0/")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IpRange.parse("beef")).isInstanceOf(IllegalArgumentException.class);
  }
}
