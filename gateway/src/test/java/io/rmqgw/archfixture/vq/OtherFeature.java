package io.rmqgw.archfixture.vq;

/** A feature of the LayersTest fixtures. */
public final class OtherFeature {
}
