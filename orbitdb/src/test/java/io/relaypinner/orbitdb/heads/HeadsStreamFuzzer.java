package io.relaypinner.orbitdb.heads;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.orbitdb.MalformedBlockException;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.testkit.FuzzCheck;
import java.util.Arrays;

/** Jazzer: the unframed heads-exchange stream, split into items and decoded as entries. */
class HeadsStreamFuzzer {
  @FuzzTest
  void split(final byte[] input) throws Exception {
    FuzzCheck.accepts(() -> {
      int offset = 0;
      while (offset < input.length) {
        final long length = CborItemScanner.itemLength(input, offset, input.length);
        if (length < 0) {
          return;
        }
        final byte[] item = Arrays.copyOfRange(input, offset, offset + (int) length);
        FuzzCheck.accepts(() -> Entry.decode(item), MalformedBlockException.class);
        offset += (int) length;
      }
    }, ProtocolViolationException.class);
  }
}
