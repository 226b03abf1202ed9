package io.relaypinner.libp2p.mux.yamux;

/**
 * A snapshot of one yamux session's stream counts ({@link YamuxHandler#stats()}), readable from any
 * thread.
 *
 * @param activeInboundStreams streams the remote opened that the session still tracks
 * @param activeOutboundStreams streams we opened that the session still tracks
 * @param inboundStreamsOpened inbound streams accepted since the session started
 * @param outboundStreamsOpened outbound streams opened since the session started
 * @param inboundStreamsRejected SYNs answered with RST because of the inbound stream limit
 * @param streamsResetByRemote streams the remote reset
 * @param rttNanos round-trip time of the last answered ping, or -1 if none was answered yet
 * @param goAwayReceived whether the remote sent GO_AWAY (no new outbound streams)
 */
public record YamuxStats(
    int activeInboundStreams,
    int activeOutboundStreams,
    long inboundStreamsOpened,
    long outboundStreamsOpened,
    long inboundStreamsRejected,
    long streamsResetByRemote,
    long rttNanos,
    boolean goAwayReceived) {}
