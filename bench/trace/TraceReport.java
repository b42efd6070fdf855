import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jacoco.core.data.ExecutionData;
import org.jacoco.core.data.ExecutionDataReader;
import org.jacoco.core.data.ExecutionDataStore;
import org.jacoco.core.data.SessionInfoStore;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.Opcodes;

/**
 * Counts what RequestTraceTest's JaCoCo dumps say ran: the classes with at least one probe hit that are main classes
 * (found under one of the given target/classes directories; test classes, test-support and the client side are not
 * there), each mapped to its source file (the class file's SourceFile attribute: nested, anonymous and lambda-holding
 * classes count as the file they are written in), grouped by package.
 *
 * <pre>java -cp org.jacoco.core.jar:asm.jar bench/trace/TraceReport.java EXEC_DIR MODULE=CLASSES_DIR...</pre>
 */
public final class TraceReport {

    private static final Pattern DUMP = Pattern.compile("(.+)-(\\d+)(\\.settled)?\\.exec");

    /** A main class: its module and source file (package/File.java). */
    record MainClass(String module, String source) {
    }

    public static void main(String[] args) throws IOException {
        Path execDir = Path.of(args[0]);
        Map<String, MainClass> main = new TreeMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] moduleDir = args[i].split("=", 2);
            index(moduleDir[0], Path.of(moduleDir[1]), main);
        }
        // request -> run -> source files hit (immediate, settled)
        Map<String, Map<Integer, Set<String>>> immediate = new TreeMap<>();
        Map<String, Map<Integer, Set<String>>> settled = new TreeMap<>();
        Map<String, Set<String>> excluded = new TreeMap<>();
        List<Path> dumps;
        try (Stream<Path> files = Files.list(execDir)) {
            dumps = files.filter(p -> DUMP.matcher(p.getFileName().toString()).matches()).sorted().toList();
        }
        for (Path dump : dumps) {
            Matcher m = DUMP.matcher(dump.getFileName().toString());
            m.matches();
            String request = m.group(1);
            int run = Integer.parseInt(m.group(2));
            Set<String> hit = new TreeSet<>();
            for (ExecutionData data : read(dump).getContents()) {
                if (!data.hasHits() || !data.getName().startsWith("io/rmqgw/")) {
                    continue;
                }
                MainClass c = main.get(data.getName());
                if (c == null) {
                    excluded.computeIfAbsent(request, r -> new TreeSet<>()).add(data.getName().replaceAll("\\$.*", ""));
                } else {
                    hit.add(c.source());
                }
            }
            (m.group(3) == null ? immediate : settled).computeIfAbsent(request, r -> new TreeMap<>()).put(run, hit);
        }
        Map<String, String> moduleOf = new TreeMap<>();
        main.values().forEach(c -> moduleOf.put(c.source(), c.module()));

        List<String> summary = new ArrayList<>();
        for (Map.Entry<String, Map<Integer, Set<String>>> request : immediate.entrySet()) {
            Collection<Set<String>> runs = request.getValue().values();
            Set<String> union = new TreeSet<>();
            runs.forEach(union::addAll);
            Set<String> every = new TreeSet<>(union);
            runs.forEach(every::retainAll);
            Set<String> after = new TreeSet<>();
            settled.getOrDefault(request.getKey(), Map.of()).values().forEach(after::addAll);
            after.removeAll(union);
            Map<String, List<String>> byPackage = byPackage(union);
            String sizes = runs.stream().map(r -> String.valueOf(r.size())).collect(Collectors.joining("/"));
            System.out.printf("== %s: %d files in %d packages (files per run: %s; in every run: %d)%n",
                request.getKey(), union.size(), byPackage.size(), sizes, every.size());
            byPackage.forEach((pkg, files) -> System.out.printf("  %-28s %-8s %s%n", pkg,
                "[" + moduleOf.get(pkg.replace('.', '/') + "/" + files.get(0)) + "]",
                String.join(" ", files.stream().map(f -> every.contains(pkg.replace('.', '/') + "/" + f) ? f : f + "*")
                    .toList())));
            if (union.size() != every.size()) {
                System.out.println("  (* not in every run)");
            }
            if (!after.isEmpty()) {
                System.out.printf("  ran after the answer was read (within the settle time), not counted: %d files: %s%n",
                    after.size(), String.join(" ", after));
            }
            System.out.printf("  excluded io.rmqgw classes that ran (test side, not main code): %s%n%n",
                excluded.getOrDefault(request.getKey(), Set.of()).stream().map(n -> n.replace('/', '.'))
                    .collect(Collectors.joining(" ")));
            Map<String, Integer> perModule = new TreeMap<>();
            union.forEach(f -> perModule.merge(moduleOf.get(f), 1, Integer::sum));
            summary.add(String.format("%-16s %5d files %3d packages   %s", request.getKey(), union.size(), byPackage.size(),
                perModule.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "))));
        }
        System.out.println("== summary (main-code source files / packages per request; files per module)");
        summary.forEach(s -> System.out.println("  " + s));
    }

    private static Map<String, List<String>> byPackage(Set<String> sources) {
        Map<String, List<String>> byPackage = new TreeMap<>();
        for (String source : sources) {
            int slash = source.lastIndexOf('/');
            byPackage.computeIfAbsent(source.substring(0, slash).replace('/', '.'), p -> new ArrayList<>())
                .add(source.substring(slash + 1));
        }
        return byPackage;
    }

    private static ExecutionDataStore read(Path dump) throws IOException {
        ExecutionDataStore store = new ExecutionDataStore();
        try (InputStream in = Files.newInputStream(dump)) {
            ExecutionDataReader reader = new ExecutionDataReader(in);
            reader.setExecutionDataVisitor(store);
            reader.setSessionInfoVisitor(new SessionInfoStore());
            reader.read();
        }
        return store;
    }

    private static void index(String module, Path classes, Map<String, MainClass> main) throws IOException {
        Set<Path> files = new LinkedHashSet<>();
        try (Stream<Path> walk = Files.walk(classes)) {
            walk.filter(p -> p.toString().endsWith(".class")).forEach(files::add);
        }
        for (Path file : files) {
            ClassReader reader = new ClassReader(Files.readAllBytes(file));
            String name = reader.getClassName();
            String[] source = {null};
            reader.accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public void visitSource(String file, String debug) {
                    source[0] = file;
                }
            }, ClassReader.SKIP_CODE | ClassReader.SKIP_FRAMES);
            String pkg = name.substring(0, name.lastIndexOf('/') + 1);
            String sourceFile = source[0] != null ? source[0] : name.substring(pkg.length()).replaceAll("\\$.*", "") + ".java";
            main.put(name, new MainClass(module, pkg + sourceFile));
        }
    }
}
