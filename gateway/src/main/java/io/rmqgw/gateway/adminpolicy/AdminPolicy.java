package io.rmqgw.gateway.adminpolicy;

import io.rmqgw.gateway.config.AddressRange;
import io.rmqgw.gateway.config.AdminRequestsConfig;
import java.net.SocketAddress;
import java.util.List;

/** The admin-request settings in force, immutable (a reload replaces it whole). */
public final class AdminPolicy {

    private final AdminRequestsConfig config;
    private final List<AddressRange> allowFrom;

    public AdminPolicy(AdminRequestsConfig config) {
        this.config = config;
        this.allowFrom = config.allowFromRanges();
    }

    public AdminRequestsConfig config() {
        return config;
    }

    /** Whether a request of {@code kind} from {@code source} is relayed. */
    public boolean allows(RequestKind kind, SocketAddress source) {
        if (!kind.refusedByDefault() || config.allowAll() || (kind == RequestKind.UNKNOWN && config.allowUnknownCodes())) {
            return true;
        }
        for (AddressRange range : allowFrom) {
            if (range.contains(source)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a request of {@code kind} is refused whatever its source address. */
    public boolean refusesEveryone(RequestKind kind) {
        return !allows(kind, null) && allowFrom.isEmpty();
    }

    /** The setting a refusal's remark names. */
    String settingToAllow(RequestKind kind) {
        return kind == RequestKind.UNKNOWN
            ? "admin-requests.allow-unknown-codes, admin-requests.allow-all or admin-requests.allow-from"
            : "admin-requests.allow-all or admin-requests.allow-from";
    }
}
