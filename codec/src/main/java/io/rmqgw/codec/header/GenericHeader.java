package io.rmqgw.codec.header;

import io.netty.util.internal.ObjectPool;

/** Any other code: the envelope and every extFields entry, no typed fields. */
public final class GenericHeader extends CommandHeader {

    GenericHeader(ObjectPool.Handle<CommandHeader> handle) {
        super(HeaderKind.GENERIC, handle);
    }
}
