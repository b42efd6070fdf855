package io.rmqgw.tools;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** The version Maven filtered into {@code io/rmqgw/tools/version.properties}. */
public final class VersionProvider implements CommandLine.IVersionProvider {

    public static String version() {
        Properties p = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // fall through to "unknown"
        }
        String v = p.getProperty("version", "");
        return v.isEmpty() || v.startsWith("${") ? "unknown" : v;
    }

    @Override
    public String[] getVersion() {
        return new String[] {
            "rmqgw " + version(),
            "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")"
        };
    }
}
