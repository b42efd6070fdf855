package io.rmqgw.codec.header;

/** Any other code: the envelope and every extFields entry, no typed fields. */
public final class GenericHeader extends CommandHeader {

    GenericHeader() {
        super(HeaderKind.GENERIC);
    }
}
