package io.nvmeof.conformance;

import java.util.List;

/**
 * A generated scenario: steps run in order on one fresh controller (an admin connection, and an I/O connection for
 * queue 1 once a step needs it), then both connections are closed.
 *
 * @param id index in the corpus (reports only; allow-list rules never name it)
 * @param start the state the setup steps lead to, e.g. {@code ENABLED_IO}
 * @param steps setup and generated steps
 * @param modifiesMedia a step may have written the namespace: the runner zeroes the written regions afterwards
 */
public record Sequence(int id, String start, List<Step> steps, boolean modifiesMedia) {

    /** A command, or a wait that polls CSTS (not compared: how fast a target gets ready is not conformance). */
    public record Step(Kind kind, Cmd cmd) {
        public enum Kind {
            COMMAND,
            AWAIT_READY,
            AWAIT_SHUTDOWN
        }

        static Step of(Cmd cmd) {
            return new Step(Kind.COMMAND, cmd);
        }
    }

    public int commandCount() {
        return (int) steps.stream().filter(s -> s.kind() == Step.Kind.COMMAND).count();
    }
}
