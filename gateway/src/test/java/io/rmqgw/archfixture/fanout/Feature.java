package io.rmqgw.archfixture.fanout;

import io.rmqgw.archfixture.vq.OtherFeature;

/** A deliberate violation for LayersTest: a feature naming another feature. */
public final class Feature {
    public OtherFeature other;
}
