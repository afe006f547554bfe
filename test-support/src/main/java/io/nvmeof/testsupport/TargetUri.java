package io.nvmeof.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a test parameter that {@link NvmeofTargetExtension} fills with the target's URI, e.g.
 * {@code nvme+tcp://127.0.0.1:40123/nqn.2024-01.io.nvmeof:test}. The parameter may be a {@code String}, a
 * {@link java.net.URI}, or any type with a {@code public static T parse(String)} method (such as the initiator's
 * {@code NvmeUri}).
 */
@Target({ElementType.PARAMETER, ElementType.FIELD})
@Retention(RetentionPolicy.RUNTIME)
public @interface TargetUri {
    /** Extra URI query options appended as given, e.g. {@code "queues=2&depth=8"}. */
    String options() default "";

    /** Set to get the discovery controller's URI (no NQN) instead of the subsystem's. */
    boolean discovery() default false;
}
