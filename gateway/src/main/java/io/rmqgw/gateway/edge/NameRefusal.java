package io.rmqgw.gateway.edge;

import io.rmqgw.codec.name.NameCheck;

/** Why a request was refused at the edge: the response code and remark a broker would give. */
public record NameRefusal(int code, String remark, NameCheck check) {
}
