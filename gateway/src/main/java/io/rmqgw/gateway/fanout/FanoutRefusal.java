package io.rmqgw.gateway.fanout;

/** A fan-out request refused before anything was sent: the response code and the remark the client gets. */
final class FanoutRefusal extends Exception {

    private final int code;

    FanoutRefusal(int code, String remark) {
        super(remark, null, false, false);
        this.code = code;
    }

    int code() {
        return code;
    }
}
