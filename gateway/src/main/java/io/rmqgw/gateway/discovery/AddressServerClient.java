package io.rmqgw.gateway.discovery;

import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.routing.NamesrvAddresses;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Asks an address server for the name servers, as RocketMQ clients do ({@code TopAddressing}): an HTTP GET
 * answered with {@code 200} and {@code host:port;host:port} (the first line counts, blanks around entries
 * are ignored). Every call is bounded by its timeout, connect and body included. Blocking: call it from a
 * thread of its own, never from an event loop.
 */
public final class AddressServerClient {

    /** Larger answers are not a name-server list. */
    static final int MAX_BODY_BYTES = 64 * 1024;

    /** What one fetch gave. */
    public sealed interface Fetch {

        /** The address server answered a usable list. */
        record Ok(List<HostPort> namesrv) implements Fetch {
            public Ok {
                namesrv = List.copyOf(namesrv);
            }
        }

        /**
         * It did not: {@code result} is the metric label ({@code http_error}, {@code timeout}, {@code empty},
         * {@code malformed}, {@code unreachable}), {@code reason} says what happened in words.
         */
        record Failed(String result, String reason) implements Fetch {
        }
    }

    public static final String HTTP_ERROR = "http_error";
    public static final String TIMEOUT = "timeout";
    public static final String EMPTY = "empty";
    public static final String MALFORMED = "malformed";
    public static final String UNREACHABLE = "unreachable";

    private HttpClient client;
    private Duration clientTimeout;

    /** GETs {@code url}, giving up after {@code timeout}. Never throws for what the server or network does. */
    public Fetch fetch(URI url, Duration timeout) {
        HttpClient http = client(timeout);
        HttpRequest request = HttpRequest.newBuilder(url)
            .timeout(timeout)
            .header("Accept", "text/plain, */*")
            .header("User-Agent", "rmqgw")
            .GET()
            .build();
        CompletableFuture<HttpResponse<byte[]>> pending = http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
        HttpResponse<byte[]> response;
        try {
            // the request timeout covers the answer's head; this bounds the body too
            response = pending.get(timeout.toMillis() + 50, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            pending.cancel(true);
            return new Fetch.Failed(TIMEOUT, "no answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            pending.cancel(true);
            Thread.currentThread().interrupt();
            return new Fetch.Failed(UNREACHABLE, "interrupted");
        } catch (ExecutionException e) {
            return failure(e.getCause() == null ? e : e.getCause(), timeout);
        }
        if (response.statusCode() != 200) {
            return new Fetch.Failed(HTTP_ERROR, "HTTP " + response.statusCode());
        }
        return parse(response.body());
    }

    private static Fetch failure(Throwable cause, Duration timeout) {
        if (cause instanceof HttpConnectTimeoutException || cause instanceof HttpTimeoutException) {
            return new Fetch.Failed(TIMEOUT, "no answer within " + timeout.toMillis() + " ms");
        }
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root instanceof ConnectException || cause instanceof ConnectException) {
            return new Fetch.Failed(UNREACHABLE, "connection refused");
        }
        String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        if (cause instanceof IOException || root instanceof IOException) {
            return new Fetch.Failed(UNREACHABLE, message);
        }
        return new Fetch.Failed(UNREACHABLE, root.getClass().getSimpleName() + ": " + message);
    }

    /** Parses an answer body as RocketMQ clients read it. */
    public static Fetch parse(byte[] body) {
        if (body == null || body.length == 0) {
            return new Fetch.Failed(EMPTY, "empty answer");
        }
        if (body.length > MAX_BODY_BYTES) {
            return new Fetch.Failed(MALFORMED, "answer of " + body.length + " bytes is not a name-server list");
        }
        String text = new String(body, StandardCharsets.UTF_8).strip();
        int newline = firstNewline(text);
        if (newline >= 0) {
            text = text.substring(0, newline).strip();
        }
        if (text.isEmpty()) {
            return new Fetch.Failed(EMPTY, "empty answer");
        }
        Set<String> seen = new LinkedHashSet<>();
        List<HostPort> list = new ArrayList<>();
        for (String entry : text.split(";")) {
            if (entry.isBlank()) {
                continue;
            }
            HostPort address;
            try {
                address = HostPort.parse("", entry.strip());
            } catch (ConfigException e) {
                return new Fetch.Failed(MALFORMED, "'" + abbreviate(entry.strip()) + "' is not host:port (" + e.reason()
                    + ")");
            }
            if (seen.add(address.toString())) {
                list.add(address);
            }
        }
        if (list.isEmpty()) {
            return new Fetch.Failed(EMPTY, "no address in '" + abbreviate(text) + "'");
        }
        try {
            NamesrvAddresses.of(list.stream().map(HostPort::toString).toList());
        } catch (IllegalArgumentException e) {
            return new Fetch.Failed(MALFORMED, e.getMessage());
        }
        return new Fetch.Ok(list);
    }

    private static int firstNewline(String s) {
        int r = s.indexOf('\r');
        int n = s.indexOf('\n');
        if (r < 0) {
            return n;
        }
        return n < 0 ? r : Math.min(r, n);
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    private synchronized HttpClient client(Duration timeout) {
        if (client == null || !timeout.equals(clientTimeout)) {
            client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NORMAL)
                .build();
            clientTimeout = timeout;
        }
        return client;
    }
}
