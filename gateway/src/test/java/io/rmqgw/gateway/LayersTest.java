package io.rmqgw.gateway;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.rmqgw.archfixture.core.Core;
import io.rmqgw.archfixture.cycle.a.A;
import io.rmqgw.archfixture.cycle.b.B;
import io.rmqgw.archfixture.fanout.Feature;
import io.rmqgw.archfixture.send.Family;
import io.rmqgw.archfixture.vq.OtherFeature;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules of the main code (codec, routing, metrics and the gateway), checked on its compiled classes:
 * no package cycle anywhere; the codec knows nothing of the gateway, routes or metrics; routing knows no channels;
 * in the gateway, one direction: the transport and the core ({@code net}, {@code core}) and the pool ({@code pool})
 * name no request family, filter, feature or the assembly; the request families ({@code route}, {@code send},
 * {@code pull}, {@code registration}, {@code brokerrequests}) name no filter or feature; the filters name no family
 * or feature; a feature names no other feature; only the assembly (the root package and {@code runtime}) names
 * everything. Each rule is shown failing on a deliberate violation among test fixtures.
 */
class LayersTest {

    /** The request families: where a request code is handled, by package name. */
    static final List<String> FAMILIES = List.of("route", "send", "pull", "registration", "brokerrequests");
    /** The features: each plugs into the core through its Feature, none names another. */
    static final List<String> FEATURES = List.of("fanout", "coalesce", "vq", "multicluster", "adminpolicy");
    /** The assembly: it alone names the features. */
    static final List<String> ASSEMBLY = List.of("runtime");

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.rmqgw");
    }

    static ArchRule noPackageCycles(String root) {
        return slices().matching(root + ".(**)").should().beFreeOfCycles();
    }

    /** The transport, the core and the pool: they name no family, filter, feature, or the assembly. */
    static ArchRule coreNamesNothingAbove(String root) {
        return noClasses().that().resideInAnyPackage(packages(root, List.of("net", "core", "pool")))
            .should().dependOnClassesThat().resideInAnyPackage(packages(root, FAMILIES, List.of("filters"), FEATURES,
                ASSEMBLY, List.of("broker", "namesrv", "admin", "discovery")))
            .orShould().dependOnClassesThat().resideInAPackage(root);
    }

    /** The request families name no filter, feature or the assembly. */
    static ArchRule familiesNameNoFeature(String root) {
        return noClasses().that().resideInAnyPackage(packages(root, FAMILIES))
            .should().dependOnClassesThat().resideInAnyPackage(packages(root, List.of("filters"), FEATURES, ASSEMBLY))
            .orShould().dependOnClassesThat().resideInAPackage(root);
    }

    /** The filters name no family, feature or the assembly. */
    static ArchRule filtersNameNoFamily(String root) {
        return noClasses().that().resideInAnyPackage(packages(root, List.of("filters")))
            .should().dependOnClassesThat().resideInAnyPackage(packages(root, FAMILIES, FEATURES, ASSEMBLY))
            .orShould().dependOnClassesThat().resideInAPackage(root);
    }

    /** A feature names no other feature and not the assembly. */
    static ArchRule featuresStandAlone(String root, String feature) {
        return noClasses().that().resideInAPackage(root + "." + feature + "..")
            .should().dependOnClassesThat().resideInAnyPackage(
                packages(root, FEATURES.stream().filter(f -> !f.equals(feature)).toList(), ASSEMBLY))
            .orShould().dependOnClassesThat().resideInAPackage(root);
    }

    @SafeVarargs
    private static String[] packages(String root, List<String>... groups) {
        List<String> packages = new ArrayList<>();
        Stream.of(groups).flatMap(List::stream).forEach(p -> packages.add(root + "." + p + ".."));
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
    void theCoreNamesNothingAboveIt() {
        coreNamesNothingAbove("io.rmqgw.gateway").check(main);
    }

    @Test
    void theRequestFamiliesNameNoFeature() {
        familiesNameNoFeature("io.rmqgw.gateway").check(main);
    }

    @Test
    void theFiltersNameNoFamilyOrFeature() {
        filtersNameNoFamily("io.rmqgw.gateway").check(main);
    }

    @Test
    void featuresNameNeitherEachOtherNorTheAssembly() {
        for (String feature : FEATURES) {
            featuresStandAlone("io.rmqgw.gateway", feature).check(main);
        }
    }

    @Test
    void eachRuleFailsOnADeliberateViolation() {
        JavaClasses fixtures = new ClassFileImporter().importClasses(A.class, B.class, Core.class, Feature.class,
            OtherFeature.class, Family.class);
        EvaluationResult cycle = noPackageCycles("io.rmqgw.archfixture.cycle").evaluate(fixtures);
        assertTrue(cycle.hasViolation() && cycle.getFailureReport().toString().contains("Cycle"),
            () -> "the cycle a -> b -> a is found: " + cycle.getFailureReport());
        EvaluationResult core = coreNamesNothingAbove("io.rmqgw.archfixture").evaluate(fixtures);
        assertTrue(core.hasViolation() && core.getFailureReport().toString().contains(Core.class.getName()),
            () -> "the core naming a feature is found: " + core.getFailureReport());
        EvaluationResult family = familiesNameNoFeature("io.rmqgw.archfixture").evaluate(fixtures);
        assertTrue(family.hasViolation() && family.getFailureReport().toString().contains(Family.class.getName()),
            () -> "a family naming a feature is found: " + family.getFailureReport());
        EvaluationResult feature = featuresStandAlone("io.rmqgw.archfixture", "fanout").evaluate(fixtures);
        assertTrue(feature.hasViolation() && feature.getFailureReport().toString().contains(Feature.class.getName()),
            () -> "a feature naming another is found: " + feature.getFailureReport());
    }
}
