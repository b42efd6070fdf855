package io.rmqgw.archfixture.cycle.a;

import io.rmqgw.archfixture.cycle.b.B;

/** A deliberate package cycle for LayersTest (a -> b -> a). */
public final class A {
    public B b;
}
