package io.relaypinner.orbitdb;

import java.util.Objects;

/**
 * A database, access controller or identity of a type this node cannot verify (a custom access
 * controller such as {@code /todo-delegation/…}, a {@code webauthn} identity). Not the peer's
 * fault and never a crash: callers count it by {@link #kind()} and {@link #typeName()} and skip
 * the database or entry.
 */
public final class UnsupportedTypeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What has the unknown type. */
  public enum Kind {
    ACCESS_CONTROLLER("access-controller"),
    IDENTITY("identity");

    private final String label;

    Kind(final String label) {
      this.label = label;
    }

    /** {@code access-controller} or {@code identity}. */
    public String label() {
      return label;
    }
  }

  private final Kind kind;
  private final String typeName;

  public UnsupportedTypeException(final Kind kind, final String typeName) {
    super("unsupported " + kind.label() + " type \"" + typeName + "\"");
    this.kind = Objects.requireNonNull(kind, "kind");
    this.typeName = Objects.requireNonNull(typeName, "typeName");
  }

  public Kind kind() {
    return kind;
  }

  /** The type string as the block gave it. */
  public String typeName() {
    return typeName;
  }
}
