package io.relaypinner.relay.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.relay.node.NodeBudget;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The import's slots and staging bytes, taken from the node budget (no sockets). */
class ImportBudgetTest {
  private static final long HEAP = 160L << 20;

  @TempDir
  Path dir;

  private static NodeBudget budget(final int slots, final long stagingBytes) {
    return new NodeBudget(HEAP, new NodeBudget.Sizes(10, 3, 5, IpPrefix.DEFAULT, slots,
        stagingBytes), LimitListener.NONE);
  }

  @Test
  void slots_shouldBeOnePerClient_andTheImportScopesWorkInAll_eachRefusalCounted() {
    final NodeBudget budget = budget(2, 8L << 20);
    final ExportRoutes.Slot a = ExportRoutes.Slot.take(budget.importClients(), "192.0.2.1/32");
    assertThat(a.refusal()).isNull();
    final ExportRoutes.Slot again = ExportRoutes.Slot.take(budget.importClients(),
        "192.0.2.1/32");
    assertThat(again.refusal()).isEqualTo(ExportRoutes.Slot.Refusal.CLIENT);
    assertThat(budget.hits("import_ip", Resource.WORK)).isEqualTo(1);
    final ExportRoutes.Slot b = ExportRoutes.Slot.take(budget.importClients(), "192.0.2.2/32");
    assertThat(b.refusal()).isNull();
    final ExportRoutes.Slot c = ExportRoutes.Slot.take(budget.importClients(), "192.0.2.3/32");
    assertThat(c.refusal()).isEqualTo(ExportRoutes.Slot.Refusal.ALL);
    assertThat(budget.hits("import", Resource.WORK)).isEqualTo(1);
    assertThat(budget.imports().used(Resource.WORK)).isEqualTo(2);
    // A refused client holds no key; a closed slot gives its work and key back, once.
    assertThat(budget.importClients().size()).isEqualTo(2);
    a.close();
    a.close();
    again.close();
    assertThat(budget.imports().used(Resource.WORK)).isEqualTo(1);
    assertThat(budget.importClients().size()).isEqualTo(1);
    assertThat(ExportRoutes.Slot.take(budget.importClients(), "192.0.2.3/32").refusal())
        .isNull();
  }

  @Test
  void staging_shouldReserveDiskBeforeWriting_andGiveItBackWhenTheFileIsDeleted()
      throws Exception {
    final NodeBudget budget = budget(2, 8L << 20);
    final ImportStaging staging = new ImportStaging(dir, 4L << 20, budget.imports());
    final ExportRoutes.Slot slot = ExportRoutes.Slot.take(budget.importClients(), "k");
    final ImportStaging.Staged staged = staging.create(slot.scope());
    try (OutputStream out = staged.output()) {
      out.write(new byte[1000]);
      // Reserved in steps ahead of the bytes, in the client's scope and the import scope.
      assertThat(staged.reservedBytes()).isEqualTo(ImportStaging.RESERVATION_STEP);
      assertThat(budget.imports().used(Resource.DISK)).isEqualTo(ImportStaging.RESERVATION_STEP);
      assertThat(slot.scope().used(Resource.DISK)).isEqualTo(ImportStaging.RESERVATION_STEP);
      out.write(new byte[(int) ImportStaging.RESERVATION_STEP]);
      assertThat(staged.reservedBytes()).isGreaterThanOrEqualTo(staged.bytes());
    }
    assertThat(budget.system().used(Resource.DISK)).isEqualTo(staged.reservedBytes());
    staged.close();
    assertThat(Files.exists(staged.file())).isFalse();
    assertThat(budget.imports().used(Resource.DISK)).isZero();
    assertThat(budget.system().used(Resource.DISK)).isZero();
    slot.close();
  }

  @Test
  void staging_shouldRefuseBytesBeyondTheNodesCap_countedAndWritingNothingOfThem()
      throws Exception {
    final NodeBudget budget = budget(2, 3L << 20);
    final ImportStaging staging = new ImportStaging(dir, 2L << 20, budget.imports());
    final ImportStaging.Staged first = staging.create();
    try (OutputStream out = first.output()) {
      out.write(new byte[2 << 20]);
    }
    final ImportStaging.Staged second = staging.create();
    try (OutputStream out = second.output()) {
      out.write(new byte[1 << 20]);
      assertThatThrownBy(() -> out.write(1))
          .isInstanceOf(ImportStaging.StagingFullException.class);
    }
    assertThat(second.bytes()).isEqualTo(1 << 20);
    assertThat(budget.hits("import", Resource.DISK)).isEqualTo(1);
    first.close();
    second.close();
    assertThat(budget.imports().used(Resource.DISK)).isZero();
    // The size limit of one file still answers first (413, not 503).
    final ImportStaging.Staged big = staging.create();
    try (OutputStream out = big.output()) {
      assertThatThrownBy(() -> out.write(new byte[(2 << 20) + 1]))
          .isInstanceOf(ImportStaging.TooLargeException.class);
    }
    big.close();
    assertThat(budget.imports().used(Resource.DISK)).isZero();
  }
}
