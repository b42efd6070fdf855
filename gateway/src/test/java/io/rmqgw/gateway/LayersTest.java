package io.rmqgw.gateway;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.rmqgw.archfixture.cycle.a.A;
import io.rmqgw.archfixture.cycle.b.B;
import io.rmqgw.archfixture.fanout.Feature;
import io.rmqgw.archfixture.relay.Core;
import io.rmqgw.archfixture.vq.OtherFeature;
import io.rmqgw.gateway.broker.SendHandler;
import io.rmqgw.gateway.coalesce.Coalescing;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules of the main code (codec, routing, metrics and the gateway), checked on its compiled classes:
 * no package cycle anywhere; the codec knows nothing of the gateway, routes or metrics; routing knows no channels;
 * in the gateway, the transport and the core (net, relay) and the pool (upstream) name no request family, feature
 * or the assembly; features name neither the assembly nor each other; only the assembly (the root package and
 * runtime) names everything. Each rule is shown failing on a deliberate violation among test fixtures.
 */
class LayersTest {

    /** The packages of features: each stands on the core and the request families, none on another. */
    static final List<String> FEATURES = List.of("fanout", "coalesce", "vq", "adminpolicy", "limits");

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.rmqgw");
    }

    static ArchRule noPackageCycles(String root) {
        return slices().matching(root + ".(**)").should().beFreeOfCycles();
    }

    /** The transport, the core and the pool: they name no family, feature, or the assembly. */
    static ArchRule coreNamesNoFeature(String root) {
        String[] above = above(root, "broker", "namesrv", "admin", "runtime", "discovery");
        return noClasses().that().resideInAnyPackage(root + ".net..", root + ".relay..", root + ".upstream..")
            .should().dependOnClassesThat().resideInAnyPackage(above)
            .orShould().dependOnClassesThat().resideInAPackage(root);
    }

    /** A feature names no other feature and not the assembly. */
    static ArchRule featuresStandAlone(String root, String feature) {
        String[] others = FEATURES.stream().filter(f -> !f.equals(feature)).map(f -> root + "." + f + "..")
            .toArray(String[]::new);
        return noClasses().that().resideInAPackage(root + "." + feature + "..")
            .should().dependOnClassesThat().resideInAnyPackage(others)
            .orShould().dependOnClassesThat().resideInAnyPackage(root, root + ".runtime..");
    }

    private static String[] above(String root, String... families) {
        List<String> packages = new java.util.ArrayList<>();
        for (String f : families) {
            packages.add(root + "." + f + "..");
        }
        for (String f : FEATURES) {
            if (!"limits".equals(f)) { // rate limits are a check the core makes on every request (RelaySession)
                packages.add(root + "." + f + "..");
            }
        }
        return packages.toArray(String[]::new);
    }

    @Test
    void noPackageCycleInTheMainCode() {
        noPackageCycles("io.rmqgw").check(main);
    }

    @Test
    void theCodecKnowsNothingOfTheGatewayRoutesMetricsOrSockets() {
        noClasses().that().resideInAPackage("io.rmqgw.codec..")
            .should().dependOnClassesThat().resideInAnyPackage("io.rmqgw.gateway..", "io.rmqgw.routing..",
                "io.rmqgw.metrics..", "io.netty.channel.socket..", "io.netty.bootstrap..")
            .check(main);
    }

    @Test
    void routingKnowsRoutesNotChannels() {
        noClasses().that().resideInAPackage("io.rmqgw.routing..")
            .should().dependOnClassesThat().resideInAnyPackage("io.netty.channel..", "io.rmqgw.gateway..")
            .check(main);
    }

    @Test
    void metricsIsAThinLayer() {
        noClasses().that().resideInAPackage("io.rmqgw.metrics..")
            .should().dependOnClassesThat().resideInAPackage("io.rmqgw.gateway..")
            .check(main);
    }

    @Test
    void theCoreNamesNoFeature() {
        coreNamesNoFeature("io.rmqgw.gateway").check(main);
    }

    /**
     * Features stand alone. One edge is left, named here so that no other joins it: the broker family's send handler
     * hands sends to coalescing (the seam a feature contract replaces, issue 28).
     */
    @Test
    void featuresNameNeitherEachOtherNorTheAssembly() {
        for (String feature : FEATURES) {
            featuresStandAlone("io.rmqgw.gateway", feature).check(main);
        }
        noClasses().that().resideInAnyPackage("io.rmqgw.gateway.broker..", "io.rmqgw.gateway.namesrv..")
            .should().dependOnClassesThat().resideInAnyPackage("io.rmqgw.gateway.fanout..", "io.rmqgw.gateway.vq..",
                "io.rmqgw.gateway.adminpolicy..")
            .orShould().dependOnClassesThat().resideInAPackage("io.rmqgw.gateway")
            .check(main);
        noClasses().that().resideInAnyPackage("io.rmqgw.gateway.broker..", "io.rmqgw.gateway.namesrv..")
            .and().doNotHaveFullyQualifiedName(SendHandler.class.getName())
            .should().dependOnClassesThat().resideInAPackage(Coalescing.class.getPackageName() + "..")
            .check(main);
    }

    @Test
    void eachRuleFailsOnADeliberateViolation() {
        JavaClasses fixtures = new ClassFileImporter().importClasses(A.class, B.class, Core.class, Feature.class,
            OtherFeature.class);
        EvaluationResult cycle = noPackageCycles("io.rmqgw.archfixture.cycle").evaluate(fixtures);
        assertTrue(cycle.hasViolation() && cycle.getFailureReport().toString().contains("Cycle"),
            () -> "the cycle a -> b -> a is found: " + cycle.getFailureReport());
        EvaluationResult core = coreNamesNoFeature("io.rmqgw.archfixture").evaluate(fixtures);
        assertTrue(core.hasViolation() && core.getFailureReport().toString().contains(Core.class.getName()),
            () -> "the core naming a feature is found: " + core.getFailureReport());
        EvaluationResult feature = featuresStandAlone("io.rmqgw.archfixture", "fanout").evaluate(fixtures);
        assertTrue(feature.hasViolation() && feature.getFailureReport().toString().contains(Feature.class.getName()),
            () -> "a feature naming another is found: " + feature.getFailureReport());
    }
}
