package io.rmqgw.gateway.reload;

import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.FreePorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * A real {@link Gateway} started from a YAML file, on free 127.0.0.1 ports (listen, broker ports, admin), as
 * {@code rmqgw start -c FILE} runs one. {@link #yaml} writes the file for given reloadable settings, so a test
 * can rewrite it with other values and keep every port.
 */
public final class YamlGateway implements AutoCloseable {

    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();

    public final Path file;
    public final int listen;
    public final int brokerBase;
    public final int admin;
    public final String namesrv;
    public final GatewayMetrics metrics = GatewayMetrics.inMemory();
    public Gateway gateway;
    /** Lines added inside the {@code upstream:} block (indented by two spaces, newline-terminated). */
    public String upstreamExtra = "";

    public YamlGateway(Path dir, String namesrv) {
        this.file = dir.resolve("gateway.yaml");
        this.namesrv = namesrv;
        this.brokerBase = FreePorts.range(9);
        this.listen = FreePorts.port();
        this.admin = FreePorts.port();
    }

    /** The configuration file's text; {@code extra} is appended as is (top-level keys). */
    public String yaml(String requestTimeout, int topicMaxLength, String extra) {
        return "listen: 127.0.0.1:" + listen + "\n"
            + "broker-ports: " + brokerBase + "-" + (brokerBase + 8) + "\n"
            + "drain-timeout: 0s\n"
            + "upstream:\n"
            + "  namesrv: " + namesrv + "\n"
            + "  connect-timeout: 1s\n"
            + "  request-timeout: " + requestTimeout + "\n"
            + "  header-encoding: preserve\n"
            + upstreamExtra
            + "names:\n"
            + "  check: true\n"
            + "  topic-max-length: " + topicMaxLength + "\n"
            + "admin:\n"
            + "  listen: 127.0.0.1:" + admin + "\n"
            + extra;
    }

    /** Writes the file in place. */
    public void write(String text) throws IOException {
        Files.writeString(file, text);
    }

    /** Writes a new file and renames it over the old one, as editors and {@code sed -i} do. */
    public void replace(String text) throws IOException {
        Path tmp = file.resolveSibling(".gateway.yaml.tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    public YamlGateway start(String text) throws Exception {
        write(text);
        gateway = Gateway.start(ConfigLoader.load(file), metrics);
        return this;
    }

    public HttpResponse<String> post(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin + path))
            .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    public HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin + path))
            .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        if (gateway != null) {
            gateway.close(Duration.ZERO);
        }
        metrics.close();
    }
}
