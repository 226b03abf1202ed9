package io.relaypinner.orbitdb.log;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** A log's counters ({@link OrbitDbLog#counters()}), counted by its parts; thread-safe. */
final class Counters {
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();

  void count(final String name) {
    count(name, 1);
  }

  void count(final String name, final long n) {
    counters.computeIfAbsent(name, k -> new LongAdder()).add(n);
  }

  /** Every counter by name, in name order. */
  Map<String, Long> snapshot() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
