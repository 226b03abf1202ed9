package io.relaypinner.libp2p.mux.yamux;

import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;
import java.util.Map;

/** Stream channel config: Netty defaults plus {@link ChannelOption#ALLOW_HALF_CLOSURE}. */
final class YamuxStreamChannelConfig extends DefaultChannelConfig {
  private volatile boolean allowHalfClosure;

  YamuxStreamChannelConfig(final YamuxStreamChannel channel, final YamuxConfig config) {
    super(channel);
    setWriteBufferWaterMark(config.streamWriteBufferWaterMark());
    setAllocator(channel.parent().config().getAllocator());
    this.allowHalfClosure = config.streamAllowHalfClosure();
  }

  boolean isAllowHalfClosure() {
    return allowHalfClosure;
  }

  @Override
  public Map<ChannelOption<?>, Object> getOptions() {
    return getOptions(super.getOptions(), ChannelOption.ALLOW_HALF_CLOSURE);
  }

  @SuppressWarnings("unchecked")
  @Override
  public <T> T getOption(final ChannelOption<T> option) {
    if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
      return (T) Boolean.valueOf(allowHalfClosure);
    }
    return super.getOption(option);
  }

  @Override
  public <T> boolean setOption(final ChannelOption<T> option, final T value) {
    validate(option, value);
    if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
      allowHalfClosure = (Boolean) value;
      return true;
    }
    return super.setOption(option, value);
  }

  @Override
  protected void autoReadCleared() {
    ((YamuxStreamChannel) channel).clearReadPending();
  }
}
