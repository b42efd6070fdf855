package io.rmqgw.cli;

import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.runtime.Summary;
import io.rmqgw.tools.VersionProvider;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code rmqgw check-config [FILE]}. */
@Command(name = "check-config",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    header = "Check a configuration file.",
    description = "Checks a configuration file without starting anything: prints OK, what the gateway would do"
        + " and the effective configuration (defaults filled in), or the refused key's path and the reason.%n",
    footerHeading = "%nExit codes:%n",
    footer = {"  0  the configuration is valid", "  2  it is not (or FILE cannot be read)"})
final class CheckConfigCommand implements Callable<Integer> {

    @ParentCommand
    Main main;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "FILE",
        description = "The YAML configuration to check. Default: " + Main.DEFAULT_CONFIG + " in the working"
            + " directory, else in the rmqgw installation.")
    Path file;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Path f = file != null ? main.resolve(file) : main.defaultConfig();
        if (f == null) {
            err.println("rmqgw check-config: no FILE given and no " + Main.DEFAULT_CONFIG + " found");
            return Main.CONFIG_ERROR;
        }
        GatewayConfig config;
        try {
            config = ConfigLoader.load(f);
        } catch (ConfigException e) {
            err.println(main.display(f) + ": " + e.getMessage());
            return Main.CONFIG_ERROR;
        }
        out.println("OK: " + main.display(f));
        Summary.printPlan(out, config);
        out.println("Effective configuration:");
        Summary.printYaml(out, config);
        return Main.OK;
    }
}
