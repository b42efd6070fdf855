package io.rmqgw.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Process metrics under Prometheus's names, read from this Linux process's /proc/self and compared with other sources. */
class ProcessMetricsTest {

    private static final Path PROC_SELF = Path.of("/proc/self");

    /** The value of the one unlabelled sample {@code name}. */
    private static double sample(String scrape, String name) {
        List<String> lines = Arrays.stream(scrape.split("\n")).filter(l -> l.startsWith(name + " ")).toList();
        assertEquals(1, lines.size(), () -> "one line " + name + " expected in:\n" + scrape);
        return Double.parseDouble(lines.get(0).substring(name.length() + 1).trim());
    }

    @Test
    void exportedUnderPrometheusNamesWithoutMicrometersDuplicates() {
        assumeTrue(Files.isReadable(PROC_SELF.resolve("status")), "needs Linux /proc");
        try (GatewayMetrics metrics = GatewayMetrics.prometheus()) {
            String s = metrics.scrape();
            for (String name : List.of("process_cpu_seconds_total", "process_resident_memory_bytes",
                "process_virtual_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds")) {
                assertTrue(sample(s, name) > 0, name);
            }
            assertTrue(s.contains("# TYPE process_cpu_seconds_total counter"), s);
            assertFalse(s.contains("process_cpu_time_ns_total"), "Micrometer's nanosecond CPU counter is dropped");
            assertFalse(s.contains("process_cpu_usage"), "Micrometer's CPU ratio is dropped");
            // Micrometer's JVM and system metrics stay
            for (String kept : List.of("process_uptime_seconds", "system_cpu_usage", "system_cpu_count", "jvm_memory_used_bytes")) {
                assertTrue(s.contains(kept), kept);
            }
        }
    }

    /** The binder is dropped after binding; its gauges must not go NaN once it is collected. */
    @Test
    void metersOutliveTheBinder() throws InterruptedException {
        assumeTrue(Files.isReadable(PROC_SELF.resolve("status")), "needs Linux /proc");
        try (GatewayMetrics metrics = GatewayMetrics.prometheus()) {
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(50);
            }
            String s = metrics.scrape();
            for (String name : List.of("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                "process_max_fds", "process_start_time_seconds")) {
                double v = sample(s, name);
                assertTrue(v > 0, name + " " + v);
            }
        }
    }

