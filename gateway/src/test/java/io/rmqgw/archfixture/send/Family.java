package io.rmqgw.archfixture.send;

import io.rmqgw.archfixture.fanout.Feature;

/** A deliberate violation for LayersTest: a request family naming a feature. */
public final class Family {
    public Feature feature;
}
