package io.relaypinner.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code relay-pinner records …}: the signed record service of the pull handoff. */
@Command(
    name = "records",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = {
        "Signed Aleph-style records (AGGREGATE, POST, FORGET) that the deployer and the guest "
            + "exchange in the pull handoff. See docs/handoff.md."},
    subcommands = {RecordsServeCommand.class})
final class RecordsCommand implements Runnable {
  @Spec
  private CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(),
        "records: missing subcommand (serve); see 'relay-pinner records --help'");
  }
}
