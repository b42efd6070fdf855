package io.rmqgw.archfixture.cycle.b;

import io.rmqgw.archfixture.cycle.a.A;

/** A deliberate package cycle for LayersTest (b -> a -> b). */
public final class B {
    public A a;
}
