package io.rmqgw.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The process metrics every Prometheus client exports, under their conventional names:
 * {@code process_cpu_seconds_total}, {@code process_resident_memory_bytes}, {@code process_virtual_memory_bytes},
 * {@code process_open_fds}, {@code process_max_fds} and {@code process_start_time_seconds}. Memory and file
 * descriptors come from {@code /proc/self} (Linux; left out where it is not readable), CPU time from the JVM
 * (or {@code /proc/self/stat}), the start time from the JVM. Values are read when scraped.
 */
public final class ProcessMetrics implements MeterBinder {

    /** Clock ticks per second of {@code /proc/self/stat} times: USER_HZ, 100 on every Linux ABI in use. */
    private static final double USER_HZ = 100;

    private final Path procSelf;

    /** Reads {@code /proc/self}. */
    public ProcessMetrics() {
        this(Path.of("/proc/self"));
    }

    ProcessMetrics(Path procSelf) {
        this.procSelf = procSelf;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        // meters hold their object weakly: gauges say strongReference, this counter's function captures this
        FunctionCounter.builder("process.cpu", this, self -> cpuSeconds())
            .description("User and system CPU time spent by the process")
            .baseUnit("seconds")
            .register(registry);
        // same id and type as Micrometer's UptimeMetrics registers: bound twice, it is one meter
        TimeGauge.builder("process.start.time", ManagementFactory.getRuntimeMXBean(), TimeUnit.MILLISECONDS,
                r -> r.getStartTime())
            .description("Start time of the process since the Unix epoch")
            .strongReference(true)
            .register(registry);
        if (Files.isReadable(procSelf.resolve("status"))) {
            Gauge.builder("process.resident.memory", this, m -> m.statusKib("VmRSS:") * 1024)
                .description("Resident memory size (VmRSS of /proc/self/status)")
                .baseUnit("bytes")
                .strongReference(true)
                .register(registry);
            Gauge.builder("process.virtual.memory", this, m -> m.statusKib("VmSize:") * 1024)
                .description("Virtual memory size (VmSize of /proc/self/status)")
                .baseUnit("bytes")
                .strongReference(true)
                .register(registry);
        }
        if (Files.isDirectory(procSelf.resolve("fd"))) {
            Gauge.builder("process.open.fds", this, ProcessMetrics::openFds)
                .description("Open file descriptors (entries of /proc/self/fd)")
                .strongReference(true)
                .register(registry);
        }
        if (Files.isReadable(procSelf.resolve("limits"))) {
            Gauge.builder("process.max.fds", this, ProcessMetrics::maxFds)
                .description("Limit on open file descriptors (soft 'Max open files' of /proc/self/limits)")
                .strongReference(true)
                .register(registry);
        }
    }

    /** CPU seconds: the JVM's process CPU time where it offers one, else utime + stime of /proc/self/stat. */
    double cpuSeconds() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            long nanos = sun.getProcessCpuTime();
            if (nanos >= 0) {
                return nanos / 1e9;
            }
        }
        return statCpuSeconds();
    }

    /** utime + stime of /proc/self/stat in seconds, NaN when unreadable. */
    double statCpuSeconds() {
        try {
            String stat = Files.readString(procSelf.resolve("stat"));
            // the command name (field 2) is in parentheses and may hold spaces: count fields after its ')'
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" +");
            // fields[0] is field 3 (state); utime and stime are fields 14 and 15
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / USER_HZ;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The kB value of a /proc/self/status line such as {@code VmRSS:  123456 kB}, NaN when absent. */
    double statusKib(String key) {
        try {
            List<String> lines = Files.readAllLines(procSelf.resolve("status"));
            for (String line : lines) {
                if (line.startsWith(key)) {
                    String[] parts = line.substring(key.length()).trim().split("\\s+");
                    return Double.parseDouble(parts[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // NaN below
        }
        return Double.NaN;
    }

    /** Entries of /proc/self/fd, the descriptor that lists them included (as Prometheus's own clients count). */
    double openFds() {
        int n = 0;
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(procSelf.resolve("fd"))) {
            for (Path ignored : fds) {
                n++;
            }
            return n;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The soft limit of 'Max open files' in /proc/self/limits; +Inf when unlimited, NaN when unreadable. */
    double maxFds() {
        try {
            for (String line : Files.readAllLines(procSelf.resolve("limits"))) {
                if (line.startsWith("Max open files")) {
                    String soft = line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return "unlimited".equals(soft) ? Double.POSITIVE_INFINITY : Double.parseDouble(soft);
                }
            }
        } catch (IOException | RuntimeException e) {
            // NaN below
        }
        return Double.NaN;
    }
}
