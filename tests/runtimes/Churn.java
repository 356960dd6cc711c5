// tests/integration/runtimes.sh: a multi-threaded Java program with GC
// pressure (the JVM uses SIGSEGV itself: implicit null checks, safepoint
// polls, stack banging; and JIT frames with no unwind tables).
import java.util.*;
import java.util.concurrent.*;

public class Churn {
    public static void main(String[] args) throws Exception {
        HashMap<Integer, Integer> m = new HashMap<>();
        for (int i = 0; i < 200_000; i++) m.put(i, i * 7);
        ArrayList<Integer> l = new ArrayList<>(m.values());
        Collections.shuffle(l, new Random(42));
        Collections.sort(l);
        ExecutorService ex = Executors.newFixedThreadPool(4);
        List<Future<Long>> fs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            final int tt = t;
            fs.add(ex.submit(() -> {
                long s = 0;
                for (int r = 0; r < 10; r++) {
                    int[] a = new int[1 << 16];
                    for (int i = 0; i < a.length; i++) a[i] = i ^ tt ^ r;
                    for (int x : a) s += x;
                }
                return s;
            }));
        }
        long total = 0;
        for (Future<Long> f : fs) total += f.get();
        ex.shutdown();
        Object o = null;
        int npe = 0;
        for (int i = 0; i < 1000; i++) {
            try { o.hashCode(); } catch (NullPointerException e) { npe++; }
        }
        System.out.println(m.size() + " " + l.get(l.size() - 1) + " " + total + " " + npe);
    }
}
