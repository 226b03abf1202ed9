package io.relaypinner.cli;

import io.relaypinner.relay.RelayVersion;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code relay-pinner} command line (CONTRACT.md "Commands"). With no command it runs the
 * relay. Exit codes: 0 success, 1 runtime failure, 2 bad configuration or usage.
 */
@Command(
    name = "relay-pinner",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
        "Relay and pinning node for OrbitDB, IPFS and libp2p: follows OrbitDB databases, "
            + "replicates their logs, pins their media and serves both to peers that come later.",
        "",
        "With no command, runs the relay (same as 'relay-pinner run'). Settings come from "
            + "environment variables; see docs/configuration.md."},
    subcommands = {RunCommand.class, GuestCommand.class, RecordsCommand.class,
        DeployCommand.class, StatusCommand.class, CommandLine.HelpCommand.class},
    footer = {
        "",
        "Exit codes: 0 success, 1 runtime failure, 2 bad configuration or usage "
            + "(the message names the variable or option)."})
public final class Main implements Runnable {
  /** Exit code for a runtime failure. */
  public static final int EXIT_FAILURE = 1;
  /** Exit code for bad configuration or usage. */
  public static final int EXIT_USAGE = 2;

  private static final Set<String> TOP_LEVEL_OPTIONS = Set.of("-h", "--help", "-V", "--version");

  @Override
  public void run() {
    // Only reached for "relay-pinner" with top-level options that did not exit; nothing to do.
  }

  public static void main(final String[] args) {
    System.exit(execute(args, System.getenv(), new PrintWriter(System.out, true),
        new PrintWriter(System.err, true)));
  }

  /**
   * Runs the command line against an explicit environment (tests pass their own) and returns the
   * exit code.
   */
  public static int execute(final String[] args, final Map<String, String> environment,
      final PrintWriter out, final PrintWriter err) {
    if (args.length == 0 || args.length == 1 && args[0].equals("run")) {
      return runWithoutOptions(environment, err);
    }
    final CommandLine commandLine = new CommandLine(new Main(), new EnvironmentFactory(environment))
        .setOut(out)
        .setErr(err)
        .setCaseInsensitiveEnumValuesAllowed(true);
    return commandLine.execute(withDefaultCommand(args));
  }

  /**
   * {@code run} without options (how the launcher, the systemd unit and the container start the
   * relay), without building the command-line model: picocli's classes are compiled for Java 5,
   * which class-data sharing cannot archive, so parsing costs every start about 180 classes
   * loaded and verified from the jar plus the reflection over every command's annotations.
   * Behaves as picocli would: the command's exit code; an unexpected exception is printed and
   * exits 1.
   */
  private static int runWithoutOptions(final Map<String, String> environment,
      final PrintWriter err) {
    try {
      return new RunCommand(Map.copyOf(environment), err).call();
    } catch (final RuntimeException e) {
      e.printStackTrace(err);
      return EXIT_FAILURE;
    }
  }

  /** No command means {@code run}: an empty line or one that starts with a run option. */
  static String[] withDefaultCommand(final String[] args) {
    if (args.length == 0 || args[0].startsWith("-") && !TOP_LEVEL_OPTIONS.contains(args[0])) {
      final String[] withRun = new String[args.length + 1];
      withRun[0] = "run";
      System.arraycopy(args, 0, withRun, 1, args.length);
      return withRun;
    }
    return args;
  }

  /** {@code --version}: the build's version. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"relay-pinner " + RelayVersion.VERSION,
          "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor")
              + ")"};
    }
  }

  /** Gives commands the environment they run against (the process's, or a test's). */
  static final class EnvironmentFactory implements CommandLine.IFactory {
    private final Map<String, String> environment;

    EnvironmentFactory(final Map<String, String> environment) {
      this.environment = Map.copyOf(environment);
    }

    @Override
    public <K> K create(final Class<K> cls) throws Exception {
      if (cls == RunCommand.class) {
        return cls.cast(new RunCommand(environment));
      }
      if (cls == GuestCommand.SetupServerCommand.class) {
        return cls.cast(new GuestCommand.SetupServerCommand(environment));
      }
      if (cls == DeployCommand.class) {
        return cls.cast(new DeployCommand(environment));
      }
      if (cls == GuestCommand.PullCommand.class) {
        return cls.cast(new GuestCommand.PullCommand(environment));
      }
      if (cls == DeployConsoleCommand.class) {
        return cls.cast(new DeployConsoleCommand(environment));
      }
      if (cls == StatusCommand.class) {
        return cls.cast(new StatusCommand(environment));
      }
      if (cls == RecordsServeCommand.class) {
        return cls.cast(new RecordsServeCommand(environment));
      }
      return CommandLine.defaultFactory().create(cls);
    }
  }
}