    @Test
    void valuesMatchTheKernelAndTheJvm() throws IOException {
        assumeTrue(Files.isReadable(PROC_SELF.resolve("statm")), "needs Linux /proc");
        try (GatewayMetrics metrics = GatewayMetrics.prometheus()) {
            String s = metrics.scrape();

            double startMillis = ManagementFactory.getRuntimeMXBean().getStartTime();
            assertEquals(startMillis / 1000, sample(s, "process_start_time_seconds"), 0.001);

            // CPU: the JVM's figure against utime + stime in /proc/self/stat (10 ms ticks)
            double cpu = sample(s, "process_cpu_seconds_total");
            double fromStat = new ProcessMetrics().statCpuSeconds();
            assertTrue(cpu > 0 && Math.abs(cpu - fromStat) < 1.0, "cpu " + cpu + " s, /proc/self/stat " + fromStat + " s");
            burnCpu();
            assertTrue(sample(metrics.scrape(), "process_cpu_seconds_total") > cpu, "CPU time grows");

            // resident memory against /proc/self/statm (pages; 4 KiB on x86-64 and most arm64 kernels)
            String[] statm = Files.readString(PROC_SELF.resolve("statm")).trim().split(" ");
            double statmRss = Long.parseLong(statm[1]) * 4096.0;
            double rss = sample(s, "process_resident_memory_bytes");
            assertTrue(Math.abs(rss - statmRss) < 0.25 * statmRss, "rss " + rss + ", statm " + statmRss);
            assertTrue(sample(s, "process_virtual_memory_bytes") >= rss);

            if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
                assertEquals((double) unix.getMaxFileDescriptorCount(), sample(s, "process_max_fds"));
            }
        }
    }

    @Test
    void openFdsFollowFilesOpenedAndClosed(@TempDir Path dir) throws IOException {
        assumeTrue(Files.isDirectory(PROC_SELF.resolve("fd")), "needs Linux /proc");
        try (GatewayMetrics metrics = GatewayMetrics.prometheus()) {
            double before = sample(metrics.scrape(), "process_open_fds");
            List<FileChannel> open = new ArrayList<>();
            try {
                for (int i = 0; i < 20; i++) {
                    open.add(FileChannel.open(dir.resolve("f" + i), StandardOpenOption.CREATE, StandardOpenOption.WRITE));
                }
                double during = sample(metrics.scrape(), "process_open_fds");
                // other threads may open or close a descriptor meanwhile; 20 stands out of that noise
                assertTrue(during >= before + 15, "before " + before + ", with 20 more files " + during);
            } finally {
                for (FileChannel c : open) {
                    c.close();
                }
            }
            double after = sample(metrics.scrape(), "process_open_fds");
            assertTrue(after <= before + 5, "before " + before + ", after closing " + after);
        }
    }

    /** A made-up /proc/self: a command name with spaces and parentheses, unlimited descriptors. */
    @Test
    void parsesProcFiles(@TempDir Path proc) throws IOException {
        Files.writeString(proc.resolve("stat"),
            "4242 (java (the) gw) S 1 4242 4242 0 -1 4194560 9000 0 12 0 1234 566 0 0 20 0 40 0 2000 9191419904 23117 "
                + "18446744073709551615 1 1 0 0 0 0 16778240 1 1090604796 0 0 0 17 1 0 0 0 0 0\n");
        Files.writeString(proc.resolve("status"), "Name:\tjava\nVmSize:\t 8975996 kB\nVmRSS:\t   92468 kB\nThreads:\t40\n");
        Files.writeString(proc.resolve("limits"),
            "Limit                     Soft Limit           Hard Limit           Units     \n"
                + "Max open files            unlimited            unlimited            files     \n");
        Files.createDirectory(proc.resolve("fd"));
        for (int i = 0; i < 3; i++) {
            Files.createFile(proc.resolve("fd").resolve(Integer.toString(i)));
        }
        ProcessMetrics m = new ProcessMetrics(proc);
        assertEquals(18.0, m.statCpuSeconds(), 1e-9, "(1234 + 566) ticks at 100 Hz");
        assertEquals(92468.0, m.statusKib("VmRSS:"));
        assertEquals(8975996.0, m.statusKib("VmSize:"));
        assertTrue(Double.isNaN(m.statusKib("VmSwap:")));
        assertEquals(3.0, m.openFds());
        assertEquals(Double.POSITIVE_INFINITY, m.maxFds());

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        m.bindTo(registry);
        assertEquals(92468.0 * 1024, registry.get("process.resident.memory").gauge().value());
        assertEquals(3.0, registry.get("process.open.fds").gauge().value());
    }

    @Test
    void withoutProcOnlyCpuAndStartTime(@TempDir Path empty) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new ProcessMetrics(empty.resolve("missing")).bindTo(registry);
        assertTrue(registry.find("process.resident.memory").gauge() == null);
        assertTrue(registry.find("process.open.fds").gauge() == null);
        assertTrue(registry.get("process.cpu").functionCounter().count() > 0, "CPU time from the JVM");
        assertTrue(registry.get("process.start.time").timeGauge().value() > 0);
        assertTrue(Double.isNaN(new ProcessMetrics(empty).statCpuSeconds()));
    }

    private static void burnCpu() {
        long deadline = System.nanoTime() + 200_000_000L;
        long x = 0;
        while (System.nanoTime() < deadline) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        assertTrue(x >= 0);
    }
}
