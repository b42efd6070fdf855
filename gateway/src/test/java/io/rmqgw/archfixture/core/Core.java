package io.rmqgw.archfixture.core;

import io.rmqgw.archfixture.fanout.Feature;

/** A deliberate violation for LayersTest: the core naming a feature. */
public final class Core {
    public Feature feature;
}
