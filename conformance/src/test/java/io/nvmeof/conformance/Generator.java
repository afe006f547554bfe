package io.nvmeof.conformance;

import io.nvmeof.conformance.Sequence.Step;
import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FeatureId;
import io.nvmeof.core.command.Properties;
import java.util.ArrayList;
import java.util.List;

/**
 * The seeded corpus: sequence {@code i} of seed {@code s} is always the same (its own random stream, seeded from
 * {@code s} and {@code i}), so a longer run extends a shorter one and a failing sequence can be re-run alone.
 *
 * <p>Each sequence starts a fresh controller in one of the states below (the setup steps are compared too), then runs
 * 1–6 generated commands from the areas that make sense there. The states cover the orders the spec constrains:
 * before Connect, connected but CC.EN = 0, enabled, enabled with I/O queue 1, after a normal shutdown, after CC.EN
 * went back to 0.
 */
public final class Generator {
    /** The start states, in the order the corpus cycles through them. */
    public enum State {
        /** Nothing sent yet: the first command is a (varied) admin Connect, then the usual enable. */
        CONNECT_VARIANT,
        /** Admin queue connected, CC.EN = 0. */
        CONNECTED,
        /** CC.EN = 1, CSTS.RDY = 1, no I/O queue. */
        ENABLED,
        /** Enabled with I/O queue 1 connected: admin and I/O commands. */
        ENABLED_IO,
        /** Enabled, then a varied I/O Connect. */
        IO_CONNECT_VARIANT,
        /** I/O queue 1 connected, then CC.SHN = 01b completed. */
        SHUTDOWN,
        /** Enabled with I/O queue 1, then CC.EN = 0. */
        DISABLED
    }

    private final Geometry g;
    private final long seed;

    public Generator(long seed, Geometry g) {
        this.seed = seed;
        this.g = g;
    }

    /** Sequences {@code 0..count-1}. */
    public List<Sequence> generate(int count) {
        List<Sequence> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(sequence(i));
        }
        return out;
    }

    public Sequence sequence(int index) {
        Pick pick = new Pick(seed * 0x9E3779B97F4A7C15L + index);
        FabricsGen fabrics = new FabricsGen(pick, g);
        AdminGen admin = new AdminGen(pick);
        NvmGen nvm = new NvmGen(pick, g);
        State[] states = State.values();
        // ENABLED_IO is where most commands make sense: it gets a third of the corpus.
        State state = pick.chance(33) ? State.ENABLED_IO : states[pick.below(states.length)];
        List<Step> steps = new ArrayList<>();
        switch (state) {
            case CONNECT_VARIANT -> {
                steps.add(Step.of(fabrics.adminConnectVariant()));
                enable(steps, fabrics);
            }
            case CONNECTED -> steps.add(Step.of(fabrics.adminConnect()));
            case ENABLED -> {
                steps.add(Step.of(fabrics.adminConnect()));
                enable(steps, fabrics);
            }
            case ENABLED_IO, SHUTDOWN, DISABLED -> {
                steps.add(Step.of(fabrics.adminConnect()));
                enable(steps, fabrics);
                if (pick.chance(50)) {
                    steps.add(Step.of(numberOfQueues()));
                }
                steps.add(Step.of(fabrics.ioConnect()));
                if (state == State.SHUTDOWN) {
                    steps.add(Step.of(fabrics.setCc(0x00464001)));
                    steps.add(new Step(Step.Kind.AWAIT_SHUTDOWN, null));
                } else if (state == State.DISABLED) {
                    steps.add(Step.of(fabrics.setCc(0x00460000)));
                }
            }
            case IO_CONNECT_VARIANT -> {
                steps.add(Step.of(fabrics.adminConnect()));
                enable(steps, fabrics);
                steps.add(Step.of(fabrics.ioConnectVariant()));
            }
        }
        int n = 1 + pick.below(6);
        boolean hasIo = state != State.CONNECTED && state != State.ENABLED && state != State.CONNECT_VARIANT;
        for (int i = 0; i < n; i++) {
            int area = pick.below(100);
            if (area < 12) {
                steps.add(Step.of(pick.chance(50) ? fabrics.randomPropertyGet() : fabrics.randomPropertySet()));
            } else if (area < 15) {
                steps.add(Step.of(fabrics.otherFabrics(hasIo && pick.chance(50) ? Cmd.Queue.IO : Cmd.Queue.ADMIN)));
            } else if (area < 17) {
                steps.add(Step.of(fabrics.adminConnect())); // a second Connect on a connected queue
            } else if (area < 55 || !hasIo) {
                steps.add(Step.of(admin.random()));
            } else if (area < 60) {
                nvm.writeThenRead().forEach(c -> steps.add(Step.of(c)));
            } else {
                nvm.random().forEach(c -> steps.add(Step.of(c)));
            }
        }
        boolean modifies = steps.stream()
                .anyMatch(s -> s.cmd() != null
                        && s.cmd().queue() == Cmd.Queue.IO
                        && !s.cmd().isFabrics()
                        && NvmGen.modifies(s.cmd().opcode()));
        return new Sequence(index, state.name(), List.copyOf(steps), modifies);
    }

    private static void enable(List<Step> steps, FabricsGen fabrics) {
        steps.add(Step.of(fabrics.propertyGet(Properties.CAP, true)));
        steps.add(Step.of(fabrics.setCc(0x00460001)));
        steps.add(new Step(Step.Kind.AWAIT_READY, null));
    }

    /** Set Features Number of Queues as Linux sends it before its I/O Connects (nvmeof-protocol.md §3.6). */
    private static Cmd numberOfQueues() {
        return Sqe.admin(AdminOpcode.SET_FEATURES.code(), "set-features fid=07 (setup)")
                .cdw(10, FeatureId.NUMBER_OF_QUEUES.code())
                .cdw(11, 0x00010001)
                .sgl(0x5A, 0, 0)
                .build();
    }
}
