import java.io.File;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.netbeans.lib.profiler.heap.FieldValue;
import org.netbeans.lib.profiler.heap.Heap;
import org.netbeans.lib.profiler.heap.HeapFactory;
import org.netbeans.lib.profiler.heap.Instance;
import org.netbeans.lib.profiler.heap.JavaClass;
import org.netbeans.lib.profiler.heap.ObjectFieldValue;

/**
 * What holds a relay's heap, from a heap dump (`jcmd <pid> GC.heap_dump <file>`; see
 * bench/heap-paths.sh). Arguments after the dump file, any number and order:
 *
 * <ul>
 *   <li>{@code --biggest}: the 40 objects with the largest retained size, each with what holds it;
 *   <li>{@code @<class>}: the retained size of (up to 3) instances of a class, and their fields
 *       holding more than 4 KB (e.g. {@code @io.relaypinner.libp2p.host.PeerStore});
 *   <li>{@code <class>}: 100 sampled instances' paths to the nearest GC root, by frequency (what
 *       keeps instances of, e.g., {@code io.relaypinner.multiformats.Cid} alive).
 * </ul>
 *
 * Used to find what filled the soak's heap (docs/benchmarks.md "Soak", fourth run).
 */
public class HeapPaths {
  public static void main(final String[] args) throws Exception {
    final Heap heap = HeapFactory.createHeap(new File(args[0]));
    for (int i = 1; i < args.length; i++) {
      if (args[i].equals("--biggest")) {
        biggest(heap);
      } else if (args[i].startsWith("@")) {
        retained(heap, args[i].substring(1));
      } else {
        paths(heap, args[i], 100);
      }
    }
  }

  private static void biggest(final Heap heap) {
    System.out.println("== biggest by retained size");
    for (final Instance in : heap.getBiggestObjectsByRetainedSize(40)) {
      final Instance up = in.getNearestGCRootPointer();
      System.out.println(in.getRetainedSize() + " " + in.getJavaClass().getName() + "#"
          + in.getInstanceNumber() + " <- " + (up == null ? "root" : up.getJavaClass().getName()));
    }
  }

  private static void retained(final Heap heap, final String name) {
    final JavaClass type = heap.getJavaClassByName(name);
    if (type == null) {
      System.out.println("no class " + name);
      return;
    }
    int shown = 0;
    for (final Instance in : type.getInstances()) {
      if (shown++ >= 3) {
        break;
      }
      System.out.println("== " + name + "#" + in.getInstanceNumber() + " retains "
          + in.getRetainedSize());
      for (final FieldValue field : in.getFieldValues()) {
        if (field instanceof ObjectFieldValue value && value.getInstance() != null
            && value.getInstance().getRetainedSize() > 4096) {
          System.out.println("  " + field.getField().getName() + " ("
              + value.getInstance().getJavaClass().getName() + ") "
              + value.getInstance().getRetainedSize());
        }
      }
    }
  }

  private static void paths(final Heap heap, final String name, final int samples) {
    final JavaClass type = heap.getJavaClassByName(name);
    if (type == null) {
      System.out.println("no class " + name);
      return;
    }
    final List<Instance> all = type.getInstances();
    System.out.println("== " + name + ": " + all.size() + " instances; paths to a GC root");
    final Map<String, Integer> counts = new HashMap<>();
    final Random random = new Random(1);
    for (int s = 0; s < Math.min(samples, all.size()); s++) {
      final StringBuilder path = new StringBuilder();
      Instance at = all.get(random.nextInt(all.size()));
      for (int depth = 0; depth < 40 && path.length() < 600; depth++) {
        final Instance up = at.getNearestGCRootPointer();
        if (up == null || up.equals(at)) {
          break;
        }
        final String holder = up.getJavaClass().getName();
        // Collections' internals (nodes, tables, entries) collapse into one "java.util.*..".
        if (holder.startsWith("java.util.") || holder.endsWith("[]")) {
          if (!path.toString().endsWith("..")) {
            path.append(" <- ").append(holder.replace("java.util.", "")).append("..");
          }
        } else {
          path.append(" <- ").append(holder);
        }
        at = up;
      }
      counts.merge(path.toString(), 1, Integer::sum);
    }
    counts.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(8)
        .forEach(e -> System.out.println(e.getValue() + "x" + e.getKey()));
  }
}
